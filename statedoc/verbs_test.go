package statedoc

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/aiwg/aiwg-state/internal/testutil"
	"github.com/aiwg/aiwg-state/merge/jsonmerge"
	"github.com/aiwg/aiwg-state/objects"
	"github.com/aiwg/aiwg-state/verbiage"
)

func get(t *testing.T, doc any, key string) string {
	t.Helper()
	v, err := objects.Get(doc, verbiage.MustParsePath(key))
	if err != nil {
		t.Fatalf("get %s: %v", key, err)
	}
	return strings.TrimSpace(encode(t, v))
}

type verb func(any) (any, []verbiage.Path, error)

func must(t *testing.T, doc any, v verb) any {
	t.Helper()
	out, _, err := v(doc)
	if err != nil {
		t.Fatal(err)
	}
	if err := Validate(out); err != nil {
		t.Fatalf("a verb produced an invalid document: %v", err)
	}
	if err := verbiage.ValidateKeys(out); err != nil {
		t.Fatalf("a verb produced an invalid key: %v", err)
	}
	return out
}

func TestGoalsAndEvents(t *testing.T) {
	doc := any(Default())
	orig := encode(t, doc)
	doc = must(t, doc, func(d any) (any, []verbiage.Path, error) { return CreateGoal(d, "ship  it", "release") })
	if encode(t, Default()) != orig {
		t.Fatal("a verb modified its input")
	}
	doc = must(t, doc, func(d any) (any, []verbiage.Path, error) { return CreateSubGoal(d, "Ship-It", "write docs", "") })
	doc = must(t, doc, func(d any) (any, []verbiage.Path, error) { return CreateSubGoal(d, "SHIP-IT", "review", "") })
	if got := get(t, doc, "GOALS.SHIP-IT.TITLE"); got != `"SHIP-IT"` {
		t.Fatalf("title = %s", got)
	}
	errs := []struct {
		name string
		v    verb
		want error
	}{
		{"duplicate goal", func(d any) (any, []verbiage.Path, error) { return CreateGoal(d, "ship it", "") }, ErrExists},
		{"duplicate sub-goal", func(d any) (any, []verbiage.Path, error) { return CreateSubGoal(d, "ship-it", "Write Docs", "") }, ErrExists},
		{"missing goal", func(d any) (any, []verbiage.Path, error) { return CreateSubGoal(d, "nope", "x", "") }, objects.ErrNotFound},
		{"missing sub-goal", func(d any) (any, []verbiage.Path, error) {
			return AddEvent(d, "ship-it", "nope", Event{})
		}, objects.ErrNotFound},
		{"bad title", func(d any) (any, []verbiage.Path, error) { return CreateGoal(d, "goal 2", "") }, verbiage.ErrInvalidKey},
		{"event on a goal", func(d any) (any, []verbiage.Path, error) { return AddEvent(d, "ship-it", "", Event{}) }, verbiage.ErrInvalidPath},
	}
	for _, c := range errs {
		if _, _, err := c.v(doc); !errors.Is(err, c.want) {
			t.Errorf("%s: err = %v, want %v", c.name, err, c.want)
		}
	}
	doc = must(t, doc, func(d any) (any, []verbiage.Path, error) { return SetStatus(d, "ship-it", "review", "blocked") })
	doc = must(t, doc, func(d any) (any, []verbiage.Path, error) { return AddNote(d, "ship-it", "", "first") })
	if get(t, doc, "GOALS.SHIP-IT.SUB-GOALS.REVIEW.STATUS") != `"blocked"` || get(t, doc, "GOALS.SHIP-IT.NOTES") != `[
  "first"
]` {
		t.Fatal("status or note not written")
	}

	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	for i, sub := range []string{"write-docs", "review", "write-docs"} {
		doc = must(t, doc, func(d any) (any, []verbiage.Path, error) {
			return AddEvent(d, "ship-it", sub, Event{ID: "E" + string(rune('1'+i)), Type: "reply", Body: "b", CreatedAt: at})
		})
	}
	// Review sorts before write-docs: its event is first, then write-docs' two.
	wantOrder := []struct {
		sub       string
		idx, left int
	}{{"REVIEW", 0, 2}, {"WRITE-DOCS", 0, 1}, {"WRITE-DOCS", 1, 0}}
	for _, w := range wantOrder {
		var b *Briefing
		doc = must(t, doc, func(d any) (any, []verbiage.Path, error) {
			out, ps, br, err := Latest(d)
			b = br
			return out, ps, err
		})
		if b.Event == nil || b.Event.SubGoal != w.sub || b.Event.Index != w.idx || b.Remaining != w.left {
			t.Fatalf("latest = %+v %+v, want %+v", b, b.Event, w)
		}
		if !strings.Contains(b.String(), "SHIP-IT / "+w.sub) {
			t.Fatalf("briefing %q", b.String())
		}
		base := "GOALS.SHIP-IT.SUB-GOALS." + w.sub
		if get(t, doc, base+".EVENTS."+string(rune('0'+w.idx))+".SEEN") != "true" || get(t, doc, base+".LAST-SEEN-IDX") != string(rune('0'+w.idx)) {
			t.Fatalf("event not marked or LAST-SEEN-IDX not bumped")
		}
	}
	// None left: the roll-up, and no change.
	doc = must(t, doc, func(d any) (any, []verbiage.Path, error) { return Request(d, "ship-it", "review", "check it") })
	out, ps, b, err := Latest(doc)
	if err != nil || ps != nil || !objects.Equal(out, doc) || b.Event != nil || len(b.Thinking) != 1 || len(b.Ready) != 1 {
		t.Fatalf("roll-up: %+v, %v, %v", b, ps, err)
	}
	if s := b.String(); !strings.Contains(s, "1 thinking, 1 ready") || !strings.Contains(s, "thinking  SHIP-IT / REVIEW: check it") {
		t.Fatalf("roll-up text %q", s)
	}
	// In flight: a second request is refused; done clears it.
	if _, _, err := Request(doc, "ship-it", "review", "again"); !errors.Is(err, ErrInFlight) {
		t.Fatalf("second request: %v", err)
	}
	doc = must(t, doc, func(d any) (any, []verbiage.Path, error) { return FinishRequest(d, "ship-it", "review", "answered") })
	if get(t, doc, "GOALS.SHIP-IT.SUB-GOALS.REVIEW.IN-FLIGHT") != "false" || get(t, doc, "GOALS.SHIP-IT.SUB-GOALS.REVIEW.LAST-REQUEST") != `"check it"` {
		t.Fatal("done did not clear IN-FLIGHT")
	}
	// Done again (a retry): nothing in flight, so nothing changes, and
	// the note is not added a second time.
	again, paths, err := FinishRequest(doc, "ship-it", "review", "answered")
	if err != nil || paths != nil || !objects.Equal(again, doc) {
		t.Fatalf("done with nothing in flight: %v, %v", paths, err)
	}
	must(t, doc, func(d any) (any, []verbiage.Path, error) { return Request(d, "ship-it", "review", "again") })
}

