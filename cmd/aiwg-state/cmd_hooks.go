package main

import (
	"fmt"
	"os"

	"github.com/urfave/cli/v2"

	"github.com/aiwg/aiwg-state/hooks"
)

func hooksCommand() *cli.Command {
	return &cli.Command{
		Name:  "hooks",
		Usage: "server-side validation of pushed state",
		Description: `The pre-receive hook checks every pushed commit as aiwg-state checks a
write (canonical JSON, the store's rules, its access policy) and refuses
the whole push when one breaks them.

Examples:
   aiwg-state hooks install --server /srv/git/state.git
   aiwg-state policy check agents/pulse/main   # what the hook would say, before pushing`,
		Subcommands: []*cli.Command{
			{
				Name:      "install",
				Usage:     "install the pre-receive hook that checks every pushed commit into a bare repository",
				ArgsUsage: " ",
				Description: `The hook runs this aiwg-state binary (or --binary) on every push: canonical
JSON, store paths, limits, the access policy (.aiwg/policy.json on the
server's default branch: HEAD's, or main while HEAD's has no commit) and no
merge in progress; tags are checkpoints only. A refused push leaves the
server's refs unchanged and tells the pusher the commit, path, rule and
agent. A HEAD that names a branch with no commit (git init --bare names
master) is pointed at main, the branch a store pushes.

It also sets receive.fsckObjects=true in the repository, so git itself
refuses malformed objects, and readies it for many pushers: pushes stay
the packs they arrive as (receive.unpackLimit and transfer.unpackLimit 1,
where git would unpack each small push into loose objects), the hook
starts git gc --auto in the background when gc.auto or gc.autoPackLimit
says it has work (receive.autogc is turned off: git would start it after
every push), partial clones are allowed (uploadpack.allowFilter), packs
are built with a narrower delta search (pack.window 2: a sync's fetch is
as small for less CPU), and the check of a push's connectivity lists the
server's refs once (core.alternateRefsCommand true). aiwg-state doctor --server
reports how the repository stands. A push's check runs for at most 5 minutes, or
what the repository's git config aiwg.hookTimeout says ("10m", "90s";
install writes 5m there when no configuration sets it); out of time, the
push is refused.

When the policy names "pushers", the hook checks who pushes against the
agents each commit names: the pusher is the variable the repository's git
config aiwg.pusherVariable names, else REMOTE_USER (git http-backend behind
HTTP authentication), else GL_USER (gitolite).

Examples:
   aiwg-state hooks install --server /srv/git/state.git
   aiwg-state hooks install --server /srv/git/state.git --binary /usr/local/bin/aiwg-state`,
				Flags: []cli.Flag{
					&cli.StringFlag{Name: "server", Usage: "the server's bare repository", Required: true},
					&cli.StringFlag{Name: "binary", Usage: "the aiwg-state the hook runs (default: this one)"},
					&cli.BoolFlag{Name: "force", Usage: "replace a pre-receive hook aiwg-state did not write"},
					jsonFlag(),
				},
				Action: runHooksInstall,
			},
			{
				Name:      "run",
				Usage:     "run a hook (git calls this)",
				ArgsUsage: "HOOK",
				Hidden:    true,
				Action:    runHooksRun,
			},
		},
	}
}

func runHooksInstall(c *cli.Context) error {
	if _, err := args(c, 0, 0); err != nil {
		return err
	}
	bin := c.String("binary")
	if bin == "" {
		exe, err := os.Executable()
		if err != nil {
			return err
		}
		bin = exe
	}
	path, err := hooks.Install(c.String("server"), hooks.InstallOptions{Binary: bin, Force: c.Bool("force")})
	if err != nil {
		return err
	}
	if c.Bool("json") {
		return printJSON(c.App.Writer, map[string]any{"hook": path, "binary": bin})
	}
	fmt.Fprintf(c.App.Writer, "installed %s (runs %s)\n", path, bin)
	return nil
}

func runHooksRun(c *cli.Context) error {
	a, err := args(c, 1, 1)
	if err != nil {
		return err
	}
	if a[0] != "pre-receive" {
		return usagef("unknown hook %q", a[0])
	}
	return runPreReceive(c, c.App.Reader, c.App.ErrWriter)
}
