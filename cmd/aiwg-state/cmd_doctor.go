package main

import (
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/aiwg/aiwg-state/hooks"
)

func newDoctorCommand() *cli.Command {
	return &cli.Command{
		Name:      "doctor",
		Usage:     "check a server's bare repository: objects, packs, hook, settings, policy",
		ArgsUsage: " ",
		Description: `Reports, for the server's bare repository, its loose objects and packs
(a swarm's pushes pile up without maintenance), its branches and agent
branches, whether the aiwg-state pre-receive hook is installed and its
binary runnable, the settings hooks install makes (pushes kept as packs,
git gc --auto after pushes, partial clones allowed, git's object checks),
and whether the access policy on its default branch parses. Exits 3 when
something needs fixing, and says what. It only reads.

Examples:
   aiwg-state doctor --server /srv/git/state.git
   aiwg-state doctor --server /srv/git/state.git --json`,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "server", Usage: "the server's bare repository", Required: true},
			jsonFlag(),
		},
		Action: func(c *cli.Context) error {
			if _, err := args(c, 0, 0); err != nil {
				return err
			}
			h, err := hooks.Doctor(c.Context, c.String("server"))
			if err != nil {
				return err
			}
			if c.Bool("json") {
				if err := printJSON(c.App.Writer, h); err != nil {
					return err
				}
			} else {
				w := c.App.Writer
				fmt.Fprintf(w, "objects   %d loose (%d KiB), %d packed in %d pack(s) (%d KiB)\n", h.LooseObjects, h.LooseKiB, h.PackedObjects, h.Packs, h.PackKiB)
				fmt.Fprintf(w, "branches  %d, %d of agents\n", h.Branches, h.AgentBranches)
				switch {
				case h.Hook.Runnable && h.Hook.Form == "shell":
					fmt.Fprintf(w, "hook      installed, runs %s through a shell\n", h.Hook.Binary)
				case h.Hook.Runnable:
					fmt.Fprintf(w, "hook      installed, runs %s\n", h.Hook.Binary)
				case h.Hook.Installed:
					fmt.Fprintf(w, "hook      installed, but %s is not runnable\n", h.Hook.Binary)
				default:
					fmt.Fprintln(w, "hook      not installed")
				}
				set := 0
				for _, cc := range h.Config {
					if cc.OK {
						set++
					}
				}
				fmt.Fprintf(w, "settings  %d of %d as hooks install sets them\n", set, len(h.Config))
				switch {
				case !h.Policy.Found:
					fmt.Fprintf(w, "policy    none on %s\n", h.Policy.Branch)
				case h.Policy.Valid:
					fmt.Fprintf(w, "policy    valid on %s\n", h.Policy.Branch)
				default:
					fmt.Fprintf(w, "policy    invalid on %s\n", h.Policy.Branch)
				}
				for _, p := range h.Problems {
					fmt.Fprintln(w, "problem:  "+p)
				}
			}
			if len(h.Problems) > 0 {
				return fmt.Errorf("%w: %d problem(s) in %s", hooks.ErrUnhealthy, len(h.Problems), h.Dir)
			}
			return nil
		},
	}
}
