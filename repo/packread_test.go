package repo

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
)

// TestObjectReaderReadsWhatGitWrote reads every object of a store after
// git gc (deltas of every kind, written by git) and after plain git made
// loose objects, and compares each with git cat-file.
func TestObjectReaderReadsWhatGitWrote(t *testing.T) {
	r := newRepo(t)
	for i := 0; i < 40; i++ {
		write(t, r, map[string]string{
			fmt.Sprintf("d/f%02d.json", i%7): strings.Repeat(fmt.Sprintf("line %d\n", i), 50+i),
			"top.json":                       fmt.Sprintf("%d\n", i),
		})
	}
	git(t, r.Dir(), "gc", "--aggressive", "--quiet")
	loose := strings.TrimSpace(gitIn(t, r.Dir(), "a loose blob\n", "hash-object", "-w", "--stdin"))
	all := strings.Fields(git(t, r.Dir(), "cat-file", "--batch-all-objects", "--batch-check=%(objectname)"))
	all = append(all, loose)
	fresh := newObjReader(r.Dir())
	defer fresh.close()
	for _, id := range all {
		typ, body, err := fresh.read(plumbing.NewHash(id))
		if err != nil {
			t.Fatalf("%s: %v", id, err)
		}
		want := git(t, r.Dir(), "cat-file", typ.String(), id)
		if !bytes.Equal(body, []byte(want)) {
			t.Fatalf("%s %s differs from git cat-file", typ, id)
		}
	}
	bases := git(t, r.Dir(), "cat-file", "--batch-all-objects", "--batch-check=%(deltabase)")
	if len(all) < 100 || strings.Count(bases, "0000000000000000000000000000000000000000") > len(all)-20 {
		t.Fatalf("%d objects, few deltas: the test proves little", len(all))
	}
	if _, _, err := fresh.read(plumbing.NewHash(strings.Repeat("ab", 20))); err == nil {
		t.Fatal("a missing object was found")
	}
}

func gitIn(t testing.TB, dir, stdin string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", append([]string{"--git-dir", dir}, args...)...)
	cmd.Stdin = strings.NewReader(stdin)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v %s", args, err, out)
	}
	return string(out)
}

