// Command aiwg-state-mcp serves a store to MCP hosts (IDE agents, desktop
// assistants, agent frameworks): every capability of the store as a typed
// tool, documents as resources, and prompts. `aiwg-state mcp` runs it; it
// is a program of its own so that the MCP SDK it links (and its
// initialisation) costs nothing to every other aiwg-state command.
//
//	aiwg-state mcp --agent planner                   # stdio: one host, one agent
//	aiwg-state mcp --http 127.0.0.1:8765             # streamable HTTP: a bearer token per agent
//	aiwg-state mcp token planner                     # make planner a token for HTTP
//
// It finds the store as aiwg-state does (--store, $AIWG_STATE_STORE, the
// nearest .aiwg/state.git). Errors are one line on stderr, and the exit
// codes are aiwg-state's.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"runtime/debug"
	"strings"
	"syscall"

	aiwgstate "github.com/aiwg/aiwg-state"
	"github.com/aiwg/aiwg-state/audit"
	"github.com/aiwg/aiwg-state/internal/exitcode"
	"github.com/aiwg/aiwg-state/internal/indexfold"
	"github.com/aiwg/aiwg-state/internal/sibling"
	"github.com/aiwg/aiwg-state/mcp"
	"github.com/aiwg/aiwg-state/repo"
	"github.com/aiwg/aiwg-state/store"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	os.Exit(run(ctx, os.Args[1:], os.Stderr))
}

const usage = `usage: aiwg-state mcp [--store DIR] [--agent NAME] [--no-sync]
       aiwg-state mcp --http HOST:PORT [--tokens FILE] [--allow-remote] [--store DIR] [--no-sync]
       aiwg-state mcp token AGENT [--tokens FILE] [--store DIR]

Serves the store to an MCP host: over standard input and output (the host
starts this program), or over MCP's streamable HTTP transport at
http://HOST:PORT/ with a bearer token per agent.

Over stdio every write is authored by the agent of --agent, $AIWG_AGENT,
the store's agent (aiwg-state agent start) or $USER. Over HTTP each client
presents a token from the tokens file (default: aiwg/mcp-tokens in the
store's git directory; one "AGENT TOKEN" a line, mode 600), and its writes
are authored by that agent; a request without a known token is refused.
"token AGENT" makes a token, adds it to the file and prints it.
The access policy judges every write as it judges the CLI's.

Flags:
`

type options struct {
	store, agent, http, tokens string
	allowRemote, noSync        bool
	version                    bool
}

