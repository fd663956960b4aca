package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	aiwgstate "github.com/aiwg/aiwg-state"

	"github.com/urfave/cli/v2"

	"github.com/aiwg/aiwg-state/internal/when"
	"github.com/aiwg/aiwg-state/repo"
	"github.com/aiwg/aiwg-state/store"
	"github.com/aiwg/aiwg-state/trajectory"
)

func jsonFlag() cli.Flag { return &cli.BoolFlag{Name: "json", Usage: "print JSON"} }

func noSyncFlag() cli.Flag {
	return &cli.BoolFlag{Name: "no-sync", Usage: "skip fsync: faster, but a machine crash may lose the last writes (never consistency)"}
}

// commonFlags are built fresh for every command: urfave/cli writes
// environment values into a flag when it applies it, so shared flag values
// would leak from one run of the app to the next (quickstart, tests).
func commonFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "store", Usage: "the store's directory (default: the nearest .aiwg/state.git)", EnvVars: []string{"AIWG_STATE_STORE"}},
		&cli.StringFlag{Name: "branch", Aliases: []string{"b"}, Usage: "the branch to read or write (default: the store's HEAD)"},
		jsonFlag(),
		noSyncFlag(),
	}
}

func readFlags() []cli.Flag {
	return append(commonFlags(), &cli.StringFlag{Name: "at", Usage: "read at a revision (commit, branch, tag, HEAD~N) or a time: a date, an RFC 3339 time or an age (1d: as it was a day ago)"})
}

func writeFlags() []cli.Flag {
	return append(commonFlags(),
		&cli.StringFlag{Name: "agent", Usage: "the agent the commit is authored by", EnvVars: []string{"AIWG_AGENT"}},
		signingKeyFlag(),
		&cli.StringFlag{Name: "source", Usage: "what caused the mutation (Source trailer)"},
		&cli.StringFlag{Name: "correlation", Usage: "a correlation id (Correlation-Id trailer)"},
		&cli.StringFlag{Name: "expect", Usage: "fail with exit 6 unless the branch is at this revision (optimistic concurrency)"},
		&cli.StringFlag{Name: "unchanged-since", Usage: "fail with exit 6 if a file this write changes has changed since this revision (optimistic concurrency per file)"},
		&cli.StringFlag{Name: "message", Aliases: []string{"m"}, Usage: "the commit subject (default: generated from the change)"},
		&cli.StringFlag{Name: "traj", Usage: "link this write to a trajectory (Trajectory trailer; log shows it)"},
		&cli.IntFlag{Name: "iter", Usage: "link this write to iteration N of --traj (Iteration trailer)"},
	)
}

// session is what a command needs: its context, the store, the output.
type session struct {
	c     *cli.Context
	inv   *invocation
	store *aiwgstate.Store
	out   io.Writer
	json  bool
	// link are the trailers of --traj/--iter, checked when the session
	// opens, added to every write.
	link []repo.Trailer
	// shallowNoted: the note that history stops at a shallow clone's
	// boundary was printed (once a command).
	shallowNoted bool
	// colored: text output carries ANSI colour (set by page).
	colored bool
}

// noteShallow says once, on stderr, that history stopped at a shallow
// clone's boundary commit. With --json the output's shallow_boundary
// fields say it, and stderr stays for errors.
func (s *session) noteShallow(commit string) {
	if s.shallowNoted || s.json {
		return
	}
	s.shallowNoted = true
	fmt.Fprintf(s.c.App.ErrWriter, "aiwg-state: note: history stops at %s, the boundary of this shallow clone; what it shows may be older (`aiwg-state fetch --deepen N` fetches more)\n", shortHash(commit))
}

// storeDir is the store a command names: --store, $AIWG_STATE_STORE, else
// the nearest .aiwg/state.git, all as the invocation sees them.
func storeDir(c *cli.Context) (string, error) {
	inv := invocationOf(c)
	dir := c.String("store")
	if dir == "" {
		// Set, its flag's EnvVars give --store $AIWG_STATE_STORE; this is
		// for --store= given empty.
		dir = inv.getenv("AIWG_STATE_STORE")
	}
	if dir != "" {
		return store.StoreDir(inv.resolve(dir)), nil
	}
	wd, err := inv.workDir()
	if err != nil {
		return "", err
	}
	return store.FindStore(wd)
}

