package hooks

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/aiwg/aiwg-state/internal/testutil"
)

func TestAgentOfRef(t *testing.T) {
	for ref, want := range map[string]string{
		"refs/heads/agents/alice/main":  "alice",
		"refs/heads/agents/alice/a/b":   "alice",
		"refs/heads/agents/alice":       "alice", // would keep alice out of agents/alice/*
		"refs/heads/main":               "",
		"refs/tags/agents/alice/main":   "",
		"refs/heads/agentsx/alice/main": "",
	} {
		if got := agentOfRef(ref); got != want {
			t.Errorf("agentOfRef(%q) = %q, want %q", ref, got, want)
		}
	}
}

func TestPusherSources(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "s.git")
	testutil.Git{}.Run(t, "init", "-q", "--bare", dir)
	env := func(kv map[string]string) func(string) string { return func(k string) string { return kv[k] } }
	ctx := context.Background()
	for _, tc := range []struct {
		env        map[string]string
		name, from string
	}{
		{map[string]string{"REMOTE_USER": "alice", "GL_USER": "bob"}, "alice", "REMOTE_USER"},
		{map[string]string{"GL_USER": "bob"}, "bob", "GL_USER"},
		{map[string]string{"REMOTE_USER": " "}, "", ""},
		{map[string]string{}, "", ""},
	} {
		name, from, err := Pusher(ctx, dir, env(tc.env))
		if err != nil || name != tc.name || from != tc.from {
			t.Errorf("%v: %q from %q (%v), want %q from %q", tc.env, name, from, err, tc.name, tc.from)
		}
	}
	testutil.RunGit(t, dir, "config", PusherConfig, "AIWG_PUSHER")
	// The named variable alone is believed.
	if name, from, err := Pusher(ctx, dir, env(map[string]string{"REMOTE_USER": "alice"})); err != nil || name != "" || from != "AIWG_PUSHER" {
		t.Errorf("named variable unset: %q from %q (%v)", name, from, err)
	}
	if name, _, err := Pusher(ctx, dir, env(map[string]string{"AIWG_PUSHER": "carol", "REMOTE_USER": "alice"})); err != nil || name != "carol" {
		t.Errorf("named variable: %q (%v)", name, err)
	}
}
