package main

import (
	"errors"
	"fmt"

	"github.com/aiwg/aiwg-state/checkpoint"
	"github.com/aiwg/aiwg-state/memory"
	"github.com/aiwg/aiwg-state/merge"
	"github.com/aiwg/aiwg-state/repo"
	"github.com/aiwg/aiwg-state/store"
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
		case store.BrokenQueueMessage:
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
		var e *store.VariableLimitError
		if !errors.As(err, &e) {
			return "", false
		}
		return "; remove some (`aiwg-state var rm NAME`) before creating " + e.Creating, true
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
