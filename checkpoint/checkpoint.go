// Package checkpoint keeps a state's checkpoints as annotated git tags and
// restores them.
//
// A checkpoint of state S named N is the tag refs/tags/checkpoints/S/N: an
// annotated tag object on the commit the branch was at, whose tagger is the
// agent and whose message carries the checkpoint id (ckpt-xxxxxxxx), the
// state id and the description. A plain git user sees them with `git tag -l`
// and `git show <tag>`. Tags are created with compare-and-swap on the ref
// (it must not exist yet), so two agents never clobber one checkpoint.
//
// Rollback is a checkout, not a rewrite: Restore stages, in a transaction,
// the files that make a state's directories equal to the checkpoint's; the
// caller commits them as one new commit, so history stays.
package checkpoint

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/aiwg/aiwg-state/internal/errkind"
	"github.com/aiwg/aiwg-state/objects"
	"github.com/aiwg/aiwg-state/repo"
	"github.com/aiwg/aiwg-state/verbiage"
)

// Sentinel errors; the store wraps them in its own for exit codes.
var (
	// ErrExists: a checkpoint of that name already exists.
	ErrExists = errors.New("checkpoint exists")
	// ErrLimit: the state has MaxPerState checkpoints.
	ErrLimit = errors.New("too many checkpoints")
	// ErrNotFound: no such checkpoint.
	ErrNotFound = repo.ErrNotFound
)

// MaxPerState is the RLM state specification's limit.
const MaxPerState = 100

// RefPrefix is where checkpoint tags live.
const RefPrefix = "refs/tags/checkpoints/"

// Trailer keys of a checkpoint tag's message.
const (
	TrailerCheckpoint = "Checkpoint"
	TrailerState      = "State"
)

// Checkpoint is one checkpoint.
type Checkpoint struct {
	ID          string        `json:"checkpoint_id"`
	Name        string        `json:"name"`
	State       string        `json:"state_id"`
	Description string        `json:"description,omitempty"`
	Ref         string        `json:"ref"`
	Tag         plumbing.Hash `json:"-"`
	Commit      plumbing.Hash `json:"-"`
	Agent       string        `json:"agent"`
	Time        time.Time     `json:"timestamp"`
	// Sign, when set, signs the tag (repo.Tag.Sign).
	Sign func(payload []byte) ([]byte, error) `json:"-"`
}

// Ref is the tag ref of a state's checkpoint.
func Ref(state, name string) string { return RefPrefix + state + "/" + name }

// CheckName refuses names that are not identifiers: they become ref names
// and the specification's examples are identifiers (before_decomposition).
func CheckName(name string) error {
	if err := verbiage.ValidIdentifier(name); err != nil {
		return fmt.Errorf("checkpoint name: %w", err)
	}
	return nil
}

// Message renders a checkpoint tag's message.
func Message(c *Checkpoint) string {
	subject := "checkpoint " + c.Name + " of " + c.State
	return repo.FormatMessage(subject, c.Description, repo.Trailers{
		{Key: TrailerCheckpoint, Value: c.ID},
		{Key: TrailerState, Value: c.State},
	})
}

// ParseMessage reads a checkpoint tag's message back: the id, the state and
// the description (the body between the subject and the trailers).
func ParseMessage(msg string) (id, state, description string, ok bool) {
	tr := repo.ParseTrailers(msg)
	id, state = tr.Get(TrailerCheckpoint), tr.Get(TrailerState)
	if !verbiage.ValidID(verbiage.PrefixCheckpoint, id) || !verbiage.ValidID(verbiage.PrefixState, state) {
		return "", "", "", false
	}
	body := strings.TrimRight(msg, "\n")
	if i := strings.LastIndex(body, "\n\n"); i >= 0 {
		body = body[:i]
	} else {
		body = ""
	}
	if _, rest, found := strings.Cut(body, "\n\n"); found {
		description = strings.TrimSpace(rest)
	}
	return id, state, description, true
}

// Create tags commit as checkpoint c.Name of c.State. c.ID is generated
// when empty; c.Time and c.Agent stamp the tagger. It refuses an existing
// name (ErrExists) and a state that has MaxPerState checkpoints (ErrLimit,
// naming the oldest ones to prune).
func Create(ctx context.Context, r *repo.Repo, c *Checkpoint) error {
	if err := CheckName(c.Name); err != nil {
		return err
	}
	if c.ID == "" {
		c.ID = objects.NewID(verbiage.PrefixCheckpoint)
	}
	if !verbiage.ValidID(verbiage.PrefixCheckpoint, c.ID) {
		return fmt.Errorf("%w: checkpoint id %q is not ckpt- and 8 hex digits", verbiage.ErrInvalidName, c.ID)
	}
	c.Ref = Ref(c.State, c.Name)
	if _, err := r.Ref(c.Ref); err == nil {
		return fmt.Errorf("%w: %s already has a checkpoint %s (remove it first, or pick another name)", ErrExists, c.State, c.Name)
	}
	existing, err := List(r, c.State)
	if err != nil {
		return err
	}
	if len(existing) >= MaxPerState {
		var oldest []string
		for _, e := range existing[:min(3, len(existing))] {
			oldest = append(oldest, e.Name)
		}
		return &LimitError{State: c.State, Count: len(existing), Oldest: oldest}
	}
	if c.Time.IsZero() {
		c.Time = time.Now()
	}
	t := &repo.Tag{
		Name:    strings.TrimPrefix(c.Ref, "refs/tags/"),
		Target:  c.Commit,
		Tagger:  repo.NewSignature(c.Agent, c.Time),
		Message: Message(c),
		Sign:    c.Sign,
	}
	h, err := r.CreateTag(ctx, c.Ref, t)
	if err != nil {
		if errors.Is(err, repo.ErrStale) {
			return fmt.Errorf("%w: %s already has a checkpoint %s (created concurrently)", ErrExists, c.State, c.Name)
		}
		return err
	}
	c.Tag = h
	return nil
}

