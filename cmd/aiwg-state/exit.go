package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"strings"
	"time"

	"github.com/aiwg/aiwg-state/docschema"
	"github.com/aiwg/aiwg-state/hooks"
	"github.com/aiwg/aiwg-state/lease"
	"github.com/aiwg/aiwg-state/memory"
	"github.com/aiwg/aiwg-state/merge/jsonmerge"
	"github.com/aiwg/aiwg-state/objects"
	"github.com/aiwg/aiwg-state/policy"
	"github.com/aiwg/aiwg-state/queue"
	"github.com/aiwg/aiwg-state/repo"
	"github.com/aiwg/aiwg-state/rlm"
	"github.com/aiwg/aiwg-state/statedoc"
	"github.com/aiwg/aiwg-state/store"
	"github.com/aiwg/aiwg-state/trajectory"
	"github.com/aiwg/aiwg-state/verbiage"
)

// Exit codes (the state document's codes where they apply).
const (
	exitOK         = 0
	exitUnexpected = 1
	exitUsage      = 2 // invalid key, path, value or usage
	exitDomain     = 3 // not found, limits, read-only, invalid state, no permission to write
	exitConflict   = 4 // unresolved conflict, in-flight guard
	exitLock       = 5 // lock failure
	exitStale      = 6 // concurrent update (--expect mismatch)
)

// usageError marks errors of the command line itself.
type usageError struct{ msg string }

func (e usageError) Error() string { return e.msg }

func usagef(format string, args ...any) error { return usageError{fmt.Sprintf(format, args...)} }

// exitTable maps sentinel errors to exit codes; the first match wins, so
// more specific sentinels come first.
var exitTable = []struct {
	err  error
	code int
}{
	{repo.ErrStale, exitStale},
	{repo.ErrLocked, exitLock},
	{lease.ErrHeld, exitLock},
	{lease.ErrNotHolder, exitDomain},
	{lease.ErrInvalid, exitUsage},
	{store.ErrInvalidRecord, exitDomain},
	{memory.ErrInvalid, exitUsage},
	{memory.ErrNotList, exitDomain},
	{queue.ErrInvalid, exitUsage},
	{queue.ErrEmpty, exitDomain},
	{docschema.ErrInvalid, exitDomain},
	{docschema.ErrRules, exitUsage},
	{policy.ErrInvalid, exitDomain}, // a policy that does not parse: refused data, whoever wrote it
	{statedoc.ErrInFlight, exitConflict}, {statedoc.ErrInvalidState, exitDomain}, {statedoc.ErrExists, exitDomain},
	{store.ErrBadManifest, exitDomain}, // before ErrInvalidJSON: the store's state, not the caller's input
	{rlm.ErrInvalidState, exitDomain},  // rlm: a state document that breaks the schema
	{verbiage.ErrInvalidPath, exitUsage},
	{verbiage.ErrInvalidKey, exitUsage},
	{verbiage.ErrInvalidName, exitUsage},
	{verbiage.ErrInvalidPattern, exitUsage},
	{repo.ErrInvalidName, exitUsage},
	{objects.ErrInvalidJSON, exitUsage},
	{store.ErrUsage, exitUsage},
	{jsonmerge.ErrUnknownStrategy, exitUsage},
	{store.ErrConflict, exitConflict},
	{store.ErrDenied, exitDomain},
	{store.ErrSigningKey, exitDomain}, // a signing key that cannot sign
	{hooks.ErrRefused, exitDomain},
	{trajectory.ErrInvalid, exitDomain},
	{store.ErrLimit, exitDomain},
	{store.ErrExists, exitDomain},
	{store.ErrReadOnly, exitDomain},
	{objects.ErrNotContainer, exitDomain},
	{objects.ErrNotFound, exitDomain},
	{repo.ErrCorrupt, exitDomain}, // before ErrNotFound: a miss explained by damage is damage
	{repo.ErrUnsupported, exitDomain},
	{repo.ErrNotFound, exitDomain},
	{repo.ErrObjectMissing, exitDomain},
	{repo.ErrShallow, exitDomain},
	{repo.ErrNotStore, exitDomain},
	{repo.ErrDetached, exitDomain},
	{fs.ErrExist, exitDomain}, // a remote, a clone's directory: as a second branch of one name
	{repo.ErrPermission, exitDomain},
	{fs.ErrPermission, exitDomain}, // the same from outside repo/: a file this user may not read or write
}

// exitCode is the one place errors become exit codes.
func exitCode(err error) int {
	if err == nil {
		return exitOK
	}
	var ue usageError
	if errors.As(err, &ue) {
		return exitUsage
	}
	for _, e := range exitTable {
		if errors.Is(err, e.err) {
			return e.code
		}
	}
	return exitUnexpected
}

// reportError prints one line (or, with --json, one object) for err.
func reportError(w io.Writer, err error, asJSON bool) {
	code := exitCode(err)
	msg := oneLine(withAdvice(err))
	if asJSON {
		details := map[string]any{}
		var se *repo.StaleError
		if errors.As(err, &se) {
			details["ref"] = se.Ref
			details["current"] = se.Current.String()
			details["expected"] = se.Expected.String()
		}
		var he *lease.HeldError
		if errors.As(err, &he) {
			details["resource"] = he.Resource
			for k, v := range map[string]string{"holder": he.Holder, "lease": he.Lease, "type": string(he.Type), "waiter": he.Waiter, "request": he.Request} {
				if v != "" {
					details[k] = v
				}
			}
			details["until"] = he.Until.UTC().Format(time.RFC3339Nano)
		}
		var me *repo.MissingObjectError
		if errors.As(err, &me) {
			details["object"] = me.Hash.String()
			details["partial_clone"] = me.Promisor
			if me.Remote != "" {
				details["remote"] = me.Remote
			}
		}
		var pe *repo.PermissionError
		if errors.As(err, &pe) {
			details["directory"] = pe.Dir
		}
		var she *repo.ShallowError
		if errors.As(err, &she) {
			details["shallow"] = true
			details["revision"] = she.Rev
		}
		var sv *docschema.Violation
		if errors.As(err, &sv) {
			details["file"], details["schema"] = sv.File, sv.Schema
			var ve *docschema.ValidationError
			if errors.As(err, &ve) {
				details["field"], details["reason"] = ve.Field, ve.Reason
			}
		}
		b, _ := json.Marshal(map[string]any{"error": msg, "code": code, "details": details})
		fmt.Fprintln(w, string(b))
		return
	}
	fmt.Fprintln(w, "aiwg-state: "+msg)
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }
