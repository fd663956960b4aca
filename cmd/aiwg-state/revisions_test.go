package main

import (
	"encoding/json"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// reviewHistory builds main and a feature branch that forked from it,
// each with work of its own since, feat having merged main once.
func reviewHistory(t *testing.T) string {
	t.Helper()
	s := newStore(t)
	mustCLI(t, s, "", "set", "plan.json", "risk", `"low"`, "--agent", "planner")
	mustCLI(t, s, "", "set", "shared.json", "n", `1`, "--agent", "planner")
	mustCLI(t, s, "", "branch", "feat")
	mustCLI(t, s, "", "set", "feat.json", "step", `1`, "--agent", "critic", "-b", "feat")
	mustCLI(t, s, "", "set", "plan.json", "risk", `"high"`, "--agent", "critic", "-b", "feat")
	// Meanwhile, on main: other agents' later work.
	mustCLI(t, s, "", "set", "shared.json", "n", `2`, "--agent", "ops")
	mustCLI(t, s, "", "set", "other.json", "x", `true`, "--agent", "ops")
	mustCLI(t, s, "", "merge", "main", "--into", "feat", "--agent", "critic")
	mustCLI(t, s, "", "set", "main-late.json", "x", `1`, "--agent", "ops")
	mustCLI(t, s, "", "set", "feat.json", "step", `2`, "--agent", "critic", "-b", "feat")
	return s
}

func diffFiles(t *testing.T, out string) []string {
	t.Helper()
	var fds []struct{ File string }
	if err := json.Unmarshal([]byte(out), &fds); err != nil {
		t.Fatalf("diff --json: %v\n%s", err, out)
	}
	var names []string
	for _, f := range fds {
		names = append(names, f.File)
	}
	slices.Sort(names)
	return names
}

func gitNames(t *testing.T, s string, args ...string) []string {
	t.Helper()
	names := strings.Fields(gitOut(t, s, args...))
	slices.Sort(names)
	return names
}

// TestDiffRangesAsGitReadsThem: A...B, A..B and two branches name the
// same files as git diff does on the same repository.
func TestDiffRangesAsGitReadsThem(t *testing.T) {
	s := reviewHistory(t)
	for _, tc := range []struct {
		ours []string
		git  []string
	}{
		{[]string{"diff", "main...feat"}, []string{"diff", "--name-only", "main...feat"}},
		{[]string{"diff", "feat...main"}, []string{"diff", "--name-only", "feat...main"}},
		{[]string{"diff", "main..feat"}, []string{"diff", "--name-only", "main..feat"}},
		{[]string{"diff", "main", "feat"}, []string{"diff", "--name-only", "main...feat"}},
		{[]string{"diff", "main", "feat", "--no-merge-base"}, []string{"diff", "--name-only", "main", "feat"}},
		{[]string{"diff", "main~1", "feat"}, []string{"diff", "--name-only", "main~1", "feat"}}, // not two branches: as written
		{[]string{"diff", "...feat"}, []string{"diff", "--name-only", "HEAD...feat"}},
	} {
		got := diffFiles(t, mustCLI(t, s, "", append(tc.ours, "--json")...))
		want := gitNames(t, s, tc.git...)
		if !slices.Equal(got, want) {
			t.Errorf("%v names %v; git %v names %v", tc.ours, got, tc.git, want)
		}
	}
	// Two branches: the note says which reading was taken, in --json
	// as an object with the merge base.
	base := strings.TrimSpace(gitOut(t, s, "merge-base", "main", "feat"))
	_, stderr, code := runCLI(t, s, "", "diff", "main", "feat")
	if code != 0 || !strings.Contains(stderr, "merge base with main") || !strings.Contains(stderr, "--no-merge-base") {
		t.Fatalf("diff main feat: exit %d, stderr %q", code, stderr)
	}
	_, stderr, _ = runCLI(t, s, "", "diff", "main", "feat", "--json")
	var note struct {
		Note      string
		MergeBase string `json:"merge_base"`
	}
	if err := json.Unmarshal([]byte(stderr), &note); err != nil || note.MergeBase != base {
		t.Fatalf("diff --json note %q (%v), want merge_base %s", stderr, err, base)
	}
	if _, stderr, _ := runCLI(t, s, "", "diff", "main", "feat", "--no-merge-base"); stderr != "" {
		t.Fatalf("--no-merge-base still notes: %q", stderr)
	}
	if _, stderr, code := runCLI(t, s, "", "diff", "main...feat", "--no-merge-base"); code != exitUsage || !strings.Contains(stderr, "main..feat") {
		t.Fatalf("A...B --no-merge-base: exit %d %q", code, stderr)
	}
}

// TestLogRangeAndCount: log A..B lists git rev-list --first-parent A..B;
// -N, -n N and --max-count N as git takes them.
func TestLogRangeAndCount(t *testing.T) {
	s := reviewHistory(t)
	commits := func(out string) []string {
		var ms []struct{ Commit string }
		if err := json.Unmarshal([]byte(out), &ms); err != nil {
			t.Fatalf("log --json: %v\n%s", err, out)
		}
		var ids []string
		for _, m := range ms {
			ids = append(ids, m.Commit)
		}
		return ids
	}
	for _, rng := range []string{"main..feat", "feat..main", "main~2..feat", "..feat"} {
		got := commits(mustCLI(t, s, "", "log", rng, "--json"))
		git := strings.Replace(rng, "..", "..", 1)
		if strings.HasPrefix(git, "..") {
			git = "HEAD" + git
		}
		want := strings.Fields(gitOut(t, s, "rev-list", "--first-parent", git))
		if !slices.Equal(got, want) {
			t.Errorf("log %s = %v, git rev-list --first-parent %s = %v", rng, got, git, want)
		}
	}
	// With --all-parents, as git rev-list A..B.
	got := commits(mustCLI(t, s, "", "log", "main~3..feat", "--all-parents", "--json"))
	want := strings.Fields(gitOut(t, s, "rev-list", "main~3..feat"))
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("log --all-parents main~3..feat = %v, git %v", got, want)
	}
	// A FILE after the range: that file's commits in it.
	if got := commits(mustCLI(t, s, "", "log", "main..feat", "feat.json", "--json")); len(got) != 2 {
		t.Errorf("log main..feat feat.json: %d commits, want 2", len(got))
	}
	for _, tc := range []struct {
		args []string
		n    int
	}{
		{[]string{"log", "-1"}, 1},
		{[]string{"log", "-3"}, 3},
		{[]string{"log", "-n", "2"}, 2},
		{[]string{"log", "--max-count", "2"}, 2},
		{[]string{"log", "--max-count=4"}, 4},
		{[]string{"log", "plan.json", "-1"}, 1},
		{[]string{"log", "-2", "main..feat"}, 2},
		{[]string{"log", "-0"}, 0},
		{[]string{"log", "-n", "0"}, 0},
		{[]string{"log", "-n", "0", "--json"}, 1},
	} {
		if out := mustCLI(t, s, "", tc.args...); strings.Count(out, "\n") != tc.n {
			t.Errorf("%v printed %d lines, want %d:\n%s", tc.args, strings.Count(out, "\n"), tc.n, out)
		}
	}
	for _, args := range [][]string{
		{"log", "-1", "-n", "2"},
		{"log", "main...feat"},
		{"log", "a.json", "b.json"},
		{"log", "--graph", "plan.json"},
	} {
		if _, stderr, code := runCLI(t, s, "", args...); code != exitUsage {
			t.Errorf("%v: exit %d, want %d (%s)", args, code, exitUsage, stderr)
		}
	}
}

