package hooks

import (
	"bytes"
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/aiwg/aiwg-state/internal/gitserver"
	"github.com/aiwg/aiwg-state/policy"
	"github.com/aiwg/aiwg-state/store"
	"github.com/aiwg/aiwg-state/verbiage"
)

// rawEntry is a tree entry written as given, in the order given.
type rawEntry struct{ mode, name, hash string }

func encodeTree(es []rawEntry) []byte {
	var b bytes.Buffer
	for _, e := range es {
		h, _ := hex.DecodeString(e.hash)
		fmt.Fprintf(&b, "%s %s\x00", e.mode, e.name)
		b.Write(h)
	}
	return b.Bytes()
}

// gitIn runs git in dir with stdin and fails the test on error.
func gitIn(t testing.TB, dir, stdin string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-C", dir}, args...)...)
	cmd.Stdin = strings.NewReader(stdin)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
	}
	return strings.TrimSpace(string(out))
}

// literally writes an object as given, with no check of its format.
func literally(t testing.TB, dir, typ string, body []byte) string {
	t.Helper()
	return gitIn(t, dir, string(body), "hash-object", "-t", typ, "--literally", "-w", "--stdin")
}

// TestParseTreeOrderIsGits holds parseTree to git's own order: git mktree
// sorts entries, and parseTree accepts a set of entries in that order and
// in no other; a name given twice is refused in every order.
func TestParseTreeOrderIsGits(t *testing.T) {
	dir := t.TempDir()
	gitIn(t, dir, "", "init", "-q")
	blob := literally(t, dir, "blob", []byte("x"))
	empty := gitIn(t, dir, "", "mktree")
	names := []string{"a", "a.b", "a-b", "a0", "a/", "ab", "b", "B", "é"}
	rng := rand.New(rand.NewSource(1))
	for i := 0; i < 40; i++ {
		var es []rawEntry
		used := map[string]bool{}
		for _, n := range names {
			if rng.Intn(2) == 0 {
				continue
			}
			e := rawEntry{"100644", n, blob}
			if strings.HasSuffix(n, "/") || rng.Intn(3) == 0 {
				e = rawEntry{"40000", strings.TrimSuffix(n, "/"), empty}
			}
			if used[e.name] {
				continue
			}
			used[e.name] = true
			es = append(es, e)
		}
		rng.Shuffle(len(es), func(i, j int) { es[i], es[j] = es[j], es[i] })
		var in strings.Builder
		for _, e := range es {
			typ := map[string]string{"100644": "blob", "40000": "tree"}[e.mode]
			fmt.Fprintf(&in, "%s %s %s\t%s\n", e.mode, typ, e.hash, e.name)
		}
		sorted := gitIn(t, dir, in.String(), "mktree")
		gitBody, err := exec.Command("git", "-C", dir, "cat-file", "tree", sorted).Output()
		if err != nil {
			t.Fatal(err)
		}
		if _, err := parseTree(gitBody); err != nil {
			t.Fatalf("git's own tree %s refused: %v", sorted, err)
		}
		body := encodeTree(es)
		got, err := parseTree(body)
		inGitOrder := bytes.Equal(body, gitBody)
		if inGitOrder != (err == nil) {
			t.Fatalf("entries %v: in git's order %v, parseTree error %v", es, inGitOrder, err)
		}
		if err == nil && len(got) != len(es) {
			t.Fatalf("parseTree lost entries: %v", got)
		}
		// The same entries with one repeated (as a file, or as a
		// directory) are refused in any order.
		if len(es) > 0 {
			dup := es[rng.Intn(len(es))]
			for _, mode := range []string{"100644", "40000"} {
				d := rawEntry{mode, dup.name, blob}
				twice := append(append([]rawEntry{}, es...), d)
				sortLikeGit(twice)
				if _, err := parseTree(encodeTree(twice)); !errors.Is(err, errTreeMalformed) {
					t.Fatalf("entries %v: a repeated name is accepted: %v", twice, err)
				}
			}
		}
	}
}

// sortLikeGit sorts entries by compareEntries, entries of one name kept
// in place (a stable insertion sort).
func sortLikeGit(es []rawEntry) {
	te := func(e rawEntry) treeEntry { return treeEntry{mode: e.mode, name: e.name} }
	for i := 1; i < len(es); i++ {
		for j := i; j > 0 && compareEntries(te(es[j-1]), te(es[j])) > 0; j-- {
			es[j-1], es[j] = es[j], es[j-1]
		}
	}
}

func TestParseTreeRefuses(t *testing.T) {
	h := strings.Repeat("ab", 20)
	for _, c := range []struct {
		name string
		es   []rawEntry
		want string
	}{
		{"a name twice", []rawEntry{{"100644", "policy.json", h}, {"100644", "policy.json", h}}, "named twice"},
		{"a file and a directory of one name", []rawEntry{{"100644", "a", h}, {"100644", "a.b", h}, {"40000", "a", h}}, "named twice"},
		{"out of order", []rawEntry{{"100644", "store.json", h}, {"100644", "policy.json", h}}, "out of git's order"},
		{"a directory sorted as a file", []rawEntry{{"40000", "a", h}, {"100644", "a.b", h}}, "out of git's order"},
		{"a zero-padded mode", []rawEntry{{"040000", "d", h}}, "mode"},
		{"a group-writable mode", []rawEntry{{"100664", "f", h}}, "mode"},
		{"an empty name", []rawEntry{{"100644", "", h}}, "entry name"},
		{"a slash in a name", []rawEntry{{"100644", "a/b", h}}, "entry name"},
	} {
		if _, err := parseTree(encodeTree(c.es)); !errors.Is(err, errTreeMalformed) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: parseTree = %v; want %q", c.name, err, c.want)
		}
	}
	if _, err := parseTree([]byte("100644 a\x00short")); !errors.Is(err, errTreeMalformed) {
		t.Errorf("truncated tree: %v", err)
	}
}

// FuzzParseTree: what parseTree accepts is in git's strict order with
// names once each, and encodes back to the same bytes.
func FuzzParseTree(f *testing.F) {
	h := strings.Repeat("ab", 20)
	f.Add(encodeTree([]rawEntry{{"100644", "a", h}, {"100644", "a.b", h}, {"40000", "a", h}}))
	f.Add(encodeTree([]rawEntry{{"40000", ".aiwg", h}, {"100644", "b.json", h}}))
	f.Add(encodeTree([]rawEntry{{"100644", "policy.json", h}, {"100644", "policy.json", h}}))
	f.Fuzz(func(t *testing.T, body []byte) {
		es, err := parseTree(body)
		if err != nil {
			return
		}
		var raw []rawEntry
		names := map[string]bool{}
		for i, e := range es {
			if names[e.name] {
				t.Fatalf("%q twice", e.name)
			}
			names[e.name] = true
			if i > 0 && compareEntries(es[i-1], e) >= 0 {
				t.Fatalf("%q before %q", es[i-1].name, e.name)
			}
			raw = append(raw, rawEntry(e))
		}
		if !bytes.Equal(encodeTree(raw), body) {
			t.Fatalf("parsed %v from %q", es, body)
		}
	})
}

// objStore is a repository whose main holds the test policy and a limit
// of 1000 bytes a document, where commits are forged as an attacker does.
type objStore struct {
	t   *testing.T
	dir string // the work tree; its .git is the repository
	n   int    // commits forged, to make each one new
}

func newObjStore(t *testing.T) *objStore {
	t.Helper()
	w := &work{t: t, dir: filepath.Join(t.TempDir(), "w")}
	if out, err := exec.Command("git", "init", "-q", "-b", "main", w.dir).CombinedOutput(); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	w.commit("conductor", map[string]string{
		policy.Path:             canon(t, testPolicy),
		store.ManifestPath:      canon(t, `{"format": 1, "limits": {"max_document_bytes": 1000}}`),
		"agents/pulse/s.json":   canon(t, `{"n": 1}`),
		"protected/config.json": canon(t, `{"mode": "safe"}`),
	})
	return &objStore{t: t, dir: w.dir}
}

func (s *objStore) rev(r string) string { return gitIn(s.t, s.dir, "", "rev-parse", r) }

// blob writes content and returns its id.
func (s *objStore) blob(content string) string { return literally(s.t, s.dir, "blob", []byte(content)) }

