package main

import (
	"errors"
	"fmt"

	"github.com/aiwg/aiwg-state/cache"
	"github.com/aiwg/aiwg-state/checkpoint"
	"github.com/aiwg/aiwg-state/event"
	"github.com/aiwg/aiwg-state/frame"
	"github.com/aiwg/aiwg-state/hooks"
	"github.com/aiwg/aiwg-state/lease"
	"github.com/aiwg/aiwg-state/memory"
	"github.com/aiwg/aiwg-state/merge"
	"github.com/aiwg/aiwg-state/objects"
	"github.com/aiwg/aiwg-state/policy"
	"github.com/aiwg/aiwg-state/queue"
	"github.com/aiwg/aiwg-state/repo"
	"github.com/aiwg/aiwg-state/rlm"
	"github.com/aiwg/aiwg-state/snapshot"
	"github.com/aiwg/aiwg-state/statedoc"
	"github.com/aiwg/aiwg-state/store"
	"github.com/aiwg/aiwg-state/trajectory"
	"github.com/aiwg/aiwg-state/verbiage"
)

// adviceTable adds to a library error the hint a person at the command
// line needs: what to run next, as git's advise() does. The library's
// errors say what happened and name no command or flag (a Go program has
// neither); the hints live here, keyed by the error's type. The first
// match wins; the hint is appended to the error's one line (and to --json's
// "error").
var adviceTable = []func(error) (string, bool){
	func(err error) (string, bool) {
		var e *store.StoreMissingError
		if !errors.As(err, &e) {
			return "", false
		}
		if e.Dir == "" {
			return " (run `aiwg-state init`, or pass --store)", true
		}
		return ": check the path, or create one there with `aiwg-state init --store " + e.Dir + "`", true
	},
	func(err error) (string, bool) {
		var e *store.BranchMissingError
		if !errors.As(err, &e) {
			return "", false
		}
		return " (aiwg-state branch lists the branches; aiwg-state branch " + e.Name + " creates it)", true
	},
	func(err error) (string, bool) {
		var e *store.NotABranchError
		if !errors.As(err, &e) {
			return "", false
		}
		return ": make one of your own (aiwg-state branch NAME --from " + e.Name + ")", true
	},
	func(err error) (string, bool) {
		var e *store.RefNameTakenError
		if !errors.As(err, &e) {
			return "", false
		}
		return " (pick another name: aiwg-state branch NAME --from " + e.Name + ")", true
	},
	func(err error) (string, bool) {
		var e *store.BranchNotMergedError
		return ", or delete with --force", errors.As(err, &e)
	},
	func(err error) (string, bool) {
		var e *store.EmptyRevisionError
		if !errors.As(err, &e) {
			return "", false
		}
		return map[string]string{"Expect": " (--expect)", "UnchangedSince": " (--unchanged-since)"}[e.Field], true
	},
	func(err error) (string, bool) {
		var e *store.SigningKeyMissingError
		if !errors.As(err, &e) {
			return "", false
		}
		return " (git --git-dir " + e.Dir + " config aiwg." + e.Agent + ".signingKey KEYFILE, or --signing-key)", true
	},
	func(err error) (string, bool) {
		var e *store.MergeInProgressError
		if !errors.As(err, &e) {
			return "", false
		}
		if e.Pushing {
			return "; resolve it (aiwg-state conflicts, resolve, merge --continue) or abort it before pushing", true
		}
		return "; resolve it (aiwg-state conflicts, resolve, merge --continue) or abort it (merge --abort)", true
	},
	func(err error) (string, bool) {
		var e *merge.ConflictsError
		return "; see aiwg-state conflicts", errors.As(err, &e)
	},
	func(err error) (string, bool) {
		var e *store.BranchInUseError
		if !errors.As(err, &e) {
			return "", false
		}
		if e.Other == "" {
			return ": make another and switch to it first: aiwg-state branch NEW && aiwg-state switch NEW && aiwg-state branch -d " + e.Name, true
		}
		return ": switch to another first, then delete it: aiwg-state switch " + e.Other + " && aiwg-state branch -d " + e.Name, true
	},
	func(err error) (string, bool) {
		var e *merge.ResolvedMergeInvalidError
		return ": abort it with aiwg-state merge --abort, fix the branches, and merge again", errors.As(err, &e)
	},
	func(err error) (string, bool) {
		var e *merge.NoMergeError
		return " (aiwg-state merge BRANCH starts one)", errors.As(err, &e)
	},
	func(err error) (string, bool) {
		var e *store.StrategiesFileError
		return ": aiwg-state strategy set PATTERN STRATEGY changes them (strategy ls lists them)", errors.As(err, &e)
	},
	func(err error) (string, bool) {
		var e *store.BrokenFileError
		if !errors.As(err, &e) {
			return "", false
		}
		switch e.Kind {
		case store.BrokenQueueHead:
			return "; remove it (aiwg-state rm " + e.File + ")", true
		case store.BrokenQueueMessage, store.BrokenEvent:
			return ": remove it (aiwg-state rm " + e.File + ")", true
		case store.BrokenSchemaRules:
			return " (aiwg-state schema rm --all clears them)", true
		case store.BrokenSchemaMissing:
			return " (aiwg-state schema rm --all clears the rules)", true
		case store.BrokenSchema:
			return " (aiwg-state schema rm " + e.Name + ", or schema rm --all)", true
		case store.BrokenPolicy:
			return " (aiwg-state policy set FILE repairs it)", true
		case store.BrokenTrust:
			return " (aiwg-state trust --revoke clears it)", true
		case store.BrokenMemoryRecord:
			hint := " (aiwg-state mv " + e.File + " OTHER/PLACE.json"
			if k, ok := memory.KeyOf(e.File); ok {
				hint += ", or remove it with aiwg-state memory rm " + k.Namespace + " " + k.Kind + " " + k.ID
			}
			return hint + ")", true
		case store.BrokenManifest:
			return ": repair it with `aiwg-state config KEY VALUE`, which writes a manifest of the defaults and that setting, or commit a fixed " + e.File, true
		}
		return "", false
	},
	func(err error) (string, bool) {
		var e *store.InvalidRecordError
		if !errors.As(err, &e) {
			return "", false
		}
		verb, ok := map[string]string{lease.Dir: "lease", memory.Dir: "memory", queue.Dir: "queue", event.Dir: "event emit"}[e.Dir]
		return ": write " + e.Dir + "/ with aiwg-state " + verb, ok
	},
	func(err error) (string, bool) {
		var e *lease.RanOutError
		if !errors.As(err, &e) {
			return "", false
		}
		if e.Renew {
			return "; renew with a longer --ttl", true
		}
		return "; ask again with a longer --ttl", true
	},
	func(err error) (string, bool) {
		return ": pass --project or select one with `project select`", errors.Is(err, statedoc.ErrNoProject)
	},
	func(err error) (string, bool) {
		return " (pass --force to replace it)", errors.Is(err, hooks.ErrHookExists)
	},
	func(err error) (string, bool) {
		var e *rlm.VariableLimitError
		if !errors.As(err, &e) {
			return "", false
		}
		return "; remove some (`aiwg-state var rm NAME`) before creating " + e.Creating, true
	},
	func(err error) (string, bool) {
		var e *rlm.ChildrenRunningError
		return "; end those it gives up on (state end --status cancelled)", errors.As(err, &e)
	},
	func(err error) (string, bool) {
		var e *rlm.StateExistsError
		if !errors.As(err, &e) {
			return "", false
		}
		return ": import it beside the one there with --as " + objects.NewID(verbiage.PrefixState) + " (a new id), or make the one there what the file says with --replace (one commit)", true
	},
	func(err error) (string, bool) {
		var e *rlm.SharedChangeError
		return "; --shared restores it (theirs with it)", errors.As(err, &e)
	},
	func(err error) (string, bool) {
		var e *trajectory.ExistsError
		return " (import with --new-id for a copy)", errors.As(err, &e)
	},
	func(err error) (string, bool) {
		var e *checkpoint.LimitError
		if !errors.As(err, &e) || len(e.Oldest) == 0 {
			return "", false
		}
		return fmt.Sprintf(", e.g. `aiwg-state checkpoint rm %s` or `aiwg-state checkpoint prune --keep %d`", e.Oldest[0], checkpoint.MaxPerState-10), true
	},
	func(err error) (string, bool) {
		var e *store.MissingError
		if !errors.As(err, &e) {
			return "", false
		}
		hint, ok := map[store.MissingKind]string{
			store.MissingState:          " (create one with `aiwg-state state init --prompt TEXT`)",
			store.MissingTrajectory:     " (aiwg-state traj start makes one)",
			store.MissingSchema:         " (aiwg-state schema ls lists them)",
			store.MissingHandler:        " (aiwg-state trust --list shows them)",
			store.MissingTrustedHandler: " (aiwg-state trust --list shows them)",
		}[e.Kind]
		return hint, ok
	},
	func(err error) (string, bool) {
		var e *repo.RemoteMissingError
		return " (see `aiwg-state remote ls`)", errors.As(err, &e)
	},
	func(err error) (string, bool) {
		var e *repo.ShallowError
		return " (`aiwg-state fetch --deepen N` / git fetch --deepen N)", errors.As(err, &e)
	},
	func(err error) (string, bool) {
		var e *repo.CorruptError
		return ": run `aiwg-state fsck`", errors.As(err, &e)
	},
	func(err error) (string, bool) {
		var e *store.KeyExistsError
		if !errors.As(err, &e) {
			return "", false
		}
		if e.Key == "" {
			return " (aiwg-state get " + e.File + " reads it; put without --if-absent replaces it)", true
		}
		return " (aiwg-state get " + e.File + " " + e.Key + " reads it; set without --if-absent replaces it)", true
	},
	func(err error) (string, bool) {
		return " (aiwg-state set replaces it with a number)", errors.Is(err, store.ErrNotNumber)
	},
	func(err error) (string, bool) {
		var e *snapshot.NotFoundError
		return " (aiwg-state snapshot ls lists them; aiwg-state fetch brings a remote's)", errors.As(err, &e)
	},
	func(err error) (string, bool) {
		var e *policy.ProfileError
		if !errors.As(err, &e) {
			return "", false
		}
		return " (aiwg-state policy explain " + e.Agent + " shows what it may do)", true
	},
	func(err error) (string, bool) {
		var e *frame.LimitError
		return " (aiwg-state frame rm KEY or frame clear frees it; aiwg-state config limits.max_frame_bytes N raises it)", errors.As(err, &e)
	},
	func(err error) (string, bool) {
		var e *frame.OwnerError
		return " (use a run id of your own: --run or AIWG_RUN)", errors.As(err, &e)
	},
	func(err error) (string, bool) {
		var e *cache.LimitError
		return " (aiwg-state config limits.max_cache_bytes N raises it)", errors.As(err, &e)
	},
	func(err error) (string, bool) {
		return ": the frame and cache live in the git directory, never in a commit (aiwg-state frame, aiwg-state cache)", errors.Is(err, frame.ErrReserved)
	},
}

// withAdvice is err's message with the hint adviceTable has for it.
func withAdvice(err error) string {
	for _, advise := range adviceTable {
		if hint, ok := advise(err); ok {
			return err.Error() + hint
		}
	}
	return err.Error()
}
