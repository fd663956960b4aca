package redteam

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// rev resolves a revision in a repository.
func rev(t *testing.T, dir, r string) string {
	t.Helper()
	return strings.TrimSpace(git(t, dir, "rev-parse", r))
}

// forge makes, in a plain-git clone, a commit authored by agent with the
// given parents and a tree that is base's with files taken from other
// commits (path -> commit) or deleted (path -> ""): what an attacker
// builds with git plumbing, no merge machinery involved.
func forge(t *testing.T, clone, agent, base string, files map[string]string, parents ...string) string {
	t.Helper()
	git(t, clone, "read-tree", base)
	for p, from := range files {
		if from == "" {
			git(t, clone, "rm", "-q", "--cached", p)
		} else {
			git(t, clone, "checkout", from, "--", p)
		}
	}
	tree := strings.TrimSpace(git(t, clone, "write-tree"))
	git(t, clone, "reset", "-q", "--hard")
	args := []string{"-c", "user.name=" + agent, "commit-tree", tree, "-m", "merge"}
	for _, p := range parents {
		args = append(args, "-p", p)
	}
	return strings.TrimSpace(git(t, clone, args...))
}

// tighten has the coordinator change protected/config.json on main and
// push: the server's history then holds an older value to roll back to.
func tighten(t *testing.T, s *server) {
	t.Helper()
	runIn(t, s.Coordinator, "", "set", "protected/config.json", "mode", `"strict"`, "--agent", "conductor")
	runIn(t, s.Coordinator, "", "push")
}

// TestForgedMergeRollsBackProtectedFile: a worker makes a merge commit whose
// second parent is an old commit and whose tree holds that commit's
// protected/config.json. The old entry is no change the old commit made
// since the merge base (it is the merge base): the merge writes it.
func TestForgedMergeRollsBackProtectedFile(t *testing.T) {
	s := newServer(t, "")
	tighten(t, s)
	for name, url := range s.urls("bob") {
		t.Run(name, func(t *testing.T) {
			w := cloneAs(t, url)
			old := rev(t, w, "HEAD~1")
			m := forge(t, w, "bob", "HEAD", map[string]string{"protected/config.json": old}, "HEAD", old)
			refused(t, s, w, url, m+":refs/heads/main", "protected/config.json")
			refused(t, s, w, url, m+":refs/heads/agents/bob/main", "may not write this path (a merge writes every path it does not take from a change another parent made since the merge base)")
			if got := git(t, s.Dir, "show", "main:protected/config.json"); !strings.Contains(got, "strict") {
				t.Fatalf("the server's config changed: %s", got)
			}
		})
	}
}

// TestForgedMergeDeletesPolicy: the same trick with a root commit that
// predates the policy (and with a history of the attacker's own, sharing
// no commit with main) would leave the server with no policy.
func TestForgedMergeDeletesPolicy(t *testing.T) {
	s := newServer(t, "")
	for name, url := range s.urls("bob") {
		t.Run(name, func(t *testing.T) {
			w := cloneAs(t, url)
			root := strings.TrimSpace(git(t, w, "rev-list", "--max-parents=0", "HEAD"))
			if _, err := gitTry(w, "", "cat-file", "-e", root+":.aiwg/policy.json"); err == nil {
				t.Fatal("the root commit already holds the policy")
			}
			m := forge(t, w, "bob", "HEAD", map[string]string{".aiwg/policy.json": ""}, "HEAD", root)
			refused(t, s, w, url, m+":refs/heads/main", ".aiwg/policy.json")
			// A root-less second parent: bob's own history, one file of his.
			git(t, w, "checkout", "-q", "--orphan", "own")
			git(t, w, "rm", "-rq", "--cached", ".")
			os.MkdirAll(filepath.Join(w, "agents", "bob"), 0o755)
			os.WriteFile(filepath.Join(w, "agents", "bob", "n.json"), []byte("{\n  \"n\": 1\n}\n"), 0o644)
			git(t, w, "add", "agents")
			git(t, w, "-c", "user.name=bob", "commit", "-qm", "own history")
			own := rev(t, w, "HEAD")
			git(t, w, "checkout", "-qf", "main")
			m = forge(t, w, "bob", "main", map[string]string{".aiwg/policy.json": "", "agents/bob/n.json": own}, "main", own)
			refused(t, s, w, url, m+":refs/heads/main", ".aiwg/policy.json")
			if _, err := gitTry(s.Dir, "", "cat-file", "-e", "main:.aiwg/policy.json"); err != nil {
				t.Fatal("the server lost its policy")
			}
		})
	}
}

