package main

import (
	"fmt"

	aiwgstate "github.com/aiwg/aiwg-state"

	"github.com/urfave/cli/v2"

	"github.com/aiwg/aiwg-state/repo"
	"github.com/aiwg/aiwg-state/store"
)

func newCloneCommand() *cli.Command {
	return &cli.Command{
		Name:      "clone",
		Usage:     "make a new store from a remote store",
		ArgsUsage: "URL [DIR]",
		Description: `DIR is the new store itself, a bare git repository, as --store names one
(not a directory to hold it, as git clone's is). It defaults to
.aiwg/state.git under the current directory, where every command finds
it; elsewhere, name it with --store DIR or AIWG_STATE_STORE.

--filter=blob:none makes a partial clone: documents arrive from the remote
when first read (the server must allow filters: uploadpack.allowFilter).
--depth N makes a shallow clone of N commits per branch: history commands
stop at its boundary and say so; fetch --deepen N brings more.

Examples:
   aiwg-state clone https://git.example.com/state.git
   aiwg-state clone /srv/git/state.git /tmp/state.git
   aiwg-state clone --filter=blob:none https://git.example.com/state.git
   aiwg-state clone --depth 20 https://git.example.com/state.git`,
		Flags: []cli.Flag{jsonFlag(), noSyncFlag(),
			&cli.StringFlag{Name: "filter", Usage: "make a partial clone with git's object `FILTER` (blob:none, tree:0)"},
			&cli.IntFlag{Name: "depth", Usage: "make a shallow clone of `N` commits per branch"}},
		Action: runClone,
	}
}

func runClone(c *cli.Context) error {
	a, err := args(c, 1, 2)
	if err != nil {
		return err
	}
	dir := store.DefaultDir
	if len(a) == 2 {
		dir = a[1]
	}
	if c.Int("depth") < 0 {
		return usagef("--depth takes a positive number of commits")
	}
	st, err := aiwgstate.Clone(c.Context, a[0], dir, store.CloneOptions{Options: store.Options{NoSync: c.Bool("no-sync")},
		Filter: c.String("filter"), Depth: c.Int("depth")})
	if err != nil {
		return err
	}
	defer st.Close()
	ignore, err := store.KeepOutOfWorkTree(c.Context, st.Dir())
	if err != nil {
		return fmt.Errorf("cloned into %s, but could not keep it out of the git project around it: %w", st.Dir(), err)
	}
	if c.Bool("json") {
		v := map[string]any{"store": st.Dir(), "branch": st.Branch()}
		if ignore != "" {
			v["ignore_file"] = ignore
		}
		return printJSON(c.App.Writer, v)
	}
	fmt.Fprintf(c.App.Writer, "cloned %s into %s (branch %s)\n", repo.RedactURL(a[0]), st.Dir(), st.Branch())
	printIgnored(c.App.Writer, ignore)
	if dir != store.DefaultDir {
		fmt.Fprintf(c.App.Writer, "use it with --store %s, or export AIWG_STATE_STORE=%s\n", shellQuote(dir), shellQuote(dir))
	}
	return nil
}
