// Command aiwg-state-client runs an aiwg-state command line through the
// store's server (aiwg-state serve), and runs aiwg-state itself when no
// server is running or the server leaves the command to it. It takes
// exactly aiwg-state's arguments and gives the same output and exit
// codes; it is only faster: it links neither the store nor the CLI, so
// it starts in about the time of an empty Go program, and the server
// keeps the store open.
//
//	aiwg-state serve &
//	aiwg-state-client set plan.json risk.level '"high"' --agent planner
//
// It finds the store as aiwg-state does (--store, $AIWG_STATE_STORE, the
// nearest .aiwg/state.git), and the server's socket in it. aiwg-state is
// looked for beside this program, then on $PATH.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"syscall"
	"unicode/utf8"

	"github.com/aiwg/aiwg-state/internal/sibling"
	"github.com/aiwg/aiwg-state/internal/storedir"
	"github.com/aiwg/aiwg-state/serve"
)

// exitUnexpected is aiwg-state's code for what fits no other (docs/exit-codes.md).
const exitUnexpected = 1

func main() {
	os.Exit(run(os.Args))
}

func run(args []string) int {
	// Without a working directory (deleted under us), aiwg-state may
	// still run the command (with an absolute --store).
	if wd, err := os.Getwd(); err == nil {
		if code, ran := forward(args, wd); ran {
			return code
		}
	}
	// Nothing ran: aiwg-state runs the command itself, in this process's
	// place, so its exit status, signals and streams are the caller's.
	bin, err := findCLI()
	if err != nil {
		return fail(args, exitUnexpected, "%v", err)
	}
	err = syscall.Exec(bin, append([]string{"aiwg-state"}, args[1:]...), os.Environ())
	return fail(args, exitUnexpected, "running %s: %v", bin, err)
}

// forward runs the command through the store's server. ran is false when
// nothing ran there: no store, no server, or a command the server leaves
// to its client.
func forward(args []string, wd string) (code int, ran bool) {
	if store := storedir.ForArgs(args[1:], wd); store != "" {
		// No signal handling: a client killed by Ctrl-C dies of it, as
		// aiwg-state would, and the connection's end cancels the
		// command on the server.
		code, err := serve.ForwardProcess(context.Background(), args, wd, store)
		switch {
		case err == nil:
			return code, true
		case errors.Is(err, serve.ErrLost):
			return fail(args, exitUnexpected, "%v; the command may have run in part or whole (see aiwg-state log)", err), true
		case !errors.Is(err, serve.ErrNoServer) && !errors.Is(err, serve.ErrDeclined):
			return fail(args, exitUnexpected, "%v", err), true
		}
	}
	return 0, false
}

// findCLI finds aiwg-state beside this program (go install puts both in
// one directory), then on $PATH.
func findCLI() (string, error) {
	if p := sibling.Find("aiwg-state"); p != "" {
		return p, nil
	}
	return "", errors.New("no server runs for this store, and no aiwg-state program is beside this one or on $PATH to run the command (go install ./cmd/...)")
}

// fail reports an error as aiwg-state does: one line on stderr, a JSON
// object with --json.
func fail(args []string, code int, format string, a ...any) int {
	msg := strings.Join(strings.Fields(fmt.Sprintf(format, a...)), " ")
	for _, arg := range args[1:] {
		if arg == "--" {
			break
		}
		if arg == "--json" || arg == "-json" || arg == "--json=true" {
			fmt.Fprintf(os.Stderr, "{\"code\":%d,\"details\":{},\"error\":%s}\n", code, jsonString(msg))
			return code
		}
	}
	fmt.Fprintln(os.Stderr, "aiwg-state-client: "+msg)
	return code
}

// jsonString quotes s as a JSON string. (encoding/json is a tenth of this
// program's start, for one message.)
func jsonString(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r < 0x20 || r == utf8.RuneError:
			fmt.Fprintf(&b, "\\u%04x", r)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}