// tree writes entries in the order given.
func (s *objStore) tree(es ...rawEntry) string {
	return literally(s.t, s.dir, "tree", encodeTree(es))
}

// commit writes a commit of tree by agent on parents.
func (s *objStore) commit(agent, tree string, parents ...string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "tree %s\n", tree)
	for _, p := range parents {
		fmt.Fprintf(&b, "parent %s\n", p)
	}
	s.n++
	fmt.Fprintf(&b, "author %s <%s@agents.invalid> 1700000000 +0000\ncommitter %s <%s@agents.invalid> 1700000000 +0000\n\nforged %d\n", agent, agent, agent, agent, s.n)
	return literally(s.t, s.dir, "commit", []byte(b.String()))
}

// check runs the server's checks on commit, as a push of it onto main.
func (s *objStore) check(commit string) error {
	return CheckRevs(context.Background(), filepath.Join(s.dir, ".git"), []string{commit, "--not", "main"}, Options{PolicyFrom: "main"})
}

// refused asserts that check refuses commit for rule, on path, naming
// want.
func (s *objStore) refused(name, commit, rule, path, want string) {
	s.t.Helper()
	err := s.check(commit)
	var re *RefusedError
	if !errors.As(err, &re) {
		s.t.Fatalf("%s: check = %v; want a refusal (rule %s)", name, err, rule)
	}
	for _, v := range re.Violations {
		if v.Commit == commit && v.Rule == rule && v.Path == path && strings.Contains(v.Detail, want) {
			return
		}
	}
	s.t.Fatalf("%s: no %s violation on %q naming %q: %v", name, rule, path, want, err)
}

// rootWith is main's root tree with the .aiwg entry replaced by one of
// aiwg's id.
func (s *objStore) rootWith(name, mode, id string) string {
	var es []rawEntry
	for _, line := range strings.Split(gitIn(s.t, s.dir, "", "ls-tree", "main"), "\n") {
		meta, n, _ := strings.Cut(line, "\t")
		f := strings.Fields(meta)
		m := strings.TrimPrefix(f[0], "0")
		if n == name {
			continue
		}
		es = append(es, rawEntry{m, n, f[2]})
	}
	es = append(es, rawEntry{mode, name, id})
	sortLikeGit(es)
	return s.tree(es...)
}

// TestHookRefusesMalformedTrees is the policy swap: a pushed .aiwg tree
// names policy.json twice (git shows the first, a reader keeping the last
// saw the second), or lists store.json before policy.json (git's lookup
// then misses policy.json).
func TestHookRefusesMalformedTrees(t *testing.T) {
	s := newObjStore(t)
	open := s.blob(canon(t, `{"default": "allow", "rules": []}`))
	real := s.rev("main:" + policy.Path)
	store := s.rev("main:" + store.ManifestPath)
	dup := s.tree(rawEntry{"100644", "policy.json", open}, rawEntry{"100644", "policy.json", real}, rawEntry{"100644", "store.json", store})
	c := s.commit("pulse", s.rootWith(".aiwg", "40000", dup), s.rev("main"))
	s.refused("a policy named twice", c, RuleStorePath, ".aiwg", "named twice")

	unsorted := s.tree(rawEntry{"100644", "store.json", store}, rawEntry{"100644", "policy.json", open})
	c = s.commit("conductor", s.rootWith(".aiwg", "40000", unsorted), s.rev("main"))
	s.refused("an unsorted tree", c, RuleStorePath, ".aiwg", "out of git's order")

	// A file and a directory of one name, at the root.
	x := s.blob(canon(t, `{}`))
	sub := s.tree(rawEntry{"100644", "x.json", x})
	root := s.rootWith("agents", "40000", s.rev("main:agents"))
	var es []rawEntry
	for _, line := range strings.Split(gitIn(t, s.dir, "", "ls-tree", root), "\n") {
		meta, n, _ := strings.Cut(line, "\t")
		f := strings.Fields(meta)
		es = append(es, rawEntry{strings.TrimPrefix(f[0], "0"), n, f[2]})
	}
	es = append(es, rawEntry{"100644", "zz", x}, rawEntry{"100644", "zz.json", x}, rawEntry{"40000", "zz", sub})
	c = s.commit("conductor", s.tree(es...), s.rev("main"))
	s.refused("a file and a directory of one name", c, RuleStorePath, "", "named twice")

	// A well-formed edit of the same by the coordinator is accepted.
	good := s.tree(rawEntry{"100644", "policy.json", real}, rawEntry{"100644", "store.json", store})
	if err := s.check(s.commit("conductor", s.rootWith(".aiwg", "40000", good), s.rev("main"))); err != nil {
		t.Fatalf("a well-formed tree: %v", err)
	}
}

