package main

import (
	"context"
	"os"
	"path/filepath"
	"sync/atomic"

	"github.com/urfave/cli/v2"

	"github.com/aiwg/aiwg-state/serve"
)

// invocation is what a command line takes from the process it runs for:
// the working directory, the environment, whether output goes to a
// terminal, and where stores come from. The CLI's own process supplies its
// own; a server supplies its client's, so that a command runs the same
// either way.
type invocation struct {
	// client is the request a server runs this for; nil in the CLI's
	// own process.
	client *serve.Request
	// serving is the server running it; nil in the CLI's own process.
	serving *server
	// stores lends stores kept open from one command to the next (a
	// server's); nil opens and closes one per command.
	stores *lender
	// anonymous: the command writes as "anonymous" (no agent named);
	// anonymousNoted: a served client was told so.
	anonymous, anonymousNoted atomic.Bool
}

// anonymousNoted: the CLI's own process was told its writes are
// anonymous (quickstart runs many commands in one process).
var anonymousNoted atomic.Bool

// firstAnonymous reports whether this is the first anonymous write of the
// process the command line comes from: the CLI's own, or a server's
// client.
func (inv *invocation) firstAnonymous() bool {
	if inv.client != nil {
		return inv.anonymousNoted.CompareAndSwap(false, true)
	}
	return anonymousNoted.CompareAndSwap(false, true)
}

// processInvocation is the invocation of the CLI's own process.
func processInvocation() *invocation { return &invocation{} }

func (inv *invocation) lookupEnv(key string) (string, bool) {
	if inv.client == nil {
		return os.LookupEnv(key)
	}
	return inv.client.LookupEnv(key)
}

func (inv *invocation) getenv(key string) string {
	if inv.client == nil {
		return os.Getenv(key)
	}
	return inv.client.Getenv(key)
}

// resolve makes a relative path named on the command line relative to the
// client's working directory when served; in the CLI's own process the
// working directory is the client's already.
func (inv *invocation) resolve(path string) string {
	if path == "" || filepath.IsAbs(path) || inv.client == nil {
		return path
	}
	return filepath.Join(inv.client.Dir, path)
}

// workDir is the working directory stores are discovered from.
func (inv *invocation) workDir() (string, error) {
	if inv.client != nil {
		return inv.client.Dir, nil
	}
	return os.Getwd()
}

// handlerEnv and handlerDir are where completion handlers run: the
// client's environment and directory when served, else this process's
// (nil and "").
func (inv *invocation) handlerEnv() []string {
	if inv.client == nil {
		return nil
	}
	return inv.client.Env
}

func (inv *invocation) handlerDir() string {
	if inv.client == nil {
		return ""
	}
	return inv.client.Dir
}

// terminal reports whether the command's output goes to a terminal.
func (inv *invocation) terminal(out any) bool {
	if inv.client != nil {
		return inv.client.Terminal
	}
	return isTerminal(out)
}

// useEnv gives the flags that default from the environment (--store from
// AIWG_STATE_STORE, --agent from AIWG_AGENT…) their defaults from the
// client's environment rather than the server's. urfave/cli reads the
// process's environment itself, so the flags are changed before the app
// runs: each run builds its flags afresh.
func (inv *invocation) useEnv(cmds []*cli.Command) {
	for _, c := range cmds {
		for _, f := range c.Flags {
			var sf *cli.StringFlag
			switch f := f.(type) {
			case *cli.StringFlag:
				sf = f
			case fixedString:
				sf = f.StringFlag
			}
			if sf == nil || len(sf.EnvVars) == 0 {
				continue
			}
			for _, name := range sf.EnvVars {
				if v := inv.getenv(name); v != "" {
					sf.Value = v
					break
				}
			}
			sf.EnvVars = nil
		}
		inv.useEnv(c.Subcommands)
	}
}

func hideHelp(cmds []*cli.Command) {
	for _, c := range cmds {
		c.HideHelp, c.HideHelpCommand = true, true
		hideHelp(c.Subcommands)
	}
}

type invocationKey struct{}

func withInvocation(ctx context.Context, inv *invocation) context.Context {
	return context.WithValue(ctx, invocationKey{}, inv)
}

// invocationOf is the invocation a command runs for.
func invocationOf(c *cli.Context) *invocation {
	if inv, ok := c.Context.Value(invocationKey{}).(*invocation); ok {
		return inv
	}
	return processInvocation()
}
