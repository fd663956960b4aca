package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// newestLiveIdx is the newest pack index that is not a superseded tail
// (sticky bit) waiting to be removed.
func newestLiveIdx(t *testing.T, store string) string {
	t.Helper()
	ms, _ := filepath.Glob(filepath.Join(store, "objects", "pack", "*.idx"))
	var best string
	var bestTime time.Time
	for _, m := range ms {
		fi, err := os.Stat(m)
		if err == nil && fi.Mode()&os.ModeSticky == 0 && fi.ModTime().After(bestTime) {
			best, bestTime = m, fi.ModTime()
		}
	}
	return best
}

// TestDamagedIndexRefusesWritesAndFsckNamesIt: a flipped bit in an object
// name of the newest pack index makes writes refuse and reads report
// damage (exit 3, naming the file and fsck), and fsck names the index and
// its repair, which works.
func TestDamagedIndexRefusesWritesAndFsckNamesIt(t *testing.T) {
	s := newStore(t)
	mustCLI(t, s, "", "set", "docs/a.json", "k", "1")
	mustCLI(t, s, "", "set", "docs/a.json", "j", "2")
	if out := mustCLI(t, s, "", "fsck"); !strings.HasPrefix(out, "ok: ") {
		t.Fatalf("fsck of a sound store: %q", out)
	}
	blob := strings.TrimSpace(gitOut(t, s, "rev-parse", "main:docs/a.json"))
	idx := newestLiveIdx(t, s)
	b, err := os.ReadFile(idx)
	if err != nil {
		t.Fatal(err)
	}
	pos := -1
	n := int(b[8+255*4])<<24 | int(b[8+255*4+1])<<16 | int(b[8+255*4+2])<<8 | int(b[8+255*4+3])
	for i := range n {
		if hexOf(b[8+1024+20*i:8+1024+20*i+20]) == blob {
			pos = i
		}
	}
	if pos < 0 {
		t.Fatal("the document's blob is not in the newest index")
	}
	b[8+1024+20*pos+19] ^= 1
	os.Chmod(idx, 0o644)
	if err := os.WriteFile(idx, b, 0o444); err != nil {
		t.Fatal(err)
	}
	packsBefore, _ := filepath.Glob(filepath.Join(s, "objects", "pack", "*"))
	_, errOut, code := runCLI(t, s, "", "set", "docs/a.json", "k", "3")
	if code != exitDomain || !strings.Contains(errOut, "damaged") || !strings.Contains(errOut, "aiwg-state fsck") {
		t.Fatalf("set on a damaged index: exit %d %q, want 3 naming the damage and fsck", code, errOut)
	}
	if packsAfter, _ := filepath.Glob(filepath.Join(s, "objects", "pack", "*")); len(packsAfter) != len(packsBefore) {
		t.Fatalf("the refused write changed the pack directory: %v -> %v", packsBefore, packsAfter)
	}
	_, errOut, code = runCLI(t, s, "", "get", "docs/a.json", "k")
	if code != exitDomain || !strings.Contains(errOut, "damaged") {
		t.Fatalf("get through a damaged index: exit %d %q, want 3 naming the damage", code, errOut)
	}
	out, _, code := runCLI(t, s, "", "fsck", "--json")
	var rep struct {
		OK       bool
		Problems []struct{ Check, File, Problem, Repair string }
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil || code != exitDomain || rep.OK {
		t.Fatalf("fsck --json: exit %d %v %q", code, err, out)
	}
	rel, _ := filepath.Rel(s, idx)
	found := false
	for _, p := range rep.Problems {
		if p.File == rel && strings.Contains(p.Repair, "git index-pack") {
			found = true
		}
	}
	if !found {
		t.Fatalf("fsck does not name %s with its repair: %+v", rel, rep.Problems)
	}
	// The repair fsck gives.
	os.Rename(idx, idx+".damaged")
	gitOut(t, s, "index-pack", strings.TrimSuffix(idx, ".idx")+".pack")
	os.Remove(idx + ".damaged")
	if out, errOut, code := runCLI(t, s, "", "fsck"); code != 0 {
		t.Fatalf("fsck after the repair: exit %d %s %s", code, out, errOut)
	}
	mustCLI(t, s, "", "set", "docs/a.json", "k", "3")
	gitOut(t, s, "fsck", "--strict")
}

// TestBrokenManifestExitThreeAndConfigRepairs: an invalid store.json that
// plain git committed makes writes exit 3 naming the repair, fsck names
// it, and config repairs it.
func TestBrokenManifestExitThreeAndConfigRepairs(t *testing.T) {
	s := newStore(t)
	mustCLI(t, s, "", "set", "docs/a.json", "k", "1")
	blob := strings.TrimSpace(gitIn(s, "{ broken", "hash-object", "-w", "--stdin"))
	idx := filepath.Join(t.TempDir(), "index")
	gitEnvIdx(t, s, idx, "read-tree", "main")
	gitEnvIdx(t, s, idx, "update-index", "--add", "--cacheinfo", "100644,"+blob+",.aiwg/store.json")
	tree := strings.TrimSpace(gitEnvIdx(t, s, idx, "write-tree"))
	c := strings.TrimSpace(gitOut(t, s, "-c", "user.name=x", "-c", "user.email=x@example.invalid", "commit-tree", "-p", "main", "-m", "by hand", tree))
	gitOut(t, s, "update-ref", "refs/heads/main", c)
	_, errOut, code := runCLI(t, s, "", "set", "docs/a.json", "k", "2")
	if code != exitDomain || !strings.Contains(errOut, "aiwg-state config") {
		t.Fatalf("set on a broken manifest: exit %d %q, want 3 naming the repair", code, errOut)
	}
	if out, _, code := runCLI(t, s, "", "fsck"); code != exitDomain || !strings.Contains(out, ".aiwg/store.json") {
		t.Fatalf("fsck: exit %d %q", code, out)
	}
	mustCLI(t, s, "", "config", "sync", "true")
	mustCLI(t, s, "", "set", "docs/a.json", "k", "2")
	mustCLI(t, s, "", "fsck")
}

// gitEnvIdx runs git with its index file at idx.
func gitEnvIdx(t *testing.T, store, idx string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", append([]string{"--git-dir", store}, args...)...)
	cmd.Env = append(os.Environ(), "GIT_INDEX_FILE="+idx)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

func hexOf(b []byte) string {
	const digits = "0123456789abcdef"
	out := make([]byte, 0, 2*len(b))
	for _, c := range b {
		out = append(out, digits[c>>4], digits[c&15])
	}
	return string(out)
}
