package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	aiwgstate "github.com/aiwg/aiwg-state"

	"github.com/urfave/cli/v2"

	"github.com/aiwg/aiwg-state/audit"
	"github.com/aiwg/aiwg-state/internal/errkind"
	"github.com/aiwg/aiwg-state/serve"
	"github.com/aiwg/aiwg-state/store"
)

// socketPath is where a store's server listens, inside its git directory:
// the client finds it where it finds the store.
func socketPath(store string) string {
	return filepath.Join(store, filepath.FromSlash(serve.SocketName))
}

// served reports whether a server runs command name for a client: one
// whose only dealings with its process are the working directory, the
// environment and the standard streams, which the client sends. The rest
// the client runs itself: init and clone; the remote commands (remote,
// fetch, push, pull, agent, sync, integrate), which run git with the
// caller's credentials; gc, which runs git repack; the git merge
// driver and install-drivers; hooks; policy, whose check runs git
// verify-commit with the caller's keys; quickstart; serve itself.
func served(name string) bool {
	switch name {
	case "get", "cat", "ls", "set", "put", "incr", "del", "rm", "mv", "apply",
		"log", "blame", "diff", "show", "reindex", "bisect",
		"branch", "switch", "merge", "conflicts", "resolve",
		"config",
		"state", "var", "final", "checkpoint", "rollback",
		"goal", "event", "latest", "request", "item", "project", "doc", "state-doc",
		"traj", "lease", "memory", "queue", "schema", "strategy", "snapshot",
		"frame", "cache":
		return true
	}
	return false
}

// serverStatus answers serve --status and --stop.
func serverStatus(c *cli.Context, dir string) error {
	if _, err := os.Stat(filepath.Join(dir, "HEAD")); err != nil {
		return errkind.Errorf(store.ErrNotFound, "no store at %s", dir)
	}
	sock := socketPath(dir)
	pid, err := serve.Running(sock)
	if err != nil {
		return err
	}
	if pid == 0 {
		return errkind.Errorf(store.ErrNotFound, "no server runs for %s", dir)
	}
	if !c.Bool("stop") {
		return (&session{c: c, out: c.App.Writer, json: c.Bool("json")}).done(map[string]any{"store": dir, "socket": sock, "pid": pid},
			"a server runs for %s (pid %d, socket %s)", dir, pid, sock)
	}
	if err := syscall.Kill(pid, syscall.SIGTERM); err != nil {
		return fmt.Errorf("stopping the server (pid %d): %w", pid, err)
	}
	for start := time.Now(); ; time.Sleep(20 * time.Millisecond) {
		if now, err := serve.Running(sock); err == nil && now == 0 {
			break
		}
		if time.Since(start) > time.Minute {
			return fmt.Errorf("the server (pid %d) has not ended after a minute: it is finishing commands in progress: %w", pid, store.ErrLocked)
		}
	}
	return (&session{c: c, out: c.App.Writer, json: c.Bool("json")}).done(map[string]any{"store": dir, "stopped": pid},
		"stopped the server for %s (pid %d)", dir, pid)
}

// server is what `aiwg-state serve` knows of itself to run its clients'
// commands: its store, and the parts of its process a command's outcome
// depends on and a client's may differ in.
type server struct {
	store string
	home  os.FileInfo // the store's directory, to compare clients' with
	pool  *storePool
	stop  context.CancelFunc
	mu    sync.Mutex // one log line at a time
	log   io.Writer
	// verbose logs every request: what ran, or why the client runs it.
	verbose bool
	// program is this program's file as it was at the start: once it is
	// replaced, the server stops.
	program string
	started os.FileInfo
	// tz and umask shape a write (commit times' zone, new files' modes)
	// through process state a request cannot change.
	tz    string
	tzSet bool
	umask int
	// groups are the commands made of subcommands: named alone, they
	// print their help, which the client prints.
	groups map[string]bool
}

// decline says which requests the client runs itself: commands that
// depend on their process beyond its directory, environment and streams;
// any command of a client whose store, time zone or umask is not the
// server's; help. Once the program file has been replaced it declines
// everything and stops the server, so clients run the new program.
func (sv *server) decline(req *serve.Request) string {
	why := sv.declines(req)
	if why != "" && sv.verbose {
		sv.logf("declined %s: %s", strings.Join(req.Args[1:], " "), why)
	}
	return why
}

