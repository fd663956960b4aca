package redteam

import (
	"bytes"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Attacks with objects git's porcelain never writes, made with
// hash-object --literally: trees git reads differently from a reader
// that lists every entry, commits naming two authors, and objects built
// to make the server's check slow. Each runs against the server as
// `hooks install` leaves it (git itself checks pushed objects,
// receive.fsckObjects) and against one where that check is off (a server
// installed before it, or turned off by hand), where the hook alone
// refuses them.

// fsckModes are the two servers an attack is tried against: name, and
// whether git's own object checks stay on.
var fsckModes = []struct {
	name string
	on   bool
}{{"git-checks", true}, {"hook-alone", false}}

// setFsck turns git's own checks of pushed objects on or off.
func setFsck(t *testing.T, s *server, on bool) {
	t.Helper()
	if on {
		if got := strings.TrimSpace(git(t, s.Dir, "config", "--get", "receive.fsckObjects")); got != "true" {
			t.Fatalf("hooks install left receive.fsckObjects = %q", got)
		}
		return
	}
	git(t, s.Dir, "config", "--unset-all", "receive.fsckObjects")
}

// treeLine is one entry of a tree written as given.
type treeLine struct{ mode, name, id string }

// literalTree writes a tree object with entries in the order given, as
// no git command would.
func literalTree(t *testing.T, clone string, es ...treeLine) string {
	t.Helper()
	var b bytes.Buffer
	for _, e := range es {
		id, err := hex.DecodeString(e.id)
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&b, "%s %s\x00", e.mode, e.name)
		b.Write(id)
	}
	return literal(t, clone, "tree", b.String())
}

func literal(t *testing.T, clone, typ, body string) string {
	t.Helper()
	out, err := gitTry(clone, body, "hash-object", "-t", typ, "--literally", "-w", "--stdin")
	if err != nil {
		t.Fatalf("hash-object: %v\n%s", err, out)
	}
	return strings.TrimSpace(out)
}

// rootWithAiwg is HEAD's root tree with .aiwg replaced.
func rootWithAiwg(t *testing.T, clone, aiwg string) string {
	t.Helper()
	var in strings.Builder
	for _, line := range strings.Split(strings.TrimSpace(git(t, clone, "ls-tree", "HEAD")), "\n") {
		if strings.HasSuffix(line, "\t.aiwg") {
			line = "040000 tree " + aiwg + "\t.aiwg"
		}
		in.WriteString(line + "\n")
	}
	out, err := gitTry(clone, in.String(), "mktree", "--missing")
	if err != nil {
		t.Fatalf("mktree: %v\n%s", err, out)
	}
	return strings.TrimSpace(out)
}

// commitTree commits tree as agent on parents.
func commitTree(t *testing.T, clone, agent, tree string, parents ...string) string {
	t.Helper()
	args := []string{"-c", "user.name=" + agent, "commit-tree", tree, "-m", "forged"}
	for _, p := range parents {
		args = append(args, "-p", p)
	}
	return strings.TrimSpace(git(t, clone, args...))
}

// TestTreeNamingThePolicyTwiceIsRefused: the .aiwg tree names policy.json
// twice, an open policy first (what git shows and checks out) and the real
// one second (what a reader keeping the last entry checks the push
// against); or lists store.json before policy.json, so git's lookup,
// which relies on the order, finds no policy at all.
func TestTreeNamingThePolicyTwiceIsRefused(t *testing.T) {
	for _, mode := range fsckModes {
		t.Run(mode.name, func(t *testing.T) {
			s := newServer(t, "")
			setFsck(t, s, mode.on)
			for name, url := range s.urls("bob") {
				t.Run(name, func(t *testing.T) {
					w := cloneAs(t, url)
					open := literal(t, w, "blob", "{\n  \"default\": \"allow\",\n  \"rules\": []\n}\n")
					real := rev(t, w, "HEAD:.aiwg/policy.json")
					store := rev(t, w, "HEAD:.aiwg/store.json")
					dup := literalTree(t, w, treeLine{"100644", "policy.json", open}, treeLine{"100644", "policy.json", real}, treeLine{"100644", "store.json", store})
					unsorted := literalTree(t, w, treeLine{"100644", "store.json", store}, treeLine{"100644", "policy.json", open})
					for _, c := range []struct{ tree, git, hook string }{
						{dup, "duplicateEntries", "rule store-path: tree " + dup[:12] + " is one git reads differently (\"policy.json\" is named twice)"},
						{unsorted, "treeNotSorted", "out of git's order"},
					} {
						m := commitTree(t, w, "bob", rootWithAiwg(t, w, c.tree), "HEAD")
						want := c.hook
						if mode.on {
							want = c.git
						}
						refused(t, s, w, url, m+":refs/heads/main", want)
						refused(t, s, w, url, m+":refs/heads/agents/bob/main", want)
					}
					if got := git(t, s.Dir, "show", "main:.aiwg/policy.json"); !strings.Contains(got, "coordinator writes all") {
						t.Fatalf("the server's policy changed: %s", got)
					}
				})
			}
		})
	}
}

