package redteam

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// identityPolicy is teamPolicy with the HTTP server's users as pushers:
// each acts as the agent of its name; the conductor integrates, and is the
// one agent who may force-release another's lease. Workers may write their
// own directory and leases.
const identityPolicy = `{
  "roles": {"coordinator": ["conductor"], "workers": ["alice", "bob", "mallory"], "lease_admin": ["conductor"]},
  "pushers": {
    "conductor": {"agents": ["conductor"], "roles": ["integrator"]},
    "alice": {"agents": ["alice"]},
    "bob": {"agents": ["bob"]},
    "mallory": {"agents": ["mallory"]}
  },
  "rules": [
    {"name": "coordinator writes all", "roles": ["coordinator"], "paths": ["**"]},
    {"name": "own directory", "roles": ["workers"], "paths": ["agents/{agent}/**", "leases/**"]}
  ]
}`

// commitFile writes path in a plain-git clone and commits it with the
// identity that -c options and --author give (args before "commit").
func commitFile(t *testing.T, clone, path, body string, args ...string) {
	t.Helper()
	full := filepath.Join(clone, path)
	if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(full, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	git(t, clone, "add", path)
	git(t, clone, append(args, "commit", "-qm", "write "+path)...)
}

// accepted pushes refspec from a plain-git clone and fails unless the
// server took it.
func accepted(t *testing.T, s *server, clone, url, refspec string) {
	t.Helper()
	if out, err := gitTry(clone, "", "push", url, refspec); err != nil {
		t.Fatalf("push %s was refused: %v\n%s", refspec, err, out)
	}
	fsck(t, s.Dir)
}

func TestSpoofedAuthorIsRefused(t *testing.T) {
	s := newServer(t, identityPolicy)
	w := cloneAs(t, s.as("mallory"))
	// alice may write agents/alice/: the path policy alone would take it.
	commitFile(t, w, "agents/alice/notes.json", "{\n  \"by\": \"alice\"\n}\n", "-c", "user.name=mallory")
	git(t, w, "commit", "-q", "--amend", "--no-edit", "--author", "alice <alice@example.invalid>")
	refused(t, s, w, s.as("mallory"), "HEAD:refs/heads/main", `rule identity: pusher "mallory" may not act as agent "alice" (the commit's author)`)
	// Anonymously, the server does not know who pushes: a policy naming
	// pushers takes nothing from it.
	refused(t, s, w, s.Daemon, "HEAD:refs/heads/main", "this server did not say who pushes")
	// And a pusher the policy does not name takes nothing either.
	s2 := newServer(t, strings.Replace(identityPolicy, `"mallory": {"agents": ["mallory"]}`, `"mallory2": {"agents": ["mallory"]}`, 1))
	w2 := cloneAs(t, s2.as("mallory"))
	commitFile(t, w2, "agents/mallory/notes.json", "{}\n", "-c", "user.name=mallory")
	refused(t, s2, w2, s2.as("mallory"), "HEAD:refs/heads/main", `pusher "mallory" is not one of the policy's pushers`)
}

func TestSpoofedCommitterIsRefused(t *testing.T) {
	s := newServer(t, identityPolicy)
	w := cloneAs(t, s.as("mallory"))
	commitFile(t, w, "agents/mallory/notes.json", "{}\n", "-c", "user.name=alice", "-c", "user.email=alice@example.invalid")
	git(t, w, "-c", "user.name=alice", "commit", "-q", "--amend", "--no-edit", "--author", "mallory <m@example.invalid>")
	refused(t, s, w, s.as("mallory"), "HEAD:refs/heads/main", `pusher "mallory" may not act as agent "alice" (the commit's committer)`)
	// The same commit, as mallory's own, goes through.
	git(t, w, "commit", "-q", "--amend", "--no-edit", "--reset-author")
	accepted(t, s, w, s.as("mallory"), "HEAD:refs/heads/main")
}

func TestForeignAgentBranchIsRefused(t *testing.T) {
	s := newServer(t, identityPolicy)
	// alice makes her branch, and bob has one of his own.
	a := cloneAs(t, s.as("alice"))
	commitFile(t, a, "agents/alice/notes.json", "{}\n", "-c", "user.name=alice")
	accepted(t, s, a, s.as("alice"), "HEAD:refs/heads/agents/alice/main")
	b := cloneAs(t, s.as("bob"))
	commitFile(t, b, "agents/bob/notes.json", "{}\n", "-c", "user.name=bob")
	accepted(t, s, b, s.as("bob"), "HEAD:refs/heads/agents/bob/main")

	// bob creates a branch in alice's namespace, even at a commit the
	// server has, moves hers, deletes hers.
	const want = `rule namespace: agents/alice/* is agent "alice"'s: pusher "bob" may not act as it`
	refused(t, s, b, s.as("bob"), "origin/main:refs/heads/agents/alice/evil", want)
	// Branches that would keep alice, or every agent, out of agents/.
	refused(t, s, b, s.as("bob"), "origin/main:refs/heads/agents/alice", want)
	refused(t, s, b, s.as("bob"), "origin/main:refs/heads/agents", "rule namespace: agents/ holds the agents' branches")
	git(t, b, "fetch", "-q", s.as("bob"), "refs/heads/agents/alice/main:refs/remotes/origin/alice")
	git(t, b, "checkout", "-q", "-b", "on-alice", "origin/alice")
	commitFile(t, b, "agents/bob/more.json", "{}\n", "-c", "user.name=bob")
	refused(t, s, b, s.as("bob"), "HEAD:refs/heads/agents/alice/main", want)
	refused(t, s, b, s.as("bob"), ":refs/heads/agents/alice/main", want)

	// Anonymously (a server that lets unauthenticated pushes through),
	// agents/alice/* takes new commits by alice only.
	open := newServer(t, teamPolicy)
	o := cloneAs(t, open.Daemon)
	commitFile(t, o, "agents/bob/notes.json", "{}\n", "-c", "user.name=bob")
	refused(t, open, o, open.Daemon, "HEAD:refs/heads/agents/alice/main", `rule namespace: agents/alice/* takes new commits by agent "alice" only`)
	accepted(t, open, o, open.Daemon, "HEAD:refs/heads/agents/bob/main")

	// A policy with pushers that lets unauthenticated pushes through
	// ("require_pusher": false) checks those as a policy without pushers
	// does, and still holds authenticated ones to their agents.
	mixed := newServer(t, strings.Replace(identityPolicy, `"rules"`, `"require_pusher": false, "rules"`, 1))
	m := cloneAs(t, mixed.Daemon)
	commitFile(t, m, "agents/bob/notes.json", "{}\n", "-c", "user.name=bob")
	refused(t, mixed, m, mixed.Daemon, "HEAD:refs/heads/agents/alice/main", `rule namespace: agents/alice/* takes new commits by agent "alice" only`)
	refused(t, mixed, m, mixed.as("mallory"), "HEAD:refs/heads/agents/bob/main", `pusher "mallory" may not act as it`)
	accepted(t, mixed, m, mixed.Daemon, "HEAD:refs/heads/agents/bob/main")
}

func TestIntegratorMergesButDoesNotImpersonate(t *testing.T) {
	s := newServer(t, identityPolicy)
	for _, agent := range []string{"alice", "bob"} {
		w := cloneAs(t, s.as(agent))
		commitFile(t, w, "agents/"+agent+"/work.json", "{\n  \"done\": true\n}\n", "-c", "user.name="+agent)
		accepted(t, s, w, s.as(agent), "HEAD:refs/heads/agents/"+agent+"/main")
	}
	// bob is no integrator: merging alice's work into main is refused.
	b := cloneAs(t, s.as("bob"))
	git(t, b, "-c", "user.name=bob", "merge", "-q", "--no-ff", "-m", "integrate alice", "origin/agents/alice/main")
	const notIntegrator = `rule integrator: the push brings agent "alice"'s work, which the default branch does not have, onto main: pusher "bob" is no integrator`
	refused(t, s, b, s.as("bob"), "HEAD:refs/heads/main", notIntegrator)
	// Nor by a fast-forward onto her branch, nor onto his own.
	refused(t, s, b, s.as("bob"), "origin/agents/alice/main:refs/heads/main", notIntegrator)
	git(t, b, "checkout", "-q", "-b", "mine", "origin/agents/bob/main")
	git(t, b, "-c", "user.name=bob", "merge", "-q", "--no-ff", "-m", "take alice's", "origin/agents/alice/main")
	refused(t, s, b, s.as("bob"), "HEAD:refs/heads/agents/bob/main", strings.Replace(notIntegrator, "onto main", "onto agents/bob/main", 1))

	// The conductor merges both, as integrate does: accepted.
	c := cloneAs(t, s.as("conductor"))
	for _, agent := range []string{"alice", "bob"} {
		git(t, c, "-c", "user.name=conductor", "merge", "-q", "--no-ff", "-m", "integrate "+agent, "origin/agents/"+agent+"/main")
	}
	accepted(t, s, c, s.as("conductor"), "HEAD:refs/heads/main")
	// But it may not write a new commit under alice's name.
	commitFile(t, c, "agents/alice/work.json", "{\n  \"done\": false\n}\n", "-c", "user.name=conductor")
	git(t, c, "commit", "-q", "--amend", "--no-edit", "--author", "alice <alice@example.invalid>")
	refused(t, s, c, s.as("conductor"), "HEAD:refs/heads/main", `pusher "conductor" may not act as agent "alice" (the commit's author)`)

	// alice brings main (bob's work, integrated) into her branch: no
	// integrator needed for what main has.
	a := cloneAs(t, s.as("alice"))
	git(t, a, "checkout", "-q", "-b", "mine", "origin/agents/alice/main")
	git(t, a, "-c", "user.name=alice", "merge", "-q", "--no-ff", "-m", "sync", "origin/main")
	accepted(t, s, a, s.as("alice"), "HEAD:refs/heads/agents/alice/main")
}

// TestAgentsWorkflowWithPushers is the legitimate flow through aiwg-state:
// agents start their branches and push, the conductor integrates.
func TestAgentsWorkflowWithPushers(t *testing.T) {
	s := newServer(t, identityPolicy)
	for _, agent := range []string{"alice", "bob"} {
		st := agentStore(t, s.as(agent), agent)
		runIn(t, st, "", "agent", "start", agent)
		runIn(t, st, "", "set", "agents/"+agent+"/state.json", "step", "1", "--agent", agent)
		runIn(t, st, "", "push")
	}
	runIn(t, s.Coordinator, "", "integrate", "--agent", "conductor")
	if out := git(t, s.Dir, "show", "main:agents/bob/state.json"); !strings.Contains(out, `"step": 1`) {
		t.Fatalf("integrated main lacks bob's state:\n%s", out)
	}
	fsck(t, s.Dir)
}

// leaseHeld has alice take a long lease on tasks/t1 through aiwg-state and
// push it to main; it returns the lease's id.
func leaseHeld(t *testing.T, s *server) string {
	t.Helper()
	st := agentStore(t, s.as("alice"), "alice")
	out := runIn(t, st, "", "lease", "acquire", "tasks/t1", "--ttl", "1h", "--agent", "alice", "--json")
	var res struct {
		Lease struct{ ID string } `json:"lease"`
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil || res.Lease.ID == "" {
		t.Fatalf("lease acquire: %v\n%s", err, out)
	}
	runIn(t, st, "", "push")
	return res.Lease.ID
}

func TestForeignForceReleaseIsRefused(t *testing.T) {
	s := newServer(t, identityPolicy)
	id := leaseHeld(t, s)

	// Through the CLI: mallory's own store refuses the write.
	m := agentStore(t, s.as("mallory"), "mallory")
	head := git(t, m, "rev-parse", "refs/heads/main")
	r := try(m, "", "lease", "release", "tasks/t1", "--force", "--reason", "mine now", "--agent", "mallory")
	if r.Code != 3 || !strings.Contains(r.Stderr, `agent "mallory" removes alice's lease `+id+` on tasks/t1: a forced release is for the holder, or an agent of the policy's "lease_admin" role`) {
		t.Fatalf("forced release by mallory: exit %d\n%s%s", r.Code, r.Stderr, r.Stdout)
	}
	if after := git(t, m, "rev-parse", "refs/heads/main"); after != head {
		t.Fatalf("a refused release moved mallory's main: %s -> %s", head, after)
	}
	fsck(t, m)

	// Pushed: a commit that drops alice's lease from its record, made with
	// plain git, or one that rewrites it as run out.
	w := cloneAs(t, s.as("mallory"))
	git(t, w, "rm", "-q", "leases/tasks/t1.json")
	git(t, w, "commit", "-qm", "lease force-release tasks/t1")
	refused(t, s, w, s.as("mallory"), "HEAD:refs/heads/main", "rule lease: removes alice's lease "+id+" on tasks/t1")
	git(t, w, "reset", "-q", "--hard", "origin/main")
	rec, err := os.ReadFile(filepath.Join(w, "leases", "tasks", "t1.json"))
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(rec, &doc); err != nil {
		t.Fatal(err)
	}
	doc["locks"].([]any)[0].(map[string]any)["expiresAt"] = "2000-01-01T00:00:00Z"
	body, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	commitFile(t, w, "leases/tasks/t1.json", string(body)+"\n")
	refused(t, s, w, s.as("mallory"), "HEAD:refs/heads/main", "rule lease: writes alice's lease "+id+" on tasks/t1, which only alice may take or renew")

	// The conductor is the policy's lease_admin: its forced release is
	// taken, in-process and by the server.
	runIn(t, s.Coordinator, "", "pull")
	runIn(t, s.Coordinator, "", "lease", "release", "tasks/t1", "--force", "--reason", "alice crashed", "--agent", "conductor")
	runIn(t, s.Coordinator, "", "push")
	if out := git(t, s.Dir, "ls-tree", "main", "leases/tasks/t1.json"); out != "" {
		t.Fatalf("the forced release did not reach the server: %s", out)
	}
	fsck(t, s.Dir)
}

// TestHolderReleasesOwnLease: the holder needs no role to let go.
func TestHolderReleasesOwnLease(t *testing.T) {
	s := newServer(t, identityPolicy)
	leaseHeld(t, s)
	st := agentStore(t, s.as("alice"), "alice")
	runIn(t, st, "", "lease", "release", "tasks/t1", "--agent", "alice")
	runIn(t, st, "", "push")
	fsck(t, s.Dir)
}

// pushWithEnv pushes to the server's repository by its path, as an SSH
// forced command would run git-receive-pack: the hook sees env.
func pushWithEnv(clone, dir, refspec string, env ...string) (string, error) {
	cmd := exec.Command("git", "-C", clone, "push", dir, refspec)
	for _, kv := range os.Environ() {
		// Only what this push sets says who pushes.
		if k, _, _ := strings.Cut(kv, "="); k != "REMOTE_USER" && k != "GL_USER" && k != "AIWG_PUSHER" {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(cmd.Env, env...)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// TestPusherFromSSHEnvironment: gitolite's GL_USER, and a variable the
// server's git configuration names (aiwg.pusherVariable), as an SSH
// forced command sets them.
func TestPusherFromSSHEnvironment(t *testing.T) {
	s := newServer(t, identityPolicy)
	w := cloneAs(t, s.as("mallory"))
	commitFile(t, w, "agents/alice/notes.json", "{}\n", "-c", "user.name=alice")
	for _, tc := range []struct {
		name     string
		ref      string // default agents/alice/main
		config   string // aiwg.pusherVariable, "" unset
		env      []string
		accepted bool
		want     string
	}{
		{"GL_USER mallory on main", "main", "", []string{"GL_USER=mallory"}, false, `pusher "mallory" may not act as agent "alice" (the commit's author)`},
		{"GL_USER mallory", "", "", []string{"GL_USER=mallory"}, false, `agents/alice/* is agent "alice"'s: pusher "mallory" may not act as it`},
		{"no pusher", "", "", nil, false, "this server did not say who pushes"},
		{"named variable wins", "", "AIWG_PUSHER", []string{"AIWG_PUSHER=mallory", "REMOTE_USER=alice", "GL_USER=alice"}, false, `agents/alice/* is agent "alice"'s: pusher "mallory" may not act as it`},
		{"named variable unset", "", "AIWG_PUSHER", []string{"REMOTE_USER=alice"}, false, "this server did not say who pushes"},
		{"named variable alice", "", "AIWG_PUSHER", []string{"AIWG_PUSHER=alice"}, true, ""},
		{"GL_USER alice", "agents/alice/other", "", []string{"GL_USER=alice"}, true, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.config != "" {
				git(t, s.Dir, "config", "aiwg.pusherVariable", tc.config)
			} else {
				gitTry(s.Dir, "", "config", "--unset", "aiwg.pusherVariable")
			}
			before := s.refs(t)
			ref := "agents/alice/main"
			if tc.ref != "" {
				ref = tc.ref
			}
			out, err := pushWithEnv(w, s.Dir, "HEAD:refs/heads/"+ref, tc.env...)
			if tc.accepted {
				if err != nil {
					t.Fatalf("refused: %v\n%s", err, out)
				}
				fsck(t, s.Dir)
				return
			}
			if err == nil || !strings.Contains(out, tc.want) {
				t.Fatalf("push: %v, want a refusal naming %q:\n%s", err, tc.want, out)
			}
			if after := s.refs(t); after != before {
				t.Fatalf("a refused push moved the server's refs:\n%s\n%s", before, after)
			}
			fsck(t, s.Dir)
		})
	}
}

// TestPolicyCheckAsPusher: an agent's aiwg-state tells it before pushing
// what the server will say of its commits for its pusher, and the server
// says the same.
func TestPolicyCheckAsPusher(t *testing.T) {
	s := newServer(t, identityPolicy)
	m := agentStore(t, s.as("mallory"), "mallory")
	// The path policy lets alice write her directory: in-process, the
	// author is whatever --agent says.
	runIn(t, m, "", "set", "agents/alice/notes.json", "by", `"mallory"`, "--agent", "alice")
	r := try(m, "", "policy", "check", "--pusher", "mallory")
	if r.Code != 3 || !strings.Contains(r.Stdout, `rule identity: pusher "mallory" may not act as agent "alice" (the commit's author)`) {
		t.Fatalf("policy check --pusher mallory: exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	if r := try(m, "", "policy", "check", "--pusher", "eve"); r.Code != 3 || !strings.Contains(r.Stderr, `pusher "eve" is not one of the policy's pushers`) {
		t.Fatalf("policy check --pusher eve: exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	runIn(t, m, "", "policy", "check", "--pusher", "alice")
	before := s.refs(t)
	r = try(m, "", "push")
	if r.Code != 3 || !strings.Contains(r.Stderr, `may not act as agent "alice"`) {
		t.Fatalf("push: exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	if after := s.refs(t); after != before {
		t.Fatalf("a refused push moved the server's refs:\n%s\n%s", before, after)
	}
	fsck(t, s.Dir)
	fsck(t, m)
}
