package repo

import (
	"bytes"
	"compress/zlib"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/format/idxfile"
)

// TestTailPacksStayReadable writes many commits through the tail pack and
// its deltas, from several Repo instances on several branches at once (as
// several processes would), then checks every file of every branch head
// with the git CLI and git fsck --strict.
func TestTailPacksStayReadable(t *testing.T) {
	r := newRepo(t)
	const writers, commits = 3, 120
	want := make([]map[string]string, writers)
	var wg sync.WaitGroup
	errs := make(chan error, writers)
	for w := 0; w < writers; w++ {
		want[w] = map[string]string{}
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			rw, err := Open(context.Background(), r.Dir(), Options{})
			if err != nil {
				errs <- err
				return
			}
			defer rw.Close()
			rng := rand.New(rand.NewPCG(uint64(w), 7))
			for i := 0; i < commits; i++ {
				// Large files exercise blob deltas; many names a wide tree.
				name := fmt.Sprintf("dir%d/f%03d.json", rng.IntN(3), rng.IntN(150))
				body := fmt.Sprintf("%s%d\n", strings.Repeat("x", rng.IntN(4000)), i)
				_, err := rw.Commit(context.Background(), fmt.Sprintf("refs/heads/b%d", w), func(tx *Tx) (*CommitInfo, error) {
					if err := tx.WriteFile(name, []byte(body)); err != nil {
						return nil, err
					}
					sig := NewSignature("w", time.Unix(1700000000, 0))
					return &CommitInfo{Author: sig, Committer: sig, Message: "m\n"}, nil
				}, CommitOptions{})
				if err != nil {
					errs <- err
					return
				}
				want[w][name] = body
			}
		}(w)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	git(t, r.Dir(), "fsck", "--strict", "--no-dangling")
	for w := 0; w < writers; w++ {
		for name, body := range want[w] {
			if got := git(t, r.Dir(), "show", fmt.Sprintf("b%d:%s", w, name)); got != body {
				t.Fatalf("b%d:%s differs", w, name)
			}
		}
	}
	packs := livePacks(t, r.Dir())
	if len(packs) > writers*commits/10 {
		t.Errorf("%d packs after %d commits: the tail pack is not being extended", len(packs), writers*commits)
	}
	for _, p := range packs {
		if out, err := exec.Command("git", "verify-pack", strings.TrimSuffix(p, ".pack")+".idx").CombinedOutput(); err != nil {
			t.Fatalf("verify-pack: %v %s", err, out)
		}
	}
	// A fresh reader (another process) sees the same.
	fresh, err := Open(context.Background(), r.Dir(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer fresh.Close()
	for name, body := range want[0] {
		h, _ := fresh.Ref("refs/heads/b0")
		c, err := fresh.ReadCommit(h)
		if err != nil {
			t.Fatal(err)
		}
		got, err := fresh.ReadFileAt(c.Tree, name)
		if err != nil || string(got) != body {
			t.Fatalf("fresh read of %s: %v", name, err)
		}
	}
}

func TestMakeDeltaAppliesAsGitDoes(t *testing.T) {
	cases := [][2]string{
		{"", ""}, {"abc", "abc"}, {"abc", ""}, {"", "xyz"}, {"hello world", "hello there world"},
		{strings.Repeat("a", 70000), strings.Repeat("a", 70000) + "b"},
		{strings.Repeat("ab", 40000), "z" + strings.Repeat("ab", 40000)},
	}
	for _, c := range cases {
		d := makeDelta([]byte(c[0]), []byte(c[1]))
		got, err := applyDeltaForTest([]byte(c[0]), d)
		if err != nil || string(got) != c[1] {
			t.Errorf("delta %q -> %q: %v", c[0][:min(10, len(c[0]))], c[1][:min(10, len(c[1]))], err)
		}
	}
}

// applyDeltaForTest is git's patch-delta, written from the format.
func applyDeltaForTest(src, d []byte) ([]byte, error) {
	varint := func() int {
		n, shift := 0, 0
		for {
			c := d[0]
			d = d[1:]
			n |= int(c&0x7f) << shift
			shift += 7
			if c&0x80 == 0 {
				return n
			}
		}
	}
	if varint() != len(src) {
		return nil, fmt.Errorf("source size")
	}
	size := varint()
	var out []byte
	for len(d) > 0 {
		op := d[0]
		d = d[1:]
		if op&0x80 == 0 {
			out = append(out, d[:op]...)
			d = d[op:]
			continue
		}
		off, n := 0, 0
		for i := 0; i < 4; i++ {
			if op&(1<<i) != 0 {
				off |= int(d[0]) << (8 * i)
				d = d[1:]
			}
		}
		for i := 0; i < 3; i++ {
			if op&(0x10<<i) != 0 {
				n |= int(d[0]) << (8 * i)
				d = d[1:]
			}
		}
		if n == 0 {
			n = 0x10000
		}
		out = append(out, src[off:off+n]...)
	}
	if len(out) != size {
		return nil, fmt.Errorf("size %d, want %d", len(out), size)
	}
	return out, nil
}

// TestRewritingNothingKeepsThePack: objects already in the tail make no
// new pack, and the tail must survive (it once removed itself).
func TestRewritingNothingKeepsThePack(t *testing.T) {
	r := newRepo(t)
	c := write(t, r, map[string]string{"a": "1\n"})
	tree, _ := r.ReadTree(c.Tree)
	objs := []rawObject{{typ: 2, hash: c.Tree, body: encodeTree(tree.Entries)}}
	if err := r.writeObjects(objs); err != nil {
		t.Fatal(err)
	}
	git(t, r.Dir(), "fsck", "--strict", "--no-dangling")
	if got := git(t, r.Dir(), "show", "main:a"); got != "1\n" {
		t.Fatalf("show = %q", got)
	}
}

// TestEncodeIdxAsGoGitReadsIt checks our index writer against go-git's
// reader, 64-bit offsets included (a pack that large cannot be made for
// git itself in a test), and against our own reader of tail indexes.
func TestEncodeIdxAsGoGitReadsIt(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, tc := range []struct {
		n     int
		large bool
	}{{0, false}, {1, false}, {300, false}, {300, true}} {
		objs := make([]packEntry, tc.n)
		for i := range objs {
			for j := range objs[i].hash {
				objs[i].hash[j] = byte(rng.Uint32())
			}
			objs[i].offset = int64(12 + i*100)
			if tc.large && i%3 == 0 {
				objs[i].offset = 1<<33 + int64(i)
			}
			objs[i].crc = rng.Uint32()
		}
		slices.SortFunc(objs, func(a, b packEntry) int { return bytes.Compare(a.hash[:], b.hash[:]) })
		var pack plumbing.Hash
		pack[0] = 7
		b := encodeIdx(objs, pack)

		idx := idxfile.NewMemoryIndex()
		if err := idxfile.NewDecoder(bytes.NewReader(b)).Decode(idx); err != nil {
			t.Fatalf("n=%d: go-git cannot read it: %v", tc.n, err)
		}
		if idx.PackfileChecksum != pack {
			t.Errorf("n=%d: pack checksum %x", tc.n, idx.PackfileChecksum)
		}
		for _, e := range objs {
			off, err := idx.FindOffset(e.hash)
			crc, err2 := idx.FindCRC32(e.hash)
			if err != nil || err2 != nil || off != e.offset || crc != e.crc {
				t.Fatalf("n=%d: %x: offset %d crc %x (%v %v), want %d %x", tc.n, e.hash, off, crc, err, err2, e.offset, e.crc)
			}
		}
		if !tc.large {
			back, _, err := parseIdx(b)
			if err != nil || !slices.Equal(back, objs) {
				t.Fatalf("n=%d: parseIdx: %v", tc.n, err)
			}
		}
	}
}

// TestFailedPublishLeavesTailUsable: a commit whose pack was written (the
// tail extended in place in memory) but whose ref update is then refused
// must leave nothing behind that a later commit builds on: the later
// packs verify, and the branch never sees the refused content.
func TestFailedPublishLeavesTailUsable(t *testing.T) {
	for _, sync := range []bool{false, true} {
		t.Run(fmt.Sprintf("sync=%v", sync), func(t *testing.T) {
			ctx := context.Background()
			r, err := Init(ctx, filepath.Join(t.TempDir(), "s.git"), "main", Options{Sync: sync})
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			for i := 0; i < 5; i++ {
				write(t, r, map[string]string{fmt.Sprintf("f%d", i): fmt.Sprintf("%d\n", i)})
			}
			_, err = r.Commit(ctx, "refs/heads/main", func(tx *Tx) (*CommitInfo, error) {
				// Taking the lock away by hand makes the publish refuse,
				// after the pack is written.
				if err := os.Remove(filepath.Join(r.Dir(), "refs", "heads", "main.lock")); err != nil {
					return nil, err
				}
				if err := tx.WriteFile("refused", []byte("x\n")); err != nil {
					return nil, err
				}
				sig := NewSignature("agent-1", time.Unix(1700000000, 0))
				return &CommitInfo{Author: sig, Committer: sig, Message: "refused\n"}, nil
			}, CommitOptions{})
			if !errors.Is(err, ErrLocked) {
				t.Fatalf("commit with its lock taken away: %v, want ErrLocked", err)
			}
			for i := 5; i < 10; i++ {
				write(t, r, map[string]string{fmt.Sprintf("f%d", i): fmt.Sprintf("%d\n", i)})
			}
			git(t, r.Dir(), "fsck", "--strict", "--no-dangling")
			packs, _ := filepath.Glob(filepath.Join(r.Dir(), "objects", "pack", "*.idx"))
			for _, p := range packs {
				if out, err := exec.Command("git", "verify-pack", p).CombinedOutput(); err != nil {
					t.Fatalf("verify-pack: %v %s", err, out)
				}
			}
			if got := git(t, r.Dir(), "ls-tree", "--name-only", "main"); got != "f0\nf1\nf2\nf3\nf4\nf5\nf6\nf7\nf8\nf9\n" {
				t.Fatalf("main holds:\n%s", got)
			}
		})
	}
}

func TestMergeEntries(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	entry := func() packEntry {
		var e packEntry
		for j := range e.hash {
			e.hash[j] = byte(rng.Uint32())
		}
		e.offset = int64(rng.Uint32())
		return e
	}
	byHash := func(a, b packEntry) int { return bytes.Compare(a.hash[:], b.hash[:]) }
	for _, tc := range []struct{ old, added, spare int }{{0, 0, 0}, {0, 5, 0}, {5, 0, 0}, {1000, 3, 0}, {1000, 3, 10}, {3, 1000, 0}, {50, 50, 50}} {
		old := make([]packEntry, tc.old, tc.old+tc.spare)
		for i := range old {
			old[i] = entry()
		}
		slices.SortFunc(old, byHash)
		added := make([]packEntry, tc.added)
		for i := range added {
			added[i] = entry()
		}
		want := slices.SortedFunc(slices.Values(append(slices.Clone(old), added...)), byHash)
		if got := mergeEntries(old, added); !slices.Equal(got, want) {
			t.Errorf("old %d + added %d (spare %d): not the sorted union", tc.old, tc.added, tc.spare)
		}
	}
}

// BenchmarkCommitManyFiles: one commit of 32,000 new files (an import),
// whose objects all go through one pack write.
func BenchmarkCommitManyFiles(b *testing.B) {
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		r := newRepo(b)
		b.StartTimer()
		_, err := r.Commit(context.Background(), "refs/heads/main", func(tx *Tx) (*CommitInfo, error) {
			for f := 0; f < 32000; f++ {
				if err := tx.WriteFile(fmt.Sprintf("d%02d/f%05d.json", f%32, f), []byte(fmt.Sprintf("%d\n", f))); err != nil {
					return nil, err
				}
			}
			sig := NewSignature("importer", time.Unix(1700000000, 0))
			return &CommitInfo{Author: sig, Committer: sig, Message: "import\n"}, nil
		}, CommitOptions{})
		if err != nil {
			b.Fatal(err)
		}
	}
}

// TestAppendStored: the stored zlib stream reads back through
// compress/zlib, and git reads it as a loose object (git's own zlib), at
// sizes around the 64 KiB block limit.
func TestAppendStored(t *testing.T) {
	r := newRepo(t)
	for _, n := range []int{0, 1, 65534, 65535, 65536, 131070, 131071, 200000} {
		data := make([]byte, n)
		for i := range data {
			data[i] = byte('a' + i%23)
		}
		z := appendStored([]byte("prefix"), data)
		zr, err := zlib.NewReader(bytes.NewReader(z[len("prefix"):]))
		if err != nil {
			t.Fatal(err)
		}
		back, err := io.ReadAll(zr)
		if err != nil || !bytes.Equal(back, data) {
			t.Fatalf("%d bytes: read back %d, %v", n, len(back), err)
		}
		obj := append([]byte(fmt.Sprintf("blob %d\x00", n)), data...)
		h := hashObject(plumbing.BlobObject, data)
		path := filepath.Join(r.Dir(), "objects", h.String()[:2], h.String()[2:])
		os.MkdirAll(filepath.Dir(path), 0o755)
		if err := os.WriteFile(path, appendStored(nil, obj), 0o444); err != nil {
			t.Fatal(err)
		}
		if got := git(t, r.Dir(), "cat-file", "blob", h.String()); got != string(data) {
			t.Fatalf("%d bytes: git reads %d", n, len(got))
		}
	}
	git(t, r.Dir(), "fsck", "--strict")
}

// TestTailAfterGitGC: a small pack git gc wrote (with its bitmap and
// reverse index) becomes the tail and goes whole when extended, leaving
// nothing git calls garbage; git's cruft packs are never extended.
func TestTailAfterGitGC(t *testing.T) {
	r := newRepo(t)
	for i := 0; i < 5; i++ {
		write(t, r, map[string]string{fmt.Sprintf("d%d.json", i): "1\n"})
	}
	git(t, r.Dir(), "-c", "pack.writeReverseIndex=true", "-c", "repack.writeBitmaps=true", "gc", "-q")
	packDir := filepath.Join(r.Dir(), "objects", "pack")
	if m, _ := filepath.Glob(filepath.Join(packDir, "*.bitmap")); len(m) == 0 {
		t.Skip("this git wrote no bitmap")
	}
	r2, err := Open(context.Background(), r.Dir(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer r2.Close()
	write(t, r2, map[string]string{"d9.json": "2\n"})
	es, _ := os.ReadDir(packDir)
	packs := map[string]bool{}
	for _, e := range es {
		if strings.HasSuffix(e.Name(), ".pack") {
			packs[strings.TrimSuffix(e.Name(), ".pack")] = true
		}
	}
	for _, e := range es {
		ext := filepath.Ext(e.Name())
		if ext != ".pack" && !packs[strings.TrimSuffix(e.Name(), ext)] {
			t.Errorf("%s outlived its pack", e.Name())
		}
	}
	if out := git(t, r.Dir(), "count-objects", "-v"); strings.Contains(out, "garbage: ") && !strings.Contains(out, "garbage: 0") {
		t.Errorf("git count-objects:\n%s", out)
	}

	// A cruft pack (unreachable objects with their times) is left alone.
	cmd := exec.Command("git", "--git-dir", r.Dir(), "hash-object", "-w", "--stdin")
	cmd.Stdin = strings.NewReader("unreachable\n")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("hash-object: %v %s", err, out)
	}
	git(t, r.Dir(), "gc", "-q", "--cruft", "--prune=1.week.ago")
	cruft, _ := filepath.Glob(filepath.Join(packDir, "*.mtimes"))
	if len(cruft) == 0 {
		t.Skip("this git made no cruft pack")
	}
	write(t, r2, map[string]string{"d10.json": "3\n"})
	if _, err := os.Stat(strings.TrimSuffix(cruft[0], ".mtimes") + ".pack"); err != nil {
		t.Fatalf("the cruft pack was extended and removed: %v", err)
	}
	git(t, r.Dir(), "fsck", "--strict")
}
