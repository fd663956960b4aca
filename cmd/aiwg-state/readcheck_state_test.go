package main

import (
	"strings"
	"testing"
)

// TestStateReadsMeetTheProfileCLI: var get/ls, state show/status/export/ls
// checkpoint ls/show and state-doc get by a sandboxed agent meet
// documents.read.
func TestStateReadsMeetTheProfileCLI(t *testing.T) {
	s := newStore(t)
	mustCLI(t, s, "", "state", "init", "--prompt", "do x", "--agent", "admin")
	id := mustCLI(t, s, "", "state", "ls", "--json")
	id = id[strings.Index(id, "state-") : strings.Index(id, "state-")+14]
	mustCLI(t, s, "", "var", "set", "apikey", `"SECRETVAR"`, "--state", id, "--agent", "admin")
	mustCLI(t, s, "", "checkpoint", "create", "c1", "--state", id, "--agent", "admin")
	mustCLI(t, s, "", "state-doc", "set", "GOALS.SECRET-GOAL", `{"title": "SECRETVAR"}`, "--agent", "admin")
	mustCLI(t, s, sandboxPolicyCLI, "policy", "set", "-", "--agent", "admin")
	t.Setenv("AIWG_AGENT", "scraper-1")
	for _, args := range [][]string{
		{"var", "get", "apikey", "--state", id},
		{"state", "show", id},
		{"state", "status", id},
		{"state", "export", id},
		{"checkpoint", "show", "c1", "--state", id},
		{"state-doc", "get"},
	} {
		if out, errOut, code := runCLI(t, s, "", args...); code != exitDomain || !strings.Contains(errOut, "documents.read") || strings.Contains(out, "SECRETVAR") {
			t.Errorf("%v: exit %d %q %q", args, code, out, errOut)
		}
	}
	for _, args := range [][]string{
		{"var", "ls", "--state", id},
		{"state", "ls"},
		{"checkpoint", "ls", "--state", id},
	} {
		if out := mustCLI(t, s, "", args...); strings.TrimSpace(out) != "" {
			t.Errorf("%v shows %q", args, out)
		}
	}
	t.Setenv("AIWG_AGENT", "")
	if out := mustCLI(t, s, "", "var", "get", "apikey", "--state", id); !strings.Contains(out, "SECRETVAR") {
		t.Errorf("unattributed var get: %q", out)
	}
}