func (sv *server) logf(format string, a ...any) {
	sv.mu.Lock()
	defer sv.mu.Unlock()
	fmt.Fprintf(sv.log, "aiwg-state serve: "+format+"\n", a...)
}

func (sv *server) declines(req *serve.Request) string {
	if sv.started != nil {
		if now, err := os.Stat(sv.program); err != nil || !os.SameFile(now, sv.started) || !now.ModTime().Equal(sv.started.ModTime()) || now.Size() != sv.started.Size() {
			sv.logf("%s was replaced; stopping so that clients run the new program", sv.program)
			sv.stop()
			return "the server's program was replaced; it is stopping"
		}
	}
	name := commandName(req.Args)
	switch {
	case !served(name):
		return fmt.Sprintf("%q is run by the client", name)
	case !filepath.IsAbs(req.Dir):
		return "the client's working directory is not an absolute path"
	case !sv.serves(req.Target):
		return fmt.Sprintf("this server serves %s, not %s", sv.store, req.Target)
	case !sv.sameTZ(req):
		return "the client's time zone (TZ) is not the server's"
	case req.Umask != sv.umask:
		return "the client's umask is not the server's"
	}
	if wantsHelp(req.Args, name, sv.groups[name]) {
		return "help is printed by the client"
	}
	return ""
}

// sameTZ: the client's TZ is the server's, unset alike (the system's zone)
// or set alike (set empty is UTC).
func (sv *server) sameTZ(req *serve.Request) bool {
	tz, set := req.LookupEnv("TZ")
	return tz == sv.tz && set == sv.tzSet
}

// wantsHelp reports whether a command line asks for help: a help flag in
// any spelling, a help subcommand, or a command of subcommands named
// without one.
func wantsHelp(args []string, name string, group bool) bool {
	rest := args[1:]
	if i := slices.Index(rest, name); i >= 0 {
		rest = rest[i+1:]
	}
	sub := ""
	for _, a := range args[1:] {
		if a == "--" {
			break
		}
		if flag, _, _ := strings.Cut(strings.TrimLeft(a, "-"), "="); strings.HasPrefix(a, "-") && (flag == "h" || flag == "help") {
			return true
		}
	}
	for _, a := range rest {
		if !strings.HasPrefix(a, "-") {
			sub = a
			break
		}
	}
	return sub == "help" || sub == "h" || (group && sub == "")
}

// commandsWithSubcommands names the commands made of subcommands.
func commandsWithSubcommands() map[string]bool {
	groups := map[string]bool{}
	for _, group := range commandGroups() {
		for _, c := range group() {
			if len(c.Subcommands) > 0 {
				groups[c.Name] = true
				for _, a := range c.Aliases {
					groups[a] = true
				}
			}
		}
	}
	return groups
}

// serves reports whether dir is this server's store.
func (sv *server) serves(dir string) bool {
	fi, err := os.Stat(dir)
	return err == nil && os.SameFile(fi, sv.home)
}

// run runs a client's command line. A panic ends the command, not the
// server, and the stores it used are closed, not kept: their state is
// unknown.
func (sv *server) run(ctx context.Context, req *serve.Invocation) (code int) {
	l := sv.pool.lender()
	inv := &invocation{client: &req.Request, serving: sv, stores: l}
	if sv.verbose {
		t0 := time.Now()
		defer func() {
			sv.logf("ran %s: exit %d in %v", strings.Join(req.Args[1:], " "), code, time.Since(t0).Round(time.Microsecond))
		}()
	}
	defer func() {
		if r := recover(); r != nil {
			// One line for the client, as every error; the stack, for
			// whoever fixes it, in the server's log.
			fmt.Fprintf(req.Stderr, "aiwg-state: internal error: %s (the server's log has the details)\n", oneLine(fmt.Sprint(r)))
			sv.logf("internal error running %s: %v\n%s", strings.Join(req.Args[1:], " "), r, debug.Stack())
			code = exitUnexpected
			l.discard()
			return
		}
		l.giveBack()
	}()
	return runFor(ctx, inv, req.Args, req.Stdin, req.Stdout, req.Stderr)
}

