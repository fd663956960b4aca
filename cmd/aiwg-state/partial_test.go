package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/aiwg/aiwg-state/internal/gitserver"
)

// Partial and shallow clones of a store, made as stock git and its users
// make them, served by a real git daemon that allows filters.

// storeTemplate is a served-store template: a bare repository whose
// docs/d3.json got keys k1..k7 in seven commits, followed by twelve
// commits to docs/other.json, with the commits that set each key. Each
// test serves its own copies (cloneServer), written once.
type storeTemplate struct {
	dir       string
	keyCommit map[string]string
}

func newStoreTemplate(t *testing.T) *storeTemplate {
	t.Helper()
	w := newStore(t)
	keyCommit := map[string]string{}
	for i := 1; i <= 7; i++ {
		k := fmt.Sprintf("k%d", i)
		mustCLI(t, w, "", "set", "docs/d3.json", k, fmt.Sprint(i))
		keyCommit[k] = strings.TrimSpace(gitOut(t, w, "rev-parse", "HEAD"))
	}
	for i := 1; i <= 12; i++ {
		mustCLI(t, w, "", "set", "docs/other.json", "n", fmt.Sprint(i))
	}
	dir := filepath.Join(t.TempDir(), "template.git")
	plainGit(t, ".", "clone", "-q", "--bare", w, dir)
	gitOut(t, dir, "remote", "remove", "origin")
	for _, kv := range [][2]string{{"uploadpack.allowFilter", "true"}, {"uploadpack.allowAnySHA1InWant", "true"}, {"receive.shallowUpdate", "false"}} {
		gitOut(t, dir, "config", kv[0], kv[1])
	}
	return &storeTemplate{dir: dir, keyCommit: keyCommit}
}

// serve copies the template to root/name.git, served at base.
func (st *storeTemplate) serve(t *testing.T, root, base, name string) (server, url string) {
	t.Helper()
	server = filepath.Join(root, name+".git")
	if out, err := exec.Command("cp", "-R", st.dir, server).CombinedOutput(); err != nil {
		t.Fatalf("cp: %v %s", err, out)
	}
	return server, base + name + ".git"
}

// cloneServer serves a fresh copy of a new template.
func cloneServer(t *testing.T) (server, url string, keyCommit map[string]string) {
	t.Helper()
	st := newStoreTemplate(t)
	root := t.TempDir()
	server, url = st.serve(t, root, gitserver.Daemon(t, root), "state")
	return server, url, st.keyCommit
}

func fsckStrict(t *testing.T, dir string) {
	t.Helper()
	gitOut(t, dir, "fsck", "--strict", "--no-progress")
}

type blamed struct {
	Path     string `json:"path"`
	Commit   string `json:"commit"`
	Boundary bool   `json:"shallow_boundary"`
}

func blameOf(t *testing.T, store string) map[string]blamed {
	t.Helper()
	var bl []blamed
	if err := json.Unmarshal([]byte(mustCLI(t, store, "", "blame", "docs/d3.json", "--json")), &bl); err != nil {
		t.Fatal(err)
	}
	out := map[string]blamed{}
	for _, b := range bl {
		out[b.Path] = b
	}
	return out
}

// checkFullHistory asserts the known answers of a store with all the
// history of cloneServer's.
func checkFullHistory(t *testing.T, store string, keyCommit map[string]string) {
	t.Helper()
	doc := mustCLI(t, store, "", "get", "docs/d3.json", "--json")
	for i := 1; i <= 7; i++ {
		if !strings.Contains(doc, fmt.Sprintf(`"k%d":%d`, i, i)) {
			t.Fatalf("get: %s", doc)
		}
	}
	// HEAD~14 is the commit that set k5.
	at := mustCLI(t, store, "", "get", "docs/d3.json", "--at", "HEAD~14", "--json")
	if !strings.Contains(at, `"k5":5`) || strings.Contains(at, `"k6"`) {
		t.Fatalf("get --at HEAD~14: %s", at)
	}
	log := mustCLI(t, store, "", "log", "docs/d3.json#k2", "--json")
	var ms []struct {
		Commit string `json:"commit"`
		Value  struct {
			Op string `json:"op"`
		} `json:"value"`
	}
	if err := json.Unmarshal([]byte(log), &ms); err != nil || len(ms) != 1 || ms[0].Commit != keyCommit["k2"] || ms[0].Value.Op != "create" {
		t.Fatalf("log docs/d3.json#k2: %s", log)
	}
	bl := blameOf(t, store)
	for k, c := range keyCommit {
		if bl[k].Commit != c || bl[k].Boundary {
			t.Fatalf("blame %s: %+v, want %s", k, bl[k], c)
		}
	}
}

