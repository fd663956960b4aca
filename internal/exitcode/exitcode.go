// Package exitcode is the one table that turns the library's errors into
// the CLI's exit codes and a kind an agent can branch on. The CLI
// (cmd/aiwg-state/exit.go) and the MCP server (package mcp) both read it,
// so an error has the same code whichever way it is reached.
package exitcode

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"strings"
	"time"

	"github.com/aiwg/aiwg-state/cache"
	"github.com/aiwg/aiwg-state/docschema"
	"github.com/aiwg/aiwg-state/event"
	"github.com/aiwg/aiwg-state/frame"
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
	OK         = 0
	Unexpected = 1
	Usage      = 2 // invalid key, path, value or usage
	Domain     = 3 // not found, limits, read-only, invalid state, no permission to write
	Conflict   = 4 // unresolved conflict, in-flight guard
	Lock       = 5 // lock failure
	Stale      = 6 // concurrent update (--expect mismatch)
)

// Kinds name what went wrong in one word, finer than the code: an agent
// retries on "stale", backs off on "held", and reports "denied".
const (
	KindUnexpected = "unexpected"
	KindUsage      = "usage"
)

// table maps sentinel errors to exit codes and kinds; the first match
// wins, so more specific sentinels come first.
var table = []struct {
	err  error
	code int
	kind string
}{
	{store.ErrKeyExists, Stale, "key_exists"}, // before ErrStale, which it is: a set-if-absent lost
	{repo.ErrStale, Stale, "stale"},
	{repo.ErrLocked, Lock, "locked"},
	{lease.ErrHeld, Lock, "held"},
	{lease.ErrNotHolder, Domain, "not_holder"},
	{lease.ErrInvalid, Usage, "invalid"},
	{frame.ErrReserved, Domain, "reserved"}, // before ErrInvalidRecord, which it is: a disposable tier's path committed
	{store.ErrInvalidRecord, Domain, "invalid_record"},
	{memory.ErrInvalid, Usage, "invalid"},
	{memory.ErrNotList, Domain, "not_list"},
	{queue.ErrInvalid, Usage, "invalid"},
	{queue.ErrEmpty, Domain, "empty"},
	{event.ErrInvalid, Usage, "invalid"},
	{frame.ErrInvalid, Usage, "invalid"},
	{cache.ErrInvalid, Usage, "invalid"},
	{docschema.ErrInvalid, Domain, "schema"},
	{docschema.ErrRules, Usage, "invalid"},
	{policy.ErrInvalid, Domain, "invalid_policy"}, // a policy that does not parse: refused data, whoever wrote it
	{statedoc.ErrInFlight, Conflict, "in_flight"}, {statedoc.ErrInvalidState, Domain, "invalid_state"}, {statedoc.ErrExists, Domain, "exists"},
	{store.ErrBadManifest, Domain, "bad_manifest"}, // before ErrInvalidJSON: the store's state, not the caller's input
	{rlm.ErrInvalidState, Domain, "invalid_state"}, // rlm: a state document that breaks the schema
	{verbiage.ErrInvalidPath, Usage, "invalid_path"},
	{verbiage.ErrInvalidKey, Usage, "invalid_key"},
	{verbiage.ErrInvalidName, Usage, "invalid_name"},
	{verbiage.ErrInvalidPattern, Usage, "invalid_pattern"},
	{repo.ErrInvalidName, Usage, "invalid_name"},
	{objects.ErrInvalidJSON, Usage, "invalid_json"},
	{store.ErrUsage, Usage, KindUsage},
	{jsonmerge.ErrUnknownStrategy, Usage, "unknown_strategy"},
	{store.ErrConflict, Conflict, "conflict"},
	{store.ErrDenied, Domain, "denied"},
	{store.ErrSigningKey, Domain, "signing_key"}, // a signing key that cannot sign
	{hooks.ErrRefused, Domain, "refused"},
	{hooks.ErrUnhealthy, Domain, "unhealthy"},
	{trajectory.ErrInvalid, Domain, "invalid_trajectory"},
	{store.ErrLimit, Domain, "limit"},
	{store.ErrNotNumber, Domain, "not_number"},
	{store.ErrExists, Domain, "exists"},
	{store.ErrReadOnly, Domain, "read_only"},
	{objects.ErrNotContainer, Domain, "not_container"},
	{objects.ErrNotFound, Domain, "not_found"},
	{repo.ErrCorrupt, Domain, "corrupt"}, // before ErrNotFound: a miss explained by damage is damage
	{repo.ErrUnsupported, Domain, "unsupported"},
	{repo.ErrNotFound, Domain, "not_found"},
	{repo.ErrObjectMissing, Domain, "object_missing"},
	{repo.ErrShallow, Domain, "shallow"},
	{repo.ErrNotStore, Domain, "not_store"},
	{repo.ErrDetached, Domain, "detached"},
	{fs.ErrExist, Domain, "exists"}, // a remote, a clone's directory: as a second branch of one name
	{repo.ErrPermission, Domain, "permission"},
	{fs.ErrPermission, Domain, "permission"}, // the same from outside repo/: a file this user may not read or write
}

// Of is err's exit code and kind: OK and "" for nil, Unexpected and
// "unexpected" for an error of no known sentinel.
func Of(err error) (code int, kind string) {
	if err == nil {
		return OK, ""
	}
	for _, e := range table {
		if errors.Is(err, e.err) {
			return e.code, e.kind
		}
	}
	return Unexpected, KindUnexpected
}

// Details are the fields of a typed error an agent acts on: the head a
// stale write lost to, who holds a lease and until when, the object a
// partial clone lacks, the schema a document breaks. Empty when err
// carries none.
func Details(err error) map[string]any {
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
	var pfe *policy.ProfileError
	if errors.As(err, &pfe) {
		details["profile"], details["rule"], details["agent"] = pfe.Profile, pfe.Rule, pfe.Agent
		if pfe.Target != "" {
			details["target"] = pfe.Target
		}
	}
	var sv *docschema.Violation
	if errors.As(err, &sv) {
		details["file"], details["schema"] = sv.File, sv.Schema
		var ve *docschema.ValidationError
		if errors.As(err, &ve) {
			details["field"], details["reason"] = ve.Field, ve.Reason
		}
	}
	return details
}

// UsageError is a command line that does not read (exit 2), in the
// programs beside aiwg-state that parse their own flags.
type UsageError string

func (e UsageError) Error() string { return string(e) }

// Report prints err as aiwg-state does, one line after the program's
// name, and returns its exit code (0 for no error).
func Report(w io.Writer, program string, err error) int {
	if err == nil {
		return OK
	}
	code, _ := Of(err)
	var ue UsageError
	if errors.As(err, &ue) {
		code = Usage
	}
	fmt.Fprintln(w, program+": "+strings.Join(strings.Fields(err.Error()), " "))
	return code
}
