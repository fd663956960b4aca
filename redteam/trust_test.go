package redteam

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/aiwg/aiwg-state/internal/testutil"
	"github.com/aiwg/aiwg-state/merge"
	"github.com/aiwg/aiwg-state/repo"
	"github.com/aiwg/aiwg-state/rlm"
	"github.com/aiwg/aiwg-state/store"
)

// newStateIn starts an RLM state in store and returns its id.
func newStateIn(t *testing.T, store string, args ...string) string {
	t.Helper()
	out := runIn(t, store, "", append([]string{"state", "init", "--prompt", "p", "--json"}, args...)...)
	var r struct {
		State struct {
			StateID string `json:"state_id"`
		} `json:"state"`
	}
	if err := json.Unmarshal([]byte(out), &r); err != nil || r.State.StateID == "" {
		t.Fatalf("state init --json: %q %v", out, err)
	}
	return r.State.StateID
}

// storeRefs is a local store's refs, to show a refused write moved none.
func storeRefs(t *testing.T, store string) string {
	t.Helper()
	return git(t, store, "for-each-ref", "--format=%(refname) %(objectname)")
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// TestPlantedCompletionHandlerRunsOnlyOnceTrusted: an agent with push
// access plants `sh -c …` as a completion handler; the operator pulls and
// completes a state. The handler must not run until the operator trusts
// its exact content here, and a changed handler needs trust again.
func TestPlantedCompletionHandlerRunsOnlyOnceTrusted(t *testing.T) {
	s := newServer(t, openPolicy)
	marks := t.TempDir()
	planted := filepath.Join(marks, "pwned")
	changed := filepath.Join(marks, "pwned-again")

	operator := agentStore(t, s.as("conductor"), "operator")
	mallory := agentStore(t, s.as("mallory"), "mallory")
	runIn(t, mallory, "", "state", "on-complete", "touch "+planted, "--agent", "mallory")
	runIn(t, mallory, "", "push")

	runIn(t, operator, "", "pull")
	before := storeRefs(t, operator)
	id := newStateIn(t, operator)
	r := try(operator, "", "final", `"done"`, "--agent", "operator", "--state", id)
	if r.Code != 0 {
		t.Fatalf("final: exit %d: %s", r.Code, r.Stderr)
	}
	if exists(planted) {
		t.Fatal("a completion handler that came by pull ran without the operator's consent")
	}
	if !strings.Contains(r.Stderr, "not trusted") || !strings.Contains(r.Stderr, "aiwg-state trust") || strings.Count(strings.TrimSpace(r.Stderr), "\n") != 0 {
		t.Fatalf("final: want one warning line naming aiwg-state trust, got %q", r.Stderr)
	}
	if storeRefs(t, operator) == before {
		t.Fatal("the state did not complete: the skipped handler must not stop the write")
	}

	// --json: the warning is JSON on stderr, and in the mutation.
	id2 := newStateIn(t, operator)
	r = try(operator, "", "final", `"done"`, "--agent", "operator", "--state", id2, "--json")
	var warn struct{ Warning string }
	if r.Code != 0 || json.Unmarshal([]byte(r.Stderr), &warn) != nil || !strings.Contains(warn.Warning, "aiwg-state trust") {
		t.Fatalf("final --json: exit %d, stderr %q", r.Code, r.Stderr)
	}
	if !strings.Contains(r.Stdout, `"warnings"`) {
		t.Fatalf("final --json: the mutation does not carry the warning: %s", r.Stdout)
	}
	if exists(planted) {
		t.Fatal("the planted handler ran")
	}

	// The operator reads it, then consents to exactly that.
	if out := runIn(t, operator, "", "state", "on-complete"); !strings.Contains(out, "not trusted here") {
		t.Fatalf("state on-complete does not say the handler will not run: %s", out)
	}
	list := runIn(t, operator, "", "trust", "--list")
	if !strings.Contains(list, "NOT TRUSTED") || !strings.Contains(list, "touch "+planted) {
		t.Fatalf("trust --list: %s", list)
	}
	var listed struct {
		Handlers []rlm.HandlerStatus `json:"handlers"`
	}
	if err := json.Unmarshal([]byte(runIn(t, operator, "", "trust", "--list", "--json")), &listed); err != nil || len(listed.Handlers) != 1 {
		t.Fatalf("trust --list --json: %v %+v", err, listed)
	}
	runIn(t, operator, "", "trust", listed.Handlers[0].Digest)
	if !exists(filepath.Join(operator, "aiwg", "trust.json")) {
		t.Fatal("trust is not recorded under the git directory")
	}
	if out := git(t, operator, "ls-tree", "-r", "--name-only", "HEAD"); strings.Contains(out, "trust") {
		t.Fatalf("trust is in the versioned tree:\n%s", out)
	}
	runIn(t, operator, "", "final", `"done"`, "--agent", "operator", "--state", newStateIn(t, operator))
	if !exists(planted) {
		t.Fatal("a trusted handler did not run")
	}

	// Mallory changes the command: another handler, untrusted.
	runIn(t, mallory, "", "pull")
	runIn(t, mallory, "", "state", "on-complete", "touch "+changed, "--agent", "mallory")
	runIn(t, mallory, "", "push")
	runIn(t, operator, "", "pull")
	r = try(operator, "", "final", `"done"`, "--agent", "operator", "--state", newStateIn(t, operator))
	if r.Code != 0 || exists(changed) || !strings.Contains(r.Stderr, "aiwg-state trust") {
		t.Fatalf("a changed handler: exit %d, ran %v, stderr %q", r.Code, exists(changed), r.Stderr)
	}

	// Revoked, the first one no longer runs either.
	runIn(t, operator, "", "trust", "--revoke")
	if out := runIn(t, operator, "", "trust", "--list", "--json"); strings.Contains(out, `"trusted":true`) {
		t.Fatalf("after --revoke: %s", out)
	}
	fsck(t, operator)
	fsck(t, s.Dir)
}

// TestMergeDriversRunOnlyAiwgState: the drivers install-drivers registers
// run the aiwg-state binary and nothing the versioned tree says; the tree
// (.gitattributes) only picks among them.
func TestMergeDriversRunOnlyAiwgState(t *testing.T) {
	s := newServer(t, openPolicy)
	w := cloneAs(t, s.Daemon)
	// A .gitattributes naming a driver nobody configured makes git fall
	// back to its own merge; install-drivers never reads commands from it.
	if err := os.WriteFile(filepath.Join(w, ".gitattributes"), []byte("* merge=evil\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	run(t, "", "install-drivers", "--repo", w, "--bin", bin)
	out := git(t, w, "config", "--get-regexp", `^merge\..*\.driver$`)
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		_, cmd, _ := strings.Cut(line, " ")
		if !strings.HasPrefix(cmd, bin+" merge-file --strategy ") {
			t.Fatalf("a merge driver runs something other than aiwg-state: %s", line)
		}
	}
	if strings.Contains(out, "evil") {
		t.Fatalf("a driver named by .gitattributes was configured: %s", out)
	}

	// A pushed file name with shell syntax reaches the driver's command
	// line (%P) quoted: a plain git merge runs aiwg-state, not the name.
	marker := filepath.Join(t.TempDir(), "pwned")
	file := "agents/x$(touch " + marker + ").json"
	git(t, w, "checkout", "-q", "--", ".gitattributes")
	writeFile(t, w, file, "{\n  \"a\": 1\n}\n")
	git(t, w, "add", "-A")
	git(t, w, "commit", "-qm", "base")
	git(t, w, "checkout", "-qb", "side")
	writeFile(t, w, file, "{\n  \"a\": 1,\n  \"b\": 2\n}\n")
	git(t, w, "commit", "-qam", "side")
	git(t, w, "checkout", "-q", "-")
	writeFile(t, w, file, "{\n  \"a\": 1,\n  \"c\": 3\n}\n")
	git(t, w, "commit", "-qam", "ours")
	git(t, w, "merge", "-q", "--no-edit", "side")
	if exists(marker) {
		t.Fatal("a file name ran as a shell command through the merge driver")
	}
	if got, _ := os.ReadFile(filepath.Join(w, file)); !strings.Contains(string(got), `"b": 2`) || !strings.Contains(string(got), `"c": 3`) {
		t.Fatalf("the aiwg-state driver did not merge the file: %s", got)
	}
	fsck(t, w)
}

// TestSchemaRefNeverLeavesTheStore: a schema whose $ref points at a file
// of the host or the network is refused by the writer and by the hook.
func TestSchemaRefNeverLeavesTheStore(t *testing.T) {
	s := newServer(t, openPolicy)
	st := agentStore(t, s.as("mallory"), "mallory")
	for _, ref := range []string{"file:///etc/passwd", "https://example.invalid/s.json", "../../../../etc/passwd"} {
		schema := `{"$ref": "` + ref + `"}`
		before := storeRefs(t, st)
		r := try(st, schema, "schema", "add", "evil", "-", "--path", "agents/*.json")
		if r.Code != 2 || !strings.Contains(r.Stderr, "refer only to schemas") {
			t.Fatalf("schema with $ref %s: exit %d: %s", ref, r.Code, r.Stderr)
		}
		if storeRefs(t, st) != before {
			t.Fatal("a refused schema moved the store")
		}
	}
	fsck(t, st)
	// Plain git: the rules and the schema pushed together.
	w := cloneAs(t, s.Daemon)
	writeFile(t, w, ".aiwg/schemas.json", "{\n  \"rules\": [\n    {\n      \"paths\": [\n        \"agents/*.json\"\n      ],\n      \"schema\": \".aiwg/schemas/evil.schema.json\"\n    }\n  ]\n}\n")
	writeFile(t, w, ".aiwg/schemas/evil.schema.json", "{\n  \"$ref\": \"https://example.invalid/s.json\"\n}\n")
	git(t, w, "add", "-A")
	git(t, w, "commit", "-qm", "schema")
	refused(t, s, w, s.Daemon, "HEAD:refs/heads/main", "may refer only to schemas in the store")
}

func writeFile(t *testing.T, dir, path, body string) {
	t.Helper()
	p := filepath.Join(dir, filepath.FromSlash(path))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestMalformedSettingsPushIsRefused: a policy, a manifest or schema rules
// that do not parse and validate are refused by the hook, over both
// servers, and the server does not move.
func TestMalformedSettingsPushIsRefused(t *testing.T) {
	s := newServer(t, "")
	cases := []struct{ path, body, want string }{
		{".aiwg/policy.json", "{\n  \"rules\": 5\n}\n", "invalid access policy"},
		{".aiwg/policy.json", "{\n  \"rules\": [\n    {\n      \"efect\": \"deny\",\n      \"paths\": [\n        \"**\"\n      ]\n    }\n  ]\n}\n", "invalid access policy"},
		{".aiwg/store.json", "{\n  \"format\": 1,\n  \"limits\": 5\n}\n", "store-settings"},
		{".aiwg/store.json", "{\n  \"format\": 1,\n  \"limits\": {\n    \"max_document_bytes\": 1024\n  },\n  \"rlm\": {\n    \"on_complete\": [\n      {\n        \"command\": [],\n        \"name\": \"x\"\n      }\n    ]\n  }\n}\n", "has no command"},
		{".aiwg/schemas.json", "{\n  \"rules\": 5\n}\n", "rule schema: .aiwg/schemas.json"},
	}
	for _, c := range cases {
		t.Run(c.path, func(t *testing.T) {
			url := s.as("conductor")
			w := cloneAs(t, url)
			writeFile(t, w, c.path, c.body)
			git(t, w, "add", "-A")
			git(t, w, "-c", "user.name=conductor", "commit", "-qm", "break the settings")
			refused(t, s, w, url, "HEAD:refs/heads/main", c.want)
		})
	}
	// After all that, the owner still writes and pushes as before.
	runIn(t, s.Coordinator, "", "set", "protected/config.json", "mode", `"safer"`, "--agent", "conductor")
	runIn(t, s.Coordinator, "", "push")
	fsck(t, s.Dir)
}

// plainCommit writes path=body on the store's branch with git plumbing
// alone, as a user of plain git would, without aiwg-state's checks.
func plainCommit(t *testing.T, store, path, body string) {
	t.Helper()
	admin := testutil.Git{GitDir: store, Config: []string{"user.name=admin", "user.email=admin@example.invalid"}}
	commit := testutil.CommitFile(t, admin, "HEAD", path, body, "plain git\n")
	admin.Run(t, "update-ref", "HEAD", commit)
}

// TestBrokenSettingsAreRepairedByTheirCommand: a policy or schema rules
// broken by plain git refuse every write with exit 3 and the way out, and
// the command that owns the file repairs it.
func TestBrokenSettingsAreRepairedByTheirCommand(t *testing.T) {
	cases := []struct {
		path, body, want string
		repair           []string
		stdin            string
	}{
		{".aiwg/policy.json", "{\n  \"rules\": 5\n}\n", "policy set", []string{"policy", "set", "-", "--agent", "conductor"}, teamPolicy},
		{".aiwg/schemas.json", "{\n  \"rules\": 5\n}\n", "schema rm --all", []string{"schema", "rm", "--all", "--agent", "conductor"}, ""},
	}
	for _, c := range cases {
		t.Run(c.path, func(t *testing.T) {
			st := filepath.Join(t.TempDir(), "s.git")
			run(t, "", "init", "--store", st)
			runIn(t, st, teamPolicy, "policy", "set", "-", "--agent", "conductor")
			plainCommit(t, st, c.path, c.body)
			before := storeRefs(t, st)
			for _, args := range [][]string{
				{"set", "agents/alice/a.json", "n", "1", "--agent", "alice"},
				{"set", "protected/config.json", "n", "1", "--agent", "conductor"},
			} {
				r := try(st, "", args...)
				if r.Code != 3 || !strings.Contains(r.Stderr, c.want) {
					t.Fatalf("%v on a store with a broken %s: exit %d, want 3 naming %q: %s", args, c.path, r.Code, c.want, r.Stderr)
				}
			}
			if storeRefs(t, st) != before {
				t.Fatal("a refused write moved the store")
			}
			if c.path == ".aiwg/policy.json" {
				// The repair is judged by the last policy that parsed:
				// alice may not write the policy, broken or not.
				r := try(st, openPolicy, "policy", "set", "-", "--agent", "alice")
				if r.Code != 3 || !strings.Contains(r.Stderr, "denied") {
					t.Fatalf("alice repairs the policy: exit %d: %s", r.Code, r.Stderr)
				}
			}
			runIn(t, st, c.stdin, c.repair...)
			runIn(t, st, "", "set", "agents/alice/a.json", "n", "1", "--agent", "alice")
			fsck(t, st)
		})
	}
	// A policy set that does not parse is refused with exit 3 and why.
	st := filepath.Join(t.TempDir(), "s.git")
	run(t, "", "init", "--store", st)
	before := storeRefs(t, st)
	if r := try(st, `{"rules": 5}`, "policy", "set", "-"); r.Code != 3 || !strings.Contains(r.Stderr, "invalid access policy") {
		t.Fatalf("policy set {\"rules\": 5}: exit %d: %s", r.Code, r.Stderr)
	}
	if storeRefs(t, st) != before {
		t.Fatal("a refused policy moved the store")
	}
}

// TestBrokenPolicyInForceOnServerAdmitsOnlyItsRepair: a server whose policy
// in force is broken (an administrator's plain git) neither refuses every
// push nor lets everything through: it takes only a push that repairs the
// policy, from whom the last policy that parsed lets write it.
func TestBrokenPolicyInForceOnServerAdmitsOnlyItsRepair(t *testing.T) {
	s := newServer(t, "")
	admin := cloneAs(t, s.Daemon)
	writeFile(t, admin, ".aiwg/policy.json", "{\n  \"rules\": 5\n}\n")
	git(t, admin, "add", "-A")
	git(t, admin, "commit", "-qm", "admin breaks the policy")
	// On the server itself, past the hook, as an administrator can.
	git(t, admin, "push", "-q", "--receive-pack=git -c core.hooksPath=/dev/null receive-pack", s.Dir, "HEAD:refs/heads/main")

	bob := cloneAs(t, s.as("bob"))
	writeFile(t, bob, "agents/bob/notes.json", "{\n  \"n\": 1\n}\n")
	git(t, bob, "add", "-A")
	git(t, bob, "-c", "user.name=bob", "commit", "-qm", "bob writes his own")
	refused(t, s, bob, s.as("bob"), "HEAD:refs/heads/main", "until a push repairs it")

	// bob's repair: a policy that opens the store to him. The last policy
	// that parsed does not let him write the policy.
	git(t, bob, "reset", "-q", "--hard", "HEAD~1")
	writeFile(t, bob, ".aiwg/policy.json", "{\n  \"default\": \"allow\",\n  \"rules\": []\n}\n")
	git(t, bob, "add", "-A")
	git(t, bob, "-c", "user.name=bob", "commit", "-qm", "bob repairs the policy his way")
	refused(t, s, bob, s.as("bob"), "HEAD:refs/heads/main", "may not write this path")

	// The conductor repairs it with aiwg-state; then bob's write goes in.
	conductor := agentStore(t, s.as("conductor"), "conductor2")
	runIn(t, conductor, teamPolicy, "policy", "set", "-", "--agent", "conductor")
	runIn(t, conductor, "", "push")
	bob2 := agentStore(t, s.as("bob"), "bob2")
	runIn(t, bob2, "", "set", "agents/bob/notes.json", "n", "1", "--agent", "bob")
	runIn(t, bob2, "", "push")
	fsck(t, s.Dir)
}

// TestEmptyExpectationIsRefused: --expect ” and --unchanged-since ” (an
// unset shell variable) exit 2 and write nothing, as an empty key path
// does; the library refuses an explicitly empty expectation too.
func TestEmptyExpectationIsRefused(t *testing.T) {
	st := filepath.Join(t.TempDir(), "s.git")
	run(t, "", "init", "--store", st)
	runIn(t, st, "", "set", "a.json", "n", "1")
	runIn(t, st, "", "branch", "side")
	before := storeRefs(t, st)
	for _, args := range [][]string{
		{"set", "a.json", "n", "2", "--expect", ""},
		{"set", "a.json", "n", "2", "--expect="},
		{"set", "a.json", "n", "2", "--expect", "  "},
		{"set", "a.json", "n", "2", "--unchanged-since", ""},
		{"rm", "a.json", "--expect", ""},
		{"apply", "-", "--unchanged-since="},
		{"merge", "side", "--expect", ""},
	} {
		r := try(st, `{"op": "set", "file": "a.json", "path": "n", "value": 3}`, args...)
		if r.Code != 2 || !strings.Contains(r.Stderr, "is empty") {
			t.Fatalf("%v: exit %d, want 2: %s", args, r.Code, r.Stderr)
		}
	}
	if storeRefs(t, st) != before {
		t.Fatal("a refused write moved the store")
	}

	ctx := context.Background()
	s, err := store.Open(ctx, st, store.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for _, wo := range []store.WriteOptions{{Expect: store.Rev("")}, {UnchangedSince: store.Rev("")}} {
		if _, err := s.Set(ctx, "a.json", "n", []byte("4"), wo); !errors.Is(err, store.ErrUsage) {
			t.Fatalf("Set with an empty expectation: %v", err)
		}
	}
	if _, err := merge.New(s).Merge(ctx, "side", merge.MergeOptions{Write: store.WriteOptions{Expect: store.Rev("")}}); !errors.Is(err, store.ErrUsage) {
		t.Fatalf("Merge with an empty Expect: %v", err)
	}
	// A fast-forward holds Expect too.
	if _, err := merge.New(s).Merge(ctx, "side", merge.MergeOptions{Write: store.WriteOptions{Expect: store.Rev("HEAD~1")}}); !errors.Is(err, repo.ErrStale) {
		t.Fatalf("Merge with a stale Expect: %v", err)
	}
	if storeRefs(t, st) != before {
		t.Fatal("a refused write moved the store")
	}
	fsck(t, st)
}

// TestNormalizationCollisionIsRefused: "café.json" composed (NFC) and
// decomposed (NFD) are two names to git and one to macOS. The store
// refuses the second in-process, and the hook refuses it pushed.
func TestNormalizationCollisionIsRefused(t *testing.T) {
	const nfc, nfd = "caf\u00e9", "cafe\u0301"
	st := filepath.Join(t.TempDir(), "s.git")
	run(t, "", "init", "--store", st)
	runIn(t, st, "", "set", "agents/bob/"+nfc+".json", "n", "1")
	before := storeRefs(t, st)
	r := try(st, "", "set", "agents/bob/"+nfd+".json", "n", "2")
	if r.Code != 2 || !strings.Contains(r.Stderr, "Unicode normalization") {
		t.Fatalf("set of the NFD name: exit %d: %s", r.Code, r.Stderr)
	}
	if storeRefs(t, st) != before {
		t.Fatal("a refused set moved the store")
	}
	r = try(st, "", "memory", "put", "session", "note", nfc, `{"a": 1}`)
	if r.Code != 0 {
		t.Fatalf("memory put %s: exit %d: %s", nfc, r.Code, r.Stderr)
	}
	before = storeRefs(t, st)
	r = try(st, "", "memory", "put", "session", "note", nfd, `{"a": 2}`)
	if r.Code == 0 || !strings.Contains(r.Stderr, "Unicode normalization") {
		t.Fatalf("memory put of the NFD id: exit %d: %s", r.Code, r.Stderr)
	}
	if storeRefs(t, st) != before {
		t.Fatal("a refused write moved the store")
	}
	ctx := context.Background()
	s, err := store.Open(ctx, st, store.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Set(ctx, "agents/bob/"+nfd+".json", "n", []byte("3"), store.WriteOptions{}); !errors.Is(err, repo.ErrInvalidName) {
		t.Fatalf("in-process Set of the NFD name: %v", err)
	}
	s.Close()
	fsck(t, st)

	srv := newServer(t, "")
	for name, url := range srv.urls("bob") {
		t.Run(name, func(t *testing.T) {
			w := cloneAs(t, url)
			writeFile(t, w, "agents/bob/"+nfc+".json", "{\n  \"n\": 1\n}\n")
			git(t, w, "add", "-A")
			git(t, w, "-c", "user.name=bob", "commit", "-qm", "nfc")
			writeFile(t, w, "agents/bob/"+nfd+".json", "{\n  \"n\": 2\n}\n")
			git(t, w, "add", "-A")
			git(t, w, "-c", "user.name=bob", "commit", "-qm", "nfd beside it")
			refused(t, srv, w, url, "HEAD:refs/heads/main", "Unicode normalization")
			// A directory too: Café/ beside café/.
			git(t, w, "reset", "-q", "--hard", "HEAD~2")
			writeFile(t, w, "agents/bob/"+nfc+"/a.json", "{\n  \"n\": 1\n}\n")
			writeFile(t, w, "agents/bob/"+nfd+"/b.json", "{\n  \"n\": 1\n}\n")
			git(t, w, "add", "-A")
			git(t, w, "-c", "user.name=bob", "commit", "-qm", "two directories")
			refused(t, srv, w, url, "HEAD:refs/heads/main", "Unicode normalization")
			// And case alone, which the store refuses too.
			git(t, w, "reset", "-q", "--hard", "HEAD~1")
			writeFile(t, w, "agents/bob/Notes.json", "{\n  \"n\": 1\n}\n")
			writeFile(t, w, "agents/bob/notes.json", "{\n  \"n\": 2\n}\n")
			git(t, w, "add", "-A")
			git(t, w, "-c", "user.name=bob", "commit", "-qm", "case")
			refused(t, srv, w, url, "HEAD:refs/heads/main", "differ only in case")
		})
	}
}

// TestPullOfBrokenSettingsIsRefused: a remote without the hook (plain git
// behind it) holds a broken policy; pulling it, as a fast-forward, is
// refused with the reason, and the local branch does not move.
func TestPullOfBrokenSettingsIsRefused(t *testing.T) {
	for _, c := range []struct{ path, body, want string }{
		{".aiwg/policy.json", "{\n  \"rules\": 5\n}\n", "invalid access policy"},
		{".aiwg/store.json", "{\n  \"format\": 1,\n  \"limits\": 5\n}\n", "limits must be an object"},
	} {
		t.Run(c.path, func(t *testing.T) {
			upstream := filepath.Join(t.TempDir(), "up.git")
			run(t, "", "init", "--store", upstream)
			local := filepath.Join(t.TempDir(), "local.git")
			run(t, "", "clone", upstream, local)
			plainCommit(t, upstream, c.path, c.body)
			before := git(t, local, "rev-parse", "refs/heads/main")
			r := try(local, "", "pull")
			if r.Code != 3 || !strings.Contains(r.Stderr, c.want) || !strings.Contains(r.Stderr, "fast-forward") {
				t.Fatalf("pull of a broken %s: exit %d: %s", c.path, r.Code, r.Stderr)
			}
			if after := git(t, local, "rev-parse", "refs/heads/main"); after != before {
				t.Fatalf("a refused pull moved main from %s to %s", before, after)
			}
			fsck(t, local)
		})
	}
}