// TestHookRefusesAmbiguousCommitHeaders: git log credits the last author,
// aiwg-state the first; and an encoding makes git re-encode what
// aiwg-state reads as bytes.
func TestHookRefusesAmbiguousCommitHeaders(t *testing.T) {
	s := newObjStore(t)
	tree := s.rev("main^{tree}")
	main := s.rev("main")
	for _, c := range []struct{ name, headers, want string }{
		{"two authors", "author pulse <p@a> 1 +0000\nauthor conductor <c@a> 1 +0000\ncommitter pulse <p@a> 1 +0000\n", "2 author headers"},
		{"two committers", "author pulse <p@a> 1 +0000\ncommitter pulse <p@a> 1 +0000\ncommitter conductor <c@a> 1 +0000\n", "2 committer headers"},
		{"no author", "committer pulse <p@a> 1 +0000\n", "no author header"},
		{"an encoding", "author pulse <p@a> 1 +0000\ncommitter pulse <p@a> 1 +0000\nencoding ISO-8859-1\n", "an encoding header"},
	} {
		h := literally(t, s.dir, "commit", []byte("tree "+tree+"\nparent "+main+"\n"+c.headers+"\nforged\n"))
		s.refused(c.name, h, RuleCommitFormat, "", c.want)
	}
}

// TestHookMeasuresBeforeReading: every file a commit writes is held to
// limits.max_document_bytes whatever its name, as the store's own writes
// are, but the store's settings; a tree where a file should be is refused.
func TestHookMeasuresBeforeReading(t *testing.T) {
	s := newObjStore(t)
	main := s.rev("main")
	big := strings.Repeat("y", 1200)
	pulse := func(name, mode, id string) string {
		dir := s.tree(rawEntry{"100644", "s.json", s.rev("main:agents/pulse/s.json")}, rawEntry{mode, name, id})
		es := []rawEntry{{"40000", "pulse", dir}}
		return s.commit("pulse", s.rootWith("agents", "40000", s.tree(es...)), main)
	}
	s.refused("a large text file", pulse("t.txt", "100644", s.blob(big)), RuleLimit, "agents/pulse/t.txt", "1200 bytes; the store's limit is 1000")
	s.refused("a large JSON file", pulse("t.json", "100644", s.blob(canon(t, `{"x": "`+big+`"}`))), RuleLimit, "agents/pulse/t.json", "the store's limit is 1000")
	s.refused("a tree as a file", pulse("t.json", "100644", s.rev("main^{tree}")), RuleStorePath, "agents/pulse/t.json", "names a tree")
	if err := s.check(pulse("t.txt", "100644", s.blob("small\n"))); err != nil {
		t.Fatalf("a small text file: %v", err)
	}
	// A policy over the documents' limit is the store's setting: the
	// coordinator may write it.
	long := fmt.Sprintf(`{"roles": {"coordinator": ["conductor"], "workers": ["pulse", "heartbeat"]}, "rules": [{"name": "%s", "roles": ["coordinator"], "paths": ["**"]}, {"name": "only own sessions", "roles": ["workers"], "paths": ["agents/{agent}/**"]}]}`, strings.Repeat("c", 1200))
	aiwg := s.tree(rawEntry{"100644", "policy.json", s.blob(canon(t, long))}, rawEntry{"100644", "store.json", s.rev("main:" + store.ManifestPath)})
	if err := s.check(s.commit("conductor", s.rootWith(".aiwg", "40000", aiwg), main)); err != nil {
		t.Fatalf("a long policy: %v", err)
	}
}