// weakPolicy lets workers write protected/ too; the coordinator replaces it
// with teamPolicy, and an attacker tries to merge the weak one back.
const weakPolicy = `{
  "roles": {"coordinator": ["conductor"], "workers": ["alice", "bob"]},
  "rules": [
    {"name": "coordinator writes all", "roles": ["coordinator"], "paths": ["**"]},
    {"name": "own directory", "roles": ["workers"], "paths": ["agents/{agent}/**", "protected/**"]}
  ]
}`

// TestForgedMergeWeakensPolicy: bob branches from before the policy was
// tightened, writes only his own file there, and merges main with his
// branch as first parent, keeping the weak policy: the merge throws away
// the coordinator's change made since the merge base, so it is bob's write
// of the policy. Taking the old policy back from an old second parent is
// refused the same way.
func TestForgedMergeWeakensPolicy(t *testing.T) {
	s := newServer(t, weakPolicy)
	runIn(t, s.Coordinator, teamPolicy, "policy", "set", "-", "--agent", "conductor")
	runIn(t, s.Coordinator, "", "push")
	for name, url := range s.urls("bob") {
		t.Run(name, func(t *testing.T) {
			w := cloneAs(t, url)
			head, weak := rev(t, w, "HEAD"), rev(t, w, "HEAD~1")
			git(t, w, "checkout", "-q", "-b", "side", weak)
			os.MkdirAll(filepath.Join(w, "agents", "bob"), 0o755)
			os.WriteFile(filepath.Join(w, "agents", "bob", "n.json"), []byte("{\n  \"n\": 1\n}\n"), 0o644)
			git(t, w, "add", "agents")
			git(t, w, "-c", "user.name=bob", "commit", "-qm", "own file")
			side := rev(t, w, "HEAD")
			m := forge(t, w, "bob", side, nil, side, head)
			refused(t, s, w, url, m+":refs/heads/main", ".aiwg/policy.json")
			m = forge(t, w, "bob", head, map[string]string{".aiwg/policy.json": weak}, head, weak)
			refused(t, s, w, url, m+":refs/heads/main", ".aiwg/policy.json")
			if got := git(t, s.Dir, "show", "main:.aiwg/policy.json"); strings.Contains(got, "protected/**") {
				t.Fatalf("the server's policy was weakened: %s", got)
			}
		})
	}
}

