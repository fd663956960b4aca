package main

import (
	"context"

	"github.com/urfave/cli/v2"

	"github.com/aiwg/aiwg-state/store"
)

func newAgentCommand() *cli.Command {
	return &cli.Command{
		Name:  "agent",
		Usage: "work as an agent on its own branch",
		Description: `An agent writes to agents/ID/NAME (NAME defaults to main), pushes it,
and merges main in with sync; a coordinator merges the agents' branches
with integrate.

Examples:
   aiwg-state agent start planner              # the store now writes agents/planner/main, as planner
   aiwg-state agent status                     # which agent writes, and why
   aiwg-state agent start planner try-2 --from main
   aiwg-state sync                             # fetch, merge main in, push`,
		Subcommands: []*cli.Command{{
			Name:      "start",
			Usage:     "put the store on the agent's branch agents/ID/NAME (created when new), and make ID its writes' author",
			ArgsUsage: "ID [NAME]",
			Description: `Agents write on their own branches, so their pushes never contend; sync
keeps them up to date and integrate (for a coordinator) merges them.
ID becomes the store's agent (aiwg.agent in its git config): later writes
are authored by it; --agent or AIWG_AGENT still override it.

Examples:
   aiwg-state agent start planner          # agents/planner/main
   aiwg-state agent start planner task-42 --from origin/main
   aiwg-state sync                         # then, in a loop`,
			Flags: append(commonFlags(), &cli.StringFlag{Name: "from", Usage: "where a new branch starts (default: the store's HEAD)"}),
			Action: command(func(s *session) error {
				return runAgentStart(s.c.Context, s, agentStartOptions{
					From: s.c.String("from"),
				})
			}),
		}, {
			Name:  "status",
			Usage: "say which agent this store's writes are authored by, and why, and the branch they go to",
			Description: `The agent of a write is the first of: --agent, AIWG_AGENT, the store's
own agent (set by agent start, kept in the store's git config as
aiwg.agent), the login name ($USER); else "anonymous".

Examples:
   aiwg-state agent status
   AIWG_AGENT=reviewer aiwg-state agent status --json`,
			Flags:  append(commonFlags(), &cli.StringFlag{Name: "agent", Usage: "the agent a write would name", EnvVars: []string{"AIWG_AGENT"}}),
			Action: command(func(s *session) error { return runAgentStatus(s.c.Context, s) }),
		}},
	}
}

// agentStartOptions are the flags runAgentStart reads.
type agentStartOptions struct {
	From string // --from
}

func runAgentStart(ctx context.Context, s *session, opts agentStartOptions) error {
	a, err := args(s.c, 1, 2)
	if err != nil {
		return err
	}
	branch, err := s.store.Swarm().StartAgent(ctx, a[0], second(a, ""), opts.From)
	if err != nil {
		return err
	}
	return s.done(map[string]any{"branch": branch, "agent": a[0]}, "on branch %s; writes here are authored by %s (--agent or AIWG_AGENT overrides)", branch, a[0])
}

func runAgentStatus(ctx context.Context, s *session) error {
	if _, err := args(s.c, 0, 0); err != nil {
		return err
	}
	agent, from := s.agent()
	why := map[string]string{
		store.AgentFromFlag:      "named by --agent",
		store.AgentFromEnv:       "from AIWG_AGENT",
		store.AgentFromStore:     "the store's agent (" + store.AgentConfigKey + ", set by agent start)",
		store.AgentFromUser:      "the login name ($USER); aiwg-state agent start NAME names one for this store",
		store.AgentFromAnonymous: "no agent named; aiwg-state agent start NAME names one for this store",
	}[from]
	v := map[string]any{"agent": agent, "from": from, "store_agent": s.store.DefaultAgent(), "branch": s.store.Branch()}
	return s.done(v, "agent %s: %s\nbranch %s", agent, why, s.store.Branch())
}
