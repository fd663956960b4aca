package snapshot

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/aiwg/aiwg-state/internal/errkind"
	"github.com/aiwg/aiwg-state/objects"
	"github.com/aiwg/aiwg-state/repo"
	"github.com/aiwg/aiwg-state/store"
)

// OpRestore is the Operation trailer of a restore commit.
const OpRestore = store.OpRestore

// Snapshots is the store's snapshots (st.Snapshots()).
type Snapshots struct {
	s *store.Store
}

// New is the snapshots of a store.
func New(s *store.Store) *Snapshots { return &Snapshots{s: s} }

// Snapshot is one snapshot, with the specification's fields.
type Snapshot struct {
	ID          string    `json:"id"`
	Name        string    `json:"name"`
	Time        time.Time `json:"timestamp"`
	Agent       string    `json:"agent"`
	Reason      string    `json:"reason"`
	Scope       []string  `json:"scope"`
	Description string    `json:"description,omitempty"`
	// Commit is the commit the snapshot is of; Tag the tag object.
	Commit string `json:"commit"`
	Tag    string `json:"tag"`
	Ref    string `json:"ref"`
}

// CreateOptions describe a new snapshot.
type CreateOptions struct {
	// Paths are the files and directories it covers; none is the whole
	// store (its documents, not its settings).
	Paths []string
	// Reason is manual (the default), scheduled or recovery.
	Reason string
	// Description says why, in words (-m).
	Description string
	// At is the revision snapshotted ("" = the head of the write's
	// branch).
	At string
}

// Validate checks the options, filling in the default reason and the
// scope's normal form.
func (o *CreateOptions) Validate() error {
	if o.Reason == "" {
		o.Reason = "manual"
	}
	if err := CheckReason(o.Reason); err != nil {
		return err
	}
	scope, err := CleanScope(o.Paths)
	if err != nil {
		return err
	}
	o.Paths = scope
	return nil
}

// errOf maps the package's sentinel onto the store's, for exit codes.
func errOf(err error) error {
	if errors.Is(err, ErrInvalid) && !errors.Is(err, store.ErrUsage) {
		return fmt.Errorf("%w: %w", store.ErrUsage, err)
	}
	return err
}

// Create tags the branch head (or o.At) as snapshot name. The name must
// be new (store.ErrExists), each path of the scope must be there (store.
// ErrNotFound), and the store may hold at most MaxSnapshots (store.
// ErrLimit). The tagger is the agent, signed as its commits are.
func (sn *Snapshots) Create(ctx context.Context, name string, o CreateOptions, wo store.WriteOptions) (*Snapshot, error) {
	if err := CheckName(name); err != nil {
		return nil, err
	}
	if err := o.Validate(); err != nil {
		return nil, errOf(err)
	}
	r := sn.s.Repo()
	if _, err := r.Ref(Ref(name)); err == nil {
		return nil, errkind.Errorf(store.ErrExists, "snapshot %s exists (prune it, or pick another name)", name)
	}
	if refs, _, err := r.Refs(RefPrefix); err != nil {
		return nil, err
	} else if len(refs) >= MaxSnapshots {
		return nil, errkind.Errorf(store.ErrLimit, "the store has %d snapshots, the most it keeps: prune old ones first", len(refs))
	}
	at := o.At
	if at == "" {
		at = "HEAD"
	}
	head, err := sn.s.Resolve(at, wo.Branch)
	if err != nil {
		return nil, err
	}
	c, err := r.ReadCommit(head)
	if err != nil {
		return nil, err
	}
	for _, p := range o.Paths {
		if p == Whole {
			continue
		}
		if _, err := r.Lookup(c.Tree, p); err != nil {
			return nil, errkind.Errorf(store.ErrNotFound, "%s: not in the store at %s, nothing to snapshot", p, at)
		}
	}
	agent := sn.s.Agent(wo.Agent)
	if repo.IdentityName(agent) != agent {
		return nil, fmt.Errorf("%w: agent %q: an agent id cannot hold <, > or a line break", store.ErrUsage, agent)
	}
	when := wo.Time
	if when.IsZero() {
		when = sn.s.Now()
	}
	signer, err := sn.s.SignerFor(agent, wo)
	if err != nil {
		return nil, err
	}
	id := objects.NewID(IDPrefix)
	t := &repo.Tag{
		Name:    strings.TrimPrefix(Ref(name), "refs/tags/"),
		Target:  head,
		Tagger:  repo.NewSignature(agent, when),
		Message: Message(name, id, o.Reason, o.Description, o.Paths),
		Sign:    store.SignFunc(signer),
	}
	h, err := r.CreateTag(ctx, Ref(name), t)
	if err != nil {
		if errors.Is(err, repo.ErrStale) {
			return nil, errkind.Errorf(store.ErrExists, "snapshot %s exists (created concurrently)", name)
		}
		return nil, err
	}
	return &Snapshot{ID: id, Name: name, Time: when, Agent: agent, Reason: o.Reason, Scope: o.Paths, Description: strings.TrimSpace(o.Description), Commit: head.String(), Tag: h.String(), Ref: Ref(name)}, nil
}

