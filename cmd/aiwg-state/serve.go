package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/urfave/cli/v2"

	aiwgstate "github.com/aiwg/aiwg-state"
	"github.com/aiwg/aiwg-state/serve"
)

// SocketPath is where a store's server listens, inside its git directory:
// the client finds it where it finds the store.
func socketPath(store string) string { return filepath.Join(store, "aiwg", "serve.sock") }

// servedCommands are the commands a server runs for a client: those whose
// only dealings with their process are the working directory, the
// environment and the standard streams, which the client sends. The rest
// (init, clone and the remote commands that run git with the caller's
// credentials, the git merge driver, hooks, quickstart, serve itself) the
// client runs itself.
var servedCommands = map[string]bool{
	"get": true, "cat": true, "ls": true, "set": true, "put": true, "del": true, "rm": true, "mv": true, "apply": true,
	"log": true, "blame": true, "diff": true, "show": true, "reindex": true,
	"branch": true, "switch": true, "merge": true, "conflicts": true, "resolve": true,
	"config": true, "policy": true,
	"state": true, "var": true, "final": true, "checkpoint": true, "rollback": true,
	"goal": true, "event": true, "latest": true, "request": true, "item": true, "project": true, "doc": true, "state-doc": true,
	"traj": true,
}

func serveCommand() *cli.Command {
	return &cli.Command{
		Name:  "serve",
		Usage: "keep the store open for aiwg-state-client: a command through it costs a fraction of a process",
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
   aiwg-state serve --idle 0 --store /srv/agents/state.git   # never stop on idleness`,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "store", Usage: "the store's directory (default: the nearest .aiwg/state.git)", EnvVars: []string{"AIWG_STATE_STORE"}},
			&cli.DurationFlag{Name: "idle", Value: 15 * time.Minute, Usage: "stop after this long without a command (0: never)"},
			jsonFlag(),
		},
		Action: func(c *cli.Context) error {
			if _, err := args(c, 0, 0); err != nil {
				return err
			}
			if c.Duration("idle") < 0 {
				return usagef("--idle must be 0 or more")
			}
			dir := c.String("store")
			if dir == "" {
				wd, err := os.Getwd()
				if err != nil {
					return err
				}
				if dir, err = aiwgstate.FindStore(wd); err != nil {
					return err
				}
			}
			dir, err := filepath.Abs(dir)
			if err != nil {
				return err
			}
			// Opened once here: a directory that is no store fails now,
			// not at the first client's command.
			st, err := aiwgstate.Open(c.Context, dir, aiwgstate.Options{})
			if err != nil {
				return err
			}
			pool := newStorePool()
			pool.put(st)
			defer pool.close()

			ln, err := serve.Listen(socketPath(st.Dir()))
			if err != nil {
				return fmt.Errorf("%w (stop it, or let its --idle end it)", err)
			}
			ctx, stop := context.WithCancel(c.Context)
			defer stop()
			srv := &serve.Server{
				Idle:    c.Duration("idle"),
				Logf:    func(format string, a ...any) { fmt.Fprintf(c.App.ErrWriter, "aiwg-state serve: "+format+"\n", a...) },
				Decline: declineFor(stop, c.App.ErrWriter),
				Handler: func(ctx context.Context, req *serve.Invocation) int {
					return runServed(ctx, pool, req)
				},
			}
			if c.Bool("json") {
				printJSON(c.App.Writer, map[string]any{"store": st.Dir(), "socket": ln.Path(), "pid": os.Getpid(), "idle": c.Duration("idle").String()})
			} else {
				fmt.Fprintf(c.App.ErrWriter, "serving %s on %s (pid %d); stop with Ctrl-C or kill %d\n", st.Dir(), ln.Path(), os.Getpid(), os.Getpid())
			}
			return srv.Serve(ctx, ln)
		},
	}
}

// declineFor says which requests the client runs itself. Once the
// program file has been replaced it declines everything and ends the
// server: the client then runs the new program.
func declineFor(stop context.CancelFunc, log interface{ Write([]byte) (int, error) }) func(*serve.Request) string {
	self, _ := os.Executable()
	started, _ := os.Stat(self)
	return func(req *serve.Request) string {
		if started != nil {
			if now, err := os.Stat(self); err != nil || !os.SameFile(now, started) || !now.ModTime().Equal(started.ModTime()) || now.Size() != started.Size() {
				fmt.Fprintf(log, "aiwg-state serve: %s was replaced; stopping so that clients run the new program\n", self)
				stop()
				return "the server's program was replaced; it is stopping"
			}
		}
		name := commandName(req.Args)
		if !servedCommands[name] {
			return fmt.Sprintf("%q is run by the client", name)
		}
		for _, a := range req.Args[1:] {
			if a == "--" {
				break
			}
			if a == "-h" || a == "--help" || a == "-help" {
				return "help is printed by the client"
			}
		}
		return ""
	}
}