// TestLegitimateMergeIsAccepted: bob works on his branch while the
// coordinator changes the config on main; bob's sync merges main in, which
// takes the coordinator's change, and is accepted. So is the same merge
// made with plain git.
func TestLegitimateMergeIsAccepted(t *testing.T) {
	s := newServer(t, "")
	bob := agentStore(t, s.as("bob"), "bob")
	runIn(t, bob, "", "agent", "start", "bob")
	runIn(t, bob, "", "set", "agents/bob/notes.json", "n", "1", "--agent", "bob")
	runIn(t, bob, "", "sync", "--agent", "bob")
	tighten(t, s)
	runIn(t, bob, "", "set", "agents/bob/notes.json", "n", "2", "--agent", "bob")
	runIn(t, bob, "", "sync", "--agent", "bob")
	tip := rev(t, s.Dir, "refs/heads/agents/bob/main")
	if parents := strings.Fields(git(t, s.Dir, "rev-list", "--parents", "-n1", tip)); len(parents) != 3 {
		t.Fatalf("bob's sync did not push a merge: %v", parents)
	}
	if got := git(t, s.Dir, "show", tip+":protected/config.json"); !strings.Contains(got, "strict") {
		t.Fatalf("bob's merge does not hold the coordinator's config: %s", got)
	}
	for name, url := range s.urls("bob") {
		t.Run(name, func(t *testing.T) {
			w := cloneAs(t, url)
			git(t, w, "checkout", "-q", "-b", "plain", "HEAD~1")
			os.MkdirAll(filepath.Join(w, "agents", "bob"), 0o755)
			os.WriteFile(filepath.Join(w, "agents", "bob", name+".json"), []byte("{\n  \"n\": 3\n}\n"), 0o644)
			git(t, w, "add", "agents")
			git(t, w, "-c", "user.name=bob", "commit", "-qm", "own file")
			git(t, w, "-c", "user.name=bob", "merge", "-q", "--no-edit", "origin/main")
			if out, err := gitTry(w, "", "push", url, "HEAD:refs/heads/agents/bob/"+name); err != nil {
				t.Fatalf("a clean merge of main was refused: %v\n%s", err, out)
			}
		})
	}
	fsck(t, s.Dir)
}

