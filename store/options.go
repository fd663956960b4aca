package store

import (
	"fmt"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/aiwg/aiwg-state/repo"
	"github.com/aiwg/aiwg-state/signing"
)

// The options of the store's verbs, in one place: reads take ReadOptions
// (or an options type that embeds them), writes take WriteOptions, and a
// branch is always a field, never an argument. Each options type whose
// fields can be wrong says so in its Validate, which the verb calls first.

// Options tune an open store.
type Options struct {
	// NoSync skips fsync: a machine crash may lose the last writes (never
	// consistency: the branch always names a complete commit). The store
	// manifest's "sync": false sets it for every user of the store.
	NoSync bool
	// Branch is the default branch of writes and reads; "" is the
	// store's HEAD.
	Branch string
	// Guards, After and FastForward are the features' rules over writes,
	// what they do once a write is published, and their rules over a
	// fast-forward (see Guard). Package aiwgstate's Open
	// sets them; a store opened here without them writes under the core's
	// rules alone.
	Guards      []Guard
	After       []AfterCommit
	FastForward []FastForwardGuard
	// Fsck are the features' checks in Fsck, after the core's own.
	Fsck []FsckCheck
}

// InitOptions configure a new store.
type InitOptions struct {
	Options
	// Agent authors the first commit; default "aiwg-state".
	Agent string
}

// ReadOptions say where a read looks.
type ReadOptions struct {
	// At is a revision ("" = the head of Branch).
	At string
	// Branch that At's HEAD and times are taken on ("" = default).
	Branch string
	// NoResolve reads a verbiage-ruled document as stored: its
	// "ref file://" mounts as strings rather than the shards inlined.
	NoResolve bool

	// named is At as the caller named it, when a read pinned a moving
	// name to a commit: errors say "at HEAD", not a hash nobody typed.
	named string
}

// WriteOptions say who writes, where, and why.
type WriteOptions struct {
	// Branch to write ("" = the store's default branch).
	Branch string
	// Agent authors the commit; default $AIWG_AGENT, then the store's
	// default agent (see AgentFor), then $USER.
	Agent string
	// Source and Correlation become the Source and Correlation-Id trailers.
	Source, Correlation string
	// Expect, when set, is the revision the branch must be at: the write
	// fails with a *repo.StaleError instead of applying on a newer head.
	// nil asks for no check; a pointer to an empty (or blank) revision is
	// refused with ErrUsage, never read as "no check": an unset shell
	// variable in `--expect "$REV"` must not switch the check off.
	Expect *string
	// UnchangedSince, when set, is a revision at which every file the
	// write changes must still be as it is now: optimistic concurrency
	// per file, where Expect is per branch, so writes to other files in
	// between do not fail it. A file changed since fails the write with
	// an error wrapping ErrStale that names the file. nil and empty are
	// as for Expect.
	UnchangedSince *string
	// Message replaces the generated subject line.
	Message string
	// Trailers are added after the standard ones.
	Trailers repo.Trailers
	// Time stamps the commit (default now); importers keep original times.
	Time time.Time
	// HandlerEnv and HandlerDir are the environment (KEY=VALUE) and
	// working directory of the completion handlers a write that sets
	// Final runs; nil and "" are this process's. A server writing on a
	// client's behalf passes the client's, so a handler runs as it would
	// have run from the client.
	HandlerEnv []string
	HandlerDir string
	// Warn, when set, is told of each warning the write adds to its
	// Mutation (a completion handler not run because it is not trusted).
	Warn func(msg string)
	// SigningKey is an SSH private key file that signs the commit (git's
	// SSH signature, verified by git verify-commit and by a policy's
	// signers); "" takes the agent's key configured in the store's git
	// config, if any (see Store.SigningKey). Signer, when set, signs
	// instead.
	SigningKey string
	Signer     *signing.Signer

	// For merges, set by this package only: the other parents, the head
	// the branch must be at, and whether an unchanged tree still commits.
	mergeParents  []plumbing.Hash
	upstreamFirst bool // repo.CommitInfo.UpstreamFirst
	expectHead    *plumbing.Hash
}

// MergeParents are the other parents of the merge commit this write
// makes (none for an ordinary write): a guard judges what a merge brings
// against each side.
func (wo WriteOptions) MergeParents() []plumbing.Hash { return wo.mergeParents }

// Rev returns a pointer to rev, for WriteOptions.Expect and
// UnchangedSince.
func Rev(rev string) *string { return &rev }

// LogOptions filter a log.
type LogOptions struct {
	ReadOptions
	// File keeps the commits that changed this file (compared with their
	// first parent, as git log --first-parent -- FILE does), found through
	// the changed-paths index (package audit).
	File string
	// Key, with File, keeps the commits that changed the value at this key
	// path; each mutation then carries the old and new value.
	Key string
	// AllParents follows merges into all their parents (as git log --
	// FILE does by default) instead of first parents only.
	AllParents bool
	// Follow continues a file's history across moves (mv).
	Follow bool
	// Agent keeps one agent's commits.
	Agent string
	// Since and Until bound the commit time (zero = unbounded).
	Since, Until time.Time
	// Op keeps commits with a change of this operation.
	Op string
	// Source and Correlation keep the commits whose Source or
	// Correlation-Id trailer is this (WriteOptions.Source, .Correlation):
	// one task's or one run's writes.
	Source, Correlation string
	// Event keeps the commits that emitted an event of this type (their
	// Event trailer; see EventMatches for "task.*").
	Event string
	// Limit stops after this many mutations (0 = all).
	Limit int
	// Exclude, when set, keeps only the commits not reachable from this
	// revision: with At, git's Exclude..At (what a branch has that
	// Exclude has not).
	Exclude string
}

