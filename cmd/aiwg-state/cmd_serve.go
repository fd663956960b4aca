package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"time"

	aiwgstate "github.com/aiwg/aiwg-state"

	"github.com/urfave/cli/v2"

	"github.com/aiwg/aiwg-state/audit"
	"github.com/aiwg/aiwg-state/frame"
	"github.com/aiwg/aiwg-state/internal/indexfold"
	"github.com/aiwg/aiwg-state/repo"
	"github.com/aiwg/aiwg-state/serve"
	"github.com/aiwg/aiwg-state/store"
)

func serveCommand() *cli.Command {
	return &cli.Command{
		Name:  "serve",
		Usage: "keep the store open for aiwg-state-client, which runs the same commands through it, faster",
		Description: `An agent that runs a command per mutation pays, each time, for starting
this program and opening the store cold: about three quarters of a CLI
write. serve keeps the store open and runs commands sent by
aiwg-state-client, a small program that takes the same arguments, over a
Unix socket in the store's git directory (aiwg/serve.sock, mode 0600: this
user only). Each command runs as it would in the client's process: its
working directory, environment (AIWG_AGENT, AIWG_STATE_STORE, NO_COLOR)
and standard streams are the client's, its exit code is returned, and
writes are the same commits. Commands that run git with the caller's
credentials or depend on their process (init, clone, fetch, push, pull,
sync, merge-file, hooks…) are run by the client itself, as is every
command when no server is running. Writers with and without the server
may share the store: they take the same ref locks.

serve runs in the foreground until interrupted, or until idle for --idle.
It stops serving, and says so, once its program file is replaced (a
rebuilt aiwg-state), so a client never runs old code.

Examples:
   aiwg-state serve &                                 # serve the store of this directory
   aiwg-state-client set plan.json risk.level '"high"' --agent planner
   aiwg-state serve --status                          # is one running? (pid; exit 3 if not)
   aiwg-state serve --stop
   aiwg-state serve --idle 0 --store /srv/agents/state.git   # never stop on idleness`,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "store", Usage: "the store's directory (default: the nearest .aiwg/state.git)", EnvVars: []string{"AIWG_STATE_STORE"}},
			&cli.DurationFlag{Name: "idle", Value: 15 * time.Minute, Usage: "stop after this long without a command (0: never)"},
			&cli.BoolFlag{Name: "verbose", Aliases: []string{"v"}, Usage: "log each command on standard error: what ran, its exit code and time, or why the client runs it"},
			&cli.BoolFlag{Name: "status", Usage: "say whether a server runs for the store, and its process id (exit 3 if none)"},
			&cli.BoolFlag{Name: "stop", Usage: "stop the store's server (it finishes the commands in progress) and wait for it to end"},
			jsonFlag(),
		},
		Action: runServe,
	}
}

func runServe(c *cli.Context) error {
	if _, err := args(c, 0, 0); err != nil {
		return err
	}
	if c.Duration("idle") < 0 {
		return usagef("--idle must be 0 or more")
	}
	dir, err := storeDir(c)
	if err == nil {
		dir, err = filepath.Abs(dir)
	}
	if err != nil {
		return err
	}
	if c.Bool("status") || c.Bool("stop") {
		return serverStatus(c, dir)
	}
	// Opened once here: a directory that is no store fails now,
	// not at the first client's command.
	st, err := aiwgstate.Open(c.Context, dir, store.Options{})
	if err != nil {
		return err
	}
	// A server's walks over long histories must not keep what they read
	// of the packs and the history index resident.
	repo.ReleaseWhileReading(true)
	audit.ReleaseWhileReading(true)
	pool := newStorePool(st.Dir())
	pool.shared[0] = &sharedStore{st: st} // the commands share it
	defer pool.close()
	defer frame.Hold(st.Dir())() // the frames of the runs it serves live here, and end with it

	ln, err := serve.Listen(socketPath(st.Dir()))
	if err != nil {
		return fmt.Errorf("%w (stop it, or let its --idle end it)", err)
	}
	ctx, stop := context.WithCancel(c.Context)
	defer stop()
	// The first Ctrl-C stops the server once its commands finish;
	// a second one ends it at once. A second SIGTERM (serve
	// --stop again, a supervisor) does not: it waits too.
	context.AfterFunc(ctx, func() { signal.Reset(os.Interrupt) })
	home, err := os.Stat(st.Dir())
	if err != nil {
		return err
	}
	sv := &server{store: st.Dir(), home: home, pool: pool, stop: stop, log: c.App.ErrWriter, verbose: c.Bool("verbose"), umask: serve.Umask()}
	sv.tz, sv.tzSet = os.LookupEnv("TZ")
	sv.program, _ = os.Executable()
	sv.started, _ = os.Stat(sv.program)
	sv.groups = commandsWithSubcommands()
	if sv.program != "" {
		defer indexfold.Start(sv.program, st.Dir(), sv.logf, sv.verbose)()
	}
	srv := &serve.Server{
		Idle:    c.Duration("idle"),
		Logf:    sv.logf,
		Decline: sv.decline,
		Handler: sv.run,
	}
	if c.Bool("json") {
		printJSON(c.App.Writer, map[string]any{"store": st.Dir(), "socket": ln.Path(), "pid": os.Getpid(), "idle": c.Duration("idle").String()})
	} else {
		fmt.Fprintf(c.App.ErrWriter, "serving %s on %s (pid %d); stop with Ctrl-C or kill %d\n", st.Dir(), ln.Path(), os.Getpid(), os.Getpid())
	}
	if path := os.Getenv("AIWG_STATE_HEAP_PROFILE"); path != "" {
		defer writeHeapProfile(c, path)
	}
	return srv.Serve(ctx, ln)
}

// writeHeapProfile writes, as the server stops, a heap profile of what it
// keeps (AIWG_STATE_HEAP_PROFILE=FILE): `go tool pprof -sample_index
// inuse_space FILE` shows what holds the server's memory after its
// commands. A collection first makes the profile exact at that point.
func writeHeapProfile(c *cli.Context, path string) {
	runtime.GC()
	f, err := os.Create(path)
	if err == nil {
		err = pprof.Lookup("heap").WriteTo(f, 0)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}
	if err != nil {
		fmt.Fprintf(c.App.ErrWriter, "aiwg-state serve: heap profile: %v\n", err)
	}
}
