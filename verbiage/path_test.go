package verbiage

import (
	"errors"
	"slices"
	"testing"
)

func TestParsePath(t *testing.T) {
	for _, c := range []struct {
		in      string
		keys    []string
		wild    []int // indexes of wildcard segments
		str     string
		pointer string
	}{
		{"", []string{}, nil, "", ""},
		{"/", []string{}, nil, "", ""},
		{"a.b.0.c", []string{"a", "b", "0", "c"}, nil, "a.b.0.c", "/a/b/0/c"},
		{"a/b/0/c", []string{"a", "b", "0", "c"}, nil, "a.b.0.c", "/a/b/0/c"},
		{"/ITEMS/GLOBAL", []string{"ITEMS", "GLOBAL"}, nil, "ITEMS.GLOBAL", "/ITEMS/GLOBAL"},
		{"a/b.c", []string{"a", "b.c"}, nil, `a.b\.c`, "/a/b.c"},
		{`a\.b.c`, []string{"a.b", "c"}, nil, `a\.b.c`, "/a.b/c"},
		{`a\/b`, []string{"a/b"}, nil, `a\/b`, "/a~1b"},
		{`GOALS.*.STATUS`, []string{"GOALS", "*", "STATUS"}, []int{1}, "GOALS.*.STATUS", "/GOALS/*/STATUS"},
		{`a.\*`, []string{"a", "*"}, nil, `a.\*`, "/a/*"},
		{`a\\b`, []string{`a\b`}, nil, `a\\b`, `/a\b`},
		{"a~b", []string{"a~b"}, nil, "a~b", "/a~0b"},
	} {
		p, err := ParsePath(c.in)
		if err != nil {
			t.Errorf("ParsePath(%q): %v", c.in, err)
			continue
		}
		if !slices.Equal(p.Keys(), c.keys) {
			t.Errorf("ParsePath(%q) keys = %q, want %q", c.in, p.Keys(), c.keys)
		}
		for i, s := range p {
			if s.Wildcard != slices.Contains(c.wild, i) {
				t.Errorf("ParsePath(%q)[%d].Wildcard = %v", c.in, i, s.Wildcard)
			}
		}
		if p.String() != c.str || p.Pointer() != c.pointer {
			t.Errorf("ParsePath(%q): String %q, Pointer %q; want %q, %q", c.in, p.String(), p.Pointer(), c.str, c.pointer)
		}
	}
	for _, in := range []string{"a..b", ".a", "a.", "a//b", "a/", `a\`, "//"} {
		if _, err := ParsePath(in); !errors.Is(err, ErrInvalidPath) {
			t.Errorf("ParsePath(%q) = %v, want ErrInvalidPath", in, err)
		}
	}
}

func TestSegmentIndex(t *testing.T) {
	for _, c := range []struct {
		key    string
		index  int
		ok     bool
		append bool
	}{
		{"0", 0, true, false},
		{"42", 42, true, false},
		{"007", 0, false, false},
		{"-1", 0, false, false},
		{"+1", 0, false, false},
		{"1e3", 0, false, false},
		{"1234567890", 0, false, false},
		{"-", 0, false, true},
		{"A", 0, false, false},
	} {
		s := Segment{Key: c.key}
		i, ok := s.Index()
		if i != c.index || ok != c.ok || s.Append() != c.append {
			t.Errorf("Segment %q: Index() = %d, %v; Append() = %v", c.key, i, ok, s.Append())
		}
	}
	if _, ok := (Segment{Key: "*", Wildcard: true}).Index(); ok {
		t.Error("a wildcard is an index")
	}
}

func TestPathChildAndPrefix(t *testing.T) {
	p := MustParsePath("a.b")
	q := p[:1].Child("x") // must not write into p's backing array
	if p.String() != "a.b" || q.String() != "a.x" {
		t.Errorf("Child aliased its parent: p = %s, q = %s", p, q)
	}
	if !p.HasPrefix(MustParsePath("a")) || !p.HasPrefix(Path{}) || p.HasPrefix(MustParsePath("a.b.c")) || p.HasPrefix(MustParsePath("b")) {
		t.Error("HasPrefix is wrong")
	}
	if p.HasPrefix(MustParsePath(`a.*`)) {
		t.Error("HasPrefix let the wildcard a.* stand for a.b: prefixes compare segments literally")
	}
}
