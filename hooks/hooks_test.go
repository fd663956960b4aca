package hooks

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/aiwg/aiwg-state/internal/gitserver"
	"github.com/aiwg/aiwg-state/internal/testutil"
	"github.com/aiwg/aiwg-state/objects"
	"github.com/aiwg/aiwg-state/policy"
	"github.com/aiwg/aiwg-state/store"
)

// TestMain doubles as the hook: Install writes a hook that runs
// "BINARY hooks-run-pre-receive HOOKPATH" (the direct form) or, from a
// shell, "BINARY hooks run pre-receive", and here BINARY is this test
// binary, so the real git server runs the real checks on the quarantined
// push.
func TestMain(m *testing.M) {
	if n := len(os.Args); n == 3 && os.Args[1] == DirectArg || n >= 4 && strings.Join(os.Args[n-3:], " ") == "hooks run pre-receive" {
		os.Exit(runHook())
	}
	os.Exit(m.Run())
}

func runHook() int {
	ups, err := ParseUpdates(os.Stdin)
	if err == nil {
		err = Check(context.Background(), ".", ups, Options{})
	}
	AutoGC(".")
	var re *RefusedError
	if errors.As(err, &re) {
		for _, v := range re.Violations {
			fmt.Fprintln(os.Stderr, "aiwg-state: refused: "+v.String())
		}
		return 1
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "aiwg-state:", err)
		return 1
	}
	return 0
}

const testPolicy = `{
  "roles": {"coordinator": ["conductor"], "workers": ["pulse", "heartbeat"]},
  "rules": [
    {"name": "coordinator writes all", "roles": ["coordinator"], "paths": ["**"]},
    {"name": "only own sessions", "roles": ["workers"], "paths": ["agents/{agent}/**"]}
  ]
}`