func open(c *cli.Context) (*session, error) {
	inv := invocationOf(c)
	dir, err := storeDir(c)
	if err != nil {
		return nil, err
	}
	link, err := trajLink(c)
	if err != nil {
		return nil, err
	}
	if err := checkRevisionFlags(c); err != nil {
		return nil, err
	}
	if inv.serving != nil && !inv.serving.serves(dir) {
		// The client found this server through another store (--store=
		// empty, a path that means something else here).
		return nil, fmt.Errorf("the server for %s cannot run commands on %s: run aiwg-state itself", inv.serving.store, dir)
	}
	opts := store.Options{Branch: c.String("branch"), NoSync: c.Bool("no-sync")}
	var st *aiwgstate.Store
	if inv.stores != nil {
		st, err = inv.stores.get(c.Context, opts)
	} else {
		st, err = aiwgstate.Open(c.Context, dir, opts)
	}
	if err != nil {
		return nil, err
	}
	return &session{c: c, inv: inv, store: st, out: c.App.Writer, json: c.Bool("json"), link: link}, nil
}

// checkRevisionFlags refuses --expect and --unchanged-since given empty,
// before anything is read or written: `--expect "$REV"` with REV unset
// must fail (exit 2), not write without the compare-and-swap.
func checkRevisionFlags(c *cli.Context) error {
	for _, name := range []string{"expect", "unchanged-since"} {
		if c.IsSet(name) && strings.TrimSpace(c.String(name)) == "" {
			return usagef("--%s is empty: name the revision to compare with (an unset variable?), or leave the flag out", name)
		}
	}
	return nil
}

// trajLink reads --traj/--iter, which every write command takes to name
// the run, and the iteration of it, that the write belongs to.
func trajLink(c *cli.Context) ([]repo.Trailer, error) {
	id, iter := c.String("traj"), c.Int("iter")
	if id == "" {
		if iter != 0 {
			return nil, usagef("--iter needs --traj")
		}
		return nil, nil
	}
	return trajectory.Trailers(id, iter)
}

func (s *session) close() {
	if s.inv.stores != nil {
		return // lent: it goes back when the command has ended
	}
	s.store.Close()
}

func (s *session) writeOptions() store.WriteOptions {
	wo := s.agentWrite()
	wo.Source = s.c.String("source")
	wo.Correlation = s.c.String("correlation")
	// Given, even empty, the flags are passed on: the store refuses an
	// empty revision (exit 2) rather than skip the check.
	if s.c.IsSet("expect") {
		wo.Expect = store.Rev(s.c.String("expect"))
	}
	if s.c.IsSet("unchanged-since") {
		wo.UnchangedSince = store.Rev(s.c.String("unchanged-since"))
	}
	wo.Message = s.c.String("message")
	wo.Trailers = s.link
	return wo
}

// agentWrite are the write options every writing command has: the agent
// (--agent) and where completion handlers run (a write may set Final).
func (s *session) agentWrite() store.WriteOptions {
	// The agent's defaults ($AIWG_AGENT, the store's agent, then $USER)
	// are read here, through the invocation: left to the store, a server
	// would read its own environment.
	agent, from := s.agent()
	if from == store.AgentFromAnonymous {
		s.inv.anonymous.Store(true) // said once the command has succeeded
	}
	return store.WriteOptions{Agent: agent, HandlerEnv: s.inv.handlerEnv(), HandlerDir: s.inv.handlerDir(), Warn: s.warn, SigningKey: s.signingKey()}
}

// agent is the agent a write of this command is authored by, and where
// the name comes from (see store.Store.AgentFor).
func (s *session) agent() (agent, from string) {
	flag := s.c.String("agent")
	if env := s.inv.getenv("AIWG_AGENT"); flag != "" && flag == env {
		flag = "" // the flag's value came from the environment
	}
	return s.store.AgentFor(flag, s.inv.getenv)
}

func (s *session) readOptions() store.ReadOptions {
	return store.ReadOptions{At: s.at()}
}

// at is --at as the store reads it: a revision as given, or a time as
// people type it (a date, an age) as the RFC 3339 time the store takes.
// A revision of that name wins: a branch may be called 1d.
func (s *session) at() string {
	at := s.c.String("at")
	if at == "" {
		return at
	}
	if _, err := time.Parse(time.RFC3339, at); err == nil {
		return at
	}
	t, err := when.Parse(at, time.Now())
	if err != nil {
		return at
	}
	if _, rerr := s.store.Resolve(at, s.c.String("branch")); rerr == nil {
		return at
	}
	return t.UTC().Format(time.RFC3339Nano)
}