func TestItems(t *testing.T) {
	doc := any(Default())
	p := func(s string) verbiage.Path {
		t.Helper()
		q, err := ItemPath(s)
		if err != nil {
			t.Fatal(err)
		}
		return q
	}
	set := func(sc Scope, path string, v any) {
		t.Helper()
		doc = must(t, doc, func(d any) (any, []verbiage.Path, error) { return SetItem(d, sc, p(path), v) })
	}
	global := Scope{}
	set(global, "alpha/beta", testutil.DecodeJSON(t, `{"inner key": {"x": 1}}`))
	set(global, "alpha.beta.inner-key.leaf", "deep")
	if v, err := GetItem(doc, global, p("ALPHA/BETA/INNER-KEY")); err != nil || encode(t, v) != canon(t, `{"LEAF": "deep", "X": 1}`) {
		t.Fatalf("deep set: %v %v", v, err)
	}
	if _, _, err := SetItem(doc, global, p("alpha/beta/inner-key/x/y"), 1); !errors.Is(err, objects.ErrNotContainer) {
		t.Fatalf("through a scalar: %v", err)
	}
	if _, err := GetItem(doc, global, p("nope")); !errors.Is(err, objects.ErrNotFound) {
		t.Fatalf("missing item: %v", err)
	}
	if _, _, err := SetItem(doc, global, p("x"), testutil.DecodeJSON(t, `{"a b": 1, "A-B": 2}`)); !errors.Is(err, verbiage.ErrInvalidKey) {
		t.Fatalf("colliding keys: %v", err)
	}
	for _, bad := range []string{"", "a..b", "a/*", "a_b", "x/1a"} {
		if _, err := ItemPath(bad); err == nil {
			t.Errorf("ItemPath(%q) accepted", bad)
		}
	}
	// Project and chat scopes; the chat's project defaults to ACTIVE-PROJECT.
	set(Scope{Project: "p1"}, "mood", "calm")
	set(Scope{Project: "p1", Meta: true}, "mood", "meta")
	if _, _, err := SetItem(doc, Scope{Chat: "c1"}, p("topic"), "x"); !errors.Is(err, verbiage.ErrInvalidPath) {
		t.Fatalf("chat without any project: %v", err)
	}
	doc = must(t, doc, func(d any) (any, []verbiage.Path, error) { return SelectProject(d, "p1", "Website") })
	set(Scope{Chat: "c1"}, "topic", "pricing")
	want := canon(t, `[{"PROJECT-ID": "p1", "CHATS": [{"CHAT-ID": "c1", "ITEMS": {"META": {}, "CONTENT": {"TOPIC": "pricing"}}}],
		"ITEMS": {"META": {"MOOD": "meta"}, "CONTENT": {"MOOD": "calm"}}}]`)
	if got := encode(t, mustGet(t, doc, "ITEMS.PROJECTS")); got != want {
		t.Fatalf("projects:\n%s\nwant:\n%s", got, want)
	}
	if _, err := GetItem(doc, Scope{Project: "p2"}, p("mood")); !errors.Is(err, objects.ErrNotFound) {
		t.Fatalf("missing project: %v", err)
	}
	doc = must(t, doc, func(d any) (any, []verbiage.Path, error) { return DeleteItem(d, Scope{Project: "p1"}, p("mood")) })
	if _, _, err := DeleteItem(doc, Scope{Project: "p1"}, p("mood")); !errors.Is(err, objects.ErrNotFound) {
		t.Fatalf("second delete: %v", err)
	}
}

