package main

import (
	"context"
	"time"

	"github.com/go-git/go-billy/v5/osfs"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/cache"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/storage/filesystem"
)

// goGitWriter makes the mutation through go-git's own storage: the plain
// loose-object path the issue measured at ~5x the floor, here measured on
// the same machine in the same run. The blob, the two trees on the path
// and the commit are each written as a loose object, and the branch moves
// with go-git's reference storage. go-git does not fsync, so it has a row
// only without fsync.
type goGitWriter struct {
	st   *filesystem.Storage
	head plumbing.Hash
}

func newGoGitWriter(ctx context.Context, dir string) *goGitWriter {
	st := seedStore(ctx, dir, false)
	gitDir := st.Dir()
	st.Close()
	s := filesystem.NewStorage(osfs.New(gitDir), cache.NewObjectLRUDefault())
	ref, err := s.Reference(plumbing.NewBranchReferenceName("main"))
	check(err)
	return &goGitWriter{st: s, head: ref.Hash()}
}

func (g *goGitWriter) mutate(i int) time.Duration {
	t0 := time.Now()
	c, err := object.GetCommit(g.st, g.head)
	check(err)
	root, err := c.Tree()
	check(err)
	blob := g.st.NewEncodedObject()
	blob.SetType(plumbing.BlobObject)
	w, err := blob.Writer()
	check(err)
	_, err = w.Write([]byte(docBody(i % docs)))
	check(err)
	check(w.Close())
	bh, err := g.st.SetEncodedObject(blob)
	check(err)
	sub, err := root.Tree("docs")
	check(err)
	docsTree := g.replace(sub, docPath(i % docs)[len("docs/"):], filemode.Regular, bh)
	rootTree := g.replace(root, "docs", filemode.Dir, docsTree)
	sig := object.Signature{Name: "bench", Email: "bench@agents.invalid", When: time.Now()}
	nc := &object.Commit{Author: sig, Committer: sig, Message: "set " + docPath(i%docs), TreeHash: rootTree, ParentHashes: []plumbing.Hash{g.head}}
	o := g.st.NewEncodedObject()
	check(nc.Encode(o))
	ch, err := g.st.SetEncodedObject(o)
	check(err)
	name := plumbing.NewBranchReferenceName("main")
	check(g.st.CheckAndSetReference(plumbing.NewHashReference(name, ch), plumbing.NewHashReference(name, g.head)))
	g.head = ch
	return time.Since(t0)
}

// replace writes t with the entry name pointing at h, returning the new
// tree's hash.
func (g *goGitWriter) replace(t *object.Tree, name string, mode filemode.FileMode, h plumbing.Hash) plumbing.Hash {
	nt := &object.Tree{Entries: append([]object.TreeEntry(nil), t.Entries...)}
	for j := range nt.Entries {
		if nt.Entries[j].Name == name {
			nt.Entries[j] = object.TreeEntry{Name: name, Mode: mode, Hash: h}
		}
	}
	o := g.st.NewEncodedObject()
	check(nt.Encode(o))
	th, err := g.st.SetEncodedObject(o)
	check(err)
	return th
}
