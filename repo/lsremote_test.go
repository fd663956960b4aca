package repo

import (
	"errors"
	"strings"
	"testing"
)

func TestParseLsRemote(t *testing.T) {
	refs, err := parseLsRemote([]byte("9e979045b037855b4d2d488e8d60bc66742221ea\trefs/heads/main\n0fe1e2c15c9756bd2805fc1773173f539a63bae6\trefs/heads/agents/a/main\n"))
	if err != nil || len(refs) != 2 || refs["refs/heads/main"].String() != "9e979045b037855b4d2d488e8d60bc66742221ea" {
		t.Fatalf("refs = %v, %v", refs, err)
	}
	for _, bad := range []string{"xyz\trefs/heads/main\n", "9e979045b037855b4d2d488e8d60bc66742221ea refs/heads/main\n", "9e979045b037855b4d2d488e8d60bc66742221ea\tHEAD\n"} {
		if _, err := parseLsRemote([]byte(bad)); !errors.Is(err, ErrRemote) {
			t.Errorf("%q: %v", bad, err)
		}
	}
}

func TestDropMissing(t *testing.T) {
	specs := []string{"+refs/heads/main:refs/remotes/o/main", "+refs/heads/agents/a/main:refs/remotes/o/agents/a/main"}
	err := transportError(errors.New("exit status 128"), []byte("fatal: couldn't find remote ref refs/heads/agents/a/main\n"), "git://x/s.git")
	if got := dropMissing(specs, err); len(got) != 1 || got[0] != specs[0] {
		t.Fatalf("dropMissing = %v (%v)", got, err)
	}
	if got := dropMissing(specs, errors.New("other")); len(got) != 2 {
		t.Fatalf("dropMissing of another error = %v", got)
	}
}

func FuzzParseLsRemote(f *testing.F) {
	f.Add([]byte("9e979045b037855b4d2d488e8d60bc66742221ea\trefs/heads/main\n"))
	f.Add([]byte("\n\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		refs, err := parseLsRemote(data)
		if err != nil {
			return
		}
		for name := range refs {
			if !strings.HasPrefix(name, "refs/") || strings.ContainsAny(name, "\t\n ") {
				t.Fatalf("accepted ref %q", name)
			}
		}
	})
}