// runServed runs a client's command line. A panic ends the command, not
// the server, and the stores it used are closed, not kept: their state is
// unknown.
func runServed(ctx context.Context, pool *storePool, req *serve.Invocation) (code int) {
	inv := &invocation{client: &req.Request, stores: pool.lender()}
	defer func() {
		if r := recover(); r != nil {
			fmt.Fprintf(req.Stderr, "aiwg-state: internal error: %v\n%s", r, debug.Stack())
			for _, st := range inv.stores.lent {
				pool.evict(st)
			}
			code = exitUnexpected
		}
	}()
	return runFor(ctx, inv, req.Args, req.Stdin, req.Stdout, req.Stderr)
}

// storePool keeps open stores between a server's commands, so that a
// command finds the pack indexes mapped, the tail pack read and recent
// trees decoded: a warm write takes about a third of a cold one. A store is
// lent to one command at a time (Store.Reset is not for concurrent use),
// and commands at once each get their own.
type storePool struct {
	mu   sync.Mutex
	idle map[string][]*aiwgstate.Store // by git directory
	dead map[*aiwgstate.Store]bool     // evicted while lent: closed when returned
}

// lender lends stores of the pool to one command, and remembers them.
type lender struct {
	*storePool
	lent []*aiwgstate.Store
}

func (p *storePool) lender() *lender { return &lender{storePool: p} }

func (l *lender) get(ctx context.Context, dir string, opts aiwgstate.Options) (*aiwgstate.Store, error) {
	st, err := l.storePool.get(ctx, dir, opts)
	if err == nil {
		l.lent = append(l.lent, st)
	}
	return st, err
}

// maxIdle bounds the stores kept per directory: as many as commands ran
// at once, up to this.
const maxIdle = 4

func newStorePool() *storePool {
	return &storePool{idle: map[string][]*aiwgstate.Store{}, dead: map[*aiwgstate.Store]bool{}}
}

// get lends a store of dir set up as Open with opts would set it up now.
func (p *storePool) get(ctx context.Context, dir string, opts aiwgstate.Options) (*aiwgstate.Store, error) {
	key := poolKey(dir)
	p.mu.Lock()
	var st *aiwgstate.Store
	if n := len(p.idle[key]); n > 0 {
		st = p.idle[key][n-1]
		p.idle[key] = p.idle[key][:n-1]
	}
	p.mu.Unlock()
	if st == nil {
		var err error
		if st, err = aiwgstate.Open(ctx, dir, opts); err != nil {
			return nil, err
		}
	} else if err := st.Reset(opts); err != nil {
		st.Close()
		return nil, err
	}
	return st, nil
}

// put takes a lent store back.
func (p *storePool) put(st *aiwgstate.Store) {
	key := poolKey(st.Dir())
	p.mu.Lock()
	keep := !p.dead[st] && p.idle != nil && len(p.idle[key]) < maxIdle
	delete(p.dead, st)
	if keep {
		p.idle[key] = append(p.idle[key], st)
	}
	p.mu.Unlock()
	if !keep {
		st.Close()
	}
}

// evict closes st, now if it is idle, else when it is returned.
func (p *storePool) evict(st *aiwgstate.Store) {
	key := poolKey(st.Dir())
	p.mu.Lock()
	defer p.mu.Unlock()
	if i := slices.Index(p.idle[key], st); i >= 0 {
		p.idle[key] = slices.Delete(p.idle[key], i, i+1)
		st.Close()
		return
	}
	p.dead[st] = true
}

func (p *storePool) close() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, sts := range p.idle {
		for _, st := range sts {
			st.Close()
		}
	}
	p.idle = nil
}

// poolKey names a store by its directory as the store reports it, so
// that two spellings of one path share stores.
func poolKey(dir string) string {
	if abs, err := filepath.EvalSymlinks(dir); err == nil {
		return strings.TrimSuffix(abs, "/")
	}
	return dir
}
