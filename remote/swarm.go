package remote

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strconv"
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
	// Resolve, "ours" or "theirs", settles every conflict the merge of
	// the upstream brings with that side (ours: the agent's branch;
	// theirs: the upstream's value) and completes the merge, so that the
	// next integration takes the branch. Empty: conflicts stop the sync.
	Resolve string
}

// SyncResult reports a sync.
type SyncResult struct {
	Branch   string               `json:"branch"`
	Fetched  []repo.RefUpdate     `json:"fetched"`
	Merged   []*merge.MergeResult `json:"merged"`
	Pushed   []repo.PushResult    `json:"pushed"`
	Attempts int                  `json:"attempts"`
	// Conflict is the integrator's record of why the branch is not in the
	// upstream yet (nil when it has none): which keys, and both values.
	Conflict *ConflictRecord `json:"conflict,omitempty"`
	// Resolved counts the conflicts Resolve settled.
	Resolved int `json:"resolved,omitempty"`
}

// narrowRefspecs are what an agent's sync fetches: its own branch and the
// upstream, no other agent's branch and no tag. With protocol v2 the
// server advertises only refs under these names, so what a sync costs
// does not grow with the number of agents.
func narrowRefspecs(remote string, branches ...string) []string {
	var out []string
	seen := map[string]bool{}
	for _, b := range branches {
		if !seen[b] {
			seen[b] = true
			out = append(out, "+"+b+":"+remoteRef(remote, b))
		}
	}
	return out
}

// FetchBranches fetches only the named branches of a remote (full refs or
// short names) into its remote-tracking refs, no tags; a branch the
// remote does not have is skipped.
func (w *Swarm) FetchBranches(ctx context.Context, remote string, branches ...string) ([]repo.RefUpdate, error) {
	remote = remoteOr(remote)
	refs := make([]string, len(branches))
	for i, b := range branches {
		// Each name becomes a refspec: one git would read as two refs,
		// a pattern or a flag is refused.
		if err := store.CheckBranchName(strings.TrimPrefix(b, "refs/heads/")); err != nil {
			return nil, err
		}
		refs[i] = "refs/heads/" + strings.TrimPrefix(b, "refs/heads/")
	}
	return w.s.Repo().Fetch(ctx, remote, repo.FetchOptions{Refspecs: narrowRefspecs(remote, refs...), NoTags: true, MissingOK: true})
}

