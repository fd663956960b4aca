package statedoc

import (
	"errors"
	"strings"
	"testing"

	"github.com/aiwg/aiwg-state/verbiage"
)

func TestParseRef(t *testing.T) {
	cases := []struct {
		in       string
		ok       bool
		path     string
		init     string
		hasInit  bool
		errMatch string
	}{
		{in: "plain text", ok: false},
		{in: "ref  file://a.json", ok: false},
		{in: "REF file://a.json", ok: false},
		{in: "ref file://a.json", ok: true, path: "a.json"},
		{in: "ref file://state/OPS/QUEUE.json", ok: true, path: "state/OPS/QUEUE.json"},
		{in: `ref file://a.json {"X": 1}`, ok: true, path: "a.json", init: `{"X": 1}`, hasInit: true},
		{in: "ref file://a.json   hello world  ", ok: true, path: "a.json", init: "hello world", hasInit: true},
		{in: "ref file://a.json\t[]", ok: true, path: "a.json", init: "[]", hasInit: true},
		{in: "ref file://a.json ", ok: true, path: "a.json", hasInit: true, errMatch: "white space after the path"},
		{in: "ref file://", ok: true, errMatch: "names no file"},
		{in: "ref file:// a.json", ok: true, hasInit: true, errMatch: "names no file"},
		{in: "ref file:///etc/passwd.json", ok: true, path: "/etc/passwd.json", errMatch: "absolute"},
		{in: `ref file://a\b.json`, ok: true, path: `a\b.json`, errMatch: "backslash"},
		{in: "ref file://a.txt", ok: true, path: "a.txt", errMatch: ".json"},
		{in: "ref file://a\x01.json", ok: true, path: "a\x01.json", errMatch: "control"},
		{in: "ref file://my file.json", ok: true, path: "my", init: "file.json", hasInit: true, errMatch: ".json"},
	}
	for _, c := range cases {
		r, ok, err := ParseRef(c.in)
		if ok != c.ok {
			t.Errorf("ParseRef(%q) ok = %v", c.in, ok)
			continue
		}
		if c.errMatch != "" {
			if !errors.Is(err, verbiage.ErrInvalidPath) || !strings.Contains(err.Error(), c.errMatch) {
				t.Errorf("ParseRef(%q) err = %v, want ErrInvalidPath mentioning %q", c.in, err, c.errMatch)
			}
			continue
		}
		if err != nil {
			t.Errorf("ParseRef(%q): %v", c.in, err)
			continue
		}
		if ok && (r.Path != c.path || r.Init != c.init || r.HasInit != c.hasInit) {
			t.Errorf("ParseRef(%q) = %+v", c.in, r)
		}
		if ok && r.String() != "ref file://"+c.path {
			t.Errorf("canonical form of %q = %q", c.in, r.String())
		}
	}
}

func TestTarget(t *testing.T) {
	cases := []struct {
		from, ref, want string
		escape          bool
	}{
		{"state/state.json", "OPS/QUEUE.json", "state/OPS/QUEUE.json", false},
		// The specification's convenience rule: state/ from a document in state/.
		{"state/state.json", "state/OPS/QUEUE.json", "state/OPS/QUEUE.json", false},
		{"bin/state/state.json", "state/OPS/Q.json", "bin/state/OPS/Q.json", false},
		// Only when the document's own directory is named state.
		{"docs/state.json", "state/x.json", "docs/state/x.json", false},
		{"state/OPS/QUEUE.json", "state/x.json", "state/OPS/state/x.json", false},
		{"state/OPS/QUEUE.json", "../x.json", "state/x.json", false},
		{"state/OPS/QUEUE.json", "./ITEMS.json", "state/OPS/ITEMS.json", false},
		{"top.json", "a/b.json", "a/b.json", false},
		{"state/state.json", "../../x.json", "", true},
		{"top.json", "../x.json", "", true},
		{"state/state.json", "state/../../x.json", "", true},
		{"state/state.json", "a//b.json", "", true},
		{"state/state.json", "../.aiwg/store.json", "", true},
		{"state/state.json", "../.git/config.json", "", true},
	}
	for _, c := range cases {
		got, err := Target(c.from, c.ref)
		if c.escape {
			if !errors.Is(err, verbiage.ErrInvalidPath) {
				t.Errorf("Target(%q, %q) = %q, %v; want ErrInvalidPath", c.from, c.ref, got, err)
			}
			continue
		}
		if err != nil || got != c.want {
			t.Errorf("Target(%q, %q) = %q, %v; want %q", c.from, c.ref, got, err, c.want)
		}
	}
}

func FuzzParseRef(f *testing.F) {
	for _, s := range []string{
		"ref file://a.json", "ref file://state/OPS/QUEUE.json {}", "ref file://a.json  x y", "ref file://",
		"ref file://../../x.json", "ref file:///abs.json", "ref file://a.json\n[1]", "ref file://\u00a0.json",
		"ref file://a/./b/../c.json", "ref file://.aiwg/store.json",
	} {
		f.Add(s, "state/state.json")
	}
	f.Fuzz(func(t *testing.T, s, from string) {
		r, ok, err := ParseRef(s)
		if !ok {
			if IsRef(s) {
				t.Fatalf("IsRef(%q) but ParseRef says not a ref", s)
			}
			return
		}
		if err != nil {
			if !errors.Is(err, verbiage.ErrInvalidPath) {
				t.Fatalf("ParseRef(%q): error %v is not ErrInvalidPath", s, err)
			}
			return
		}
		// The canonical ref parses back to the same path, without init.
		again, ok, err := ParseRef(r.String())
		if !ok || err != nil || again.Path != r.Path || again.HasInit {
			t.Fatalf("ParseRef(%q) = %+v; canonical %q reparses as %+v, %v", s, r, r.String(), again, err)
		}
		if strings.ContainsFunc(r.Path, func(c rune) bool { return c == ' ' || c == '\t' || c == '\n' }) {
			t.Fatalf("ParseRef(%q) kept white space in the path %q", s, r.Path)
		}
		if r.HasInit {
			if _, err := InitValue(r.Init); err != nil && !errors.Is(err, verbiage.ErrInvalidKey) {
				t.Fatalf("InitValue(%q): %v", r.Init, err)
			}
		}
		cleanFrom, err := verbiage.CleanStorePath(from)
		if err != nil {
			return
		}
		target, err := Target(cleanFrom, r.Path)
		if err != nil {
			if !errors.Is(err, verbiage.ErrInvalidPath) {
				t.Fatalf("Target(%q, %q): error %v is not ErrInvalidPath", cleanFrom, r.Path, err)
			}
			return
		}
		// Whatever is accepted stays inside the store, clean, and out of
		// the store's own directory.
		if c, err := verbiage.CleanStorePath(target); err != nil || c != target {
			t.Fatalf("Target(%q, %q) = %q, not a clean store path (%v)", cleanFrom, r.Path, target, err)
		}
		if strings.HasPrefix(target, ".aiwg/") || !strings.HasSuffix(target, ".json") {
			t.Fatalf("Target(%q, %q) = %q", cleanFrom, r.Path, target)
		}
	})
}
