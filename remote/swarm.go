package remote

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/aiwg/aiwg-state/merge"
	"github.com/aiwg/aiwg-state/repo"
	"github.com/aiwg/aiwg-state/store"
)

// AgentBranchPrefix is where agents keep their own branches:
// agents/<agent-id>/<name>. Agents push only their own branches, so
// pushes never contend; a coordinator integrates them.
const AgentBranchPrefix = "agents/"

// maxPushAttempts bounds the fetch-merge-push loop of Sync and Integrate
// when the remote branch keeps moving underneath.
const maxPushAttempts = 5

// Swarm is the remote workflows of one store (aiwgstate.Store.Swarm): an
// agent's pull and sync, a coordinator's integrate.
type Swarm struct{ s *store.Store }

// New returns the remote workflows of s.
func New(s *store.Store) *Swarm { return &Swarm{s: s} }

func remoteOr(remote string) string {
	if remote == "" {
		return repo.DefaultRemote
	}
	return remote
}

func shortBranch(ref string) string { return strings.TrimPrefix(ref, "refs/heads/") }

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
	Merge merge.MergeOptions
}

// Pull fetches and merges the remote's copy of a branch into it. A branch
// the store does not have yet is created at the remote's commit. Conflicts
// persist as with merge.Merges.Merge (the error wraps store.ErrConflict).
func (w *Swarm) Pull(ctx context.Context, remote string, po PullOptions) (*merge.MergeResult, error) {
	remote = remoteOr(remote)
	if _, err := w.s.Fetch(ctx, remote); err != nil {
		return nil, err
	}
	return w.mergeRemote(ctx, remote, w.s.Ref(po.Branch), po.Merge)
}

// mergeRemote merges refs/remotes/<remote>/<branch> into branch; nil
// result and no error when the remote has no such branch.
// The branch's upstream is the first parent of a merge commit: the
// server's branch moves only by commits whose first-parent chain holds its
// head, and log and blame on it keep crediting what it had.
func (w *Swarm) mergeRemote(ctx context.Context, remote, branchRef string, mo merge.MergeOptions) (*merge.MergeResult, error) {
	mo.UpstreamFirst = true
	return w.mergeInto(ctx, remoteRef(remote, branchRef), branchRef, mo)
}