// TestLogGraphAsGitDraws: log --graph draws the same shape, commit for
// commit, as git log --graph on the same history.
func TestLogGraphAsGitDraws(t *testing.T) {
	s := newStore(t)
	mustCLI(t, s, "", "set", "plan.json", "risk", `"low"`, "--agent", "planner")
	mustCLI(t, s, "", "branch", "feat")
	mustCLI(t, s, "", "set", "feat.json", "step", `1`, "--agent", "critic", "-b", "feat")
	mustCLI(t, s, "", "set", "shared.json", "n", `2`, "--agent", "ops")
	mustCLI(t, s, "", "set", "feat.json", "step", `2`, "--agent", "critic", "-b", "feat")
	mustCLI(t, s, "", "set", "other.json", "x", `true`, "--agent", "ops")
	mustCLI(t, s, "", "merge", "feat", "--agent", "lead")
	mustCLI(t, s, "", "branch", "fix")
	mustCLI(t, s, "", "set", "fix.json", "a", `1`, "--agent", "fixer", "-b", "fix")
	mustCLI(t, s, "", "merge", "fix", "--agent", "lead", "--no-ff")
	mustCLI(t, s, "", "set", "plan.json", "done", `true`, "--agent", "lead")
	graphAsGit(t, s, [][]string{{}, {"feat"}, {"-4"}, {"-5"}, {"-7"}, {"main~2..main"}, {"feat..main"}})
}