// checkShallowHistory asserts the answers of a clone of depth 1: reads of
// HEAD work, history stops at the boundary and says so, and a revision
// beyond it is refused as such.
func checkShallowHistory(t *testing.T, store string) {
	t.Helper()
	if doc := mustCLI(t, store, "", "get", "docs/d3.json", "k7"); strings.TrimSpace(doc) != "7" {
		t.Fatalf("get: %s", doc)
	}
	for _, args := range [][]string{
		{"get", "docs/d3.json", "--at", "HEAD~14"},
		{"diff", "HEAD~3", "HEAD"},
		{"log", "--at", "HEAD~2"},
		{"diff", "HEAD"}, // what the boundary commit changed
	} {
		_, errOut, code := runCLI(t, store, "", args...)
		if code != 3 || !strings.Contains(errOut, "beyond this shallow clone's history (`aiwg-state fetch --deepen N` / git fetch --deepen N)") {
			t.Fatalf("%s: exit %d: %s", strings.Join(args, " "), code, errOut)
		}
	}
	out, errOut, code := runCLI(t, store, "", "log", "-n", "5")
	if code != 0 || strings.Count(out, "\n") != 1 || !strings.Contains(out, "(shallow boundary)") || strings.Count(errOut, "shallow clone") != 1 {
		t.Fatalf("log -n 5: exit %d: %s%s", code, out, errOut)
	}
	out, errOut, code = runCLI(t, store, "", "log", "docs/d3.json#k2")
	if code != 0 || !strings.Contains(out, "boundary docs/d3.json#k2") || !strings.Contains(errOut, "boundary of this shallow clone") {
		t.Fatalf("log docs/d3.json#k2: exit %d: %s%s", code, out, errOut)
	}
	for k, b := range blameOf(t, store) {
		if !b.Boundary {
			t.Fatalf("blame %s in a shallow clone: %+v, want it marked as the boundary's", k, b)
		}
	}
	if out := mustCLI(t, store, "", "blame", "docs/d3.json"); !strings.HasPrefix(out, "^") {
		t.Fatalf("blame: %s", out)
	}
}

// setAndPush adds a key to docs/d3.json in the clone, pushes it, and
// checks the server's document kept its seven keys.
func setAndPush(t *testing.T, store, server string) {
	t.Helper()
	mustCLI(t, store, "", "set", "docs/d3.json", "k.new", "42")
	if _, errOut, code := runCLI(t, store, "", "push"); code != 0 {
		t.Fatalf("push: %s", errOut)
	}
	doc := gitOut(t, server, "cat-file", "blob", "main:docs/d3.json")
	for i := 1; i <= 7; i++ {
		if !strings.Contains(doc, fmt.Sprintf(`"k%d": %d`, i, i)) {
			t.Fatalf("server's docs/d3.json after the push:\n%s", doc)
		}
	}
	if !strings.Contains(doc, `"new": 42`) {
		t.Fatalf("server's docs/d3.json after the push:\n%s", doc)
	}
	fsckStrict(t, server)
}

