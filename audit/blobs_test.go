package audit

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/aiwg/aiwg-state/objects"
	"github.com/aiwg/aiwg-state/repo"
	"github.com/aiwg/aiwg-state/verbiage"
)

// TestIndexWithoutBlobs: an index written before the files' blobs were
// kept (a version 2 snapshot) answers keyed logs as a rebuilt one does,
// through the trees; commits indexed after it get their blobs, and a fold
// keeps both kinds.
func TestIndexWithoutBlobs(t *testing.T) {
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "s.git")
	if out, err := exec.Command("git", "init", "-q", "--bare", dir).CombinedOutput(); err != nil {
		t.Fatalf("git init: %v\n%s", err, out)
	}
	fastImport(t, dir, 0, 40)
	r, err := repo.Open(ctx, dir, repo.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	head := func() plumbing.Hash {
		h, err := r.Ref("refs/heads/main")
		if err != nil {
			t.Fatal(err)
		}
		return h
	}
	ix := Open(r)
	if _, err := ix.Rebuild(ctx, []plumbing.Hash{head()}); err != nil {
		t.Fatal(err)
	}
	rebuilt := keyedAnswers(t, Open(r), r, head())

	// The same index in the format before blobs.
	data, err := os.ReadFile(ix.snapshotPath())
	if err != nil {
		t.Fatal(err)
	}
	snap, err := parseSnapshot(data)
	if err != nil {
		t.Fatal(err)
	}
	b := newSnapBuilder(snap.n)
	snap.each(func(c *commit) {
		c.blobs = nil
		b.add(c)
	})
	old := b.finish(snap.gen)
	binary.LittleEndian.PutUint32(old[12:], 2)
	binary.LittleEndian.PutUint32(old[8:], crc32.ChecksumIEEE(old[12:]))
	if err := os.WriteFile(ix.snapshotPath(), old, 0o644); err != nil {
		t.Fatal(err)
	}
	ix = Open(r)
	if got := keyedAnswers(t, ix, r, head()); got != rebuilt {
		t.Fatalf("an index without blobs answers\n%s\nwhere a rebuilt one answers\n%s", got, rebuilt)
	}
	v, err := ix.view(ctx, head())
	if err != nil {
		t.Fatal(err)
	}
	if n, _ := v.find(head()); true {
		if _, ok := v.blobAt(n, "d0.json"); ok {
			t.Fatal("an index without blobs read a blob")
		}
	}

	// Commits made after it: indexed with their blobs, then folded with
	// the old ones into one snapshot.
	fastImport(t, dir, 40, 20)
	ix = Open(r)
	ix.FoldAt = 1
	mixed := keyedAnswers(t, ix, r, head())
	if !strings.Contains(mixed, rebuilt[:40]) {
		t.Fatalf("answers after new commits lost the old ones:\n%s", mixed)
	}
	v, err = ix.view(ctx, head())
	if err != nil {
		t.Fatal(err)
	}
	if v.snap == nil || len(v.tail) != 0 {
		t.Fatalf("not folded: snapshot %v, %d in the log", v.snap != nil, len(v.tail))
	}
	if n, _ := v.find(head()); true {
		if _, ok := v.blobAt(n, "d0.json"); !ok {
			t.Fatal("a commit indexed with its blobs has none after the fold")
		}
	}
	if _, err := ix.Rebuild(ctx, []plumbing.Hash{head()}); err != nil {
		t.Fatal(err)
	}
	if again := keyedAnswers(t, Open(r), r, head()); again != mixed {
		t.Fatalf("a mixed index answers\n%s\nwhere a rebuilt one answers\n%s", mixed, again)
	}
}

// fastImport adds n commits to main with plain git: each sets a key of
// one of three documents, now and then removes one, and one document
// becomes a directory for a commit.
func fastImport(t *testing.T, dir string, from, n int) {
	t.Helper()
	var in bytes.Buffer
	for i := from; i < from+n; i++ {
		fmt.Fprintf(&in, "commit refs/heads/main\ncommitter git <git@example.invalid> %d +0000\ndata 6\nplain\n", 1767225600+i)
		if i == from && from > 0 {
			in.WriteString("from refs/heads/main^0\n")
		}
		doc := fmt.Sprintf("d%d.json", i%3)
		switch {
		case i%11 == 5:
			fmt.Fprintf(&in, "D %s\n", doc)
		case i == 17:
			body := `{"a": "inside"}`
			fmt.Fprintf(&in, "D %s\nM 100644 inline %s/x.json\ndata %d\n%s\n", doc, doc, len(body), body)
		default:
			body := fmt.Sprintf(`{"a": %d, "b": {"c": %d}}`, i, i%4)
			fmt.Fprintf(&in, "D %s\nM 100644 inline %s\ndata %d\n%s\n", doc, doc, len(body), body)
		}
	}
	cmd := exec.Command("git", "--git-dir", dir, "fast-import", "--quiet")
	cmd.Stdin = &in
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("fast-import: %v\n%s", err, out)
	}
}