// done prints a command's outcome: v as JSON with --json, else one line.
func (s *session) done(v any, format string, a ...any) error {
	if s.json {
		return printJSON(s.out, v)
	}
	fmt.Fprintf(s.out, format+"\n", a...)
	return nil
}

// confirm stands before a command that drops data (what says which): --yes
// confirms it; without --yes, someone at a terminal (the CLI's own
// standard input) is asked; anything else is a usage error naming --yes,
// since an agent or script must say so on the command line.
func (s *session) confirm(what string) error {
	if s.c.Bool("yes") {
		return nil
	}
	if in, ok := s.c.App.Reader.(*os.File); ok && s.inv.client == nil && isTerminal(in) {
		fmt.Fprintf(s.c.App.ErrWriter, "%s. Go on? [y/N] ", what)
		line, _ := bufio.NewReader(in).ReadString('\n')
		if a := strings.ToLower(strings.TrimSpace(line)); a == "y" || a == "yes" {
			return nil
		}
		return usagef("not confirmed; nothing written")
	}
	return usagef("%s; add --yes to confirm", what)
}

// printJSON writes v as one line of JSON.
// warn tells of something that worked but may not be what was meant: a
// line on stderr, or with --json a {"warning"} object on a line of its
// own, so that stderr stays JSON.
func (s *session) warn(msg string) {
	if s.json {
		b, _ := json.Marshal(map[string]string{"warning": msg})
		fmt.Fprintln(s.c.App.ErrWriter, string(b))
		return
	}
	fmt.Fprintln(s.c.App.ErrWriter, "aiwg-state: warning: "+msg)
}

func printJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}

// command wraps an action that needs an open store.
func command(fn func(s *session) error) cli.ActionFunc {
	return func(c *cli.Context) error {
		s, err := open(c)
		if err != nil {
			return err
		}
		defer s.close()
		return fn(s)
	}
}

// args checks the positional argument count.
func args(c *cli.Context, min, max int) ([]string, error) {
	a := c.Args().Slice()
	if len(a) < min || (max >= 0 && len(a) > max) {
		want := fmt.Sprintf("%d", min)
		switch {
		case max < 0:
			want = fmt.Sprintf("at least %d", min)
		case max != min:
			want = fmt.Sprintf("%d to %d", min, max)
		}
		name := commandPath(c)
		return nil, usagef("%s takes %s argument(s), got %d: usage: aiwg-state %s %s", name, want, len(a), name, c.Command.ArgsUsage)
	}
	return a, nil
}

// keyArg is the KEYPATH argument i, "" when absent. An empty one given
// (an unset shell variable, most likely) is refused: to the store an empty
// key path is the whole document, which set would replace and del delete.
func keyArg(a []string, i int) (string, error) {
	if i >= len(a) {
		return "", nil
	}
	if strings.TrimSpace(a[i]) == "" {
		return "", usagef("empty KEYPATH (leave it out for the whole document; put FILE VALUE replaces one)")
	}
	return a[i], nil
}

// argAt is the optional positional argument i, or "" when absent.
func argAt(a []string, i int) string {
	if i < len(a) {
		return a[i]
	}
	return ""
}

// readFileArg reads a FILE argument: "-" is standard input. A file that
// cannot be read (missing, a directory) is a usage error, whichever
// command names it.
func readFileArg(c *cli.Context, path string) ([]byte, error) {
	if path == "-" {
		return io.ReadAll(c.App.Reader)
	}
	data, err := os.ReadFile(filepath.Clean(invocationOf(c).resolve(path)))
	if pe := (*fs.PathError)(nil); errors.As(err, &pe) {
		pe.Path = filepath.Clean(path) // as the user named it, served or not
	}
	if err != nil {
		return nil, usagef("%v", err)
	}
	return data, nil
}

// printDocument prints v as one line of JSON with --json, else indented
// for a reader.
func (s *session) printDocument(v any) error {
	if s.json {
		return printJSON(s.out, v)
	}
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	_, err = fmt.Fprintln(s.out, string(b))
	return err
}

// readValue reads a VALUE argument: "-" is standard input.
func readValue(c *cli.Context, v string) ([]byte, error) {
	if v != "-" {
		return []byte(v), nil
	}
	data, err := io.ReadAll(c.App.Reader)
	if err != nil {
		return nil, fmt.Errorf("reading standard input: %w", err)
	}
	return data, nil
}

// shortHash is the abbreviation used in human output.
func shortHash(h string) string {
	if len(h) > 12 {
		return h[:12]
	}
	return h
}