func TestClonesOfAStore(t *testing.T) {
	cases := []struct {
		name    string
		clone   func(t *testing.T, url, dir string) // nil: git clone with args
		args    []string
		shallow bool
	}{
		{name: "bare", args: []string{"--bare"}},
		{name: "mirror", args: []string{"--mirror"}},
		{name: "blob-none", args: []string{"--bare", "--filter=blob:none"}},
		{name: "tree-0", args: []string{"--bare", "--filter=tree:0"}},
		{name: "checkout-blob-none", clone: func(t *testing.T, url, dir string) {
			// A clone with a work tree, its store the .git inside: the
			// checkout fetched the documents of HEAD only.
			work := strings.TrimSuffix(dir, ".git")
			plainGit(t, ".", "clone", "-q", "--filter=blob:none", url, work)
			if err := os.Symlink(filepath.Join(work, ".git"), dir); err != nil {
				t.Fatal(err)
			}
		}},
		{name: "depth-1", args: []string{"--bare", "--depth", "1"}, shallow: true},
		{name: "aiwg-blob-none", clone: func(t *testing.T, url, dir string) {
			if _, errOut, code := cliIn(t, "clone", "--filter=blob:none", url, dir, "--no-sync"); code != 0 {
				t.Fatal(errOut)
			}
		}},
		{name: "aiwg-depth-1", shallow: true, clone: func(t *testing.T, url, dir string) {
			if _, errOut, code := cliIn(t, "clone", "--depth", "1", url, dir, "--no-sync"); code != 0 {
				t.Fatal(errOut)
			}
		}},
	}
	tmpl := newStoreTemplate(t)
	root := t.TempDir()
	base := gitserver.Daemon(t, root)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			server, url := tmpl.serve(t, root, base, tc.name)
			keyCommit := tmpl.keyCommit
			dir := filepath.Join(t.TempDir(), "clone.git")
			if tc.clone != nil {
				tc.clone(t, url, dir)
			} else {
				plainGit(t, ".", append(append([]string{"clone", "-q"}, tc.args...), url, dir)...)
			}
			fsckStrict(t, dir)
			if tc.shallow {
				checkShallowHistory(t, dir)
				for _, gc := range [][]string{{"gc"}, {"gc", "--full"}} {
					if _, errOut, code := runCLI(t, dir, "", gc...); code != 0 {
						t.Fatalf("%s in a shallow clone: exit %d: %s", strings.Join(gc, " "), code, errOut)
					}
					fsckStrict(t, dir)
				}
				_, errOut, code := runCLI(t, dir, "", "fetch", "--deepen", "3")
				if code != 0 {
					t.Fatalf("fetch --deepen: %s", errOut)
				}
				fsckStrict(t, dir)
				// Deeper now: HEAD~3 is within reach, HEAD~14 is not.
				mustCLI(t, dir, "", "diff", "HEAD~3", "HEAD")
				if _, errOut, code := runCLI(t, dir, "", "get", "docs/d3.json", "--at", "HEAD~14"); code != 3 || !strings.Contains(errOut, "beyond this shallow clone") {
					t.Fatalf("get --at HEAD~14 after deepening by 3: exit %d: %s", code, errOut)
				}
				if _, errOut, code := runCLI(t, dir, "", "fetch", "--unshallow"); code != 0 {
					t.Fatalf("fetch --unshallow: %s", errOut)
				}
				if _, err := os.Stat(filepath.Join(dir, "shallow")); err == nil {
					t.Fatal("still shallow after fetch --unshallow")
				}
				fsckStrict(t, dir)
			}
			// Unshallowed, the index built on the boundary must not stay.
			checkFullHistory(t, dir, keyCommit)
			setAndPush(t, dir, server)
			fsckStrict(t, dir)
			// The store's maintenance in such a clone.
			for _, gc := range [][]string{{"gc"}, {"gc", "--full"}} {
				if _, errOut, code := runCLI(t, dir, "", gc...); code != 0 {
					t.Fatalf("%s: exit %d: %s", strings.Join(gc, " "), code, errOut)
				}
				fsckStrict(t, dir)
			}
			if got := strings.TrimSpace(mustCLI(t, dir, "", "get", "docs/d3.json", "k3")); got != "3" {
				t.Fatalf("get after gc: %s", got)
			}
		})
	}
}

// The write that destroyed data: in a partial clone, before any read, a
// set of one key of a seven-key document, then a push. The document keeps
// its seven keys, on the server too.
func TestPartialCloneSetKeepsTheDocument(t *testing.T) {
	server, url, _ := cloneServer(t)
	dir := filepath.Join(t.TempDir(), "clone.git")
	plainGit(t, ".", "clone", "-q", "--bare", "--filter=blob:none", url, dir)
	setAndPush(t, dir, server)
	fsckStrict(t, dir)
}

