package main

import (
	"strings"
	"testing"
)

// TestQueueCommands: put, peek, take and ls, with exit codes.
func TestQueueCommands(t *testing.T) {
	s := newStore(t)
	mustCLI(t, s, "", "queue", "put", "alerts", `{"level":"high"}`, "--agent", "pulse")
	mustCLI(t, s, "", "queue", "put", "alerts", "disk full", "--string")
	mustCLI(t, s, `{"task":"t-17"}`, "queue", "put", "inbox/conductor", "-")
	if got := mustCLI(t, s, "", "queue", "ls"); !strings.Contains(got, "alerts") || !strings.Contains(got, "inbox/conductor") {
		t.Errorf("ls:\n%s", got)
	}
	if got := mustCLI(t, s, "", "queue", "peek", "alerts", "-n", "1"); strings.Count(got, "\n") != 1 || !strings.Contains(got, `{"level":"high"}`) {
		t.Errorf("peek -n 1:\n%s", got)
	}
	if got := mustCLI(t, s, "", "queue", "take", "alerts"); got != "{\n  \"level\": \"high\"\n}\n" {
		t.Errorf("take: %q", got)
	}
	if got := mustCLI(t, s, "", "queue", "take", "alerts", "--json"); !strings.Contains(got, `"payload":"disk full"`) {
		t.Errorf("take --json: %s", got)
	}
	for _, tc := range []struct {
		args []string
		code int
		says string
	}{
		{[]string{"queue", "take", "alerts"}, exitDomain, "queue alerts is empty"},
		{[]string{"queue", "put", "bad-name", "1"}, exitUsage, "queue"},
		{[]string{"queue", "put", "alerts", "high"}, exitUsage, "--string"},
		{[]string{"queue", "take", "alerts", "--wait", "soon"}, exitUsage, "duration"},
	} {
		_, errOut, code := runCLI(t, s, "", tc.args...)
		if code != tc.code || !strings.Contains(errOut, tc.says) {
			t.Errorf("%v: exit %d %q, want exit %d saying %q", tc.args, code, errOut, tc.code, tc.says)
		}
	}
	gitOut(t, s, "fsck", "--strict", "--no-dangling")
}