// Sync is the loop an agent runs: fetch its own branch and the upstream
// only, merge the remote's copy of its own branch (another process of the
// same agent may have pushed) and the upstream into it with the
// strategies, and push it alone. When the push loses a race it starts
// over, a bounded number of times. Conflicts stop it with
// store.ErrConflict, persisted for `resolve`, unless so.Resolve settles
// them. The integrator's conflict record for the branch, when the upstream
// holds one, is in the result.
func (w *Swarm) Sync(ctx context.Context, remote string, so SyncOptions) (*SyncResult, error) {
	remote = remoteOr(remote)
	ref := w.s.Ref(so.Branch)
	upstream := "refs/heads/main"
	if so.Upstream != "" {
		upstream = w.s.Ref(so.Upstream)
	}
	if err := checkBranches(so.Branch, so.Upstream); err != nil {
		return nil, err
	}
	switch so.Resolve {
	case "", "ours", "theirs":
	default:
		return nil, fmt.Errorf("%w: sync resolves with ours or theirs, not %q", store.ErrUsage, so.Resolve)
	}
	res := &SyncResult{Branch: shortBranch(ref)}
	if so.Resolve != "" {
		// A sync that stopped on conflicts left its merge in progress:
		// settle that one first.
		busy, err := w.s.HasConflicts(ref)
		if err != nil {
			return res, err
		}
		if busy {
			m, n, err := w.settle(ctx, ref, so)
			res.Resolved += n
			if m != nil {
				res.Merged = append(res.Merged, m)
			}
			if err != nil {
				return res, err
			}
		}
	}
	for res.Attempts < maxPushAttempts {
		res.Attempts++
		ups, err := w.s.Repo().Fetch(ctx, remote, repo.FetchOptions{Refspecs: narrowRefspecs(remote, ref, upstream), NoTags: true, MissingOK: true})
		if err != nil {
			return res, err
		}
		res.Fetched = append(res.Fetched, ups...)
		if upstream != ref {
			rec, err := w.readRecord(remoteRef(remote, upstream), shortBranch(ref))
			if err != nil {
				return res, err
			}
			res.Conflict = rec
		}
		froms := []string{remoteRef(remote, ref)}
		if upstream != ref {
			froms = append(froms, remoteRef(remote, upstream))
		}
		for i, from := range froms {
			mo := so.Merge
			mo.UpstreamFirst = i == 0 // the branch's own upstream (mergeRemote)
			m, err := w.mergeInto(ctx, from, ref, mo)
			if err != nil && so.Resolve != "" && i == 1 && errors.Is(err, store.ErrConflict) && m != nil && m.Status == merge.MergeConflicts {
				var n int
				m, n, err = w.settle(ctx, ref, so)
				res.Resolved += n
			}
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

// settle resolves every conflict of the merge in progress on ref with
// so.Resolve's side and commits the merge.
func (w *Swarm) settle(ctx context.Context, ref string, so SyncOptions) (*merge.MergeResult, int, error) {
	mg := merge.New(w.s)
	wo := so.Merge.Write
	wo.Branch = ref
	left, err := mg.Conflicts(ctx, store.ReadOptions{Branch: ref})
	if err != nil {
		return nil, 0, err
	}
	files := map[string]bool{}
	for _, c := range left {
		files[c.File] = true
	}
	names := make([]string, 0, len(files))
	for f := range files {
		names = append(names, f)
	}
	sort.Strings(names)
	for _, f := range names {
		if _, err := mg.Resolve(ctx, f, "", merge.Resolution{Take: so.Resolve}, wo); err != nil {
			return nil, 0, err
		}
	}
	m, err := mg.Continue(ctx, wo)
	return m, len(left), err
}

// IntegrateOptions tune Integrate.
type IntegrateOptions struct {
	// Into is the branch agents are merged into (default "main", or
	// integration/K for shard K).
	Into string
	// From is the prefix of the branches merged (default "agents/"); a
	// top-level pass over shards takes "integration/", and merges each
	// shard with a commit, never a fast-forward.
	From string
	// Shard, with Shards > 1, integrates only the agents ShardOf assigns
	// to shard Shard (0 ≤ Shard < Shards), into integration/<Shard>, and
	// merges Upstream into it first so that its conflicts show there.
	Shard, Shards int
	// Upstream is what a shard keeps up with (default "main").
	Upstream string
	// All merges every branch, moved or not, as a first pass does.
	All bool
	// NoPush integrates locally only.
	NoPush bool
	// Merge settles how (strategy, author).
	Merge merge.MergeOptions
}

// AgentMerge is what integrating one agent branch did.
type AgentMerge struct {
	Agent  string `json:"agent"`
	Branch string `json:"branch"`
	// Tip is the branch's commit that was merged (or not).
	Tip string `json:"tip"`
	// Status is a merge status; "conflicts" means the merge was undone,
	// the branch left out and a conflict record written for it (see
	// ConflictRecord) until its next version merges.
	Status    string                `json:"status"`
	Files     []merge.MergedPath    `json:"files"`
	Conflicts []merge.ConflictEntry `json:"conflicts,omitempty"`
	Error     string                `json:"error,omitempty"`
}

// IntegrateResult reports an integration pass.
type IntegrateResult struct {
	Into string `json:"into"`
	// Agents are the branches merged in this pass: those that moved since
	// the last one.
	Agents []AgentMerge `json:"agents"`
	// Unmoved counts the branches left alone: at the commit the last pass
	// integrated.
	Unmoved  int               `json:"unmoved"`
	Pushed   []repo.PushResult `json:"pushed,omitempty"`
	Attempts int               `json:"attempts"`
	// RecordError says why the conflict records could not be written
	// (the policy refused them); the merges went ahead.
	RecordError string `json:"record_error,omitempty"`
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

// ShardFor names shard k's integration branch.
func ShardFor(k int) string { return "integration/" + strconv.Itoa(k) }

// Integrate is one pass of the coordinator: read the remote's branches
// from one ref advertisement, fetch Into and the agent branches that moved
// since the last pass (no object moves for the others), bring Into up to
// date with the remote, merge each moved branch into it, one merge each,
// update the conflict records, and push Into once. A branch whose merge
// conflicts is left out (the merge is aborted, so the others still merge)
// and gets a conflict record in Into, which its agent's next sync shows;
// the record goes when a later version of the branch merges. Into keeps
// its first-parent history (MergeOptions.FirstParent). A lost push race
// starts over, a bounded number of times.
//
// The last integrated commit of each branch is kept beside the store
// (integrated.json under the git directory), and written only once the
// push landed.
func (w *Swarm) Integrate(ctx context.Context, remote string, io IntegrateOptions) (*IntegrateResult, error) {
	remote = remoteOr(remote)
	if io.Shards < 0 || io.Shards > 1 && (io.Shard < 0 || io.Shard >= io.Shards) {
		return nil, fmt.Errorf("%w: shard %d of %d", store.ErrUsage, io.Shard, io.Shards)
	}
	if err := checkBranches(io.Into, io.Upstream, strings.TrimSuffix(io.From, "/")); err != nil {
		return nil, err
	}
	// The remote's name is part of the path integrated.json is kept at.
	if err := repo.CheckRemoteName(remote); err != nil {
		return nil, err
	}
	sharded := io.Shards > 1
	into := "refs/heads/main"
	switch {
	case io.Into != "":
		into = w.s.Ref(io.Into)
	case sharded:
		into = w.s.Ref(ShardFor(io.Shard))
	}
	upstream := "refs/heads/main"
	if io.Upstream != "" {
		upstream = w.s.Ref(io.Upstream)
	}
	from := io.From
	if from == "" {
		from = AgentBranchPrefix
	}
	if !strings.HasSuffix(from, "/") {
		from += "/"
	}
	from = w.s.Ref(from)
	seen, err := w.loadIntegrated(remote, into)
	if err != nil {
		return nil, err
	}
	res := &IntegrateResult{Into: shortBranch(into)}
	for res.Attempts < maxPushAttempts {
		res.Attempts++
		res.Agents, res.Unmoved = nil, 0
		adv, err := w.s.Repo().LsRemote(ctx, remote)
		if err != nil {
			return res, err
		}
		var moved []string
		tips := map[string]plumbing.Hash{}
		for name, tip := range adv {
			if !strings.HasPrefix(name, from) || name == into || name == upstream {
				continue
			}
			agent, _, _ := strings.Cut(strings.TrimPrefix(name, from), "/")
			if sharded && ShardOf(agent, io.Shards) != io.Shard {
				continue
			}
			tips[name] = tip
			if !io.All && seen[name] == tip.String() {
				res.Unmoved++
				continue
			}
			moved = append(moved, name)
		}
		sort.Strings(moved)
		gone := false
		for name := range seen {
			if _, ok := tips[name]; !ok {
				gone = true
			}
		}
		wanted := []string{into}
		if sharded && upstream != into {
			wanted = append(wanted, upstream)
		}
		local, _ := w.s.Repo().Ref(remoteRef(remote, into))
		if len(moved) == 0 && adv[into] == local && !io.All {
			// Nothing to merge and nothing new on Into: no fetch, no push.
			if gone {
				return res, w.saveIntegrated(remote, into, seen, tips)
			}
			return res, nil
		}
		if _, err := w.s.Repo().Fetch(ctx, remote, repo.FetchOptions{Refspecs: narrowRefspecs(remote, append(wanted, moved...)...), NoTags: true, MissingOK: true}); err != nil {
			return res, err
		}
		if _, err := w.mergeRemote(ctx, remote, into, io.Merge); err != nil {
			return res, err
		}
		if sharded && upstream != into {
			// A shard keeps up with main, so that what conflicts with
			// another shard's agents conflicts here, per agent, and the
			// top-level merge of the shard stays clean.
			mo := io.Merge
			mo.FirstParent = true
			// When main itself conflicts with the shard, the merge is
			// undone and the top-level pass records the conflict.
			if _, err := w.mergeInto(ctx, remoteRef(remote, upstream), into, mo); err != nil {
				if !errors.Is(err, store.ErrConflict) {
					return res, err
				}
				if aerr := merge.New(w.s).Abort(ctx, store.WriteOptions{Branch: into}); aerr != nil {
					return res, aerr
				}
			}
		}
		records := map[string]*ConflictRecord{}
		for _, name := range moved {
			branch := strings.TrimPrefix(name, "refs/heads/")
			agent, _, _ := strings.Cut(strings.TrimPrefix(name, from), "/")
			am := AgentMerge{Agent: agent, Branch: branch, Tip: tips[name].String(), Files: []merge.MergedPath{}}
			// main keeps its first-parent history: an agent's branch that
			// merged main in is merged with a commit, not fast-forwarded
			// onto, so log and blame on main keep crediting its authors.
			mo := io.Merge
			mo.FirstParent = true
			// Shards merge into main with a commit each, even where main
			// could fast-forward: main's first-parent history stays a line
			// of integration merges.
			mo.NoFF = mo.NoFF || from == "refs/heads/integration/"
			head, _ := w.s.Repo().Ref(into)
			m, err := w.mergeInto(ctx, remoteRef(remote, name), into, mo)
			if m != nil {
				am.Status, am.Files, am.Conflicts = m.Status, m.Files, m.Conflicts
			}
			records[branch] = nil
			if err != nil {
				if errors.Is(err, store.ErrConflict) && m != nil && m.Status == merge.MergeConflicts {
					if aerr := merge.New(w.s).Abort(ctx, store.WriteOptions{Branch: into}); aerr != nil {
						return res, aerr
					}
					rec := newRecord(branch, am.Tip, into, head.String(), m.Conflicts)
					records[branch] = &rec
				} else {
					am.Error = err.Error()
				}
			}
			res.Agents = append(res.Agents, am)
		}
		// A record the store refuses (a policy that keeps the integrator
		// out of ConflictDir) does not hold up the merges: it is reported.
		res.RecordError = ""
		if err := w.writeRecords(ctx, into, records, io.Merge.Write); err != nil {
			if !errors.Is(err, store.ErrDenied) {
				return res, err
			}
			res.RecordError = err.Error()
		}
		if io.NoPush {
			return res, nil
		}
		pushed, err := w.s.Push(ctx, remote, store.PushOptions{Branch: into})
		res.Pushed = pushed
		if err == nil {
			for _, name := range moved {
				seen[name] = tips[name].String()
			}
			return res, w.saveIntegrated(remote, into, seen, tips)
		}
		if !errors.Is(err, repo.ErrStale) {
			return res, err
		}
	}
	return res, fmt.Errorf("integrate: the remote kept moving; gave up after %d attempts: %w", res.Attempts, repo.ErrStale)
}

// writeRecords commits the conflict record changes of a pass on into, in
// one commit (none when nothing changes).
func (w *Swarm) writeRecords(ctx context.Context, into string, records map[string]*ConflictRecord, wo store.WriteOptions) error {
	ops, err := w.recordOps(into, records)
	if err != nil || len(ops) == 0 {
		return err
	}
	wo.Branch = into
	if wo.Message == "" {
		wo.Message = "integrate: conflict records"
	}
	_, err = w.s.Apply(ctx, ops, wo)
	if errors.Is(err, store.ErrNoChange) {
		return nil
	}
	return err
}

// checkBranches refuses a branch name (empty: the default) that a refspec
// would misread: these names end up in the refspecs of a fetch.
func checkBranches(names ...string) error {
	for _, n := range names {
		if n != "" {
			if err := store.CheckBranchName(strings.TrimPrefix(n, "refs/heads/")); err != nil {
				return err
			}
		}
	}
	return nil
}