// A partial clone whose promisor remote cannot be reached refuses to read
// or write what it lacks, and never reads a missing document as absent:
// once, `set` recorded a create that replaced the whole document with the
// one key set, and the push destroyed the server's copy.
func TestPartialCloneOfflineNeverReadsMissingAsAbsent(t *testing.T) {
	server, url, _ := cloneServer(t)
	dir := filepath.Join(t.TempDir(), "clone.git")
	plainGit(t, ".", "clone", "-q", "--bare", "--filter=blob:none", url, dir)
	head := gitOut(t, dir, "rev-parse", "main")
	gitOut(t, dir, "config", "remote.origin.url", filepath.Join(t.TempDir(), "gone.git"))
	for _, args := range [][]string{
		{"get", "docs/d3.json"},
		{"set", "docs/d3.json", "k.new", "42"},
		{"blame", "docs/d3.json"},
		{"get", "state/state.json"}, // a ruled state document
		{"config", "limits"},
	} {
		_, errOut, code := runCLI(t, dir, "", args...)
		if code != 3 || !strings.Contains(errOut, "is not in this partial clone and could not be fetched from promisor remote origin") || strings.Contains(errOut, "no such document") {
			t.Fatalf("%s offline: exit %d: %s", strings.Join(args, " "), code, errOut)
		}
	}
	if now := gitOut(t, dir, "rev-parse", "main"); now != head {
		t.Fatalf("a write proceeded on a base it could not read: main %s -> %s", head, now)
	}
	_, errOut, _ := runCLI(t, dir, "", "get", "docs/d3.json", "--json")
	var e struct {
		Code    int `json:"code"`
		Details struct {
			Object  string `json:"object"`
			Partial bool   `json:"partial_clone"`
			Remote  string `json:"remote"`
		} `json:"details"`
	}
	if err := json.Unmarshal([]byte(errOut), &e); err != nil || e.Code != 3 || len(e.Details.Object) != 40 || !e.Details.Partial || e.Details.Remote != "origin" {
		t.Fatalf("get --json offline: %s", errOut)
	}
	// Back online: the document is fetched, the write keeps its keys.
	gitOut(t, dir, "config", "remote.origin.url", url)
	setAndPush(t, dir, server)
}

// In a store that is not a partial clone, a tree entry whose object is
// gone is damage, not an absent document.
func TestMissingObjectIsDamageNotAbsence(t *testing.T) {
	store := filepath.Join(t.TempDir(), "state.git")
	plainGit(t, ".", "init", "-q", "--bare", store)
	blob := strings.TrimSpace(gitOutIn(t, store, `{"a":1,"b":2}`, "hash-object", "-w", "--stdin"))
	tree := strings.TrimSpace(gitOutIn(t, store, "100644 blob "+blob+"\tdoc.json\n", "mktree"))
	commit := strings.TrimSpace(plainGit(t, store, "commit-tree", tree, "-m", "plain"))
	gitOut(t, store, "update-ref", "refs/heads/main", commit)
	gitOut(t, store, "symbolic-ref", "HEAD", "refs/heads/main")
	if err := os.Remove(filepath.Join(store, "objects", blob[:2], blob[2:])); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"get", "doc.json"}, {"set", "doc.json", "c", "3"}} {
		_, errOut, code := runCLI(t, store, "", args...)
		if code != 3 || !strings.Contains(errOut, "is missing from the store, which is damaged: run `git fsck`") {
			t.Fatalf("%s: exit %d: %s", strings.Join(args, " "), code, errOut)
		}
	}
	if now := strings.TrimSpace(gitOut(t, store, "rev-parse", "main")); now != commit {
		t.Fatalf("a write proceeded on a damaged base: main %s -> %s", commit, now)
	}
	// A document the tree does not name is still simply absent.
	if _, _, code := runCLI(t, store, "", "get", "nothing.json"); code != 3 {
		t.Fatalf("get of an absent document: exit %d", code)
	}
}

