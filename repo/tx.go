package repo

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
)

// Tx is a transaction on a branch: reads see the branch head plus the
// transaction's own writes; nothing is visible to others until Commit.
type Tx struct {
	r       *Repo
	parent  plumbing.Hash
	root    plumbing.Hash
	changes map[string]*[]byte // nil value: deleted
}

// Parent is the commit the transaction builds on (zero on an empty branch).
func (tx *Tx) Parent() plumbing.Hash { return tx.parent }

// Repo is the repository the transaction writes to.
func (tx *Tx) Repo() *Repo { return tx.r }

// ParentTree is the tree of the commit the transaction builds on (zero
// for a branch's first commit).
func (tx *Tx) ParentTree() (plumbing.Hash, error) {
	if tx.parent.IsZero() {
		return plumbing.ZeroHash, nil
	}
	c, err := tx.r.ReadCommit(tx.parent)
	if err != nil {
		return plumbing.ZeroHash, err
	}
	return c.Tree, nil
}

// ReadFile returns a file's content; ErrNotFound when absent.
func (tx *Tx) ReadFile(path string) ([]byte, error) {
	if c, ok := tx.changes[path]; ok {
		if c == nil {
			return nil, fmt.Errorf("%s: %w", path, ErrNotFound)
		}
		return *c, nil
	}
	return tx.r.ReadFileAt(tx.root, path)
}

// Exists reports whether path is a file.
func (tx *Tx) Exists(path string) (bool, error) {
	_, err := tx.ReadFile(path)
	if errors.Is(err, ErrNotFound) {
		return false, nil
	}
	return err == nil, err
}

// WriteFile stages new content for path; intermediate directories appear as
// needed. Names git would refuse are refused here, before anything is
// written.
func (tx *Tx) WriteFile(path string, data []byte) error {
	for _, seg := range strings.Split(path, "/") {
		if err := checkEntryName(seg); err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
	}
	cp := append([]byte(nil), data...)
	tx.changes[path] = &cp
	return nil
}

// Remove stages the deletion of a file; ErrNotFound when absent.
func (tx *Tx) Remove(path string) error {
	ok, err := tx.Exists(path)
	if err != nil {
		return err
	}
	if !ok {
		return fmt.Errorf("%s: %w", path, ErrNotFound)
	}
	tx.changes[path] = nil
	return nil
}

// Changed lists the paths written or removed, sorted.
func (tx *Tx) Changed() []string {
	out := make([]string, 0, len(tx.changes))
	for p := range tx.changes {
		out = append(out, p)
	}
	sort.Strings(out)
	return out
}