// TestCommitWithTwoAuthorsIsRefused: "author mallory" then "author bob":
// git log and shortlog credit one agent, aiwg-state's log and blame the
// other. An encoding header makes git re-encode names aiwg-state reads
// as bytes; git's own checks let that one through, the hook does not.
func TestCommitWithTwoAuthorsIsRefused(t *testing.T) {
	for _, mode := range fsckModes {
		t.Run(mode.name, func(t *testing.T) {
			s := newServer(t, "")
			setFsck(t, s, mode.on)
			for name, url := range s.urls("bob") {
				t.Run(name, func(t *testing.T) {
					w := cloneAs(t, url)
					os.MkdirAll(filepath.Join(w, "agents", "bob"), 0o755)
					if err := os.WriteFile(filepath.Join(w, "agents", "bob", "n.json"), []byte("{\n  \"n\": 1\n}\n"), 0o644); err != nil {
						t.Fatal(err)
					}
					git(t, w, "add", ".")
					tree := strings.TrimSpace(git(t, w, "write-tree"))
					git(t, w, "reset", "-q", "--hard")
					head := rev(t, w, "HEAD")
					const when = " 1700000000 +0000\n"
					twoAuthors := literal(t, w, "commit", "tree "+tree+"\nparent "+head+"\nauthor mallory <m@agents.invalid>"+when+"author bob <b@agents.invalid>"+when+"committer bob <b@agents.invalid>"+when+"\nnotes\n")
					want := "rule commit-format: 2 author headers"
					if mode.on {
						want = "multipleAuthors"
					}
					refused(t, s, w, url, twoAuthors+":refs/heads/agents/bob/main", want)
					encoded := literal(t, w, "commit", "tree "+tree+"\nparent "+head+"\nauthor bob <b@agents.invalid>"+when+"committer bob <b@agents.invalid>"+when+"encoding ISO-8859-1\n\nnotes\n")
					refused(t, s, w, url, encoded+":refs/heads/agents/bob/main", "rule commit-format: an encoding header")
				})
			}
		})
	}
}

// TestLargeFileOfAnyNameIsRefused: a file over limits.max_document_bytes
// is refused whatever its extension, as the store's own writes refuse it;
// accepted, it would make every later merge of the branch fail.
func TestLargeFileOfAnyNameIsRefused(t *testing.T) {
	s := newServer(t, "")
	runIn(t, s.Coordinator, "", "config", "limits.max_document_bytes", "4096", "--agent", "conductor")
	runIn(t, s.Coordinator, "", "push")
	for name, url := range s.urls("bob") {
		t.Run(name, func(t *testing.T) {
			w := cloneAs(t, url)
			for _, f := range []string{"blob.txt", "blob"} {
				os.MkdirAll(filepath.Join(w, "agents", "bob"), 0o755)
				if err := os.WriteFile(filepath.Join(w, "agents", "bob", f), bytes.Repeat([]byte("x"), 5000), 0o644); err != nil {
					t.Fatal(err)
				}
				git(t, w, "add", ".")
				git(t, w, "-c", "user.name=bob", "commit", "-qm", "a large file")
				refused(t, s, w, url, "HEAD:refs/heads/agents/bob/main", "agents/bob/"+f+": rule limit: 5000 bytes; the store's limit is 4096 (limits.max_document_bytes)")
				git(t, w, "reset", "-q", "--hard", "HEAD~1")
			}
		})
	}
}