// TestForgedMergeRefusedLocally: the forged merge never reaches the server,
// but a store that fetched it (from a remote without the hook, or written
// with plain git) refuses it in policy check, merge, pull and integrate,
// and nothing of the store moves.
func TestForgedMergeRefusedLocally(t *testing.T) {
	s := newServer(t, "")
	tighten(t, s)
	w := cloneAs(t, s.as("bob"))
	old := rev(t, w, "HEAD~1")
	m := forge(t, w, "bob", "HEAD", map[string]string{"protected/config.json": old}, "HEAD", old)
	// A copy of the server without the hook, where the forgery lands.
	open := filepath.Join(t.TempDir(), "open.git")
	git(t, "", "clone", "-q", "--bare", s.Dir, open)
	git(t, w, "push", "-q", open, m+":refs/heads/main", m+":refs/heads/agents/bob/main")

	c := s.Coordinator
	git(t, c, "fetch", "-q", w, m+":refs/heads/forged")
	mainBefore := rev(t, c, "refs/heads/main")

	r := try(c, "", "policy", "check", "main..forged")
	if r.Code != 3 || !strings.Contains(r.Stdout+r.Stderr, "protected/config.json") || !strings.Contains(r.Stdout+r.Stderr, `"bob"`) {
		t.Fatalf("policy check main..forged: exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}

	r = try(c, "", "merge", "forged", "--into", "main", "--agent", "conductor")
	if r.Code != 3 || !strings.Contains(r.Stderr, "may not write protected/config.json") {
		t.Fatalf("merge forged: exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	r = try(c, "", "merge", "forged", "--into", "main", "--no-ff", "--agent", "conductor")
	if r.Code != 3 {
		t.Fatalf("merge --no-ff forged: exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}

	runIn(t, c, "", "remote", "add", "open", open)
	r = try(c, "", "pull", "open", "main", "--agent", "conductor")
	if r.Code != 3 || !strings.Contains(r.Stderr, "may not write protected/config.json") {
		t.Fatalf("pull: exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	git(t, open, "update-ref", "refs/heads/main", mainBefore)
	r = try(c, "", "integrate", "open", "--agent", "conductor")
	if r.Code == 0 || !strings.Contains(r.Stdout+r.Stderr, "may not write protected/config.json") {
		t.Fatalf("integrate: exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	if after := rev(t, c, "refs/heads/main"); after != mainBefore {
		t.Fatalf("the store's main moved from %s to %s", mainBefore, after)
	}
	if after := rev(t, open, "refs/heads/main"); after != mainBefore {
		t.Fatalf("integrate pushed %s", after)
	}
	fsck(t, c)
	fsck(t, open)
}

// TestIntegrateKeepsMainHistory: alice and bob write the same document;
// alice's branch is integrated; bob's sync conflicts and he resolves it
// with a merge; integrating bob must not fast-forward main onto bob's
// merge, which would take alice's commit off main's first-parent history
// and credit her value to bob.
func TestIntegrateKeepsMainHistory(t *testing.T) {
	s := newServer(t, openPolicy)
	alice := agentStore(t, s.as("alice"), "alice")
	bob := agentStore(t, s.as("bob"), "bob")
	runIn(t, alice, "", "agent", "start", "alice")
	runIn(t, bob, "", "agent", "start", "bob")
	runIn(t, alice, `{"owner": "alice", "a": 1}`, "put", "shared/plan.json", "-", "--agent", "alice")
	runIn(t, alice, "", "sync", "--agent", "alice")
	runIn(t, bob, `{"owner": "bob", "b": 2}`, "put", "shared/plan.json", "-", "--agent", "bob")
	c := s.Coordinator
	runIn(t, c, "", "integrate", "--agent", "conductor")
	aliceCommit := rev(t, s.Dir, "refs/heads/agents/alice/main")
	if got := rev(t, s.Dir, "refs/heads/main"); got != aliceCommit {
		t.Fatalf("alice's branch, main's head plus her commit, was not fast-forwarded onto: main %s", got)
	}
	if r := try(bob, "", "sync", "--agent", "bob"); r.Code != 4 {
		t.Fatalf("bob's sync: exit %d, want a conflict\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	runIn(t, bob, "", "resolve", "shared/plan.json", "owner", "--ours")
	runIn(t, bob, "", "merge", "--continue", "--agent", "bob")
	runIn(t, bob, "", "sync", "--agent", "bob")
	mainBefore := rev(t, s.Dir, "refs/heads/main")
	runIn(t, c, "", "integrate", "--agent", "conductor")

	head := rev(t, s.Dir, "refs/heads/main")
	if first := rev(t, s.Dir, head+"^1"); first != mainBefore {
		t.Fatalf("main moved to %s, whose first parent is %s, not main's previous head %s", head, first, mainBefore)
	}
	firstParents := git(t, s.Dir, "log", "--first-parent", "--format=%H %an", "main")
	if !strings.Contains(firstParents, aliceCommit+" alice") {
		t.Fatalf("alice's commit left main's first-parent history:\n%s", firstParents)
	}
	if log := runIn(t, c, "", "log", "shared/plan.json"); !strings.Contains(log, "alice") {
		t.Fatalf("log on main does not list alice's write:\n%s", log)
	}
	blame := runIn(t, c, "", "blame", "shared/plan.json")
	for _, line := range strings.Split(strings.TrimSpace(blame), "\n") {
		switch {
		case strings.Contains(line, " a = "):
			if !strings.Contains(line, "alice") {
				t.Errorf("alice's value is not credited to her: %s", line)
			}
		case strings.Contains(line, " b = "), strings.Contains(line, " owner = "):
			if strings.Contains(line, "alice") {
				t.Errorf("a value alice never wrote is credited to her: %s", line)
			}
		}
	}
	all := runIn(t, c, "", "blame", "shared/plan.json", "--all-parents")
	for key, who := range map[string]string{" a = ": "alice", " b = ": "bob"} {
		if !strings.Contains(lineWith(all, key), who) {
			t.Errorf("blame --all-parents: %q is not credited to %s:\n%s", key, who, all)
		}
	}
	fsck(t, s.Dir)
}

func lineWith(text, sub string) string {
	for _, l := range strings.Split(text, "\n") {
		if strings.Contains(l, sub) {
			return l
		}
	}
	return ""
}
