package main

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/aiwg/aiwg-state/checkpoint"
	"github.com/aiwg/aiwg-state/docschema"
	"github.com/aiwg/aiwg-state/hooks"
	"github.com/aiwg/aiwg-state/lease"
	"github.com/aiwg/aiwg-state/merge"
	"github.com/aiwg/aiwg-state/repo"
	"github.com/aiwg/aiwg-state/rlm"
	"github.com/aiwg/aiwg-state/snapshot"
	"github.com/aiwg/aiwg-state/statedoc"
	"github.com/aiwg/aiwg-state/store"
	"github.com/aiwg/aiwg-state/trajectory"
)

// TestAdvice: the library's typed errors name no command or flag; the CLI
// prints each with its hint, as one line, with its exit code.
func TestAdvice(t *testing.T) {
	for _, c := range []struct {
		err  error
		says string
		code int
	}{
		{&store.KeyExistsError{File: "locks.json", Key: "deploy"}, "locks.json#deploy exists; nothing written (aiwg-state get locks.json deploy reads it; set without --if-absent replaces it)", exitStale},
		{&store.KeyExistsError{File: "claims.json"}, "document claims.json exists; nothing written (aiwg-state get claims.json reads it; put without --if-absent replaces it)", exitStale},
		{fmt.Errorf("%w: c.json#n holds a string, which cannot be incremented", store.ErrNotNumber), "not a number: c.json#n holds a string, which cannot be incremented (aiwg-state set replaces it with a number)", exitDomain},
		{&snapshot.NotFoundError{Name: "s1"}, "no snapshot s1 (aiwg-state snapshot ls lists them; aiwg-state fetch brings a remote's)", exitDomain},
		{&store.StoreMissingError{}, "no store here or in any parent directory (run `aiwg-state init`, or pass --store)", exitDomain},
		{&store.StoreMissingError{Dir: "/x/s.git"}, "no store at /x/s.git: check the path, or create one there with `aiwg-state init --store /x/s.git`", exitDomain},
		{&store.BranchMissingError{Name: "b"}, "branch b does not exist (aiwg-state branch lists the branches; aiwg-state branch b creates it)", exitDomain},
		{&store.MergeInProgressError{Branch: "main"}, "unresolved merge conflicts: main has a merge in progress; resolve it (aiwg-state conflicts, resolve, merge --continue) or abort it (merge --abort)", exitConflict},
		{&store.MergeInProgressError{Branch: "main", Pushing: true}, "unresolved merge conflicts: main has a merge in progress; resolve it (aiwg-state conflicts, resolve, merge --continue) or abort it before pushing", exitConflict},
		{&merge.ConflictsError{Conflicts: 3, Files: 2}, "unresolved merge conflicts: 3 conflict(s) in 2 file(s); see aiwg-state conflicts", exitConflict},
		{&merge.ConflictsError{Conflicts: 1, Files: 1, Left: true}, "unresolved merge conflicts: 1 conflict(s) left in 1 file(s); see aiwg-state conflicts", exitConflict},
		{&store.MissingError{Kind: store.MissingState}, "no state on this branch yet (create one with `aiwg-state state init --prompt TEXT`)", exitDomain},
		{&store.MissingError{Kind: store.MissingTrajectory, Name: "traj-1"}, "trajectory traj-1: no such trajectory on this branch (aiwg-state traj start makes one)", exitDomain},
		{&store.MissingError{Kind: store.MissingSchema, Name: "s"}, "no schema s (aiwg-state schema ls lists them)", exitDomain},
		{statedoc.ErrNoProject, "invalid path: a chat scope needs a project: pass --project or select one with `project select`", exitUsage},
		{&store.MissingError{Kind: store.MissingHandler, Name: "h"}, "no completion handler named h (aiwg-state trust --list shows them)", exitDomain},
		{&store.MissingError{Kind: store.MissingTrustedHandler, Name: "h"}, "no trusted handler named h (aiwg-state trust --list shows them)", exitDomain},
		{&store.BranchInUseError{Name: "main"}, "main is the store's only branch, and the one it is on (its HEAD): make another and switch to it first: aiwg-state branch NEW && aiwg-state switch NEW && aiwg-state branch -d main", exitDomain},
		{&store.BranchInUseError{Name: "dev", Other: "main"}, "dev is the branch the store is on (its HEAD): switch to another first, then delete it: aiwg-state switch main && aiwg-state branch -d dev", exitDomain},
		{&merge.NoMergeError{Branch: "main"}, "main has no merge in progress, so there is nothing to continue, abort or resolve (aiwg-state merge BRANCH starts one)", exitDomain},
		{&store.StrategiesFileError{Path: ".gitattributes"}, "read-only: .gitattributes is the store's merge strategies, not a document: aiwg-state strategy set PATTERN STRATEGY changes them (strategy ls lists them)", exitDomain},
		{&store.BrokenFileError{Kind: store.BrokenQueueHead, File: "queues/q/1.json", Err: fmt.Errorf("queues/q/1.json: bad: %w", store.ErrInvalidRecord)}, "queues/q/1.json: bad: invalid record; remove it (aiwg-state rm queues/q/1.json)", exitDomain},
		{&store.BrokenFileError{Kind: store.BrokenSchema, Name: "plan", Err: store.ErrInvalidRecord}, "invalid record (aiwg-state schema rm plan, or schema rm --all)", exitDomain},
		{&store.BrokenFileError{Kind: store.BrokenManifest, File: ".aiwg/store.json", Err: fmt.Errorf(".aiwg/store.json: %w (EOF)", store.ErrBadManifest)}, ".aiwg/store.json: the store's manifest is damaged (EOF): repair it with `aiwg-state config KEY VALUE`, which writes a manifest of the defaults and that setting, or commit a fixed .aiwg/store.json", exitDomain},
		{&rlm.VariableLimitError{State: "s1", Seen: 500, Limit: 500, Creating: "x"}, "over limit: s1 sees 500 variables, the limit is 500; remove some (`aiwg-state var rm NAME`) before creating x", exitDomain},
		{&rlm.ChildrenRunningError{State: "state-00000001", Running: []string{"state-00000002"}}, "state state-00000001 has children that have not completed (state-00000002): a parent sets Final once all its children complete; end those it gives up on (state end --status cancelled)", exitDomain},
		{&rlm.SharedChangeError{Checkpoint: "one", Dir: "sessions/s1"}, "invalid request: since one only sessions/s1 changed, which other states share too; --shared restores it (theirs with it)", exitUsage},
		{&trajectory.ExistsError{ID: "traj-1a2b3c4d"}, "already exists: trajectory traj-1a2b3c4d is already in the store (import with --new-id for a copy)", exitDomain},
		{fmt.Errorf("%w: %w", store.ErrLimit, &checkpoint.LimitError{State: "s1", Count: checkpoint.MaxPerState, Oldest: []string{"a", "b"}}), fmt.Sprintf("over limit: too many checkpoints: s1 has %d checkpoints, the limit is %d; remove old ones first (oldest: a, b), e.g. `aiwg-state checkpoint rm a` or `aiwg-state checkpoint prune --keep %d`", checkpoint.MaxPerState, checkpoint.MaxPerState, checkpoint.MaxPerState-10), exitDomain},
		{&store.BrokenFileError{Kind: store.BrokenMemoryRecord, File: "memory/ns/k/x.json", Err: store.ErrInvalidRecord}, "invalid record (aiwg-state mv memory/ns/k/x.json OTHER/PLACE.json, or remove it with aiwg-state memory rm ns k x)", exitDomain},
		{&store.InvalidRecordError{Dir: "leases", Err: fmt.Errorf("leases/x.json: bad: %w", store.ErrInvalidRecord)}, "leases/x.json: bad: invalid record: write leases/ with aiwg-state lease", exitDomain},
		{&store.InvalidRecordError{Dir: "queues", Err: fmt.Errorf("queues/q/x.json: bad: %w", store.ErrInvalidRecord)}, "queues/q/x.json: bad: invalid record: write queues/ with aiwg-state queue", exitDomain},
		{&lease.RanOutError{Resource: "r", TTL: time.Millisecond}, "the lease on r ran out (ttl 1ms) before its commit landed: the branch was busy; ask again with a longer --ttl", exitLock},
		{&lease.RanOutError{Resource: "r", TTL: time.Second, Renew: true}, "the lease on r ran out (ttl 1s) before its commit landed: the branch was busy; renew with a longer --ttl", exitLock},
		{&merge.ResolvedMergeInvalidError{Err: fmt.Errorf("plan.json: %w", docschema.ErrInvalid)}, "plan.json: " + docschema.ErrInvalid.Error() + " (the merge as resolved breaks a schema): abort it with aiwg-state merge --abort, fix the branches, and merge again", exitDomain},
		{fmt.Errorf("/s.git/hooks/pre-receive: %w", hooks.ErrHookExists), "/s.git/hooks/pre-receive: a hook is already installed (pass --force to replace it)", exitUnexpected},
		{&store.NotABranchError{Name: "origin/main", Is: "a remote-tracking branch (fetch moves it)"}, "origin/main is a remote-tracking branch (fetch moves it), not a branch to write: make one of your own (aiwg-state branch NAME --from origin/main)", exitDomain},
		{&store.RefNameTakenError{Name: "v1", Is: "a tag"}, "v1 is already a tag, which a branch of that name would hide from reads and writes that name it (pick another name: aiwg-state branch NAME --from v1)", exitDomain},
		{&store.BranchNotMergedError{Name: "dev", Head: "main"}, "read-only: dev has commits that main does not contain; merge it first, or delete with --force", exitDomain},
		{&store.BranchNotMergedError{Name: "dev", Merging: true}, "unresolved merge conflicts: dev has a merge in progress; resolve or abort it first, or delete with --force", exitConflict},
		{&store.EmptyRevisionError{Field: "Expect"}, "invalid request: Expect is empty: name the revision to compare with (an unset variable?), or leave it out (--expect)", exitUsage},
		{&store.SigningKeyMissingError{Agent: "a", Dir: "/s.git"}, `the policy requires agent "a"'s commits to be signed, and no signing key is configured for it (git --git-dir /s.git config aiwg.a.signingKey KEYFILE, or --signing-key)`, exitDomain},
		{&repo.RemoteMissingError{Name: "o"}, `remote "o": not found (see ` + "`aiwg-state remote ls`)", exitDomain},
		{&repo.ShallowError{Rev: "HEAD~9"}, "HEAD~9 is beyond this shallow clone's history (`aiwg-state fetch --deepen N` / git fetch --deepen N)", exitDomain},
		{&repo.CorruptError{File: "objects/pack/p.idx", Reason: "bad checksum"}, "the store's objects/pack/p.idx is damaged (bad checksum): run `aiwg-state fsck`", exitDomain},
	} {
		if strings.Contains(c.err.Error(), "aiwg-state") || strings.Contains(c.err.Error(), "--") {
			t.Errorf("%T names a command or flag: %s", c.err, c.err)
		}
		wrapped := fmt.Errorf("read: %w", c.err)
		if got := withAdvice(wrapped); got != "read: "+c.says {
			t.Errorf("%T:\n got %s\nwant read: %s", c.err, got, c.says)
		}
		if got := exitCode(wrapped); got != c.code {
			t.Errorf("%T: exit %d, want %d", c.err, got, c.code)
		}
	}
	// A state imported again: the hint offers a fresh id for --as.
	err := &rlm.StateExistsError{State: "state-00000001"}
	if strings.Contains(err.Error(), "--") {
		t.Errorf("%T names a flag: %s", err, err)
	}
	got := withAdvice(err)
	if want := "state state-00000001 is already in this store: import it beside the one there with --as state-"; !strings.HasPrefix(got, want) || !strings.HasSuffix(got, " (a new id), or make the one there what the file says with --replace (one commit)") {
		t.Errorf("StateExistsError: %s", got)
	}
	if exitCode(err) != exitDomain {
		t.Errorf("StateExistsError: exit %d", exitCode(err))
	}
}
