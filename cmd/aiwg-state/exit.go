package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/aiwg/aiwg-state/internal/exitcode"
)

// Exit codes (the state document's codes where they apply); the table
// that maps errors to them is internal/exitcode's, which the MCP server
// reads too.
const (
	exitOK         = exitcode.OK
	exitUnexpected = exitcode.Unexpected
	exitUsage      = exitcode.Usage    // invalid key, path, value or usage
	exitDomain     = exitcode.Domain   // not found, limits, read-only, invalid state, no permission to write
	exitConflict   = exitcode.Conflict // unresolved conflict, in-flight guard
	exitLock       = exitcode.Lock     // lock failure
	exitStale      = exitcode.Stale    // concurrent update (--expect mismatch)
)

// usageError marks errors of the command line itself.
type usageError struct{ msg string }

func (e usageError) Error() string { return e.msg }

func usagef(format string, args ...any) error { return usageError{fmt.Sprintf(format, args...)} }

// exitCode is the one place errors become exit codes.
func exitCode(err error) int {
	if err == nil {
		return exitOK
	}
	var ue usageError
	if errors.As(err, &ue) {
		return exitUsage
	}
	code, _ := exitcode.Of(err)
	return code
}

// reportError prints one line (or, with --json, one object) for err.
func reportError(w io.Writer, err error, asJSON bool) {
	code := exitCode(err)
	msg := oneLine(withAdvice(err))
	if asJSON {
		details := exitcode.Details(err)
		b, _ := json.Marshal(map[string]any{"error": msg, "code": code, "details": details})
		fmt.Fprintln(w, string(b))
		return
	}
	fmt.Fprintln(w, "aiwg-state: "+msg)
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }
