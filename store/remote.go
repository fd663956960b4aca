package store

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"sort"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/aiwg/aiwg-state/repo"
)

// Remotes: the store travels through any git server. Fetch and push run the
// git CLI (see repo/remote.go for why); pull, sync and integrate compose
// them with Merge, so what arrives is merged with the resolver strategies
// and conflicts persist as data, never as markers.

// AgentBranchPrefix is where agents keep their own branches:
// agents/<agent-id>/<name>. Agents push only their own branches, so
// pushes never contend; a coordinator integrates them.
const AgentBranchPrefix = "agents/"

// maxPushAttempts bounds the fetch-merge-push loop of Sync and Integrate
// when the remote branch keeps moving underneath.
const maxPushAttempts = 5

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

// remoteRef is the remote-tracking ref of a branch.
func remoteRef(remote, branchRef string) string {
	return "refs/remotes/" + remote + "/" + shortBranch(branchRef)
}

// PullOptions tune Pull.
type PullOptions struct {
	// Branch to update ("" = the store's default branch) from the branch
	// of the same name on the remote.
	Branch string
	// Merge settles how (strategy, author); Into is set by Pull.
	Merge MergeOptions
}

// Pull fetches and merges the remote's copy of a branch into it. A branch
// the store does not have yet is created at the remote's commit. Conflicts
// persist as with Merge (the error wraps ErrConflict).
func (s *Store) Pull(ctx context.Context, remote string, po PullOptions) (*MergeResult, error) {
	remote = remoteOr(remote)
	if _, err := s.Fetch(ctx, remote); err != nil {
		return nil, err
	}
	return s.mergeRemote(ctx, remote, s.Ref(po.Branch), po.Merge)
}

// mergeRemote merges refs/remotes/<remote>/<branch> into branch; nil
// result and no error when the remote has no such branch.
// The branch's upstream is the first parent of a merge commit: the
// server's branch moves only by commits whose first-parent chain holds its
// head, and log and blame on it keep crediting what it had.
func (s *Store) mergeRemote(ctx context.Context, remote, branchRef string, mo MergeOptions) (*MergeResult, error) {
	mo.upstreamFirst = true
	return s.mergeInto(ctx, remoteRef(remote, branchRef), branchRef, mo)
}