// TestHookBoundsCostlyCommits: too many parents, and paths deeper or
// longer than a store's, are refused before the costly checks run.
func TestHookBoundsCostlyCommits(t *testing.T) {
	s := newObjStore(t)
	main := s.rev("main")
	tree := s.rev("main^{tree}")
	parents := []string{main}
	for i := 0; i < MaxParents; i++ {
		parents = append(parents, s.commit("pulse", tree, main))
	}
	s.refused("17 parents", s.commit("conductor", tree, parents...), RuleCommitFormat, "", "a merge of 17 parents: a pushed commit has at most 16")
	if err := s.check(s.commit("conductor", tree, parents[:MaxParents]...)); err != nil {
		t.Fatalf("16 parents: %v", err)
	}

	// A path 100 directories deep under the agent's own directory.
	leaf := s.tree(rawEntry{"100644", "x.json", s.blob(canon(t, `{}`))})
	deep := func(n int, name string) string {
		t := leaf
		for i := 0; i < n; i++ {
			t = s.tree(rawEntry{"40000", name, t})
		}
		return t
	}
	withPulse := func(dir string) string {
		p := s.tree(rawEntry{"40000", "d", dir}, rawEntry{"100644", "s.json", s.rev("main:agents/pulse/s.json")})
		return s.commit("pulse", s.rootWith("agents", "40000", s.tree(rawEntry{"40000", "pulse", p})), main)
	}
	s.refused("a path 100 deep", withPulse(deep(100, "a")), RuleStorePath, "agents/pulse/d"+strings.Repeat("/a", verbiage.MaxStoreDepth-3), "at most 64 segments")
	// 17 directories of 250 bytes: 4 KiB before the file.
	long := strings.Repeat("l", 250)
	s.refused("a path over 4 KiB", withPulse(deep(17, long)), RuleStorePath, "agents/pulse/d"+strings.Repeat("/"+long, 17), "at most 4096")
	if err := s.check(withPulse(deep(10, "a"))); err != nil {
		t.Fatalf("a path 14 deep: %v", err)
	}
}

// TestMergeBasesAreComputedOncePerPair: an octopus merge asks for each
// pair of its parents once, whichever order they come in.
func TestMergeBasesAreComputedOncePerPair(t *testing.T) {
	s := newObjStore(t)
	main := s.rev("main")
	a := s.commit("pulse", s.rev("main^{tree}"), main)
	b := s.commit("heartbeat", s.rev("main^{tree}"), main)
	c, err := newChecker(context.Background(), filepath.Join(s.dir, ".git"), Options{PolicyFrom: "main"})
	if err != nil {
		t.Fatal(err)
	}
	defer c.close()
	for _, pair := range [][2]string{{a, b}, {b, a}, {a, b}} {
		bases, err := c.mergeBases(pair[0], pair[1])
		if err != nil || len(bases) != 1 || bases[0] != main {
			t.Fatalf("mergeBases = %v, %v; want [%s]", bases, err, main)
		}
	}
	if len(c.bases) != 1 {
		t.Fatalf("%d pairs remembered, want 1", len(c.bases))
	}
}

func TestTimeout(t *testing.T) {
	ctx := context.Background()
	server := gitserver.Bare(t, t.TempDir(), "s.git")
	if d, err := Timeout(ctx, server); err != nil || d != DefaultTimeout {
		t.Fatalf("Timeout unset = %v, %v", d, err)
	}
	gitIn(t, server, "", "config", TimeoutConfig, "90s")
	if d, err := Timeout(ctx, server); err != nil || d.Seconds() != 90 {
		t.Fatalf("Timeout 90s = %v, %v", d, err)
	}
	for _, bad := range []string{"soon", "0", "-1m", "90"} {
		gitIn(t, server, "", "config", TimeoutConfig, bad)
		if _, err := Timeout(ctx, server); err == nil || !strings.Contains(err.Error(), TimeoutConfig) {
			t.Fatalf("Timeout %q = %v", bad, err)
		}
	}
	// A check out of time accepts nothing.
	s := newObjStore(t)
	c := s.commit("pulse", s.rev("main^{tree}"), s.rev("main"))
	u := Update{Ref: "refs/heads/agents/pulse/x"}
	copy(u.New[:], mustHex(t, c))
	err := CheckWithin(ctx, 1, filepath.Join(s.dir, ".git"), []Update{u}, Options{PolicyFrom: "main"})
	if !errors.Is(err, ErrTimeout) || !errors.Is(err, ErrRefused) || !strings.Contains(err.Error(), TimeoutConfig) {
		t.Fatalf("CheckWithin out of time = %v", err)
	}
	if err := CheckWithin(ctx, DefaultTimeout, filepath.Join(s.dir, ".git"), []Update{u}, Options{PolicyFrom: "main"}); err != nil {
		t.Fatalf("CheckWithin in time = %v", err)
	}
}