// storePool keeps the server's store open between commands, so that a
// command finds the pack indexes mapped, the tail pack read and recent
// trees decoded: a warm write takes about a third of a cold one. Commands
// at once each get a handle lent from one shared store (Store.Lend): they
// share its repository, so their writes join one group commit (a chain of
// commits, one pack, one ref update, one round of flushes) and their
// reads one set of caches, whatever the number of clients. Commands with
// --no-sync share a second one, as the sync setting is the repository's.
// Every store is of the one directory the server serves (open refuses any
// other).
type storePool struct {
	dir    string
	mu     sync.Mutex
	shared [2]*sharedStore // by Options.NoSync
	closed bool
	// closing counts the stores being closed (see release).
	closing sync.WaitGroup
}

// sharedStore is the store commands borrow handles of, with the count of
// those out. A command that panics retires it (its state is unknown): new
// commands get a new one, and the last handle given back closes it.
type sharedStore struct {
	st      *aiwgstate.Store
	users   int
	retired bool
}

// lender lends stores of the pool to one command. What the command
// gives back goes back to the pool only once the command has ended well:
// after a panic their state is unknown.
type lender struct {
	pool *storePool
	lent []loan
}

type loan struct {
	st   *aiwgstate.Store
	from *sharedStore // nil: a store of its own
}

func (p *storePool) lender() *lender { return &lender{pool: p} }

func (l *lender) get(ctx context.Context, opts store.Options) (*aiwgstate.Store, error) {
	st, from, err := l.pool.get(ctx, opts)
	if err == nil {
		l.lent = append(l.lent, loan{st, from})
	}
	return st, err
}

func (l *lender) giveBack() {
	for _, ln := range l.lent {
		// What a command touched of the packs and of the history index
		// stays in the page cache, but not in the server's memory: a log
		// or blame of a long history reads pages all over its packs.
		ln.st.Repo().ReleaseMapped()
		l.pool.release(ln.from, false)
	}
	if len(l.lent) > 0 {
		audit.ReleaseMapped()
	}
	l.lent = nil
}

func (l *lender) discard() {
	for _, ln := range l.lent {
		l.pool.release(ln.from, true)
	}
	l.lent = nil
}

func newStorePool(dir string) *storePool {
	return &storePool{dir: dir}
}

// get lends a handle, set up as Open with opts would set a store up now,
// of the shared store for opts' sync setting (once the pool is closed, of
// a store of its own, closed when given back).
func (p *storePool) get(ctx context.Context, opts store.Options) (*aiwgstate.Store, *sharedStore, error) {
	p.mu.Lock()
	sh := p.shared[b2i(opts.NoSync)]
	if sh != nil && sh.st.SyncStale() {
		// The manifest's sync setting changed: commands from now on get
		// a store that settles it again.
		p.shared[b2i(opts.NoSync)], sh.retired = nil, true
		if sh.users == 0 {
			p.closeInBackground(sh)
		}
		sh = nil
	}
	if sh == nil {
		st, err := aiwgstate.Open(ctx, p.dir, store.Options{NoSync: opts.NoSync})
		if err != nil {
			p.mu.Unlock()
			return nil, nil, err
		}
		sh = &sharedStore{st: st, retired: p.closed}
		if !p.closed {
			p.shared[b2i(opts.NoSync)] = sh
		}
	}
	sh.users++
	p.mu.Unlock()
	st, err := sh.st.Lend(opts)
	if err != nil {
		p.release(sh, false)
		return nil, nil, err
	}
	return st, sh, nil
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// release gives back a handle of sh; retire: the command panicked.
func (p *storePool) release(sh *sharedStore, retire bool) {
	p.mu.Lock()
	sh.users--
	if retire {
		for i := range p.shared {
			if p.shared[i] == sh {
				p.shared[i] = nil
			}
		}
		sh.retired = true
	}
	if sh.retired && sh.users == 0 {
		p.closeInBackground(sh)
	}
	p.mu.Unlock()
}

// closeInBackground closes a retired store no command holds. In the
// background: Close waits for a roll-up the store started, and the
// command's answer must not (close waits for them all before the server
// ends).
func (p *storePool) closeInBackground(sh *sharedStore) {
	p.closing.Add(1)
	go func() {
		defer p.closing.Done()
		sh.st.Close()
	}()
}

func (p *storePool) close() {
	p.mu.Lock()
	p.closed = true
	for i, sh := range p.shared {
		if sh == nil {
			continue
		}
		p.shared[i], sh.retired = nil, true
		if sh.users == 0 {
			sh.st.Close()
		}
	}
	p.mu.Unlock()
	p.closing.Wait()
}