// mergeInto merges the ref from into branchRef, creating the branch at
// from when it does not exist; nil result when from does not exist.
func (s *Store) mergeInto(ctx context.Context, from, branchRef string, mo MergeOptions) (*MergeResult, error) {
	theirs, err := s.repo.Ref(from)
	if errors.Is(err, repo.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if _, err := s.repo.Ref(branchRef); errors.Is(err, repo.ErrNotFound) {
		if err := s.repo.UpdateRef(ctx, branchRef, plumbing.ZeroHash, theirs); err != nil {
			return nil, err
		}
		return &MergeResult{Into: shortBranch(branchRef), From: from, Theirs: theirs.String(), Status: MergeFastForward, Files: []MergedPath{}}, nil
	}
	mo.Into = branchRef
	return s.Merge(ctx, theirs.String(), withMergedName(mo, from))
}

// withMergedName keeps the merge subject readable ("merge origin/main into
// ...") while the merge itself is of the exact commit fetched.
func withMergedName(mo MergeOptions, from string) MergeOptions {
	if mo.Write.Message == "" {
		mo.Write.Message = "merge " + strings.TrimPrefix(from, "refs/remotes/") + " into " + shortBranch(mo.Into)
	}
	return mo
}

// AgentBranch is the branch of an agent: agents/<id>/<name> (name
// default "main").
func AgentBranch(id, name string) (string, error) {
	if name == "" {
		name = "main"
	}
	for _, part := range []string{id, name} {
		if !repo.ValidNamePart(part) {
			return "", fmt.Errorf("%w: %q (an agent id or branch name: letters, digits, '.', '_', '-')", repo.ErrInvalidName, part)
		}
	}
	return AgentBranchPrefix + id + "/" + name, nil
}

// StartAgent puts the store on the agent's own branch, agents/<id>/<name>,
// creating it at from ("" = the head of the default branch) when it does
// not exist yet. Later commands without --branch work on it, and so does
// this Store: unlike Switch, it moves this Store's default branch, since
// an agent's store is its own. It also records id as the store's default
// agent (SetDefaultAgent). Call it before other goroutines use the Store.
func (s *Store) StartAgent(ctx context.Context, id, name, from string) (string, error) {
	branch, err := AgentBranch(id, name)
	if err != nil {
		return "", err
	}
	ref := branchRef(branch)
	if err := s.headMovable(ref); err != nil {
		return "", err // before the branch is made
	}
	if _, err := s.repo.Ref(ref); errors.Is(err, repo.ErrNotFound) {
		start, err := s.Resolve(orHead(from), "")
		if err != nil {
			return "", err
		}
		if err := s.repo.UpdateRef(ctx, ref, plumbing.ZeroHash, start); err != nil && !errors.Is(err, repo.ErrStale) {
			return "", err
		}
	} else if err != nil {
		return "", err
	}
	if err := s.setHead(ctx, ref); err != nil {
		return "", err
	}
	s.branch = ref
	// The agent is this store's from now on: its writes are authored by
	// it without --agent on each (see AgentFor).
	if err := s.SetDefaultAgent(ctx, id); err != nil {
		return branch, err
	}
	return branch, nil
}

func orHead(rev string) string {
	if rev == "" {
		return "HEAD"
	}
	return rev
}

// SyncOptions tune Sync.
type SyncOptions struct {
	// Branch is the agent's branch ("" = the store's default branch).
	Branch string
	// Upstream is the remote branch merged in (default "main").
	Upstream string
	// Merge settles how (strategy, author).
	Merge MergeOptions
}

// SyncResult reports a sync.
type SyncResult struct {
	Branch   string            `json:"branch"`
	Fetched  []repo.RefUpdate  `json:"fetched"`
	Merged   []*MergeResult    `json:"merged"`
	Pushed   []repo.PushResult `json:"pushed"`
	Attempts int               `json:"attempts"`
}

// Sync is the loop an agent runs: fetch, merge the remote's copy of its own
// branch (another process of the same agent may have pushed) and the
// upstream branch into it with the strategies, and push it. When the push
// loses a race it starts over, a bounded number of times. Conflicts stop
// it with ErrConflict, persisted for `resolve`.
func (s *Store) Sync(ctx context.Context, remote string, so SyncOptions) (*SyncResult, error) {
	remote = remoteOr(remote)
	ref := s.Ref(so.Branch)
	upstream := branchRef(so.Upstream)
	if so.Upstream == "" {
		upstream = "refs/heads/main"
	}
	res := &SyncResult{Branch: shortBranch(ref)}
	for res.Attempts < maxPushAttempts {
		res.Attempts++
		ups, err := s.Fetch(ctx, remote)
		if err != nil {
			return res, err
		}
		res.Fetched = append(res.Fetched, ups...)
		froms := []string{remoteRef(remote, ref)}
		if upstream != ref {
			froms = append(froms, remoteRef(remote, upstream))
		}
		for i, from := range froms {
			mo := so.Merge
			mo.upstreamFirst = i == 0 // the branch's own upstream (mergeRemote)
			m, err := s.mergeInto(ctx, from, ref, mo)
			if m != nil {
				res.Merged = append(res.Merged, m)
			}
			if err != nil {
				return res, err
			}
		}
		pushed, err := s.Push(ctx, remote, PushOptions{Branch: ref})
		res.Pushed = pushed
		if err == nil || !errors.Is(err, repo.ErrStale) {
			return res, err
		}
	}
	return res, fmt.Errorf("sync %s: the remote kept moving; gave up after %d attempts: %w", res.Branch, res.Attempts, repo.ErrStale)
}

// IntegrateOptions tune Integrate.
type IntegrateOptions struct {
	// Into is the branch agents are merged into (default "main").
	Into string
	// NoPush integrates locally only.
	NoPush bool
	// Merge settles how (strategy, author).
	Merge MergeOptions
}

// AgentMerge is what integrating one agent branch did.
type AgentMerge struct {
	Agent  string `json:"agent"`
	Branch string `json:"branch"`
	// Status is a merge status; "conflicts" means the merge was undone
	// and the branch left out: merge it by hand to resolve.
	Status    string          `json:"status"`
	Files     []MergedPath    `json:"files"`
	Conflicts []ConflictEntry `json:"conflicts,omitempty"`
	Error     string          `json:"error,omitempty"`
}

// IntegrateResult reports an integration.
type IntegrateResult struct {
	Into     string            `json:"into"`
	Agents   []AgentMerge      `json:"agents"`
	Pushed   []repo.PushResult `json:"pushed,omitempty"`
	Attempts int               `json:"attempts"`
}

// Conflicted lists the agents whose branches could not be merged cleanly.
func (r *IntegrateResult) Conflicted() []string {
	var out []string
	for _, a := range r.Agents {
		if a.Status == MergeConflicts || a.Error != "" {
			out = append(out, a.Branch)
		}
	}
	return out
}

// Integrate is the coordinator's command: fetch, bring Into up to date
// with the remote, merge every agents/* branch of the remote into it, one
// merge each, and push it. A branch whose merge conflicts is left out (the
// merge is aborted, so the others still merge) and reported; merge it by
// hand to resolve. Into keeps its first-parent history (MergeOptions.
// FirstParent). A lost push race starts over, a bounded number of times.
func (s *Store) Integrate(ctx context.Context, remote string, io IntegrateOptions) (*IntegrateResult, error) {
	remote = remoteOr(remote)
	into := "refs/heads/main"
	if io.Into != "" {
		into = branchRef(io.Into)
	}
	res := &IntegrateResult{Into: shortBranch(into)}
	for res.Attempts < maxPushAttempts {
		res.Attempts++
		res.Agents = nil
		if _, err := s.Fetch(ctx, remote); err != nil {
			return res, err
		}
		if _, err := s.mergeRemote(ctx, remote, into, io.Merge); err != nil {
			return res, err
		}
		prefix := "refs/remotes/" + remote + "/" + AgentBranchPrefix
		_, names, err := s.repo.Refs(prefix)
		if err != nil {
			return res, err
		}
		sort.Strings(names)
		for _, name := range names {
			branch := strings.TrimPrefix(name, "refs/remotes/"+remote+"/")
			agent, _, _ := strings.Cut(strings.TrimPrefix(branch, AgentBranchPrefix), "/")
			am := AgentMerge{Agent: agent, Branch: branch, Files: []MergedPath{}}
			// main keeps its first-parent history: an agent's branch that
			// merged main in is merged with a commit, not fast-forwarded
			// onto, so log and blame on main keep crediting its authors.
			mo := io.Merge
			mo.FirstParent = true
			m, err := s.mergeInto(ctx, name, into, mo)
			if m != nil {
				am.Status, am.Files, am.Conflicts = m.Status, m.Files, m.Conflicts
			}
			if err != nil {
				if errors.Is(err, ErrConflict) && m != nil && m.Status == MergeConflicts {
					if aerr := s.Abort(ctx, into); aerr != nil {
						return res, aerr
					}
				} else {
					am.Error = err.Error()
				}
			}
			res.Agents = append(res.Agents, am)
		}
		if io.NoPush {
			return res, nil
		}
		pushed, err := s.Push(ctx, remote, PushOptions{Branch: into})
		res.Pushed = pushed
		if err == nil || !errors.Is(err, repo.ErrStale) {
			return res, err
		}
	}
	return res, fmt.Errorf("integrate: the remote kept moving; gave up after %d attempts: %w", res.Attempts, repo.ErrStale)
}
