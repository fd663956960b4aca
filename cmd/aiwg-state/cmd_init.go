package main

import (
	"fmt"

	aiwgstate "github.com/aiwg/aiwg-state"

	"github.com/urfave/cli/v2"

	"github.com/aiwg/aiwg-state/store"
)

func newInitCommand() *cli.Command {
	return &cli.Command{
		Name:      "init",
		Usage:     "create a store (a bare git repository, by default .aiwg/state.git here)",
		ArgsUsage: "[DIR]",
		Description: `The store's first commit on main holds its manifest (.aiwg/store.json)
and the default merge strategies (.gitattributes). Later commands find the
store from any subdirectory, as git finds .git; --store or AIWG_STATE_STORE
point elsewhere. Inside a git project, init writes .aiwg/.gitignore (or a
.gitignore in the store DIR) ignoring everything, so that the project's
git add . leaves the store's files out.

Examples:
   aiwg-state init
   aiwg-state init --store /srv/agents/state.git --branch trunk`,
		Flags:  append(commonFlags(), &cli.StringFlag{Name: "agent", Usage: "the author of the first commit", EnvVars: []string{"AIWG_AGENT"}}),
		Action: runInit,
	}
}

func runInit(c *cli.Context) error {
	a, err := args(c, 0, 1)
	if err != nil {
		return err
	}
	dir := c.String("store")
	if len(a) == 1 {
		dir = a[0]
	}
	if dir == "" {
		dir = store.DefaultDir
	}
	st, err := aiwgstate.Init(c.Context, dir, store.InitOptions{Options: store.Options{Branch: c.String("branch"), NoSync: c.Bool("no-sync")}, Agent: c.String("agent")})
	if err != nil {
		return err
	}
	defer st.Close()
	ignore, err := store.KeepOutOfWorkTree(c.Context, st.Dir())
	if err != nil {
		return fmt.Errorf("created store %s, but could not keep it out of the git project around it: %w", st.Dir(), err)
	}
	if c.Bool("json") {
		v := map[string]any{"store": st.Dir(), "branch": st.Branch()}
		if ignore != "" {
			v["ignore_file"] = ignore
		}
		return printJSON(c.App.Writer, v)
	}
	fmt.Fprintf(c.App.Writer, "created store %s (branch %s)\n", st.Dir(), st.Branch())
	printIgnored(c.App.Writer, ignore)
	return nil
}