// keyedAnswers is each keyed log's commits with the key's values at the
// commit and its first parent, as text to compare.
func keyedAnswers(t *testing.T, ix *Index, r *repo.Repo, head plumbing.Hash) string {
	t.Helper()
	var out strings.Builder
	for _, file := range []string{"d0.json", "d1.json", "d2.json"} {
		for _, key := range []string{"a", "b.c"} {
			p, err := verbiage.ParsePath(key)
			if err != nil {
				t.Fatal(err)
			}
			err = ix.Log(context.Background(), head, LogOptions{File: file, Key: p}, func(h Hit) (bool, error) {
				c, err := r.ReadCommit(h.Commit)
				if err != nil {
					return false, err
				}
				fmt.Fprintf(&out, "%s#%s %.8s %s", file, key, h.Commit, valueText(t, ix, h.Commit, file, p))
				if len(c.Parents) > 0 {
					fmt.Fprintf(&out, " <- %s", valueText(t, ix, c.Parents[0], file, p))
				}
				out.WriteString("\n")
				return true, nil
			})
			if err != nil {
				t.Fatal(err)
			}
		}
	}
	return out.String()
}

func valueText(t *testing.T, ix *Index, c plumbing.Hash, file string, key verbiage.Path) string {
	t.Helper()
	v, ok, err := ix.ValueAt(c, file, key)
	if err != nil {
		t.Fatal(err)
	}
	if !ok {
		return "-"
	}
	b, err := objects.Encode(v)
	if err != nil {
		t.Fatal(err)
	}
	return strings.Join(strings.Fields(string(b)), "")
}

// TestSnapshotBlobs: the files' blobs a commit records survive the
// snapshot and a fold into the next one; a commit indexed before blobs
// were kept reads as unknown (the trees answer), and a snapshot of the
// format without them still loads.
func TestSnapshotBlobs(t *testing.T) {
	blob := plumbing.NewHash("5555555555555555555555555555555555555555")
	cs := []*commit{
		{hash: plumbing.NewHash("1111111111111111111111111111111111111111"), time: 1,
			files: []string{"a.json", "b.json"}, blobs: []plumbing.Hash{blob, plumbing.ZeroHash},
			exact: []string{keyOf("a.json", nil)}},
		{hash: plumbing.NewHash("2222222222222222222222222222222222222222"), parents: []int32{0}, depth: 1, time: 2,
			files: []string{"a.json"}, exact: []string{keyOf("a.json", nil)}, deep: []string{keyOf("a.json", nil)}},
	}
	build := func(cs []*commit) *snapshot {
		b := newSnapBuilder(len(cs))
		for _, c := range cs {
			b.add(c)
		}
		s, err := parseSnapshot(b.finish(1))
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	check := func(when string, s *snapshot) {
		t.Helper()
		if got := s.blobs(0); !slices.Equal(got, cs[0].blobs) {
			t.Fatalf("%s: blobs of the first commit %v, want %v", when, got, cs[0].blobs)
		}
		if got := s.blobs(1); got != nil {
			t.Fatalf("%s: a commit without blobs reads %v", when, got)
		}
		for n, c := range cs {
			files, exact, deep := s.forward(int32(n))
			if !slices.Equal(files, c.files) || !slices.Equal(exact, c.exact) || len(deep) != len(c.deep) {
				t.Fatalf("%s: forward(%d) = %v %v %v", when, n, files, exact, deep)
			}
		}
	}
	s := build(cs)
	check("built", s)
	var again []*commit
	s.each(func(c *commit) {
		cp := *c
		again = append(again, &cp)
	})
	check("folded", build(again))

	// The format before blobs: version 2, no blob in any commit.
	b := newSnapBuilder(1)
	b.add(cs[1])
	data := b.finish(1)
	binary.LittleEndian.PutUint32(data[12:], 2)
	binary.LittleEndian.PutUint32(data[8:], crc32.ChecksumIEEE(data[12:]))
	old, err := parseSnapshot(data)
	if err != nil {
		t.Fatalf("a version 2 snapshot: %v", err)
	}
	if old.blobs(0) != nil {
		t.Fatal("a version 2 snapshot has blobs")
	}
}