// mergeInto merges the ref from into branchRef, creating the branch at
// from when it does not exist; nil result when from does not exist.
func (w *Swarm) mergeInto(ctx context.Context, from, branchRef string, mo merge.MergeOptions) (*merge.MergeResult, error) {
	theirs, err := w.s.Repo().Ref(from)
	if errors.Is(err, repo.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if _, err := w.s.Repo().Ref(branchRef); errors.Is(err, repo.ErrNotFound) {
		if err := w.s.Repo().UpdateRef(ctx, branchRef, plumbing.ZeroHash, theirs); err != nil {
			return nil, err
		}
		return &merge.MergeResult{Into: shortBranch(branchRef), From: from, Theirs: theirs.String(), Status: merge.MergeFastForward, Files: []merge.MergedPath{}}, nil
	}
	mo.Into = branchRef
	return merge.New(w.s).Merge(ctx, theirs.String(), withMergedName(mo, from))
}

// withMergedName keeps the merge subject readable ("merge origin/main into
// ...") while the merge itself is of the exact commit fetched.
func withMergedName(mo merge.MergeOptions, from string) merge.MergeOptions {
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
func (w *Swarm) StartAgent(ctx context.Context, id, name, from string) (string, error) {
	branch, err := AgentBranch(id, name)
	if err != nil {
		return "", err
	}
	ref := w.s.Ref(branch)
	if err := w.s.HeadMovable(ref); err != nil {
		return "", err // before the branch is made
	}
	if _, err := w.s.Repo().Ref(ref); errors.Is(err, repo.ErrNotFound) {
		start, err := w.s.Resolve(orHead(from), "")
		if err != nil {
			return "", err
		}
		if err := w.s.Repo().UpdateRef(ctx, ref, plumbing.ZeroHash, start); err != nil && !errors.Is(err, repo.ErrStale) {
			return "", err
		}
	} else if err != nil {
		return "", err
	}
	if err := w.s.UseBranch(ctx, ref); err != nil {
		return "", err
	}
	// The agent is this store's from now on: its writes are authored by
	// it without --agent on each (see store.AgentFor).
	if err := w.s.SetDefaultAgent(ctx, id); err != nil {
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
	Merge merge.MergeOptions
}

// SyncResult reports a sync.
type SyncResult struct {
	Branch   string               `json:"branch"`
	Fetched  []repo.RefUpdate     `json:"fetched"`
	Merged   []*merge.MergeResult `json:"merged"`
	Pushed   []repo.PushResult    `json:"pushed"`
	Attempts int                  `json:"attempts"`
}

// Sync is the loop an agent runs: fetch, merge the remote's copy of its own
// branch (another process of the same agent may have pushed) and the
// upstream branch into it with the strategies, and push it. When the push
// loses a race it starts over, a bounded number of times. Conflicts stop
// it with store.ErrConflict, persisted for `resolve`.
func (w *Swarm) Sync(ctx context.Context, remote string, so SyncOptions) (*SyncResult, error) {
	remote = remoteOr(remote)
	ref := w.s.Ref(so.Branch)
	upstream := "refs/heads/main"
	if so.Upstream != "" {
		upstream = w.s.Ref(so.Upstream)
	}
	res := &SyncResult{Branch: shortBranch(ref)}
	for res.Attempts < maxPushAttempts {
		res.Attempts++
		ups, err := w.s.Fetch(ctx, remote)
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
			mo.UpstreamFirst = i == 0 // the branch's own upstream (mergeRemote)
			m, err := w.mergeInto(ctx, from, ref, mo)
			if m != nil {
				res.Merged = append(res.Merged, m)
			}
			if err != nil {
				return res, err
			}
		}
		pushed, err := w.s.Push(ctx, remote, store.PushOptions{Branch: ref})
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
	Merge merge.MergeOptions
}

// AgentMerge is what integrating one agent branch did.
type AgentMerge struct {
	Agent  string `json:"agent"`
	Branch string `json:"branch"`
	// Status is a merge status; "conflicts" means the merge was undone
	// and the branch left out: merge it by hand to resolve.
	Status    string                `json:"status"`
	Files     []merge.MergedPath    `json:"files"`
	Conflicts []merge.ConflictEntry `json:"conflicts,omitempty"`
	Error     string                `json:"error,omitempty"`
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
		if a.Status == merge.MergeConflicts || a.Error != "" {
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
func (w *Swarm) Integrate(ctx context.Context, remote string, io IntegrateOptions) (*IntegrateResult, error) {
	remote = remoteOr(remote)
	into := "refs/heads/main"
	if io.Into != "" {
		into = w.s.Ref(io.Into)
	}
	res := &IntegrateResult{Into: shortBranch(into)}
	for res.Attempts < maxPushAttempts {
		res.Attempts++
		res.Agents = nil
		if _, err := w.s.Fetch(ctx, remote); err != nil {
			return res, err
		}
		if _, err := w.mergeRemote(ctx, remote, into, io.Merge); err != nil {
			return res, err
		}
		prefix := "refs/remotes/" + remote + "/" + AgentBranchPrefix
		_, names, err := w.s.Repo().Refs(prefix)
		if err != nil {
			return res, err
		}
		sort.Strings(names)
		for _, name := range names {
			branch := strings.TrimPrefix(name, "refs/remotes/"+remote+"/")
			agent, _, _ := strings.Cut(strings.TrimPrefix(branch, AgentBranchPrefix), "/")
			am := AgentMerge{Agent: agent, Branch: branch, Files: []merge.MergedPath{}}
			// main keeps its first-parent history: an agent's branch that
			// merged main in is merged with a commit, not fast-forwarded
			// onto, so log and blame on main keep crediting its authors.
			mo := io.Merge
			mo.FirstParent = true
			m, err := w.mergeInto(ctx, name, into, mo)
			if m != nil {
				am.Status, am.Files, am.Conflicts = m.Status, m.Files, m.Conflicts
			}
			if err != nil {
				if errors.Is(err, store.ErrConflict) && m != nil && m.Status == merge.MergeConflicts {
					if aerr := merge.New(w.s).Abort(ctx, store.WriteOptions{Branch: into}); aerr != nil {
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
		pushed, err := w.s.Push(ctx, remote, store.PushOptions{Branch: into})
		res.Pushed = pushed
		if err == nil || !errors.Is(err, repo.ErrStale) {
			return res, err
		}
	}
	return res, fmt.Errorf("integrate: the remote kept moving; gave up after %d attempts: %w", res.Attempts, repo.ErrStale)
}