// TestLogGraphLanesAsGitDraws: agents' branches that forked from one
// commit and merge in turn, each drawn in its own lane while older
// lanes are still open, as git draws them.
func TestLogGraphLanesAsGitDraws(t *testing.T) {
	s := newStore(t)
	mustCLI(t, s, "", "set", "plan.json", "base", `1`, "--agent", "lead")
	for _, b := range []string{"a", "b", "c"} {
		mustCLI(t, s, "", "branch", b)
	}
	mustCLI(t, s, "", "set", "a.json", "x", `1`, "--agent", "a", "-b", "a")
	mustCLI(t, s, "", "set", "a.json", "x", `2`, "--agent", "a", "-b", "a")
	mustCLI(t, s, "", "set", "b.json", "x", `1`, "--agent", "b", "-b", "b")
	mustCLI(t, s, "", "set", "c.json", "x", `1`, "--agent", "c", "-b", "c")
	mustCLI(t, s, "", "set", "plan.json", "m1", `1`, "--agent", "lead")
	mustCLI(t, s, "", "merge", "a", "--no-ff", "--agent", "lead")
	mustCLI(t, s, "", "merge", "b", "--no-ff", "--agent", "lead")
	mustCLI(t, s, "", "set", "plan.json", "m2", `1`, "--agent", "lead")
	mustCLI(t, s, "", "merge", "c", "--no-ff", "--agent", "lead")
	graphAsGit(t, s, [][]string{{}, {"-3"}, {"-6"}, {"-9"}, {"main~2..main"}, {"b..main"}, {"a..main"}})
}

// graphAsGit compares log --graph with git log --graph, line for line,
// for each set of arguments.
func graphAsGit(t *testing.T, s string, argSets [][]string) {
	t.Helper()
	hash := regexp.MustCompile(`[0-9a-f]{12}`)
	shape := func(out string, n int) []string {
		var lines []string
		for _, l := range strings.Split(strings.TrimRight(out, "\n"), "\n") {
			if loc := hash.FindStringIndex(l); loc != nil {
				l = l[:loc[0]] + l[loc[0]:loc[0]+n]
			}
			lines = append(lines, strings.TrimRight(l, " "))
		}
		return lines
	}
	for _, args := range argSets {
		ours := []string{"log", "--graph"}
		git := []string{"log", "--graph", "--format=%H"}
		if len(args) > 0 && args[0] == "feat" {
			ours = append(ours, "--at", "feat")
			git = append(git, "feat")
		} else {
			ours = append(ours, args...)
			git = append(git, args...)
		}
		got := shape(mustCLI(t, s, "", ours...), 12)
		want := shape(gitOut(t, s, git...), 12)
		for i := range want {
			want[i] = hash.ReplaceAllStringFunc(want[i], func(h string) string { return h[:12] })
		}
		if !slices.Equal(got, want) {
			t.Errorf("%v:\n%s\ngit %v:\n%s", ours, strings.Join(got, "\n"), git, strings.Join(want, "\n"))
		}
	}
}

// TestLogGraphNestedMerge: a merged branch that merged another itself
// still shows every commit of its first-parent line, the inner merge as
// one line.
func TestLogGraphNestedMerge(t *testing.T) {
	s := reviewHistory(t)
	mustCLI(t, s, "", "merge", "feat", "--agent", "lead")
	out := mustCLI(t, s, "", "log", "--graph")
	for _, id := range strings.Fields(gitOut(t, s, "rev-list", "--first-parent", "main")) {
		if !strings.Contains(out, id[:12]) {
			t.Errorf("log --graph lacks %s:\n%s", id[:12], out)
		}
	}
	for _, id := range strings.Fields(gitOut(t, s, "rev-list", "--first-parent", "main^1..main^2")) {
		if !strings.Contains(out, "| * "+id[:12]) && !strings.Contains(out, "| *   "+id[:12]) {
			t.Errorf("log --graph lacks the merged %s:\n%s", id[:12], out)
		}
	}
}