// NotFoundError: no snapshot of that name. It is store.ErrNotFound.
type NotFoundError struct{ Name string }

func (e *NotFoundError) Error() string { return "no snapshot " + e.Name }

func (e *NotFoundError) Unwrap() error { return store.ErrNotFound }

// Get reads one snapshot.
func (sn *Snapshots) Get(ctx context.Context, name string) (*Snapshot, error) {
	if err := CheckName(name); err != nil {
		return nil, err
	}
	h, err := sn.s.Repo().Ref(Ref(name))
	if err != nil {
		return nil, &NotFoundError{Name: name}
	}
	return sn.read(name, h)
}

func (sn *Snapshots) read(name string, h plumbing.Hash) (*Snapshot, error) {
	r := sn.s.Repo()
	t, err := r.ReadTag(h)
	if err != nil {
		return nil, fmt.Errorf("%w: %s is not an annotated tag: %w", store.ErrNotFound, Ref(name), err)
	}
	f, err := ParseMessage(name, t.Message)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %w", store.ErrNotFound, Ref(name), err)
	}
	commit, err := r.Peel(h)
	if err != nil {
		return nil, err
	}
	return &Snapshot{ID: f.ID, Name: name, Time: t.Tagger.When, Agent: t.Tagger.Name, Reason: f.Reason, Scope: f.Scope, Description: f.Description, Commit: commit.String(), Tag: h.String(), Ref: Ref(name)}, nil
}

// List returns the snapshots, oldest first. Tags under the prefix that
// are not snapshots (made by hand) are left out.
func (sn *Snapshots) List(ctx context.Context) ([]Snapshot, error) {
	refs, names, err := sn.s.Repo().Refs(RefPrefix)
	if err != nil {
		return nil, err
	}
	out := make([]Snapshot, 0, len(names))
	for _, ref := range names {
		name := strings.TrimPrefix(ref, RefPrefix)
		if CheckName(name) != nil {
			continue
		}
		s, err := sn.read(name, refs[ref])
		if errors.Is(err, store.ErrNotFound) {
			continue
		}
		if err != nil {
			return nil, err
		}
		out = append(out, *s)
	}
	sort.SliceStable(out, func(i, j int) bool {
		if !out[i].Time.Equal(out[j].Time) {
			return out[i].Time.Before(out[j].Time)
		}
		return out[i].Name < out[j].Name
	})
	return out, nil
}

// Files are the files a snapshot covers, as they were, sorted.
func (sn *Snapshots) Files(ctx context.Context, name string) ([]string, error) {
	s, err := sn.Get(ctx, name)
	if err != nil {
		return nil, err
	}
	r := sn.s.Repo()
	c, err := r.ReadCommit(plumbing.NewHash(s.Commit))
	if err != nil {
		return nil, err
	}
	var out []string
	for _, p := range roots(r, c.Tree, plumbing.ZeroHash, s.Scope) {
		e, err := r.Lookup(c.Tree, p)
		if err != nil {
			continue
		}
		if !e.IsDir() {
			out = append(out, p)
			continue
		}
		changes, err := r.DiffTrees(plumbing.ZeroHash, e.Hash)
		if err != nil {
			return nil, err
		}
		for _, ch := range changes {
			out = append(out, p+"/"+ch.Path)
		}
	}
	sort.Strings(out)
	return out, nil
}

// roots are the paths a restore of scope makes equal between the trees a
// and b: the scope's paths, the whole store's being every top-level name
// of either tree but the store's settings; and the time-to-live files of
// each (store.TTLDir), which belong to the documents.
func roots(r *repo.Repo, a, b plumbing.Hash, scope []string) []string {
	var out []string
	for _, s := range scope {
		if s != Whole {
			out = append(out, s, store.TTLDir+s)
			continue
		}
		seen := map[string]bool{}
		for _, root := range []plumbing.Hash{a, b} {
			if root.IsZero() {
				continue
			}
			es, err := r.ReadDirAt(root, "")
			if err != nil {
				continue
			}
			for _, e := range es {
				if e.Name != ".aiwg" && e.Name != ".gitattributes" && !seen[e.Name] {
					seen[e.Name] = true
					out = append(out, e.Name)
				}
			}
		}
		out = append(out, strings.TrimSuffix(store.TTLDir, "/"))
	}
	return out
}

// Diff compares a snapshot with rev ("" = the head of ro's branch), key
// by key, over the paths the snapshot covers: what changed since it.
func (sn *Snapshots) Diff(ctx context.Context, name, rev string, ro store.ReadOptions) (*store.DiffResult, *Snapshot, error) {
	s, err := sn.Get(ctx, name)
	if err != nil {
		return nil, nil, err
	}
	if rev == "" {
		rev = "HEAD"
	}
	to, err := sn.s.Resolve(rev, ro.Branch)
	if err != nil {
		return nil, nil, err
	}
	d, err := sn.s.Diff(ctx, store.DiffOptions{From: s.Commit, To: to.String(), Branch: ro.Branch})
	if err != nil {
		return nil, nil, err
	}
	kept := d.Files[:0]
	for _, f := range d.Files {
		if Covers(s.Scope, f.File) || (f.From != "" && Covers(s.Scope, f.From)) {
			if s.Scope[0] == Whole && (strings.HasPrefix(f.File, ".aiwg/") || f.File == ".gitattributes") {
				continue
			}
			kept = append(kept, f)
		}
	}
	d.Files = kept
	return d, s, nil
}

// RestoreOptions narrow a restore.
type RestoreOptions struct {
	// Paths restore only these of the snapshot's scope (none: all of it).
	Paths []string
}

// Restored is what a restore did.
type Restored struct {
	Snapshot *Snapshot `json:"snapshot"`
	// Files are the files it wrote or removed.
	Files []string `json:"files"`
}

