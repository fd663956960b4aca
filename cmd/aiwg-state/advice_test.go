package main

import (
	"fmt"
	"strings"
	"testing"

	"github.com/aiwg/aiwg-state/checkpoint"
	"github.com/aiwg/aiwg-state/docschema"
	"github.com/aiwg/aiwg-state/merge"
	"github.com/aiwg/aiwg-state/repo"
	"github.com/aiwg/aiwg-state/store"
)

// TestAdvice: the library's typed errors name no command or flag; the CLI
// prints each with its hint, as one line, with its exit code.
func TestAdvice(t *testing.T) {
	for _, c := range []struct {
		err  error
		says string
		code int
	}{
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
		{&store.MissingError{Kind: store.MissingHandler, Name: "h"}, "no completion handler named h (aiwg-state trust --list shows them)", exitDomain},
		{&store.MissingError{Kind: store.MissingTrustedHandler, Name: "h"}, "no trusted handler named h (aiwg-state trust --list shows them)", exitDomain},
		{&store.BranchInUseError{Name: "main"}, "main is the store's only branch, and the one it is on (its HEAD): make another and switch to it first: aiwg-state branch NEW && aiwg-state switch NEW && aiwg-state branch -d main", exitDomain},
		{&store.BranchInUseError{Name: "dev", Other: "main"}, "dev is the branch the store is on (its HEAD): switch to another first, then delete it: aiwg-state switch main && aiwg-state branch -d dev", exitDomain},
		{&merge.NoMergeError{Branch: "main"}, "main has no merge in progress, so there is nothing to continue, abort or resolve (aiwg-state merge BRANCH starts one)", exitDomain},
		{&store.StrategiesFileError{Path: ".gitattributes"}, "read-only: .gitattributes is the store's merge strategies, not a document: aiwg-state strategy set PATTERN STRATEGY changes them (strategy ls lists them)", exitDomain},
		{&store.BrokenFileError{Kind: store.BrokenQueueHead, File: "queues/q/1.json", Err: fmt.Errorf("queues/q/1.json: bad: %w", store.ErrInvalidRecord)}, "queues/q/1.json: bad: invalid record; remove it (aiwg-state rm queues/q/1.json)", exitDomain},
		{&store.BrokenFileError{Kind: store.BrokenSchema, Name: "plan", Err: store.ErrInvalidRecord}, "invalid record (aiwg-state schema rm plan, or schema rm --all)", exitDomain},
		{&store.BrokenFileError{Kind: store.BrokenManifest, File: ".aiwg/store.json", Err: fmt.Errorf(".aiwg/store.json: %w (EOF)", store.ErrBadManifest)}, ".aiwg/store.json: the store's manifest is damaged (EOF): repair it with `aiwg-state config KEY VALUE`, which writes a manifest of the defaults and that setting, or commit a fixed .aiwg/store.json", exitDomain},
		{&store.VariableLimitError{State: "s1", Seen: 500, Limit: 500, Creating: "x"}, "over limit: s1 sees 500 variables, the limit is 500; remove some (`aiwg-state var rm NAME`) before creating x", exitDomain},
		{fmt.Errorf("%w: %w", store.ErrLimit, &checkpoint.LimitError{State: "s1", Count: checkpoint.MaxPerState, Oldest: []string{"a", "b"}}), fmt.Sprintf("over limit: too many checkpoints: s1 has %d checkpoints, the limit is %d; remove old ones first (oldest: a, b), e.g. `aiwg-state checkpoint rm a` or `aiwg-state checkpoint prune --keep %d`", checkpoint.MaxPerState, checkpoint.MaxPerState, checkpoint.MaxPerState-10), exitDomain},
		{&store.BrokenFileError{Kind: store.BrokenMemoryRecord, File: "memory/ns/k/x.json", Err: store.ErrInvalidRecord}, "invalid record (aiwg-state mv memory/ns/k/x.json OTHER/PLACE.json, or remove it with aiwg-state memory rm ns k x)", exitDomain},
		{&merge.ResolvedMergeInvalidError{Err: fmt.Errorf("plan.json: %w", docschema.ErrInvalid)}, "plan.json: " + docschema.ErrInvalid.Error() + " (the merge as resolved breaks a schema): abort it with aiwg-state merge --abort, fix the branches, and merge again", exitDomain},
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
}
