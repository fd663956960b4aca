package event

import (
	"errors"
	"strings"
	"testing"
	"time"
)

func TestCheckType(t *testing.T) {
	for _, ok := range []string{"task.created", "handoff.requested", "lock.contention", "x", "my-app.step_2.done"} {
		if err := CheckType(ok); err != nil {
			t.Errorf("CheckType(%q): %v", ok, err)
		}
	}
	for _, bad := range []string{"", ".", "task.", ".task", "task..created", "task created", "task/created", "tâche", strings.Repeat("a", MaxTypeLen+1)} {
		if err := CheckType(bad); !errors.Is(err, ErrInvalid) {
			t.Errorf("CheckType(%q): %v, want ErrInvalid", bad, err)
		}
	}
	for _, p := range []string{"*", "task.*", "task.created"} {
		if err := CheckPattern(p); err != nil {
			t.Errorf("CheckPattern(%q): %v", p, err)
		}
	}
	if err := CheckPattern("task.**"); err == nil {
		t.Error("CheckPattern(task.**) passed")
	}
}

func TestAgentDir(t *testing.T) {
	for in, want := range map[string]string{
		"planner":      "planner",
		"agent-7.beta": "agent-7.beta",
		".hidden":      "%2Ehidden",
		"a b":          "a%20b",
		"a/b":          "a%2Fb",
		"a%b":          "a%25b",
		"é":            "%C3%A9",
	} {
		if got := AgentDir(in); got != want {
			t.Errorf("AgentDir(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestNewEncodeDecode(t *testing.T) {
	now := time.Date(2026, 3, 4, 5, 6, 7, 8, time.FixedZone("x", 3600))
	e, err := New(Input{Type: "task.created", Target: "coder", Correlation: "run-1", Payload: []byte(` {"b":1, "a":[1, 2]} `)}, "evt-0123abcd", "planner", now)
	if err != nil {
		t.Fatal(err)
	}
	if want := "events/planner/2026-03-04/040607.000000008-evt-0123abcd.json"; e.File() != want {
		t.Errorf("file %s, want %s", e.File(), want)
	}
	if string(e.Payload) != `{"a":[1,2],"b":1}` {
		t.Errorf("payload %s", e.Payload)
	}
	b, err := e.Encode()
	if err != nil {
		t.Fatal(err)
	}
	d, err := Decode(e.File(), b)
	if err != nil {
		t.Fatal(err)
	}
	if d.ID != e.ID || d.Type != e.Type || d.Source != "planner" || d.Target != "coder" || d.Correlation != "run-1" || !d.Time.Equal(now) || string(d.Payload) != string(e.Payload) {
		t.Errorf("decoded %+v, want %+v", d, e)
	}
	// The file must be the one its fields name, and hold an event alone.
	for name, c := range map[string]struct{ file, body string }{
		"moved":          {strings.Replace(e.File(), "planner", "coder", 1), string(b)},
		"another day":    {strings.Replace(e.File(), "03-04", "03-05", 1), string(b)},
		"unknown field":  {e.File(), strings.Replace(string(b), `"id"`, `"extra":1,"id"`, 1)},
		"two values":     {e.File(), string(b) + "{}"},
		"no id":          {e.File(), strings.Replace(string(b), "evt-0123abcd", "", 1)},
		"bad type":       {e.File(), strings.Replace(string(b), "task.created", "task created", 1)},
		"not json":       {e.File(), "{"},
		"source missing": {e.File(), strings.Replace(string(b), `"source": "planner"`, `"source": ""`, 1)},
	} {
		if _, err := Decode(c.file, []byte(c.body)); !errors.Is(err, ErrInvalid) {
			t.Errorf("%s: %v, want ErrInvalid", name, err)
		}
	}
	for name, in := range map[string]Input{
		"no type":          {},
		"bad payload":      {Type: "a", Payload: []byte("{")},
		"bad target":       {Type: "a", Target: "x\ny"},
		"multi-line corr.": {Type: "a", Correlation: "a\nb"},
	} {
		if _, err := New(in, "evt-0123abcd", "planner", now); !errors.Is(err, ErrInvalid) {
			t.Errorf("%s: %v, want ErrInvalid", name, err)
		}
	}
	if _, err := New(Input{Type: "a"}, "evt-0123abcd", "<x>", now); !errors.Is(err, ErrInvalid) {
		t.Errorf("an agent with <>: %v", err)
	}
}

func TestFilter(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	e := &Event{Type: "task.created", Source: "a", Target: "b", Correlation: "c", Time: t0}
	for _, c := range []struct {
		f    Filter
		want bool
	}{
		{Filter{}, true},
		{Filter{Types: []string{"task.*"}}, true},
		{Filter{Types: []string{"*"}}, true},
		{Filter{Types: []string{"task.done", "task.created"}}, true},
		{Filter{Types: []string{"task"}}, false},
		{Filter{Types: []string{"handoff.*"}}, false},
		{Filter{Source: "a", Target: "b", Correlation: "c"}, true},
		{Filter{Source: "b"}, false},
		{Filter{Target: "a"}, false},
		{Filter{Correlation: "d"}, false},
		{Filter{Since: t0}, true},
		{Filter{Since: t0.Add(1)}, false},
		{Filter{Until: t0}, false},
		{Filter{Until: t0.Add(1)}, true},
	} {
		if got := c.f.Match(e); got != c.want {
			t.Errorf("%+v: %v, want %v", c.f, got, c.want)
		}
	}
	bad := []Filter{{Types: []string{"a b"}}, {Limit: -1}, {Since: t0, Until: t0}}
	for _, f := range bad {
		if err := f.Validate(); err == nil {
			t.Errorf("%+v passed", f)
		}
	}
}