// ReadDir lists a directory ("" is the root) as the transaction sees it.
func (tx *Tx) ReadDir(dir string) ([]DirEntry, error) {
	base, err := tx.r.ReadDirAt(tx.root, dir)
	if err != nil && !errors.Is(err, ErrNotFound) {
		return nil, err
	}
	found := err == nil
	m := make(map[string]bool, len(base))
	for _, e := range base {
		m[e.Name] = e.IsDir
	}
	prefix := dir
	if prefix != "" {
		prefix += "/"
	}
	for p, c := range tx.changes {
		rest, ok := strings.CutPrefix(p, prefix)
		if !ok {
			continue
		}
		name, sub, isDir := strings.Cut(rest, "/")
		_ = sub
		if c != nil {
			m[name] = isDir
			found = true
		} else if !isDir {
			delete(m, name)
		}
	}
	if !found {
		return nil, fmt.Errorf("%s: %w", dir, ErrNotFound)
	}
	out := make([]DirEntry, 0, len(m))
	for n, d := range m {
		out = append(out, DirEntry{Name: n, IsDir: d})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// CommitInfo is what a transaction function returns to have its changes
// committed.
type CommitInfo struct {
	Author, Committer Signature
	Message           string
	// MergeParents are parents after the branch head (a merge commit).
	MergeParents []plumbing.Hash
	// UpstreamFirst puts the first merge parent before the branch head:
	// a merge of a branch's own upstream into it (a pull of a branch that
	// moved on both sides) then keeps the upstream's first-parent history,
	// which the server's branch must keep, and the local commits become
	// the merged side.
	UpstreamFirst bool
	// AllowEmpty commits even when the tree is unchanged (merges).
	AllowEmpty bool
	// Sign, when set, signs the commit: it returns the armored signature
	// of the unsigned body, which goes into the commit's gpgsig header.
	Sign func(payload []byte) ([]byte, error)
}

// CommitOptions control the compare-and-swap of Commit.
type CommitOptions struct {
	// Expect, when set, is the commit the branch must be at; otherwise
	// the commit fails with a *StaleError naming the current head.
	Expect *plumbing.Hash
}

// Commit runs fn in a transaction on branch (a full ref name) and commits
// its changes as one commit. fn runs under the branch's lock file, so it
// always sees the latest head and concurrent writers are serialized rather
// than retried; C git writers take the same lock. Writers of the branch in
// this process that arrive while a commit is being written are written
// together next, as a chain of commits (see group.go); fn may then run on
// another writer's goroutine. A transaction that changes nothing returns
// ErrNoChange and writes nothing.
func (r *Repo) Commit(ctx context.Context, branch string, fn func(*Tx) (*CommitInfo, error), opts CommitOptions) (*Commit, error) {
	if err := ctx.Err(); err != nil {
		return nil, err // a cancelled caller writes nothing
	}
	if err := r.Writable(); err != nil {
		return nil, err
	}
	// A branch that is a symbolic ref (git symbolic-ref) is followed to
	// the branch it names, which the commit moves, as git's does.
	// Concurrent writers of the branch in this process are grouped (see
	// group.go).
	return r.commitQueued(branch, &commitReq{ctx: ctx, fn: fn, opts: opts})
}

// builder writes the trees on changed paths, reusing every untouched
// subtree by hash.
type builder struct {
	r     *Repo
	objs  []rawObject
	trees map[plumbing.Hash]*Tree
	blobs map[plumbing.Hash]bool
}

func (b *builder) build(base plumbing.Hash, dir string, changes map[string]*[]byte) (plumbing.Hash, error) {
	t, err := b.r.ReadTree(base)
	if err != nil {
		return plumbing.ZeroHash, err
	}
	files := map[string]*[]byte{}
	subs := map[string]map[string]*[]byte{}
	for p, c := range changes {
		name, rest, isDir := strings.Cut(p, "/")
		if isDir {
			if subs[name] == nil {
				subs[name] = map[string]*[]byte{}
			}
			subs[name][rest] = c
		} else {
			files[name] = c
		}
	}
	es := append(make([]TreeEntry, 0, len(t.Entries)+len(changes)), t.Entries...)
	folded := caseIndex{bulk: len(changes) > 16}
	set := func(e TreeEntry, del bool) error {
		i, found := search(es, e.Name)
		if found && es[i].IsDir() != e.IsDir() && !del {
			kind := "directory"
			if !es[i].IsDir() {
				kind = "file"
			}
			return fmt.Errorf("%w: %s%s is a %s", ErrInvalidName, dir, e.Name, kind)
		}
		switch {
		case del && found:
			es = append(es[:i], es[i+1:]...)
		case del:
		case found:
			es[i] = e
		default:
			if err := folded.check(es, e.Name); err != nil {
				return fmt.Errorf("%s%s: %w", dir, e.Name, err)
			}
			j := insertAt(es, e)
			es = append(es, TreeEntry{})
			copy(es[j+1:], es[j:])
			es[j] = e
		}
		return nil
	}
	for name, c := range files {
		if c == nil {
			if i, found := search(es, name); found && !es[i].IsDir() {
				es = append(es[:i], es[i+1:]...)
			}
			continue
		}
		h := hashObject(plumbing.BlobObject, *c)
		mode := filemode.Regular
		var prev plumbing.Hash
		if i, found := search(es, name); found && !es[i].IsDir() {
			prev = es[i].Hash
			if es[i].Mode == filemode.Executable {
				mode = filemode.Executable
			}
		}
		if !b.blobs[h] {
			if b.blobs == nil {
				b.blobs = map[plumbing.Hash]bool{}
			}
			b.blobs[h] = true
			b.objs = append(b.objs, rawObject{typ: plumbing.BlobObject, hash: h, body: *c, base: prev})
		}
		if err := set(TreeEntry{Name: name, Mode: mode, Hash: h}, false); err != nil {
			return plumbing.ZeroHash, err
		}
	}
	for name, sc := range subs {
		sub := emptyTree
		if i, found := search(es, name); found {
			if !es[i].IsDir() {
				return plumbing.ZeroHash, fmt.Errorf("%w: %s%s is a file", ErrInvalidName, dir, name)
			}
			sub = es[i].Hash
		}
		h, err := b.build(sub, dir+name+"/", sc)
		if err != nil {
			return plumbing.ZeroHash, err
		}
		// An emptied directory disappears, as in git.
		if err := set(TreeEntry{Name: name, Mode: filemode.Dir, Hash: h}, h == emptyTree); err != nil {
			return plumbing.ZeroHash, err
		}
	}
	body := encodeTree(es)
	h := hashObject(plumbing.TreeObject, body)
	if h != base && h != emptyTree {
		prev := base
		if prev == emptyTree {
			prev = plumbing.ZeroHash
		}
		b.objs = append(b.objs, rawObject{typ: plumbing.TreeObject, hash: h, body: body, base: prev})
		b.trees[h] = &Tree{Entries: es}
	}
	return h, nil
}

// wholeSeconds is s as git stores it: a commit's times are whole seconds,
// and the Commit this process caches and returns must read as the one
// parsed back (a time read at 12:00:00Z must find a commit of 12:00:00.4).
func wholeSeconds(s Signature) Signature {
	s.When = time.Unix(s.When.Unix(), 0).In(s.When.Location())
	return s
}