// TestReadsDuringPackChurn: a reader in another Repo keeps reading the
// branch's latest state while a writer replaces the tail pack on every
// commit (removing the old one): every read succeeds and sees a value
// that was written, never a torn or missing object.
func TestReadsDuringPackChurn(t *testing.T) {
	w := newRepo(t)
	write(t, w, map[string]string{"a.json": "0\n", "big.json": strings.Repeat("x", 5000) + "0\n"})
	rd, err := Open(context.Background(), w.dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer rd.Close()
	done := make(chan struct{})
	var writeErr error
	go func() {
		defer close(done)
		for i := 1; i <= 150 && writeErr == nil; i++ {
			_, writeErr = w.Commit(context.Background(), "refs/heads/main", func(tx *Tx) (*CommitInfo, error) {
				tx.WriteFile("a.json", []byte(fmt.Sprintf("%d\n", i)))
				tx.WriteFile("big.json", []byte(strings.Repeat("x", 5000)+fmt.Sprintf("%d\n", i)))
				sig := NewSignature("writer", time.Unix(1700000000, 0))
				return &CommitInfo{Author: sig, Committer: sig, Message: "churn\n"}, nil
			}, CommitOptions{})
		}
	}()
	reads := 0
	for running := true; running; reads++ {
		select {
		case <-done:
			running = false
		default:
		}
		head, err := rd.Ref("refs/heads/main")
		if err != nil {
			t.Fatal(err)
		}
		c, err := rd.ReadCommit(head)
		if err != nil {
			t.Fatalf("read %d: commit %s: %v", reads, head, err)
		}
		a, err := rd.ReadFileAt(c.Tree, "a.json")
		if err != nil {
			t.Fatalf("read %d: a.json: %v", reads, err)
		}
		big, err := rd.ReadFileAt(c.Tree, "big.json")
		if err != nil {
			t.Fatalf("read %d: big.json: %v", reads, err)
		}
		if !strings.HasSuffix(string(big), string(a)) {
			t.Fatalf("read %d: a.json %q and big.json ...%q are of different commits", reads, a, big[len(big)-5:])
		}
	}
	if writeErr != nil {
		t.Fatal(writeErr)
	}
	if reads < 3 {
		t.Fatalf("only %d reads overlapped the writes", reads)
	}
	git(t, w.dir, "fsck", "--strict", "--no-dangling")
}

// TestWritesDuringRepack: a writer keeps committing while another Repo (as
// another process would) runs the geometric roll-up again and again. No
// object is lost (fsck, and every file as last written), and commits made
// while a repack runs extend a pack of their own instead of each leaving
// one behind.
func TestWritesDuringRepack(t *testing.T) {
	ctx := context.Background()
	w := newRepo(t)
	m, err := Open(ctx, w.dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	const commits = 300
	done := make(chan struct{})
	repacks := 0
	go func() {
		defer close(done)
		for i := 0; i < commits; i++ {
			name := fmt.Sprintf("f%02d.json", i%40)
			_, err := w.Commit(ctx, "refs/heads/main", func(tx *Tx) (*CommitInfo, error) {
				tx.WriteFile(name, []byte(fmt.Sprintf("%d\n", i)))
				sig := NewSignature("writer", time.Unix(1700000000, 0))
				return &CommitInfo{Author: sig, Committer: sig, Message: "w\n"}, nil
			}, CommitOptions{})
			if err != nil {
				t.Error(err)
				return
			}
		}
	}()
	var repackErr error
	mostPacks := 0
	for running := true; running; {
		select {
		case <-done:
			running = false
		default:
			if repackErr != nil {
				time.Sleep(time.Millisecond) // wait for the writer before failing
				continue
			}
			if err := m.Maintain(ctx, false); err == nil {
				repacks++
			} else if !errors.Is(err, ErrLocked) {
				repackErr = err
			}
			mostPacks = max(mostPacks, len(livePacks(t, w.dir)))
		}
	}
	if repackErr != nil {
		t.Fatalf("repack: %v", repackErr)
	}
	if repacks == 0 {
		t.Fatal("no repack overlapped the writes")
	}
	git(t, w.dir, "fsck", "--strict", "--no-dangling")
	for i := commits - 40; i < commits; i++ {
		if got := git(t, w.dir, "show", fmt.Sprintf("main:f%02d.json", i%40)); got != fmt.Sprintf("%d\n", i) {
			t.Fatalf("f%02d.json = %q, want %d", i%40, got, i)
		}
	}
	t.Logf("most packs %d, repacks %d", mostPacks, repacks)
	if mostPacks > 12 {
		t.Errorf("%d packs at once during %d commits and %d repacks: commits during a repack each left a pack", mostPacks, commits, repacks)
	}
}

// TestColdReadsOfDeltaChains: a fresh reader resolves every version of a
// wide directory's tree, stored as offset-delta chains in the tail, to the
// bytes git has; and reading the deepest version allocates a few trees'
// worth, not one per link of its chain.
func TestColdReadsOfDeltaChains(t *testing.T) {
	withGrace(t, 0) // a cold process's listing of superseded tails is not what this measures
	r := newRepo(t)
	files := map[string]string{}
	for i := 0; i < 300; i++ {
		files[fmt.Sprintf("docs/d%03d.json", i)] = fmt.Sprintf("%d\n", i)
	}
	write(t, r, files)
	var trees []plumbing.Hash
	for i := 0; i < 40; i++ {
		c := write(t, r, map[string]string{fmt.Sprintf("docs/d%03d.json", (i*37)%300): fmt.Sprintf("v%d\n", i)})
		body := git(t, r.Dir(), "rev-parse", c.Hash.String()+":docs")
		trees = append(trees, plumbing.NewHash(strings.TrimSpace(body)))
	}
	deepest := 0
	idxs, _ := filepath.Glob(filepath.Join(r.Dir(), "objects", "pack", "pack-*.idx"))
	for _, idx := range idxs {
		for _, line := range strings.Split(git(t, r.Dir(), "verify-pack", "-v", idx), "\n") {
			if f := strings.Fields(line); len(f) >= 7 && len(f[0]) == 40 {
				d, _ := strconv.Atoi(f[5])
				deepest = max(deepest, d)
			}
		}
	}
	if deepest < 10 {
		t.Fatalf("deepest chain %d: the test proves little", deepest)
	}
	for i, h := range trees {
		fresh, err := Open(context.Background(), r.Dir(), Options{})
		if err != nil {
			t.Fatal(err)
		}
		want := gitIn(t, r.Dir(), "", "cat-file", "tree", h.String())
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		typ, body, err := fresh.ReadObject(h)
		runtime.ReadMemStats(&after)
		fresh.Close()
		if err != nil || typ != plumbing.TreeObject || string(body) != want {
			t.Fatalf("version %d: %v %v, %d bytes against git's %d", i, typ, err, len(body), len(want))
		}
		// Opening and a decompressor take about 45 KB; a link of the
		// chain used to add a tree's size (12.6 KB here) each.
		if alloc := after.TotalAlloc - before.TotalAlloc; alloc > uint64(4*len(body))+64<<10 {
			t.Errorf("version %d: reading a %d-byte tree allocated %d bytes", i, len(body), alloc)
		}
	}
}

func newestIdx(t testing.TB, r *Repo) string {
	t.Helper()
	ms, _ := filepath.Glob(filepath.Join(r.Dir(), "objects", "pack", "*.idx"))
	var best string
	var bestTime time.Time
	for _, m := range ms {
		if fi, err := os.Stat(m); err == nil && fi.ModTime().After(bestTime) {
			best, bestTime = m, fi.ModTime()
		}
	}
	return best
}

// TestReadErrors: a corrupt entry is reported as such, not as a missing
// object, and chains deeper than git's default (as repack --depth allows)
// read.
func TestReadErrors(t *testing.T) {
	r := newRepo(t)
	// Each version drops the first line of the last and adds one: only
	// its neighbours make good bases, so git chains them as deep as
	// --depth lets it.
	var versions []string
	for i := 0; i < 200; i++ {
		var b strings.Builder
		for k := i; k < i+100; k++ {
			fmt.Fprintf(&b, "entry %d of a long document\n", k)
		}
		write(t, r, map[string]string{"doc.json": b.String()})
		versions = append(versions, b.String())
	}
	git(t, r.Dir(), "repack", "-a", "-d", "-f", "-q", "--depth=4095", "--window=250")
	idx := newestIdx(t, r)
	deepest := 0
	var blobOff int64 = -1
	for _, line := range strings.Split(git(t, r.Dir(), "verify-pack", "-v", idx), "\n") {
		f := strings.Fields(line)
		if len(f) < 5 || len(f[0]) != 40 {
			continue
		}
		if len(f) >= 7 {
			d, _ := strconv.Atoi(f[5])
			deepest = max(deepest, d)
		} else if f[1] == "blob" && blobOff < 0 {
			blobOff, _ = strconv.ParseInt(f[4], 10, 64)
		}
	}
	if deepest <= 64 {
		t.Fatalf("deepest chain %d: the test would not pass the old limit", deepest)
	}
	fresh, err := Open(context.Background(), r.Dir(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	for i, v := range versions {
		h := strings.TrimSpace(git(t, r.Dir(), "rev-parse", fmt.Sprintf("main~%d:doc.json", len(versions)-1-i)))
		if _, got, err := fresh.ReadObject(plumbing.NewHash(h)); err != nil || string(got) != v {
			t.Fatalf("version %d (chains to %d deep): %v", i, deepest, err)
		}
	}
	fresh.Close()

	// Break the whole blob at the root of the chains: its stored length.
	pack := strings.TrimSuffix(idx, ".idx") + ".pack"
	data, err := os.ReadFile(pack)
	if err != nil {
		t.Fatal(err)
	}
	os.Chmod(pack, 0o644)
	hdr := blobOff
	for data[hdr]&0x80 != 0 {
		hdr++
	}
	hdr++ // past the entry header; git compressed it, so break the stream
	for i := hdr + 2; i < hdr+12; i++ {
		data[i] ^= 0xff
	}
	if err := os.WriteFile(pack, data, 0o644); err != nil {
		t.Fatal(err)
	}
	broken, err := Open(context.Background(), r.Dir(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer broken.Close()
	h := strings.TrimSpace(git(t, r.Dir(), "rev-parse", "main:doc.json"))
	_, _, err = broken.ReadObject(plumbing.NewHash(h))
	if err == nil || errors.Is(err, ErrNotFound) {
		t.Fatalf("reading through a corrupt pack: %v, want an error other than not found", err)
	}
}
