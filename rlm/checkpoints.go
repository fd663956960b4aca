package rlm

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/aiwg/aiwg-state/checkpoint"
	"github.com/aiwg/aiwg-state/repo"
	"github.com/aiwg/aiwg-state/store"
)

// OpRollback is the Operation trailer of a rollback commit.
const OpRollback = "rollback"

// checkpointErr maps the checkpoint package's sentinels onto the store's.
func checkpointErr(err error) error {
	switch {
	case errors.Is(err, checkpoint.ErrExists):
		return fmt.Errorf("%w: %w", store.ErrExists, err)
	case errors.Is(err, checkpoint.ErrLimit):
		return fmt.Errorf("%w: %w", store.ErrLimit, err)
	}
	return err
}

// CreateCheckpoint tags the branch head as checkpoint name of a state (""
// = the newest), an annotated tag refs/tags/checkpoints/<state>/<name>.
func (s *States) CreateCheckpoint(ctx context.Context, stateID, name, description string, wo store.WriteOptions) (*checkpoint.Checkpoint, error) {
	if err := checkpoint.CheckName(name); err != nil {
		return nil, err
	}
	head, err := s.store.Resolve("HEAD", wo.Branch)
	if err != nil {
		return nil, err
	}
	c, err := s.store.Repo().ReadCommit(head)
	if err != nil {
		return nil, err
	}
	h, err := s.stateAt(c.Tree, stateID)
	if err != nil {
		return nil, err
	}
	when := wo.Time
	if when.IsZero() {
		when = s.store.Now()
	}
	ck := &checkpoint.Checkpoint{Name: name, State: h.StateID, Description: description, Commit: head, Agent: s.store.Agent(wo.Agent), Time: when}
	signer, err := s.store.SignerFor(ck.Agent, wo)
	if err != nil {
		return nil, err
	}
	ck.Sign = store.SignFunc(signer)
	if err := checkpoint.Create(ctx, s.store.Repo(), ck); err != nil {
		return nil, checkpointErr(err)
	}
	return ck, nil
}

// Checkpoints lists a state's checkpoints, oldest first.
func (s *States) Checkpoints(ctx context.Context, stateID string, ro store.ReadOptions) ([]checkpoint.Checkpoint, error) {
	id, err := s.stateIDAt(stateID, ro)
	if err != nil {
		return nil, err
	}
	return checkpoint.List(s.store.Repo(), id)
}

// Checkpoint reads one checkpoint of a state.
func (s *States) Checkpoint(ctx context.Context, stateID, name string, ro store.ReadOptions) (*checkpoint.Checkpoint, error) {
	id, err := s.stateIDAt(stateID, ro)
	if err != nil {
		return nil, err
	}
	return checkpoint.Get(s.store.Repo(), id, name)
}

// DeleteCheckpoint removes a checkpoint's tag; the commits stay.
func (s *States) DeleteCheckpoint(ctx context.Context, stateID, name string, ro store.ReadOptions) (*checkpoint.Checkpoint, error) {
	id, err := s.stateIDAt(stateID, ro)
	if err != nil {
		return nil, err
	}
	return checkpoint.Delete(ctx, s.store.Repo(), id, name)
}

// PruneCheckpoints removes a state's oldest checkpoints until keep remain.
func (s *States) PruneCheckpoints(ctx context.Context, stateID string, keep int, ro store.ReadOptions) ([]checkpoint.Checkpoint, error) {
	if keep < 0 {
		return nil, fmt.Errorf("%w: keep %d checkpoints? (0 or more)", store.ErrUsage, keep)
	}
	id, err := s.stateIDAt(stateID, ro)
	if err != nil {
		return nil, err
	}
	return checkpoint.Prune(ctx, s.store.Repo(), id, keep)
}

func (s *States) stateIDAt(stateID string, ro store.ReadOptions) (string, error) {
	root, err := s.store.Tree(ro)
	if err != nil {
		return "", err
	}
	h, err := s.stateAt(root, stateID)
	if err != nil {
		return "", err
	}
	return h.StateID, nil
}

// RollbackOptions choose what a rollback restores.
type RollbackOptions struct {
	// Shared also restores the state's session and tree variables when
	// other states share them. By default a rollback restores what belongs
	// to the state: states/<id>/, temp/<id>/, the session it was given at
	// init (even when its children share it), and a session or tree no
	// other state on the branch uses. When only a
	// shared one changed since the checkpoint, the rollback is refused
	// (ErrUsage) rather than reported as no change.
	Shared bool
}

// rollbackDirs are the directories a rollback of state h restores.
func rollbackDirs(h *Header, shared bool, sharedWith func(kind, id string) bool) (dirs, skipped []string) {
	dirs = []string{"states/" + h.StateID, "temp/" + h.StateID}
	// The session a state was given at init (named after it) is its own,
	// though its children share it: a parent's session-scoped variables
	// are the parent's to roll back.
	own := "sess-" + strings.TrimPrefix(h.StateID, "state-")
	for _, d := range []struct{ kind, id string }{{"sessions", h.SessionID}, {"trees", h.TreeID}} {
		switch {
		case d.id == "":
		case shared || d.id == own || !sharedWith(d.kind, d.id):
			dirs = append(dirs, d.kind+"/"+d.id)
		default:
			skipped = append(skipped, d.kind+"/"+d.id)
		}
	}
	return dirs, skipped
}

// sharers says whether a state other than id uses a session or tree
// (kind "sessions" or "trees"), reading the states' headers in tx once,
// at the first question.
func sharers(tx *repo.Tx, id string) func(kind, of string) bool {
	var used map[string]bool // "sessions/<id>", "trees/<id>" of the other states
	return func(kind, of string) bool {
		if used == nil {
			entries, err := tx.ReadDir("states")
			if err != nil {
				return true // unknown: shared, the safe reading
			}
			used = map[string]bool{}
			for _, e := range entries {
				if e.Name == id {
					continue
				}
				if h, err := readHeader(tx.ReadFile, e.Name); err == nil { // else not a state directory
					used["sessions/"+h.SessionID] = true
					used["trees/"+h.TreeID] = true
				}
			}
		}
		return used[kind+"/"+of]
	}
}

// Rollback restores a state to a checkpoint as one new commit (history
// stays): the state's directories become byte-identical to the
// checkpoint's; other states are untouched. The commit carries the
// trailers Operation: rollback and Checkpoint: ckpt-….
func (s *States) Rollback(ctx context.Context, stateID, name string, opts RollbackOptions, wo store.WriteOptions) (*store.Mutation, *checkpoint.Checkpoint, error) {
	id, err := s.stateIDAt(stateID, store.ReadOptions{Branch: wo.Branch})
	if err != nil {
		return nil, nil, err
	}
	ck, err := checkpoint.Get(s.store.Repo(), id, name)
	if err != nil {
		return nil, nil, err
	}
	target, err := s.store.Repo().ReadCommit(ck.Commit)
	if err != nil {
		return nil, nil, err
	}
	if wo.Message == "" {
		wo.Message = "rollback " + id + " to " + ck.Name + " (" + ck.ID + ")"
	}
	wo.Trailers = append(append(repo.Trailers(nil), wo.Trailers...),
		repo.Trailer{Key: TrailerState, Value: id}, repo.Trailer{Key: TrailerCheckpoint, Value: ck.ID})
	m, err := s.store.Commit(ctx, wo, "", func(tx *repo.Tx, rec *store.Recorder) error {
		h, err := readHeader(tx.ReadFile, id)
		if err != nil {
			return err
		}
		dirs, skipped := rollbackDirs(h, opts.Shared, sharers(tx, id))
		changes, err := checkpoint.Restore(tx, target.Tree, dirs)
		if err != nil {
			return err
		}
		if len(changes) == 0 {
			// Nothing of the state's own changed; saying "no change"
			// would hide that what did change is shared.
			for _, dir := range skipped {
				if differs, err := checkpoint.DirDiffers(tx, target.Tree, dir); err != nil {
					return err
				} else if differs {
					return &SharedChangeError{Checkpoint: ck.Name, Dir: dir}
				}
			}
		}
		done := map[string]bool{}
		for _, ch := range changes {
			dir := topDir(ch.Path)
			if !done[dir] {
				done[dir] = true
				rec.Add(OpRollback, dir, "")
			}
		}
		return nil
	})
	if err != nil {
		return nil, ck, err
	}
	return m, ck, nil
}

// topDir is the restored directory a file belongs to (states/<id>,
// temp/<id>, sessions/<sid>, trees/<tid>).
func topDir(p string) string {
	parts := strings.SplitN(p, "/", 3)
	if len(parts) < 2 {
		return p
	}
	return parts[0] + "/" + parts[1]
}

// HardRollback is what RollbackHard did: the branch moved from one commit
// to the checkpoint's.
type HardRollback struct {
	From       string                 `json:"from"`
	To         string                 `json:"to"`
	Checkpoint *checkpoint.Checkpoint `json:"checkpoint"`
}

// RollbackHard moves the branch (wo.Branch, "" = the store's) back to the
// checkpoint's commit, dropping every later commit of every state from the
// branch (they stay reachable from the reflog-less object store only until
// gc). It writes no commit; of wo only the branch counts. Callers must
// confirm.
func (s *States) RollbackHard(ctx context.Context, stateID, name string, wo store.WriteOptions) (*HardRollback, error) {
	branch := wo.Branch
	id, err := s.stateIDAt(stateID, store.ReadOptions{Branch: branch})
	if err != nil {
		return nil, err
	}
	ck, err := checkpoint.Get(s.store.Repo(), id, name)
	if err != nil {
		return nil, err
	}
	ref, err := s.store.WriteRef(branch)
	if err != nil {
		return nil, err
	}
	from, err := s.store.Repo().Ref(ref)
	if err != nil {
		return nil, err
	}
	if merging, err := s.store.HasConflicts(shortBranch(ref)); err == nil && merging {
		return nil, fmt.Errorf("%w: %s has a merge in progress; resolve or abort it first", store.ErrConflict, shortBranch(ref))
	}
	// A checkpoint belongs to a state, not a branch: moving a branch to a
	// checkpoint taken on another branch would swap its history.
	if ok, err := s.store.Repo().IsAncestor(ck.Commit, from); err != nil {
		return nil, err
	} else if !ok {
		return nil, fmt.Errorf("%w: checkpoint %s was not taken on %s's history; a hard rollback only moves a branch back", store.ErrReadOnly, name, shortBranch(ref))
	}
	if err := s.store.Repo().UpdateRef(ctx, ref, from, ck.Commit); err != nil {
		return nil, err
	}
	return &HardRollback{From: from.String(), To: ck.Commit.String(), Checkpoint: ck}, nil
}

func shortBranch(ref string) string { return strings.TrimPrefix(ref, "refs/heads/") }
