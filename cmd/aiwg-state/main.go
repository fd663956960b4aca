// Command aiwg-state is the CLI of aiwg-state, a versioned state store for
// AI agents kept in a git repository. It is a thin layer over the
// aiwgstate package: flag parsing, output formats and exit codes.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime/debug"
	"strings"
	"syscall"

	"github.com/aiwg/aiwg-state/hooks"
	"github.com/aiwg/aiwg-state/internal/storedir"
	"github.com/aiwg/aiwg-state/serve"
	"github.com/urfave/cli/v2"
)

func main() {
	if os.Getenv("GOGC") == "" {
		// A command lives milliseconds: the collection the default
		// setting starts at a 4 MB heap (reached by reading one large
		// tree of a big store) costs more than the memory it frees, which
		// the exit frees anyway. At 200 the first comes at 8 MB, and long
		// commands (merge, export, analyze) collect at three times their
		// live heap rather than twice (merge of 1,000 changes: 33 MB
		// peak, against 28 MB at 100 and 38 MB at 400).
		debug.SetGCPercent(200)
	}
	growStack()
	args := hookArgs(os.Args)
	if code, ran := forward(args); ran {
		os.Exit(code)
	}
	os.Exit(run(args, os.Stdin, os.Stdout, os.Stderr))
}

// hookArgs reads the command line of a pre-receive hook installed in the
// direct form (its first line "#!BINARY hooks-run-pre-receive": the kernel
// adds the hook's path) as `hooks run pre-receive`.
func hookArgs(args []string) []string {
	if len(args) == 3 && args[1] == hooks.DirectArg {
		return []string{args[0], "hooks", "run", "pre-receive"}
	}
	return args
}

// forward runs the command line through the store's server when one
// runs (aiwg-state serve), as aiwg-state-client does: the server keeps
// the store open, and writes of many processes to one branch are
// committed there as a group, where processes that each wrote their own
// commit would take the branch's lock in turn. ran is false when nothing
// ran there: no store, no server, a command the server leaves to its
// client, or AIWG_STATE_NO_SERVE set; this process then runs it.
func forward(args []string) (code int, ran bool) {
	if os.Getenv("AIWG_STATE_NO_SERVE") != "" {
		return 0, false
	}
	wd, err := os.Getwd()
	if err != nil {
		return 0, false
	}
	store := storedir.ForArgs(args[1:], wd)
	if store == "" {
		return 0, false
	}
	if _, err := os.Lstat(socketPath(store)); err != nil {
		return 0, false // the usual case, at the cost of one stat
	}
	code, err = serve.ForwardProcess(context.Background(), args, wd, store)
	switch {
	case err == nil:
		return code, true
	case errors.Is(err, serve.ErrNoServer), errors.Is(err, serve.ErrDeclined):
		return 0, false
	case errors.Is(err, serve.ErrLost):
		fmt.Fprintf(os.Stderr, "aiwg-state: %v; the command may have run in part or whole (see aiwg-state log)\n", err)
	default:
		fmt.Fprintf(os.Stderr, "aiwg-state: %v\n", err)
	}
	return exitUnexpected, true
}

// growStack grows the main goroutine's stack once, while it is shallow,
// to the size a command reaches anyway. Grown step by step from 8 KB, each
// doubling copied and re-walked the deeper stack of the moment: 6% of a
// set's CPU.
//
//go:noinline
func growStack() {
	var pad [256 << 10]byte
	pad[len(pad)-1] = 1
	keep(pad[:])
}

//go:noinline
func keep([]byte) {}

// run executes one command line and returns its exit code. Tests and
// quickstart call it in-process.
func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return runFor(ctx, processInvocation(), args, stdin, stdout, stderr)
}

// runFor executes one command line for inv: the CLI's own process, or a
// server's client.
func runFor(ctx context.Context, inv *invocation, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	app := newAppFor(commandName(args), stdin, stdout, stderr)
	if inv.client != nil {
		inv.useEnv(app.Commands)
		// Help (which a server leaves to the client) goes through
		// urfave/cli's package-level flag and command, which concurrent
		// runs would write at once.
		app.HideHelp, app.HideHelpCommand = true, true
		hideHelp(app.Commands)
	}
	ctx = withInvocation(ctx, inv)
	if len(args) > 1 && !strings.HasPrefix(args[1], "-") && args[1] != "help" && findCommand(app.Commands, args[1]) == nil {
		err := usagef("unknown command %q (aiwg-state --help lists them)", args[1])
		reportError(stderr, err, wantsJSON(args))
		return exitCode(err)
	}
	ordered, err := reorderArgs(app, args)
	if err == nil {
		err = app.RunContext(ctx, ordered)
	}
	if err == nil {
		if inv.anonymous.Load() && inv.firstAnonymous() {
			// Not silent: a history of "anonymous" writes tells an
			// auditor nothing, and the fix is one command.
			noteAnonymous(stderr, wantsJSON(args))
		}
		return exitOK
	}
	reportError(stderr, err, wantsJSON(args))
	return exitCode(err)
}