// Restore makes the paths a snapshot covers (or opts.Paths of them) what
// they were in it, as one new commit on the write's branch: history
// stays. Files the snapshot did not have under those paths are removed;
// each document's time to live comes back with it. The commit carries
// Operation: restore for each restored path, and Snapshot and
// Snapshot-Id trailers naming it. Nothing to restore is store.ErrNoChange.
func (sn *Snapshots) Restore(ctx context.Context, name string, opts RestoreOptions, wo store.WriteOptions) (*Restored, *store.Mutation, error) {
	s, err := sn.Get(ctx, name)
	if err != nil {
		return nil, nil, err
	}
	scope := s.Scope
	if len(opts.Paths) > 0 {
		want, err := CleanScope(opts.Paths)
		if err != nil {
			return nil, nil, errOf(err)
		}
		for _, p := range want {
			if p == Whole && scope[0] != Whole {
				return nil, nil, fmt.Errorf("%w: snapshot %s covers %s, not the whole store", store.ErrUsage, name, strings.Join(scope, ", "))
			}
			if p != Whole && !Covers(scope, p) {
				return nil, nil, fmt.Errorf("%w: snapshot %s does not cover %s (it covers %s)", store.ErrUsage, name, p, strings.Join(scope, ", "))
			}
		}
		scope = want
	}
	r := sn.s.Repo()
	target, err := r.ReadCommit(plumbing.NewHash(s.Commit))
	if err != nil {
		return nil, nil, err
	}
	if wo.Message == "" {
		wo.Message = "restore snapshot " + name + " (" + s.ID + ")"
	}
	wo.Trailers = append(append(repo.Trailers(nil), wo.Trailers...),
		repo.Trailer{Key: TrailerSnapshot, Value: name}, repo.Trailer{Key: "Snapshot-Id", Value: s.ID})
	out := &Restored{Snapshot: s}
	m, err := sn.s.Commit(ctx, wo, "", func(tx *repo.Tx, rec *store.Recorder) error {
		out.Files = nil
		cur, err := tx.ParentTree()
		if err != nil {
			return err
		}
		for _, p := range roots(r, cur, target.Tree, scope) {
			changed, err := restorePath(tx, cur, target.Tree, p)
			if err != nil {
				return err
			}
			if len(changed) > 0 && !strings.HasPrefix(p, ".aiwg/") {
				rec.Add(OpRestore, p, "")
			}
			out.Files = append(out.Files, changed...)
		}
		if len(out.Files) > 0 && len(rec.Changes) == 0 {
			// Only times to live changed: name what they belong to.
			for _, p := range scope {
				rec.Add(OpRestore, p, "")
			}
		}
		slices.Sort(out.Files)
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	return out, m, nil
}

// restorePath stages in tx what makes path p of the tree cur (the
// transaction's parent) equal to p of the tree from: only what differs is
// written, found by comparing subtree hashes, so a restore costs what
// changed since the snapshot; restored files are the snapshot's blobs,
// byte for byte.
func restorePath(tx *repo.Tx, cur, from plumbing.Hash, p string) ([]string, error) {
	r := tx.Repo()
	a, b := entry(r, cur, p), entry(r, from, p)
	if a == b {
		return nil, nil
	}
	var changed []string
	// A directory on either side: diff them as trees (a file on the
	// other side is removed or written on its own).
	aDir, bDir := plumbing.ZeroHash, plumbing.ZeroHash
	if a.IsDir() {
		aDir = a.Hash
	}
	if b.IsDir() {
		bDir = b.Hash
	}
	if !a.Hash.IsZero() && !a.IsDir() && (b.Hash.IsZero() || b.IsDir()) {
		if err := tx.Remove(p); err != nil {
			return nil, err
		}
		changed = append(changed, p)
	}
	if !aDir.IsZero() || !bDir.IsZero() {
		changes, err := r.DiffTrees(aDir, bDir)
		if err != nil {
			return nil, err
		}
		for _, ch := range changes {
			path := p + "/" + ch.Path
			if ch.New.IsZero() {
				if err := tx.Remove(path); err != nil {
					return nil, err
				}
			} else if err := writeBlob(tx, path, ch.New); err != nil {
				return nil, err
			}
			changed = append(changed, path)
		}
	}
	if !b.Hash.IsZero() && !b.IsDir() {
		if err := writeBlob(tx, p, b.Hash); err != nil {
			return nil, err
		}
		changed = append(changed, p)
	}
	return changed, nil
}

func writeBlob(tx *repo.Tx, path string, h plumbing.Hash) error {
	data, err := tx.Repo().ReadBlob(h)
	if err != nil {
		return err
	}
	return tx.WriteFile(path, data)
}

// entry is the tree entry at p of root (zero when absent).
func entry(r *repo.Repo, root plumbing.Hash, p string) repo.TreeEntry {
	if root.IsZero() {
		return repo.TreeEntry{}
	}
	e, err := r.Lookup(root, p)
	if err != nil {
		return repo.TreeEntry{}
	}
	e.Name = ""
	return e
}

// PruneOptions say which snapshots prune removes: those past the newest
// Keep, or older than OlderThan, or (both given) those past the newest
// Keep that are older than OlderThan.
type PruneOptions struct {
	// Keep is how many of the newest snapshots stay whatever their age
	// (0 with OlderThan: none is kept for being new).
	Keep int
	// OlderThan removes snapshots taken longer ago than this (0: by
	// count alone).
	OlderThan time.Duration
	// KeepSet says Keep was given: Keep 0 alone removes every snapshot.
	KeepSet bool
}

// Validate refuses a negative count or age, and options that name
// nothing to prune by.
func (o *PruneOptions) Validate() error {
	switch {
	case o.Keep < 0:
		return fmt.Errorf("%w: keep %d snapshots? (0 or more)", store.ErrUsage, o.Keep)
	case o.OlderThan < 0:
		return fmt.Errorf("%w: older than %s? (a positive age)", store.ErrUsage, o.OlderThan)
	case !o.KeepSet && o.Keep == 0 && o.OlderThan == 0:
		return fmt.Errorf("%w: prune by count (keep), by age (older than), or both", store.ErrUsage)
	}
	return nil
}

// Prune removes snapshots' tags (the commits stay), oldest first, and
// returns those removed. A tag that moved meanwhile is left.
func (sn *Snapshots) Prune(ctx context.Context, o PruneOptions) ([]Snapshot, error) {
	if o.Keep > 0 {
		o.KeepSet = true
	}
	if err := o.Validate(); err != nil {
		return nil, err
	}
	all, err := sn.List(ctx)
	if err != nil {
		return nil, err
	}
	now := sn.s.Now()
	removed := []Snapshot{}
	for i, s := range all {
		if o.KeepSet && i >= len(all)-o.Keep {
			break
		}
		if o.OlderThan > 0 && now.Sub(s.Time) <= o.OlderThan {
			continue
		}
		if err := sn.s.Repo().UpdateRef(ctx, s.Ref, plumbing.NewHash(s.Tag), plumbing.ZeroHash); err != nil {
			return removed, err
		}
		removed = append(removed, s)
	}
	return removed, nil
}
