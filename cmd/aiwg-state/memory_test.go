package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestMemoryCommands: the memory group end to end, with exit codes.
func TestMemoryCommands(t *testing.T) {
	s := newStore(t)
	mustCLI(t, s, "", "memory", "put", "long_term", "preference", "theme", `{"value":"dark"}`, "--agent", "pulse")
	if got := mustCLI(t, s, "", "memory", "get", "long_term", "preference", "theme"); got != "{\n  \"value\": \"dark\"\n}\n" {
		t.Errorf("get: %q", got)
	}
	mustCLI(t, s, "", "memory", "append", "daily_log", "entries", "d1", "start", "--string")
	mustCLI(t, s, `{"did":"deploy"}`, "memory", "append", "daily_log", "entries", "d1", "-")
	var rec struct{ Payload []any }
	if err := json.Unmarshal([]byte(mustCLI(t, s, "", "memory", "get", "daily_log", "entries", "d1", "--json")), &rec); err != nil || len(rec.Payload) != 2 || rec.Payload[0] != "start" {
		t.Errorf("appended: %+v %v", rec, err)
	}
	for _, tc := range []struct {
		args []string
		code int
		says string
	}{
		{[]string{"memory", "put", "long_term", "fact", "sky", "blue"}, exitUsage, `'"blue"' in the shell, or --string`},
		{[]string{"memory", "put", "long-term", "fact", "sky", "1"}, exitUsage, "namespace"},
		{[]string{"memory", "put", "long_term", "fact", "a/b", "1"}, exitUsage, "without a slash"},
		{[]string{"memory", "append", "long_term", "preference", "theme", "1"}, exitDomain, "not a list"},
		{[]string{"memory", "get", "long_term", "preference", "nope"}, exitDomain, "no memory record long_term/preference/nope"},
		{[]string{"memory", "ls", "", "kind"}, exitUsage, ""},
	} {
		_, errOut, code := runCLI(t, s, "", tc.args...)
		if code != tc.code || !strings.Contains(errOut, tc.says) {
			t.Errorf("%v: exit %d, %q; want exit %d saying %q", tc.args, code, errOut, tc.code, tc.says)
		}
	}
	if _, errOut, code := runCLI(t, s, "", "memory", "put", "session", "cooldown", "m", "true", "--ttl", "1500ms"); code != exitUsage || !strings.Contains(errOut, "whole seconds") {
		t.Errorf("a ttl of 1.5s: exit %d %q", code, errOut)
	}
	mustCLI(t, s, "", "memory", "put", "session", "cooldown", "m", "true", "--ttl", "1s")
	time.Sleep(1100 * time.Millisecond)
	if got := mustCLI(t, s, "", "memory", "ls"); strings.Contains(got, "cooldown") || !strings.Contains(got, "long_term/preference/theme") {
		t.Errorf("ls shows expired records, or misses live ones:\n%s", got)
	}
	if got := mustCLI(t, s, "", "memory", "prune"); !strings.Contains(got, "memory prune: 1 expired records") {
		t.Errorf("prune: %q", got)
	}
	if got := mustCLI(t, s, "", "memory", "prune"); !strings.Contains(got, "nothing has expired") {
		t.Errorf("prune again: %q", got)
	}
	export := mustCLI(t, s, "", "memory", "export")
	if n := strings.Count(export, "\n"); n != 2 {
		t.Fatalf("export has %d lines:\n%s", n, export)
	}
	file := filepath.Join(t.TempDir(), "m.jsonl")
	os.WriteFile(file, []byte(export), 0o644)
	other := newStore(t)
	mustCLI(t, other, "", "memory", "import", file)
	if got := mustCLI(t, other, "", "memory", "import", file); !strings.Contains(got, "nothing to import: the 2 records are as the store has them") {
		t.Errorf("the same import again: %q", got)
	}
	if got := mustCLI(t, other, "", "memory", "export"); got != export {
		t.Errorf("re-exported:\n%s\nwant:\n%s", got, export)
	}
	if _, errOut, code := runCLI(t, other, export+"{\"namespace\":\"x\"}\n", "memory", "import", "-"); code != exitUsage || !strings.Contains(errOut, "line 3") {
		t.Errorf("a bad line: exit %d, %q", code, errOut)
	}
	// A plain document where a record belongs is refused, with what to do.
	if _, errOut, code := runCLI(t, s, "", "put", "memory/long_term/fact/f1.json", `{"text":"not a record"}`); code != exitDomain || !strings.Contains(errOut, "memory/long_term/fact/f1.json is not a memory record") || !strings.Contains(errOut, "aiwg-state memory") {
		t.Errorf("put of a plain document under memory/: exit %d %q", code, errOut)
	}
	gitOut(t, s, "fsck", "--strict", "--no-dangling")
}