func run(ctx context.Context, args []string, stderr io.Writer) int {
	var o options
	fs := flag.NewFlagSet("aiwg-state mcp", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprint(stderr, usage); fs.PrintDefaults() }
	fs.StringVar(&o.store, "store", os.Getenv("AIWG_STATE_STORE"), "the store's directory (default: the nearest .aiwg/state.git)")
	fs.StringVar(&o.agent, "agent", "", "stdio: the agent writes are authored by (default: $AIWG_AGENT, the store's, $USER)")
	fs.StringVar(&o.http, "http", "", "serve streamable HTTP at HOST:PORT instead of stdio")
	fs.StringVar(&o.tokens, "tokens", "", "HTTP: the tokens file (default: aiwg/mcp-tokens in the store)")
	fs.BoolVar(&o.allowRemote, "allow-remote", false, "HTTP: allow an address other than loopback")
	fs.BoolVar(&o.noSync, "no-sync", false, "skip fsync: faster, but a machine crash may lose the last writes")
	fs.BoolVar(&o.version, "version", false, "print the version and exit")
	tokenFor := ""
	if len(args) > 0 && args[0] == "token" {
		if len(args) < 2 || strings.HasPrefix(args[1], "-") {
			return fail(stderr, exitcode.UsageError("token needs an AGENT: aiwg-state mcp token AGENT"))
		}
		tokenFor, args = args[1], args[2:]
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return exitcode.Usage
	}
	if fs.NArg() > 0 {
		return fail(stderr, exitcode.UsageError(fmt.Sprintf("unexpected argument %q (aiwg-state mcp --help)", fs.Arg(0))))
	}
	if o.version {
		fmt.Fprintln(os.Stdout, version())
		return 0
	}
	dir, err := storeDir(o.store)
	if err != nil {
		return fail(stderr, err)
	}
	if o.tokens == "" {
		o.tokens = filepath.Join(dir, "aiwg", "mcp-tokens")
	}
	if tokenFor != "" {
		return fail(stderr, addToken(o.tokens, tokenFor, os.Stdout))
	}
	if o.http != "" && !o.allowRemote && !mcp.Loopback(o.http) {
		return fail(stderr, exitcode.UsageError(fmt.Sprintf("--http %s is not a loopback address: anyone who reaches it could try tokens; pass --allow-remote to serve it anyway (behind TLS)", o.http)))
	}
	st, err := aiwgstate.Open(ctx, dir, store.Options{NoSync: o.noSync})
	if err != nil {
		return fail(stderr, err)
	}
	defer st.Close()
	// A server for hours: its walks over long histories keep nothing of
	// the packs and the history index resident, and the index's folds run
	// in a process of their own (when aiwg-state is at hand).
	repo.ReleaseWhileReading(true)
	audit.ReleaseWhileReading(true)
	if bin := sibling.Find("aiwg-state"); bin != "" {
		defer indexfold.Start(bin, st.Dir(), func(format string, a ...any) {
			fmt.Fprintf(stderr, "aiwg-state mcp: "+format+"\n", a...)
		}, false)()
	}
	if o.http == "" {
		agent, from := st.AgentFor(o.agent, os.Getenv)
		if from == store.AgentFromAnonymous {
			fmt.Fprintln(stderr, `aiwg-state mcp: warning: writes are authored by "anonymous": name the agent with --agent NAME or AIWG_AGENT=NAME`)
		}
		srv := mcp.New(st, mcp.Options{Agent: agent, Version: version()})
		if err := srv.ServeStdio(ctx); err != nil && ctx.Err() == nil && !errors.Is(err, io.EOF) {
			return fail(stderr, err)
		}
		return 0
	}
	if o.agent != "" {
		return fail(stderr, exitcode.UsageError("--agent is for stdio: over HTTP each client's token names its agent"))
	}
	tokens, err := mcp.ReadTokens(o.tokens)
	if err != nil {
		return fail(stderr, fmt.Errorf("%w (aiwg-state mcp token AGENT makes one)", err))
	}
	ln, err := net.Listen("tcp", o.http)
	if err != nil {
		return fail(stderr, err)
	}
	fmt.Fprintf(stderr, "aiwg-state mcp: serving %s at http://%s/\n", dir, ln.Addr())
	srv := mcp.New(st, mcp.Options{Version: version()})
	return fail(stderr, srv.ServeHTTP(ctx, ln, tokens))
}

// storeDir is the store named, else the nearest.
func storeDir(named string) (string, error) {
	if named != "" {
		return store.StoreDir(named), nil
	}
	wd, err := os.Getwd()
	if err != nil {
		return "", err
	}
	return store.FindStore(wd)
}

// addToken makes a token for agent, appends it to the tokens file
// (created readable by its owner only) and prints it.
func addToken(path, agent string, out io.Writer) error {
	token := mcp.NewToken()
	line := agent + " " + token + "\n"
	var existing []byte
	if data, err := os.ReadFile(path); err == nil {
		existing = data
	} else if !errors.Is(err, os.ErrNotExist) {
		return err
	}
	if _, err := mcp.ParseTokens(append(existing, line...)); err != nil {
		return exitcode.UsageError(err.Error())
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return err
	}
	if _, err := f.WriteString(line); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	fmt.Fprintln(out, token)
	return nil
}

// fail reports err as aiwg-state does, and returns its exit code.
func fail(w io.Writer, err error) int { return exitcode.Report(w, "aiwg-state mcp", err) }

func version() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok || bi.Main.Version == "" {
		return "(devel)"
	}
	return bi.Main.Version
}