func mustHex(t *testing.T, s string) []byte {
	b, err := hex.DecodeString(s)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestInstallTurnsOnGitsObjectChecks: a server with the hook installed has
// git refuse malformed objects itself, before the hook runs.
func TestInstallTurnsOnGitsObjectChecks(t *testing.T) {
	server := gitserver.Bare(t, t.TempDir(), "s.git")
	if _, err := Install(server, InstallOptions{Binary: os.Args[0]}); err != nil {
		t.Fatal(err)
	}
	for _, kv := range serverConfig {
		if got := gitIn(t, server, "", "config", "--get", kv[0]); got != kv[1] {
			t.Errorf("git config %s = %q, want %q", kv[0], got, kv[1])
		}
	}
}

// TestSettingsInForceInAMalformedTree: a server whose history already
// holds a policy tree git reads differently (pushed before such trees
// were refused) refuses every push, naming it, rather than guess which
// policy holds.
func TestSettingsInForceInAMalformedTree(t *testing.T) {
	s := newObjStore(t)
	open := s.blob(canon(t, `{"default": "allow", "rules": []}`))
	dup := s.tree(rawEntry{"100644", "policy.json", open}, rawEntry{"100644", "policy.json", s.rev("main:" + policy.Path)})
	bad := s.commit("conductor", s.rootWith(".aiwg", "40000", dup), s.rev("main"))
	gitIn(t, s.dir, "", "update-ref", "refs/heads/main", bad)
	c := s.commit("pulse", s.rev("main^{tree}"), bad)
	err := s.check(c)
	if err == nil || !strings.Contains(err.Error(), "the settings in force (main) cannot be read as git reads them: .aiwg: tree") || !strings.Contains(err.Error(), "named twice") {
		t.Fatalf("check under a malformed policy tree = %v", err)
	}
}

// TestHistoryRewritesGoToGit: in a repository with grafts or replace
// refs, git reads some commits' parents as they say, which the hook's own
// reader does not, so the hook leaves every question to git there.
func TestHistoryRewritesGoToGit(t *testing.T) {
	ctx := context.Background()
	for _, c := range []struct {
		name  string
		setup func(t *testing.T, dir, head string)
	}{
		{"nothing", func(*testing.T, string, string) {}},
		{"grafts", func(t *testing.T, dir, head string) {
			os.MkdirAll(filepath.Join(dir, "info"), 0o755)
			os.WriteFile(filepath.Join(dir, "info", "grafts"), []byte(head+"\n"), 0o644)
		}},
		{"a replace ref", func(t *testing.T, dir, head string) {
			gitIn(t, dir, "", "replace", "--graft", head)
		}},
		{"a packed replace ref", func(t *testing.T, dir, head string) {
			gitIn(t, dir, "", "replace", "--graft", head)
			gitIn(t, dir, "", "pack-refs", "--all", "--prune")
			os.Remove(filepath.Join(dir, "refs", "replace"))
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			gitIn(t, dir, "", "init", "-q", "--bare")
			tree := gitIn(t, dir, "", "mktree")
			first := gitIn(t, dir, "", "commit-tree", tree, "-m", "one")
			head := gitIn(t, dir, "", "commit-tree", tree, "-p", first, "-m", "two")
			gitIn(t, dir, "", "update-ref", "refs/heads/main", head)
			c.setup(t, dir, head)
			r, _ := openObjects(ctx, dir)
			if r != nil {
				defer r.Close()
			}
			if got, want := r != nil, c.name == "nothing"; got != want {
				t.Errorf("read in process: %v, want %v", got, want)
			}
		})
	}
}