// Get reads one checkpoint.
func Get(r *repo.Repo, state, name string) (*Checkpoint, error) {
	if err := CheckName(name); err != nil {
		return nil, err
	}
	ref := Ref(state, name)
	h, err := r.Ref(ref)
	if err != nil {
		return nil, errkind.Errorf(ErrNotFound, "%s has no checkpoint %s", state, name)
	}
	return read(r, ref, h)
}

func read(r *repo.Repo, ref string, h plumbing.Hash) (*Checkpoint, error) {
	t, err := r.ReadTag(h)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", ref, err)
	}
	id, state, desc, ok := ParseMessage(t.Message)
	if !ok {
		return nil, fmt.Errorf("%s: not a checkpoint tag (no Checkpoint and State trailers): %w", ref, ErrNotFound)
	}
	commit, err := r.Peel(h)
	if err != nil {
		return nil, err
	}
	rest := strings.TrimPrefix(ref, RefPrefix)
	_, name, _ := strings.Cut(rest, "/")
	return &Checkpoint{ID: id, Name: name, State: state, Description: desc, Ref: ref, Tag: h, Commit: commit, Agent: t.Tagger.Name, Time: t.Tagger.When}, nil
}

// List returns a state's checkpoints, oldest first. Tags under the state's
// prefix that are not checkpoint tags (made by hand) are skipped.
func List(r *repo.Repo, state string) ([]Checkpoint, error) {
	refs, names, err := r.Refs(RefPrefix + state + "/")
	if err != nil {
		return nil, err
	}
	out := make([]Checkpoint, 0, len(names))
	for _, ref := range names {
		c, err := read(r, ref, refs[ref])
		if err != nil {
			if errors.Is(err, repo.ErrNotFound) {
				continue
			}
			return nil, err
		}
		out = append(out, *c)
	}
	sort.SliceStable(out, func(i, j int) bool {
		if !out[i].Time.Equal(out[j].Time) {
			return out[i].Time.Before(out[j].Time)
		}
		return out[i].Name < out[j].Name
	})
	return out, nil
}

// Delete removes a checkpoint's tag (compare-and-swap on its current value).
func Delete(ctx context.Context, r *repo.Repo, state, name string) (*Checkpoint, error) {
	c, err := Get(r, state, name)
	if err != nil {
		return nil, err
	}
	if err := r.UpdateRef(ctx, c.Ref, c.Tag, plumbing.ZeroHash); err != nil {
		return nil, err
	}
	return c, nil
}

// Prune removes a state's oldest checkpoints until keep remain and returns
// the removed ones.
func Prune(ctx context.Context, r *repo.Repo, state string, keep int) ([]Checkpoint, error) {
	all, err := List(r, state)
	if err != nil {
		return nil, err
	}
	var removed []Checkpoint
	for i := 0; i < len(all)-max(keep, 0); i++ {
		if err := r.UpdateRef(ctx, all[i].Ref, all[i].Tag, plumbing.ZeroHash); err != nil {
			return removed, err
		}
		removed = append(removed, all[i])
	}
	return removed, nil
}

// Restore stages in tx the changes that make each of dirs equal to what it
// was in the tree from (a directory absent there is removed), and returns
// the files it changed. Only differing files are written, found by
// comparing subtree hashes, so a rollback costs what changed since the
// checkpoint; restored files are the checkpoint's blobs, byte for byte.
func Restore(tx *repo.Tx, from plumbing.Hash, dirs []string) ([]repo.FileChange, error) {
	r := tx.Repo()
	cur, err := tx.ParentTree()
	if err != nil {
		return nil, err
	}
	var all []repo.FileChange
	for _, dir := range dirs {
		a := dirHash(r, cur, dir)
		b := dirHash(r, from, dir)
		changes, err := r.DiffTrees(a, b)
		if err != nil {
			return nil, err
		}
		for _, ch := range changes {
			path := dir + "/" + ch.Path
			if ch.New.IsZero() {
				if err := tx.Remove(path); err != nil {
					return nil, err
				}
			} else {
				data, err := r.ReadBlob(ch.New)
				if err != nil {
					return nil, err
				}
				if err := tx.WriteFile(path, data); err != nil {
					return nil, err
				}
			}
			ch.Path = path
			all = append(all, ch)
		}
	}
	return all, nil
}

// DirDiffers reports whether dir differs between the tree from and the
// transaction's parent.
func DirDiffers(tx *repo.Tx, from plumbing.Hash, dir string) (bool, error) {
	cur, err := tx.ParentTree()
	if err != nil {
		return false, err
	}
	return dirHash(tx.Repo(), cur, dir) != dirHash(tx.Repo(), from, dir), nil
}

func dirHash(r *repo.Repo, root plumbing.Hash, dir string) plumbing.Hash {
	if root.IsZero() {
		return plumbing.ZeroHash
	}
	e, err := r.Lookup(root, dir)
	if err != nil || !e.IsDir() {
		return plumbing.ZeroHash
	}
	return e.Hash
}

// LimitError: a state has MaxPerState checkpoints, and a new one would
// pass the limit. It is ErrLimit.
type LimitError struct {
	State  string
	Count  int
	Oldest []string // the oldest checkpoints' names, oldest first (up to 3)
}

func (e *LimitError) Error() string {
	return fmt.Sprintf("%v: %s has %d checkpoints, the limit is %d; remove old ones first (oldest: %s)",
		ErrLimit, e.State, e.Count, MaxPerState, strings.Join(e.Oldest, ", "))
}

func (e *LimitError) Unwrap() error { return ErrLimit }
