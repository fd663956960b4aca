package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestBashCompletion: the bash script parses (bash -n), and loaded in
// bash completes command names, subcommands, flags, and the store's
// branches and files.
func TestBashCompletion(t *testing.T) {
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("no bash")
	}
	s := reviewHistory(t)
	mustCLI(t, s, "", "set", "plan.json", "steps.first", `"draft"`, "--agent", "planner")
	dir := t.TempDir()
	script := filepath.Join(dir, "aiwg-state.bash")
	if err := os.WriteFile(script, []byte(completionScript(t, "bash")), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("bash", "-n", script).CombinedOutput(); err != nil {
		t.Fatalf("bash -n: %v\n%s", err, out)
	}
	complete := func(words ...string) []string {
		t.Helper()
		var quoted []string
		for _, w := range words {
			quoted = append(quoted, "'"+w+"'")
		}
		prog := "source " + script + "\nCOMP_WORDS=(aiwg-state " + strings.Join(quoted, " ") + ")\nCOMP_CWORD=" + itoa(len(words)) + "\n_aiwg_state\nprintf '%s\\n' \"${COMPREPLY[@]}\"\n"
		cmd := exec.Command("bash", "-c", prog)
		cmd.Env = append(os.Environ(), "PATH="+filepath.Dir(bin)+string(os.PathListSeparator)+os.Getenv("PATH"), "AIWG_STATE_STORE="+s)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("completing %v: %v\n%s", words, err, out)
		}
		return strings.Fields(string(out))
	}
	for _, tc := range []struct {
		words []string
		want  string
	}{
		{[]string{"lo"}, "log"},
		{[]string{"rev"}, "review"},
		{[]string{"policy", "ch"}, "check"},
		{[]string{"log", "--gr"}, "--graph"},
		{[]string{"--json", "log", "--no-p"}, "--no-pager"},
		{[]string{"diff", "fe"}, "feat"},
		{[]string{"log", "-b", "fe"}, "feat"},
		{[]string{"get", "pla"}, "plan.json"},
		{[]string{"completion", "f"}, "fish"},
		// Key paths, after FILE# and as the word after a document.
		{[]string{"get", "plan.json#ri"}, "plan.json#risk"},
		{[]string{"log", "plan.json#steps.f"}, "plan.json#steps.first"},
		{[]string{"get", "plan.json", "ri"}, "risk"},
	} {
		got := complete(tc.words...)
		if len(got) != 1 || got[0] != tc.want {
			t.Errorf("completing %v: %q, want %q", tc.words, got, tc.want)
		}
	}
	if got := complete("l"); len(got) < 3 {
		t.Errorf("completing l: %q, want log, lease, ls...", got)
	}
}

func itoa(n int) string { return strconv.Itoa(n) }

// completionScript is what aiwg-state completion SHELL prints: no store
// needed.
func completionScript(t *testing.T, shell string) string {
	t.Helper()
	var o, e bytes.Buffer
	if code := run([]string{"aiwg-state", "completion", shell}, strings.NewReader(""), &o, &e); code != 0 {
		t.Fatalf("completion %s: exit %d: %s", shell, code, e.String())
	}
	return o.String()
}

// TestZshAndFishCompletion: each script is made, and parses where the
// shell is installed.
func TestZshAndFishCompletion(t *testing.T) {
	for _, sh := range []string{"zsh", "fish"} {
		out := completionScript(t, sh)
		if !strings.Contains(out, "review") || !strings.Contains(out, "graph") {
			t.Errorf("%s completion lacks commands or flags", sh)
		}
		if _, err := exec.LookPath(sh); err != nil {
			continue
		}
		f := filepath.Join(t.TempDir(), "c."+sh)
		os.WriteFile(f, []byte(out), 0o644)
		if b, err := exec.Command(sh, "-n", f).CombinedOutput(); err != nil {
			t.Errorf("%s -n: %v\n%s", sh, err, b)
		}
	}
}