// TestOctopusOfSeventeenIsRefused: a merge of many parents made the check
// ask git for the merge bases of every pair; 17 parents are refused before
// one is asked for.
func TestOctopusOfSeventeenIsRefused(t *testing.T) {
	s := newServer(t, "")
	for name, url := range s.urls("bob") {
		t.Run(name, func(t *testing.T) {
			w := cloneAs(t, url)
			tree := rev(t, w, "HEAD^{tree}")
			parents := []string{rev(t, w, "HEAD")}
			for i := 1; i < 17; i++ {
				parents = append(parents, strings.TrimSpace(git(t, w, "-c", "user.name=bob", "commit-tree", tree, "-p", "HEAD", "-m", fmt.Sprint("empty ", i))))
			}
			m := commitTree(t, w, "bob", tree, parents...)
			refused(t, s, w, url, m+":refs/heads/agents/bob/main", "rule commit-format: a merge of 17 parents: a pushed commit has at most 16")
		})
	}
}

// TestDeepPathIsRefused: a file 100 directories deep in the pusher's own
// directory; the check stops at the store's depth rather than walking
// every level of it.
func TestDeepPathIsRefused(t *testing.T) {
	s := newServer(t, "")
	for name, url := range s.urls("bob") {
		t.Run(name, func(t *testing.T) {
			w := cloneAs(t, url)
			tree := literalTree(t, w, treeLine{"100644", "x.json", literal(t, w, "blob", "{\n  \"x\": 1\n}\n")})
			for i := 0; i < 100; i++ {
				tree = literalTree(t, w, treeLine{"40000", "a", tree})
			}
			bob := literalTree(t, w, treeLine{"40000", "bob", tree})
			var in strings.Builder
			in.WriteString("040000 tree " + bob + "\tagents\n")
			for _, line := range strings.Split(strings.TrimSpace(git(t, w, "ls-tree", "HEAD")), "\n") {
				if !strings.HasSuffix(line, "\tagents") {
					in.WriteString(line + "\n")
				}
			}
			root, err := gitTry(w, in.String(), "mktree")
			if err != nil {
				t.Fatalf("mktree: %v\n%s", err, root)
			}
			m := commitTree(t, w, "bob", strings.TrimSpace(root), "HEAD")
			refused(t, s, w, url, m+":refs/heads/agents/bob/main", "rule store-path: a directory 64 levels deep: a store path has at most 64 segments")
		})
	}
}

// TestHookOutOfTimeRefuses: a check that runs out of its time (git config
// aiwg.hookTimeout, here one nanosecond) accepts nothing; a setting that
// is no duration refuses every push, saying so.
func TestHookOutOfTimeRefuses(t *testing.T) {
	s := newServer(t, "")
	for _, c := range []struct{ value, want string }{
		{"1ns", "the check ran out of time after 1ns (git config aiwg.hookTimeout on the server)"},
		{"soon", `git config aiwg.hookTimeout is "soon": want a positive duration`},
	} {
		git(t, s.Dir, "config", "aiwg.hookTimeout", c.value)
		for name, url := range s.urls("bob") {
			t.Run(name+"-"+c.value, func(t *testing.T) {
				w := cloneAs(t, url)
				os.MkdirAll(filepath.Join(w, "agents", "bob"), 0o755)
				if err := os.WriteFile(filepath.Join(w, "agents", "bob", "n.json"), []byte("{\n  \"n\": 1\n}\n"), 0o644); err != nil {
					t.Fatal(err)
				}
				git(t, w, "add", ".")
				git(t, w, "-c", "user.name=bob", "commit", "-qm", "notes")
				refused(t, s, w, url, "HEAD:refs/heads/agents/bob/main", c.want)
			})
		}
	}
	git(t, s.Dir, "config", "--unset", "aiwg.hookTimeout")
	w := cloneAs(t, s.Daemon)
	os.MkdirAll(filepath.Join(w, "agents", "bob"), 0o755)
	if err := os.WriteFile(filepath.Join(w, "agents", "bob", "n.json"), []byte("{\n  \"n\": 1\n}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	git(t, w, "add", ".")
	git(t, w, "-c", "user.name=bob", "commit", "-qm", "notes")
	git(t, w, "push", "-q", s.Daemon, "HEAD:refs/heads/agents/bob/main")
}