// An agent in a shallow single-branch clone made by git (whose remote
// fetches one branch, or none) starts from main, syncs main's new commits
// in and pushes its branch.
func TestAgentInShallowSingleBranchClone(t *testing.T) {
	server, url, _ := cloneServer(t)
	dir := filepath.Join(t.TempDir(), "clone.git")
	plainGit(t, ".", "clone", "-q", "--bare", "--depth", "1", url, dir)
	main := strings.TrimSpace(gitOut(t, server, "rev-parse", "main"))
	mustCLI(t, dir, "", "agent", "start", "planner")
	if base := strings.TrimSpace(gitOut(t, dir, "rev-parse", "agents/planner/main")); base != main {
		t.Fatalf("agent branch starts at %s, want main %s", base, main)
	}
	mustCLI(t, dir, "", "set", "docs/plan.json", "step", "1")
	// main moves on the server meanwhile.
	other := filepath.Join(t.TempDir(), "other.git")
	plainGit(t, ".", "clone", "-q", "--bare", url, other)
	mustCLI(t, other, "", "set", "docs/main.json", "x", "1")
	mustCLI(t, other, "", "push")
	if _, errOut, code := runCLI(t, dir, "", "sync"); code != 0 {
		t.Fatalf("sync: %s", errOut)
	}
	if got := strings.TrimSpace(mustCLI(t, dir, "", "get", "docs/main.json", "x")); got != "1" {
		t.Fatalf("sync did not merge main in: %s", got)
	}
	if got := gitOut(t, server, "cat-file", "blob", "agents/planner/main:docs/plan.json"); !strings.Contains(got, `"step": 1`) {
		t.Fatalf("server's agent branch: %s", got)
	}
	fsckStrict(t, server)
	fsckStrict(t, dir)
}

func gitOutIn(t *testing.T, store, stdin string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", append([]string{"--git-dir", store}, args...)...)
	cmd.Stdin = strings.NewReader(stdin)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// Two branches whose fork lies beyond a shallow clone's boundary are not
// merged as unrelated histories: the merge is refused until the clone is
// deepened, then it merges.
func TestShallowMergeBeyondBoundaryRefused(t *testing.T) {
	root := t.TempDir()
	server := gitserver.Bare(t, root, "state.git")
	url := gitserver.Daemon(t, root) + "state.git"
	w := newStore(t)
	mustCLI(t, w, "", "set", "docs/a.json", "x", "1")
	mustCLI(t, w, "", "branch", "side")
	mustCLI(t, w, "", "set", "docs/a.json", "y", "2")
	mustCLI(t, w, "", "set", "docs/a.json", "z", "3", "--branch", "side")
	mustCLI(t, w, "", "remote", "add", "origin", url)
	mustCLI(t, w, "", "push")
	mustCLI(t, w, "", "push", "origin", "side")
	gitOut(t, server, "symbolic-ref", "HEAD", "refs/heads/main")
	dir := filepath.Join(t.TempDir(), "clone.git")
	if _, errOut, code := cliIn(t, "clone", "--depth", "1", url, dir, "--no-sync"); code != 0 {
		t.Fatal(errOut)
	}
	head := gitOut(t, dir, "rev-parse", "main")
	_, errOut, code := runCLI(t, dir, "", "merge", "side")
	if code != 3 || !strings.Contains(errOut, "the common history of main and side is beyond this shallow clone's history") {
		t.Fatalf("merge across the boundary: exit %d: %s", code, errOut)
	}
	if now := gitOut(t, dir, "rev-parse", "main"); now != head {
		t.Fatal("the refused merge moved main")
	}
	mustCLI(t, dir, "", "fetch", "--unshallow")
	mustCLI(t, dir, "", "merge", "side")
	if got := mustCLI(t, dir, "", "get", "docs/a.json", "--json"); !strings.Contains(got, `"x":1`) || !strings.Contains(got, `"y":2`) || !strings.Contains(got, `"z":3`) {
		t.Fatalf("merged: %s", got)
	}
	fsckStrict(t, dir)
}