func mustGet(t *testing.T, doc any, key string) any {
	t.Helper()
	v, err := objects.Get(doc, verbiage.MustParsePath(key))
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func TestApplyDocument(t *testing.T) {
	doc, _, _ := CreateGoal(Default(), "g", "")
	out, err := ApplyDocument(doc, []byte(`[{"op": "replace", "path": "/GOALS/G/STATUS", "value": "done"}, {"op": "add", "path": "/GOALS/G/NOTES/-", "value": "n"}]`))
	if err != nil || get(t, out, "GOALS.G.STATUS") != `"done"` || get(t, out, "GOALS.G.NOTES.0") != `"n"` {
		t.Fatalf("patch: %v", err)
	}
	cases := []struct {
		in   string
		want error
	}{
		{`[{"op": "add", "path": "/GOALS/bad_key", "value": {}}]`, verbiage.ErrInvalidKey},
		{`[{"op": "remove", "path": "/ITEMS"}]`, ErrInvalidState},
		{`[{"op": "test", "path": "/GOALS/G/STATUS", "value": "x"}]`, ErrInvalidState},
		{`[{"op": "replace", "path": "/NOPE/X", "value": 1}]`, ErrInvalidState},
		{`[{"op": "frobnicate"}]`, objects.ErrInvalidJSON},
		{`[1]`, objects.ErrInvalidJSON},
		{`{"GOALS": {}}`, ErrInvalidState},
		{`{"ACTIVE-PROJECT": {}, "GOALS": {"lower": {}}, "ITEMS": {}}`, verbiage.ErrInvalidKey},
		{`{nope`, objects.ErrInvalidJSON},
	}
	for _, c := range cases {
		if _, err := ApplyDocument(doc, []byte(c.in)); !errors.Is(err, c.want) {
			t.Errorf("apply %s: err = %v, want %v", c.in, err, c.want)
		}
	}
	repl := `{"ACTIVE-PROJECT": {"TITLE": "T", "PROJECT-ID": "p"}, "GOALS": {}, "ITEMS": {"PROJECTS": []}}`
	if out, err := ApplyDocument(doc, []byte(repl)); err != nil || encode(t, out) != canon(t, repl) {
		t.Fatalf("replacement: %v", err)
	}
}

// TestMergeTwoAgents merges two agents' versions of the state document with
// the strategies the store declares for it: EVENTS merge as append-only logs,
// SEEN and LAST-SEEN-IDX take the maximum, other scalars last-write-wins.
func TestMergeTwoAgents(t *testing.T) {
	opts := jsonmerge.Options{
		Strategy: jsonmerge.MergeObjects,
		Fallback: jsonmerge.LastWriteWins,
		Keys: map[string]jsonmerge.Strategy{
			KeyEvents: jsonmerge.MergeArrays, KeyNotes: jsonmerge.MergeArrays, KeyRequestNotes: jsonmerge.MergeArrays,
			KeyProjects: jsonmerge.MergeArrays, KeyChats: jsonmerge.MergeArrays,
			KeySeen: jsonmerge.Max, KeyLastSeenIdx: jsonmerge.Max,
		},
	}
	t0 := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	ev := func(d any, id string, min int) any {
		return must(t, d, func(d any) (any, []verbiage.Path, error) {
			return AddEvent(d, "g", "s", Event{ID: id, Type: "reply", Body: id, CreatedAt: t0.Add(time.Duration(min) * time.Minute)})
		})
	}
	latest := func(d any) any {
		return must(t, d, func(d any) (any, []verbiage.Path, error) {
			out, ps, _, err := Latest(d)
			return out, ps, err
		})
	}
	base, _, _ := CreateGoal(Default(), "g", "")
	base, _, _ = CreateSubGoal(base, "g", "s", "")
	base = ev(base, "E0", 0)

	// Agent A: marks E0 seen, adds E1 (minute 1) and E3 (minute 3), a status.
	a := latest(base)
	a = ev(a, "E1", 1)
	a = ev(a, "E3", 3)
	a = must(t, a, func(d any) (any, []verbiage.Path, error) { return SetStatus(d, "g", "s", "from-a") })
	// Agent B: adds E2 (minute 2), marks E0 and E2 seen, a note, a status.
	b := ev(base, "E2", 2)
	b = latest(b)
	b = latest(b)
	b = must(t, b, func(d any) (any, []verbiage.Path, error) { return AddNote(d, "g", "s", "from b") })
	b = must(t, b, func(d any) (any, []verbiage.Path, error) { return SetStatus(d, "g", "s", "from-b") })

	clockA := jsonmerge.Clock{Wall: 100, Agent: "a"}
	clockB := jsonmerge.Clock{Wall: 200, Agent: "b"} // B wrote last
	for _, swap := range []bool{false, true} {
		ours, theirs := jsonmerge.Side{Value: a, Clock: clockA}, jsonmerge.Side{Value: b, Clock: clockB}
		if swap {
			ours, theirs = theirs, ours
		}
		got, missing, conflicts := jsonmerge.Values(jsonmerge.Side{Value: base}, ours, theirs, opts)
		if missing || len(conflicts) != 0 {
			t.Fatalf("merge: missing %v, conflicts %+v", missing, conflicts)
		}
		if err := Validate(got); err != nil {
			t.Fatalf("merged document is invalid: %v", err)
		}
		sg := "GOALS.G.SUB-GOALS.S."
		var ids []string
		for _, e := range mustGet(t, got, sg+"EVENTS").([]any) {
			ids = append(ids, e.(map[string]any)[KeyID].(string))
		}
		if strings.Join(ids, " ") != "E0 E1 E2 E3" {
			t.Fatalf("events after merge = %v, want all four in time order", ids)
		}
		if get(t, got, sg+"EVENTS.0.SEEN") != "true" || get(t, got, sg+"EVENTS.2.SEEN") != "true" || get(t, got, sg+"EVENTS.1.SEEN") != "false" {
			t.Fatal("SEEN flags lost in the merge")
		}
		// B saw index 1 in its own numbering; the maximum wins.
		if get(t, got, sg+"LAST-SEEN-IDX") != "1" {
			t.Fatalf("LAST-SEEN-IDX = %s", get(t, got, sg+"LAST-SEEN-IDX"))
		}
		if get(t, got, sg+"STATUS") != `"from-b"` || get(t, got, sg+"NOTES.0") != `"from b"` {
			t.Fatal("scalar lww or notes wrong")
		}
		// What is left unseen after the merge is E1: latest finds it.
		_, _, br, _ := Latest(got)
		if br.Event == nil || br.Event.ID != "E1" {
			t.Fatalf("latest after merge: %+v", br.Event)
		}
	}
}
