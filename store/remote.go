package store

import (
	"context"
	"errors"
	"fmt"
	"io/fs"

	"github.com/aiwg/aiwg-state/repo"
)

// Remotes: the store travels through any git server. Fetch and push run the
// git CLI (see repo/remote.go for why); the workflows that merge what
// arrives (pull, sync, integrate) are package remote's.

// Remotes lists the store's remotes.
func (s *Store) Remotes(ctx context.Context) ([]repo.Remote, error) { return s.repo.Remotes(ctx) }

// AddRemote adds a remote: a path, file://, http(s)://, ssh:// or scp-like
// user@host:path, or git:// URL.
func (s *Store) AddRemote(ctx context.Context, name, url string) error {
	err := s.repo.AddRemote(ctx, name, url)
	if errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("%w: %w", ErrExists, err)
	}
	return err
}

// RemoveRemote removes a remote and its remote-tracking branches.
func (s *Store) RemoveRemote(ctx context.Context, name string) error {
	return s.repo.RemoveRemote(ctx, name)
}

func remoteOr(remote string) string {
	if remote == "" {
		return repo.DefaultRemote
	}
	return remote
}

// Fetch brings a remote's branches (as refs/remotes/<remote>/*) and tags.
func (s *Store) Fetch(ctx context.Context, remote string) ([]repo.RefUpdate, error) {
	return s.repo.Fetch(ctx, remoteOr(remote), repo.FetchOptions{})
}

// Deepen fetches, in a shallow clone, n more commits of history below its
// boundary, or with n = 0 all of it (git fetch --deepen / --unshallow).
func (s *Store) Deepen(ctx context.Context, remote string, n int) ([]repo.RefUpdate, error) {
	return s.repo.Fetch(ctx, remoteOr(remote), repo.FetchOptions{Deepen: n, Unshallow: n == 0})
}

// PushOptions tune Push.
type PushOptions struct {
	// Branch to push ("" = the store's default branch); it lands on the
	// branch of the same name on the remote.
	Branch string
	// Tags pushes every tag (checkpoints) too.
	Tags bool
}

// Push pushes a branch to a remote. A branch with a merge in progress is
// refused (ErrConflict). The remote compares and swaps: when it has
// commits this store lacks, the push is refused with an error matching
// repo.ErrStale (pull, then push again); when its hooks refuse, the error
// matches ErrDenied and carries what they said.
func (s *Store) Push(ctx context.Context, remote string, po PushOptions) ([]repo.PushResult, error) {
	ref := s.Ref(po.Branch)
	if busy, err := s.HasConflicts(ref); err != nil {
		return nil, err
	} else if busy {
		return nil, &MergeInProgressError{Branch: shortBranch(ref), Pushing: true}
	}
	if _, err := s.repo.Ref(ref); err != nil {
		return nil, fmt.Errorf("branch %s: %w", shortBranch(ref), err)
	}
	res, err := s.repo.Push(ctx, remoteOr(remote), repo.PushOptions{Refspecs: []string{ref + ":" + ref}, Tags: po.Tags})
	return res, refusal(err)
}

// refusal marks a push the remote's hooks refused as ErrDenied.
func refusal(err error) error {
	var pe *repo.PushError
	if !errors.As(err, &pe) || pe.NonFastForward() {
		return err
	}
	return &deniedError{err}
}

type deniedError struct{ err error }

func (e *deniedError) Error() string   { return e.err.Error() }
func (e *deniedError) Unwrap() []error { return []error{e.err, ErrDenied} }

// CloneOptions tune Clone.
type CloneOptions struct {
	Options
	// Remote names the remote cloned from (default "origin").
	Remote string
	// Filter makes a partial clone (git's --filter, e.g. "blob:none"):
	// documents arrive from the remote when first read.
	Filter string
	// Depth makes a shallow clone of that many commits per branch:
	// history commands stop at its boundary and say so.
	Depth int
}

// Clone makes a new store at dir from a remote store (any git URL). Every
// branch and tag of the remote arrives, HEAD is the remote's.
func Clone(ctx context.Context, url, dir string, opts CloneOptions) (*Store, error) {
	r, err := repo.Clone(ctx, url, dir, repo.CloneOptions{Remote: opts.Remote, Filter: opts.Filter, Depth: opts.Depth})
	if err != nil {
		return nil, err
	}
	r.Close()
	return Open(ctx, dir, opts.Options)
}