// DiffOptions choose what to compare.
type DiffOptions struct {
	// From and To are revisions. Both empty: the last mutation (HEAD^ to
	// HEAD). Only From: that commit against its first parent. Only To:
	// from the branch's head to To.
	From, To string
	Branch   string
	// File and Key narrow the diff; Key needs File.
	File, Key string
	// MergeBase compares To with the merge base of From and To rather
	// than with From, as git diff From...To does: what To's side changed
	// since it forked, not what the other side did meanwhile. It needs
	// both revisions.
	MergeBase bool
}

// WatchOptions says which mutations Watch streams.
type WatchOptions struct {
	// Branch is the branch watched ("" = the default).
	Branch string
	// From streams the mutations after this revision first ("" = only
	// those made after Watch starts).
	From string
	// Path keeps the mutations that changed this file, or a file under
	// this directory.
	Path string
	// Agent, Op, Source, Correlation and Event filter as LogOptions' do.
	Agent, Op, Source, Correlation, Event string
	// Poll is how often the branch is read (default 100ms).
	Poll time.Duration
	// OnReset is called when the branch moved to a commit that does not
	// contain the last one streamed (a reset, a rollback --hard, a forced
	// fetch), with both commits, before the mutations of the new line;
	// returning false stops the watch. Nil: resets pass silently.
	OnReset func(from, to string) bool
	// OnDropped is called after OnReset with the commits the reset took
	// off the branch (those it held when last read and no longer holds),
	// oldest first, at most DroppedLimit of them; returning false stops
	// the watch.
	OnDropped func(commits []string) bool
	// After is a cursor (see OnCursor): the watch streams what the branch
	// holds beyond the history of these commits. It replaces From.
	After []string
	// OnCursor, when set, is called with the watch's cursor after each
	// commit the watch passes, filtered out or streamed (once the
	// function it was streamed to returned): the commits whose whole
	// history has been passed. A consumer that saves it once it has handled the mutation,
	// and passes it back as After when it restarts, misses no commit.
	OnCursor func(cursor []string)
}

// DroppedLimit bounds the commits OnDropped names.
const DroppedLimit = 10000

// BlameOptions choose how Blame treats merges.
type BlameOptions struct {
	// AllParents blames a key that a merge took unchanged from a merged-in
	// branch in that branch's history (as git blame does), so it names the
	// agent that set it there; otherwise the merge is named (first
	// parents).
	AllParents bool
}

// BisectOptions say what bisect looks for, and where.
type BisectOptions struct {
	// Predicate, e.g. `docs/plan.json#risk.level == "high"` (see
	// audit.ParsePredicate).
	Predicate string
	// Good is a revision where the predicate is false ("" = before the
	// first commit); Bad one where it is true ("" = the branch head). Good
	// must be a first-parent ancestor of Bad.
	Good, Bad string
	Branch    string
}

// Validate refuses an expectation given empty: it would otherwise read as
// none, and the compare-and-swap would silently not happen.
func (wo *WriteOptions) Validate() error {
	for _, f := range []struct {
		name string
		rev  *string
	}{{"Expect", wo.Expect}, {"UnchangedSince", wo.UnchangedSince}} {
		if f.rev != nil && strings.TrimSpace(*f.rev) == "" {
			return &EmptyRevisionError{Field: f.name}
		}
	}
	return nil
}

// Validate refuses a negative limit, an unknown operation, and a key
// without its file.
func (lo *LogOptions) Validate() error {
	if lo.Limit < 0 {
		return fmt.Errorf("%w: a limit of %d mutations (0 means no limit)", ErrUsage, lo.Limit)
	}
	if lo.Key != "" && lo.File == "" {
		return fmt.Errorf("%w: a key path needs a file", ErrUsage)
	}
	return checkOp(lo.Op)
}

// Validate refuses a key without its file.
func (o *DiffOptions) Validate() error {
	if o.Key != "" && o.File == "" {
		return fmt.Errorf("%w: a key to diff needs its file", ErrUsage)
	}
	if o.MergeBase && (o.From == "" || o.To == "") {
		return fmt.Errorf("%w: a diff from the merge base needs both revisions", ErrUsage)
	}
	return nil
}

// Validate refuses an unknown operation.
func (wo *WatchOptions) Validate() error {
	if wo.From != "" && len(wo.After) > 0 {
		return fmt.Errorf("%w: a watch starts from a revision or from a cursor, not both", ErrUsage)
	}
	return checkOp(wo.Op)
}

// checkOp refuses an operation no mutation records.
func checkOp(op string) error {
	switch op {
	case "", OpCreate, OpUpdate, OpDelete, OpRename, OpMerge, OpRollback, OpRestore:
		return nil
	}
	return fmt.Errorf("%w: no operation %q (create, update, delete, rename, merge, rollback or restore)", ErrUsage, op)
}