func canon(t *testing.T, s string) string {
	t.Helper()
	b, err := objects.Canonical([]byte(s))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// work is a plain git clone where commits are made as a given agent.
type work struct {
	t   *testing.T
	dir string
}

func (w *work) git(agent string, args ...string) (string, error) {
	return testutil.Git{Dir: w.dir, Env: testutil.AgentEnv(agent)}.Try(args...)
}

func (w *work) must(agent string, args ...string) string {
	w.t.Helper()
	out, err := w.git(agent, args...)
	if err != nil {
		w.t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return out
}

// commit writes files (path -> content, "" deletes) as agent.
func (w *work) commit(agent string, files map[string]string) string {
	w.t.Helper()
	for p, v := range files {
		full := filepath.Join(w.dir, p)
		if v == "" {
			w.must(agent, "rm", "-q", p)
			continue
		}
		os.MkdirAll(filepath.Dir(full), 0o755)
		if err := os.WriteFile(full, []byte(v), 0o644); err != nil {
			w.t.Fatal(err)
		}
		w.must(agent, "add", p)
	}
	w.must(agent, "commit", "-q", "-m", "write by "+agent)
	return strings.TrimSpace(w.must(agent, "rev-parse", "HEAD"))
}

// setup serves a bare repository with the hook installed, seeded with a
// policy, and returns the server's git dir and a work clone of it.
func setup(t *testing.T, serve func(testing.TB, string) string) (string, *work) {
	root := t.TempDir()
	server := gitserver.Bare(t, root, "s.git")
	url := serve(t, root) + "s.git"
	w := &work{t: t, dir: filepath.Join(t.TempDir(), "w")}
	testutil.Git{}.Run(t, "clone", "-q", url, w.dir)
	w.must("conductor", "checkout", "-q", "-b", "main")
	w.commit("conductor", map[string]string{
		policy.Path:        canon(t, testPolicy),
		store.ManifestPath: canon(t, `{"format": 1, "limits": {"max_document_bytes": 1000}}`),
	})
	// The first push reaches an empty server: no policy in force yet.
	if _, err := Install(server, InstallOptions{Binary: os.Args[0]}); err != nil {
		t.Fatal(err)
	}
	w.must("conductor", "push", "-q", "origin", "main")
	testutil.RunGit(t, server, "symbolic-ref", "HEAD", "refs/heads/main")
	return server, w
}

func serverRefs(t *testing.T, server string) string {
	out, err := testutil.Git{GitDir: server}.Try("show-ref")
	if err != nil && len(out) > 0 {
		t.Fatalf("show-ref: %v\n%s", err, out)
	}
	return out
}

func TestServerHookRefusesAndAccepts(t *testing.T) {
	for name, serve := range map[string]func(testing.TB, string) string{"daemon": gitserver.Daemon, "http": gitserver.HTTP} {
		t.Run(name, func(t *testing.T) {
			server, w := setup(t, serve)
			tests := []struct {
				name, agent string
				files       map[string]string
				ref         string
				rule, path  string // "" = accepted
			}{
				{"own session", "pulse", map[string]string{"agents/pulse/s1.json": canon(t, `{"n": 1}`)}, "agents/pulse/main", "", ""},
				{"another agent's session", "pulse", map[string]string{"agents/heartbeat/s1.json": canon(t, `{"n": 1}`)}, "agents/pulse/main", RulePolicy, "agents/heartbeat/s1.json"},
				{"policy edit by a worker", "pulse", map[string]string{policy.Path: canon(t, `{"default": "allow", "rules": []}`)}, "main", RulePolicy, policy.Path},
				{"not canonical", "pulse", map[string]string{"agents/pulse/s2.json": "{\"b\":1,\"a\":2}\n"}, "agents/pulse/main", RuleCanonicalJSON, "agents/pulse/s2.json"},
				{"conflict markers", "pulse", map[string]string{"agents/pulse/s3.json": "<<<<<<< ours\n{}\n=======\n[]\n>>>>>>> theirs\n"}, "agents/pulse/main", RuleCanonicalJSON, "agents/pulse/s3.json"},
				{"over the limit", "pulse", map[string]string{"agents/pulse/big.json": canon(t, `{"x": "`+strings.Repeat("y", 1200)+`"}`)}, "agents/pulse/main", RuleLimit, "agents/pulse/big.json"},
				{"coordinator anywhere", "conductor", map[string]string{"global/config.json": canon(t, `{"a": 1}`)}, "main", "", ""},
				{"a valid state document", "conductor", map[string]string{"state/state.json": canon(t, stateDoc(`{}`))}, "main", "", ""},
				{"a bad key in the state document", "conductor", map[string]string{"state/state.json": canon(t, stateDoc(`{"bad_key": {}}`))}, "main", RuleVerbiage, "state/state.json"},
				{"a bad key in a shard", "conductor", map[string]string{"state/OPS.json": canon(t, `{"bad_key": 1}`)}, "main", "", ""},
				{"mounting the bad shard", "conductor", map[string]string{"state/state.json": canon(t, stateDoc(`{"OPS": "ref file://OPS.json"}`))}, "main", RuleVerbiage, "state/state.json"},
				{"merge in progress", "conductor", map[string]string{"merge.json": canon(t, `{}`)}, "refs/aiwg/merge/main", RuleConflicts, ""},
			}
			for _, tt := range tests {
				before := serverRefs(t, server)
				base := strings.TrimSpace(w.must("x", "rev-parse", "HEAD"))
				commit := w.commit(tt.agent, tt.files)
				dst := tt.ref
				if !strings.HasPrefix(dst, "refs/") {
					dst = "refs/heads/" + dst
				}
				out, err := w.git(tt.agent, "push", "origin", "HEAD:"+dst)
				if tt.rule == "" {
					if err != nil {
						t.Fatalf("%s: push refused: %v\n%s", tt.name, err, out)
					}
					continue
				}
				if err == nil {
					t.Fatalf("%s: push accepted", tt.name)
				}
				if after := serverRefs(t, server); after != before {
					t.Fatalf("%s: server refs changed by a refused push:\n%s\nwas:\n%s", tt.name, after, before)
				}
				for _, want := range []string{"commit " + commit[:12], "rule " + tt.rule, tt.path} {
					if !strings.Contains(out, want) {
						t.Errorf("%s: refusal does not name %q:\n%s", tt.name, want, out)
					}
				}
				if tt.rule != RuleConflicts && !strings.Contains(out, fmt.Sprintf("agent %q", tt.agent)) {
					t.Errorf("%s: refusal does not name the agent:\n%s", tt.name, out)
				}
				w.must("x", "reset", "-q", "--hard", base)
			}
		})
	}
}

func TestCheckRevsAndMerges(t *testing.T) {
	ctx := context.Background()
	server, w := setup(t, func(tb testing.TB, root string) string { return root + "/" })
	// Two workers write their own sessions on branches; the coordinator
	// merges both into main. The merge brings others' paths but decides
	// none itself: accepted.
	main := strings.TrimSpace(w.must("x", "rev-parse", "HEAD"))
	w.must("x", "checkout", "-q", "-b", "a")
	w.commit("pulse", map[string]string{"agents/pulse/s.json": canon(t, `{"n": 1}`)})
	w.must("x", "checkout", "-q", "-b", "b", main)
	w.commit("heartbeat", map[string]string{"agents/heartbeat/s.json": canon(t, `{"n": 2}`)})
	w.must("x", "checkout", "-q", "main")
	w.must("conductor", "merge", "-q", "--no-ff", "-m", "integrate", "a", "b")
	w.must("x", "push", "-q", "origin", "main")
	if err := CheckRevs(ctx, server, []string{"main"}, Options{}); err != nil {
		t.Fatalf("accepted history fails the local check: %v", err)
	}
	// A worker's merge commit whose own resolution writes another's path.
	w.must("x", "checkout", "-q", "-b", "c", main)
	w.commit("pulse", map[string]string{"agents/pulse/t.json": canon(t, `{"n": 3}`)})
	w.must("pulse", "merge", "-q", "--no-ff", "--no-commit", "a")
	os.MkdirAll(filepath.Join(w.dir, "agents/heartbeat"), 0o755)
	if err := os.WriteFile(filepath.Join(w.dir, "agents/heartbeat/x.json"), []byte(canon(t, `{}`)), 0o644); err != nil {
		t.Fatal(err)
	}
	w.must("pulse", "add", ".")
	w.must("pulse", "commit", "-q", "-m", "merge with extra")
	tip := strings.TrimSpace(w.must("x", "rev-parse", "HEAD"))
	err := CheckRevs(ctx, filepath.Join(w.dir, ".git"), []string{"c", "--not", "--remotes"}, Options{PolicyFrom: "origin/main"})
	var re *RefusedError
	if !errors.As(err, &re) || !errors.Is(err, policy.ErrDenied) || len(re.Violations) != 1 {
		t.Fatalf("CheckRevs = %v", err)
	}
	if v := re.Violations[0]; v.Commit != tip || v.Path != "agents/heartbeat/x.json" || v.Agent != "pulse" || v.Rule != RulePolicy {
		t.Fatalf("violation = %+v", v)
	}
}

func TestParseUpdates(t *testing.T) {
	z, h := strings.Repeat("0", 40), strings.Repeat("a", 40)
	ups, err := ParseUpdates(strings.NewReader(z + " " + h + " refs/heads/main\n" + h + " " + z + " refs/tags/t\n"))
	if err != nil || len(ups) != 2 || ups[0].Ref != "refs/heads/main" || !ups[0].Old.IsZero() || !ups[1].New.IsZero() {
		t.Fatalf("ParseUpdates = %+v, %v", ups, err)
	}
	for _, bad := range []string{"x y z\n", z + " " + h + "\n", z + " " + h + " main\n", z + "  " + h + " refs/heads/a\n"} {
		if _, err := ParseUpdates(strings.NewReader(bad)); err == nil {
			t.Errorf("ParseUpdates(%q) accepted", bad)
		}
	}
}

func FuzzParseUpdates(f *testing.F) {
	z, h := strings.Repeat("0", 40), strings.Repeat("a", 40)
	f.Add([]byte(z + " " + h + " refs/heads/main\n"))
	f.Add([]byte(h + " " + z + " refs/tags/v1\r\n\n"))
	f.Fuzz(func(t *testing.T, in []byte) {
		ups, err := ParseUpdates(bytes.NewReader(in))
		if err != nil {
			return
		}
		for _, u := range ups {
			if !strings.HasPrefix(u.Ref, "refs/") || strings.ContainsAny(u.Ref, " \n") {
				t.Fatalf("accepted ref %q", u.Ref)
			}
		}
	})
}

func TestInstall(t *testing.T) {
	server := gitserver.Bare(t, t.TempDir(), "s.git")
	hook := filepath.Join(server, "hooks", "pre-receive")
	os.WriteFile(hook, []byte("#!/bin/sh\nexit 0\n"), 0o755)
	if _, err := Install(server, InstallOptions{Binary: os.Args[0]}); !errors.Is(err, ErrHookExists) {
		t.Fatalf("Install over a foreign hook = %v", err)
	}
	if _, err := Install(server, InstallOptions{Binary: os.Args[0], Force: true}); err != nil {
		t.Fatal(err)
	}
	// Installing again replaces our own hook without --force.
	if _, err := Install(server, InstallOptions{Binary: os.Args[0]}); err != nil {
		t.Fatal(err)
	}
	if _, err := Install(t.TempDir(), InstallOptions{Binary: os.Args[0]}); err == nil {
		t.Fatal("installed into a directory that is no repository")
	}
	if _, err := Install(server, InstallOptions{Binary: filepath.Join(t.TempDir(), "missing")}); err == nil {
		t.Fatal("installed a hook running a missing binary")
	}
}

// TestInstallPointsUnbornHeadAtMain: git init --bare names an unborn
// master; the hook reads the policy from main, so install points HEAD at
// it. A HEAD on a branch with commits is the administrator's and stays.
func TestInstallPointsUnbornHeadAtMain(t *testing.T) {
	head := func(dir string) string {
		out, err := exec.Command("git", "--git-dir", dir, "symbolic-ref", "HEAD").CombinedOutput()
		if err != nil {
			t.Fatalf("symbolic-ref: %v %s", err, out)
		}
		return strings.TrimSpace(string(out))
	}
	server := gitserver.Bare(t, t.TempDir(), "s.git")
	exec.Command("git", "--git-dir", server, "symbolic-ref", "HEAD", "refs/heads/master").Run()
	if _, err := Install(server, InstallOptions{Binary: os.Args[0]}); err != nil {
		t.Fatal(err)
	}
	if got := head(server); got != "refs/heads/main" {
		t.Fatalf("HEAD after install = %s, want refs/heads/main", got)
	}
	born, w := setup(t, func(tb testing.TB, root string) string { return root + "/" })
	w.must("conductor", "push", "-q", "origin", "main:refs/heads/trunk")
	exec.Command("git", "--git-dir", born, "symbolic-ref", "HEAD", "refs/heads/trunk").Run()
	if _, err := Install(born, InstallOptions{Binary: os.Args[0]}); err != nil {
		t.Fatal(err)
	}
	if got := head(born); got != "refs/heads/trunk" {
		t.Fatalf("HEAD on a branch with commits moved by install: %s", got)
	}
}

// stateDoc is a state document with the given GOALS.
func stateDoc(goals string) string {
	return `{"ACTIVE-PROJECT": {"TITLE": null, "PROJECT-ID": null}, "GOALS": ` + goals + `, "ITEMS": {"GLOBAL": {"META": {}, "CONTENT": {}}, "PROJECTS": []}}`
}

// TestRequireSignedCommits: with require_signed in the policy, a commit
// signed with a key git verifies (an SSH key in the allowed signers) is
// accepted; an unsigned one, and one signed with an unknown key, are
// refused under rule "signed", each named.
func TestRequireSignedCommits(t *testing.T) {
	ctx := context.Background()
	_, w := setup(t, func(tb testing.TB, root string) string { return root + "/" })
	keys := t.TempDir()
	keygen := func(name string) (priv, pub string) {
		priv = filepath.Join(keys, name)
		if out, err := exec.Command("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", name, "-f", priv).CombinedOutput(); err != nil {
			t.Skipf("ssh-keygen: %v %s", err, out)
		}
		b, err := os.ReadFile(priv + ".pub")
		if err != nil {
			t.Fatal(err)
		}
		return priv, strings.TrimSpace(string(b))
	}
	trusted, trustedPub := keygen("trusted")
	stranger, _ := keygen("stranger")
	pulses, pulsePub := keygen("pulse")
	// git knows each key for one agent; a wildcard principal names none.
	wild, wildPub := keygen("wild")
	allowed := filepath.Join(keys, "allowed_signers")
	if err := os.WriteFile(allowed, []byte("conductor@agents.invalid "+trustedPub+"\npulse "+pulsePub+"\n* "+wildPub+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	w.must("x", "config", "gpg.format", "ssh")
	w.must("x", "config", "gpg.ssh.allowedSignersFile", allowed)

	signed := strings.Replace(testPolicy, `"roles"`, `"require_signed": true, "roles"`, 1)
	w.must("x", "config", "user.signingkey", trusted)
	w.must("x", "config", "commit.gpgsign", "true")
	w.commit("conductor", map[string]string{policy.Path: canon(t, signed)})
	base := strings.TrimSpace(w.must("x", "rev-parse", "HEAD"))
	good := w.commit("conductor", map[string]string{"global/a.json": canon(t, `{"n": 1}`)})
	w.must("x", "config", "commit.gpgsign", "false")
	unsigned := w.commit("conductor", map[string]string{"global/b.json": canon(t, `{"n": 2}`)})
	w.must("x", "config", "commit.gpgsign", "true")
	w.must("x", "config", "user.signingkey", stranger)
	unknown := w.commit("conductor", map[string]string{"global/c.json": canon(t, `{"n": 3}`)})
	w.must("x", "config", "user.signingkey", pulses)
	others := w.commit("conductor", map[string]string{"global/d.json": canon(t, `{"n": 4}`)})
	w.must("x", "config", "user.signingkey", wild)
	wildcard := w.commit("conductor", map[string]string{"global/e.json": canon(t, `{"n": 5}`)})

	gitDir := filepath.Join(w.dir, ".git")
	if err := CheckRevs(ctx, gitDir, []string{base + ".." + good}, Options{PolicyFrom: base}); err != nil {
		t.Fatalf("a commit signed with a trusted key: %v", err)
	}
	err := CheckRevs(ctx, gitDir, []string{good + ".." + wildcard}, Options{PolicyFrom: base})
	var re *RefusedError
	if !errors.As(err, &re) || len(re.Violations) != 4 {
		t.Fatalf("CheckRevs = %v, want four violations", err)
	}
	got := map[string]string{}
	for _, v := range re.Violations {
		if v.Rule != RuleSigned || v.Agent != "conductor" {
			t.Errorf("violation %+v, want rule %q by conductor", v, RuleSigned)
		}
		got[v.Commit] = v.Detail
	}
	if !strings.Contains(got[unsigned], "not signed") {
		t.Errorf("unsigned commit: %q", got[unsigned])
	}
	if d := got[unknown]; !strings.Contains(d, "does not verify") {
		t.Errorf("commit signed with an unknown key: %q", d)
	}
	if d := got[others]; !strings.Contains(d, `a key the server's git knows for "pulse", not for agent "conductor"`) {
		t.Errorf("commit signed with another agent's key: %q", d)
	}
	if d := got[wildcard]; !strings.Contains(d, `knows for "*", not for agent "conductor"`) {
		t.Errorf("commit signed with a key allowed for any principal: %q", d)
	}
}

// TestServerKeepsHistoryAndItsPolicy: a push adds to history and never
// takes from it (no deletion, no rewind, no moved or non-commit tag), and
// a server whose HEAD is git init's unborn master still enforces main's
// policy.
func TestServerKeepsHistoryAndItsPolicy(t *testing.T) {
	server, w := setup(t, func(tb testing.TB, root string) string { return root + "/" })
	first := strings.TrimSpace(w.must("x", "rev-parse", "HEAD"))
	w.commit("conductor", map[string]string{"global/a.json": canon(t, `{"a": 1}`)})
	w.must("conductor", "push", "-q", "origin", "HEAD:refs/heads/main")
	w.must("pulse", "push", "-q", "origin", "HEAD:refs/heads/agents/pulse/main")
	ck1 := "checkpoints/state-0123abcd/ck1"
	w.must("conductor", "tag", "-a", "-m", "checkpoint ck1 of state-0123abcd\n\nCheckpoint: ckpt-0123abcd\nState: state-0123abcd", ck1, first)
	w.must("conductor", "push", "-q", "origin", "refs/tags/"+ck1)
	tree := strings.TrimSpace(w.must("x", "rev-parse", "HEAD^{tree}"))

	testutil.RunGit(t, server, "symbolic-ref", "HEAD", "refs/heads/master")
	refused := []struct {
		name, agent string
		args        []string
		says        string
	}{
		{"a rewind of main", "conductor", []string{"push", "-f", "origin", first + ":refs/heads/main"}, "may not rewrite history"},
		{"a deletion", "conductor", []string{"push", "origin", "--delete", "agents/pulse/main"}, "may not delete"},
		{"a moved tag", "conductor", []string{"push", "-f", "origin", "HEAD:refs/tags/" + ck1}, "never moved"},
		{"a tag of a tree", "conductor", []string{"push", "origin", tree + ":refs/tags/treetag"}, "must name a commit"},
	}
	for _, c := range refused {
		before := serverRefs(t, server)
		out, err := w.git(c.agent, c.args...)
		if err == nil || !strings.Contains(out, c.says) {
			t.Errorf("%s: %v\n%s", c.name, err, out)
		}
		if serverRefs(t, server) != before {
			t.Errorf("%s: the server's refs changed", c.name)
		}
	}
	// The policy in force is main's even with HEAD on an unborn master.
	w.commit("pulse", map[string]string{"agents/heartbeat/s1.json": canon(t, `{"n": 1}`)})
	if out, err := w.git("pulse", "push", "origin", "HEAD:refs/heads/agents/pulse/main"); err == nil || !strings.Contains(out, "rule "+RulePolicy) {
		t.Errorf("a write the policy denies, with HEAD unborn: %v\n%s", err, out)
	}
}

// TestHookChecksShardsOfRuledDocuments: a commit that only deletes or
// edits a shard is checked through the document that mounts it, whether
// that document is ruled by a literal path or by a glob.
func TestHookChecksShardsOfRuledDocuments(t *testing.T) {
	_, w := setup(t, func(tb testing.TB, root string) string { return root + "/" })
	w.commit("conductor", map[string]string{
		store.ManifestPath:   canon(t, `{"format": 1, "limits": {"max_document_bytes": 100000}, "verbiage": {"documents": ["state/state.json", "agents/*/plan.json"]}}`),
		"state/OPS.json":     canon(t, `{}`),
		"state/state.json":   canon(t, stateDoc(`{"OPS": "ref file://OPS.json"}`)),
		"agents/a/S.json":    canon(t, `{}`),
		"agents/a/plan.json": canon(t, stateDoc(`{"S": "ref file://S.json"}`)),
	})
	w.must("conductor", "push", "-q", "origin", "HEAD:refs/heads/main")
	base := strings.TrimSpace(w.must("x", "rev-parse", "HEAD"))
	for _, c := range []struct {
		name  string
		files map[string]string
		doc   string
	}{
		{"a mounted shard deleted alone", map[string]string{"state/OPS.json": ""}, "state/state.json"},
		{"a shard of a glob-ruled document broken alone", map[string]string{"agents/a/S.json": canon(t, `{"lower": {}}`)}, "agents/a/plan.json"},
	} {
		w.commit("conductor", c.files)
		out, err := w.git("conductor", "push", "origin", "HEAD:refs/heads/main")
		if err == nil || !strings.Contains(out, "rule "+RuleVerbiage) || !strings.Contains(out, c.doc) {
			t.Errorf("%s: %v\n%s", c.name, err, out)
		}
		w.must("x", "reset", "-q", "--hard", base)
	}
}

// TestHookJudgesRuledDocumentsAsWritesDo: the hook applies the store's own
// rule over ruled documents (store.CheckRuledDocuments), so a push is
// judged as the same write made in-process: a document that new rules
// rule for the first time must be valid, and one already invalid on the
// server (put there with plain git) that a commit leaves as it was is not
// that commit's doing.
func TestHookJudgesRuledDocumentsAsWritesDo(t *testing.T) {
	server, w := setup(t, func(tb testing.TB, root string) string { return root + "/" })
	// An invalid document under a name no rule covers: accepted.
	w.commit("conductor", map[string]string{"notes/plan.json": canon(t, `{"lower": {}}`)})
	w.must("conductor", "push", "-q", "origin", "HEAD:refs/heads/main")

	// New rules that rule it: refused, naming the document.
	w.commit("conductor", map[string]string{store.ManifestPath: canon(t, `{"format": 1, "limits": {"max_document_bytes": 1000}, "verbiage": {"documents": ["state/state.json", "notes/*.json"]}}`)})
	out, err := w.git("conductor", "push", "origin", "HEAD:refs/heads/main")
	if err == nil || !strings.Contains(out, "rule "+RuleVerbiage) || !strings.Contains(out, "notes/plan.json") {
		t.Fatalf("new rules over an invalid document: %v\n%s", err, out)
	}

	// The same rules put on the server with plain git (no hook runs for a
	// fetch into it): a later commit that leaves the document as it was is
	// accepted, as an in-process write beside it is.
	testutil.RunGit(t, server, "fetch", "-q", w.dir, "HEAD:refs/heads/main")
	w.must("x", "fetch", "-q", "origin")
	w.must("x", "reset", "-q", "--hard", "origin/main")
	w.commit("conductor", map[string]string{"notes/other.txt": "beside it\n"})
	if out, err := w.git("conductor", "push", "origin", "HEAD:refs/heads/main"); err != nil {
		t.Fatalf("a commit beside an invalid document it did not touch: %v\n%s", err, out)
	}
	// One that touches it and leaves it invalid is refused.
	w.commit("conductor", map[string]string{"notes/plan.json": canon(t, `{"lower": {"x": 1}}`)})
	if out, err := w.git("conductor", "push", "origin", "HEAD:refs/heads/main"); err == nil || !strings.Contains(out, "notes/plan.json") {
		t.Fatalf("a commit that writes an invalid ruled document: %v\n%s", err, out)
	}
	testutil.RunGit(t, server, "fsck", "--strict")
}