// noteAnonymous tells, once a process, that writes are anonymous; with
// --json as a {"warning"} object, as session.warn does.
func noteAnonymous(w io.Writer, asJSON bool) {
	msg := `this write is authored by "anonymous": name the agent with --agent NAME or AIWG_AGENT=NAME, or once for this store with aiwg-state agent start NAME`
	if asJSON {
		printJSON(w, map[string]string{"warning": msg})
		return
	}
	fmt.Fprintln(w, "aiwg-state: warning: "+msg)
}

func wantsJSON(args []string) bool {
	for _, a := range args[1:] {
		if a == "--" {
			break
		}
		if a == "--json" || a == "-json" || a == "--json=true" {
			return true
		}
	}
	return false
}

const appHelp = `aiwg-state keeps AI agents' working state (variables, JSON documents,
memory records, trajectories) as canonical JSON files in a dedicated git
repository. Every mutation is one commit: the author is the agent, the
trailers carry the mutation id, operation, path, source and correlation id,
so the history is the audit log and plain git reads it too.

Start here:
   aiwg-state quickstart            # a guided tour on a scratch store
   aiwg-state init                  # create .aiwg/state.git here
   aiwg-state set plan.json risk.level '"high"' --agent planner
   aiwg-state get plan.json risk.level
   aiwg-state log plan.json
   aiwg-state serve &               # then aiwg-state-client CMD …: the same commands, faster

Key paths take the dot form (risk.level, items.0.id) or the slash form
(risk/level); a backslash escapes a dot or slash inside a key (a\.b).
Values are JSON; --string takes raw text; - reads standard input.
Every command takes --json for machine-readable output.

Exit codes: 0 ok, 1 unexpected, 2 invalid key/path/value or usage,
3 not found / invalid state / over a limit, 4 unresolved conflict,
5 lock failure or lease held, 6 concurrent update (--expect mismatch).

Environment: AIWG_STATE_STORE (the store), AIWG_AGENT (the agent),
NO_COLOR, AIWG_PAGER (else GIT_PAGER, PAGER; default less -FRX),
AIWG_STATE_NO_SERVE (run here even when aiwg-state serve runs: by
default a command goes to the store's server when one runs).
Completion: source <(aiwg-state completion bash), or zsh, fish.`

// commandGroups build the commands, in the order help lists them.
func commandGroups() []func() []*cli.Command {
	return []func() []*cli.Command{
		storeCommands,
		documentCommands,
		historyCommands,
		mergeCommands,
		remoteCommands,
		rlmCommands,
		stateDocCommands,
		trajCommands,
		leaseCommands,
		memoryCommands,
		queueCommands,
		tierCommands,
		schemaCommands,
		strategyCommands,
		snapshotCommands,
		func() []*cli.Command { return []*cli.Command{serveCommand()} },
	}
}

// newApp is the CLI with every command.
func newApp(stdin io.Reader, stdout, stderr io.Writer) *cli.App {
	var all []*cli.Command
	for _, group := range commandGroups() {
		all = append(all, group()...)
	}
	return appWith(all, stdin, stdout, stderr)
}

// commandName is the command a command line names: its first argument, or
// the first after leading flags when each of them is one every reading or
// writing command shares (--store, --json, --agent…), so that whether it
// takes a value is known without building the commands. "" otherwise.
func commandName(args []string) string {
	shared := map[string]bool{} // name → takes a value
	for _, f := range append(readFlags(), writeFlags()...) {
		isBool := isBoolFlag(f)
		for _, n := range f.Names() {
			shared[n] = !isBool
		}
	}
	for i := 1; i < len(args); i++ {
		a := args[i]
		if !strings.HasPrefix(a, "-") {
			return a
		}
		name, _, hasEq := strings.Cut(strings.TrimLeft(a, "-"), "=")
		takesValue, ok := shared[name]
		if !ok || a == "--" {
			return ""
		}
		if takesValue && !hasEq {
			i++
		}
	}
	return ""
}

// newAppFor is the CLI for a command line naming command name. When name
// is a command, only its group is built: building every command's flags
// and help took about a millisecond of each command's start, more than
// some commands' work. Anything else (help, a typo, "") gets every
// command, since listing or suggesting needs them all.
func newAppFor(name string, stdin io.Reader, stdout, stderr io.Writer) *cli.App {
	if name != "" && name != "help" && !strings.HasPrefix(name, "-") {
		for _, group := range commandGroups() {
			if cmds := group(); findCommand(cmds, name) != nil {
				return appWith(cmds, stdin, stdout, stderr)
			}
		}
	}
	app := newApp(stdin, stdout, stderr)
	app.Version, app.HideVersion = buildVersion(), false
	return app
}

func appWith(cmds []*cli.Command, stdin io.Reader, stdout, stderr io.Writer) *cli.App {
	app := &cli.App{
		Name:           "aiwg-state",
		Usage:          "a git-native versioned state store for AI agents",
		Description:    appHelp,
		Reader:         stdin,
		Writer:         stdout,
		ErrWriter:      stderr,
		HideVersion:    true,
		ExitErrHandler: func(*cli.Context, error) {}, // run() reports errors
		Commands:       cmds,
	}
	app.OnUsageError = onUsageError
	setUsageErrors(app.Commands)
	return app
}
