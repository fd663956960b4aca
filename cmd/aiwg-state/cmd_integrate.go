package main

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/aiwg/aiwg-state/merge"
	"github.com/aiwg/aiwg-state/remote"
	"github.com/aiwg/aiwg-state/store"
)

func newIntegrateCommand() *cli.Command {
	return &cli.Command{
		Name:      "integrate",
		Usage:     "merge the agents/* branches of a remote that moved into main and push it (for a coordinator)",
		ArgsUsage: "[REMOTE]",
		Description: `One pass reads the remote's branches from one ref advertisement, fetches
only the agent branches that moved since the last pass (the commits it
integrated are kept under the store's git directory), merges each into
main, one merge per branch, and pushes main once. --all merges every
branch, moved or not.

A branch that conflicts is left out (its merge undone) and reported, and
main gets a conflict record for it, swarm/conflicts/<agent>/<name>.json:
the keys, main's value and the agent's. The agent's next sync shows it,
and sync --resolve ours|theirs settles it; the record goes when a later
version of the branch merges. integrate exits 4 after pushing the rest.

main keeps its first-parent history: it fast-forwards only over commits
whose first-parent chain holds its head, and otherwise gets a merge commit
(an agent branch that merged main in is not fast-forwarded onto). A branch
bringing a commit the policy on main refuses is left out and reported.

--watch keeps integrating, a pass every --interval, until interrupted.
For a large swarm, --shard K/N integrates only the agents a stable hash of
their id assigns to shard K (adding agents never moves the others) into
integration/K, keeping it up with main; a top-level pass with
--from integration/ merges the shards into main.

Examples:
   aiwg-state integrate
   aiwg-state integrate origin --into main --no-push --json
   aiwg-state integrate --watch --interval 2s
   aiwg-state integrate --shard 0/4 --watch        # one per shard
   aiwg-state integrate --from integration/ --watch`,
		Flags: append(remoteMergeFlags(),
			&cli.StringFlag{Name: "into", Usage: "the branch agents are merged into (default main, or integration/K with --shard)"},
			&cli.StringFlag{Name: "from", Usage: "the prefix of the branches merged", Value: remote.AgentBranchPrefix},
			&cli.StringFlag{Name: "shard", Usage: "integrate shard `K/N`'s agents into integration/K"},
			&cli.BoolFlag{Name: "all", Usage: "merge every branch, moved since the last pass or not"},
			&cli.BoolFlag{Name: "watch", Usage: "keep integrating, a pass every --interval"},
			&cli.DurationFlag{Name: "interval", Usage: "the time between two passes of --watch", Value: 2 * time.Second},
			&cli.BoolFlag{Name: "no-push", Usage: "integrate locally only"}),
		Action: command(func(s *session) error {
			opts := integrateOptions{
				Into:     s.c.String("into"),
				From:     s.c.String("from"),
				All:      s.c.Bool("all"),
				NoPush:   s.c.Bool("no-push"),
				Watch:    s.c.Bool("watch"),
				Interval: s.c.Duration("interval"),
			}
			if sh := s.c.String("shard"); sh != "" {
				k, n, err := remote.ParseShard(sh)
				if err != nil {
					return usagef("--shard: %v", err)
				}
				opts.Shard, opts.Shards = k, n
			}
			return runIntegrate(s.c.Context, s, opts)
		}),
	}
}

// integrateOptions are the flags runIntegrate reads.
type integrateOptions struct {
	Into          string        // --into
	From          string        // --from
	Shard, Shards int           // --shard K/N
	All           bool          // --all
	NoPush        bool          // --no-push
	Watch         bool          // --watch
	Interval      time.Duration // --interval
}

func runIntegrate(ctx context.Context, s *session, opts integrateOptions) error {
	a, err := args(s.c, 0, 1)
	if err != nil {
		return err
	}
	if opts.Watch && opts.Interval <= 0 {
		return usagef("--interval must be positive")
	}
	io := remote.IntegrateOptions{Into: opts.Into, From: opts.From, Shard: opts.Shard, Shards: opts.Shards, All: opts.All, NoPush: opts.NoPush, Merge: mergeOptions(s)}
	if !opts.Watch {
		return integratePass(ctx, s, first(a), io, false)
	}
	for {
		err := integratePass(ctx, s, first(a), io, true)
		if ctx.Err() != nil {
			return nil // interrupted: the watch is over
		}
		if err != nil && !isConflict(err) {
			return err
		}
		io.All = false
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(opts.Interval):
		}
	}
}

func isConflict(err error) bool { return errors.Is(err, store.ErrConflict) }

// integratePass runs one pass and prints it; a pass with nothing moved
// prints nothing in a watch's text output.
func integratePass(ctx context.Context, s *session, remoteName string, io remote.IntegrateOptions, watching bool) error {
	res, err := s.store.Swarm().Integrate(ctx, remoteName, io)
	if err == nil && len(res.Conflicted()) > 0 {
		err = fmt.Errorf("%w: not integrated: %s", store.ErrConflict, strings.Join(res.Conflicted(), ", "))
	}
	if res == nil || err != nil && len(res.Agents) == 0 {
		return err
	}
	if watching && len(res.Agents) == 0 {
		return err // a quiet pass: nothing to say
	}
	if s.json {
		if perr := printJSON(s.out, res); perr != nil {
			return perr
		}
		return err
	}
	for _, am := range res.Agents {
		switch {
		case am.Error != "":
			fmt.Fprintf(s.out, "%s\t%s: error: %s\n", am.Agent, am.Branch, am.Error)
		case am.Status == merge.MergeConflicts:
			fmt.Fprintf(s.out, "%s\t%s: %d conflict(s), left out (recorded in %s)\n", am.Agent, am.Branch, len(am.Conflicts), remote.RecordPath(am.Branch))
			printConflicts(s, am.Conflicts)
		default:
			fmt.Fprintf(s.out, "%s\t%s: %s, %d file(s)\n", am.Agent, am.Branch, am.Status, len(am.Files))
		}
	}
	if res.RecordError != "" {
		fmt.Fprintf(s.out, "conflict records not written: %s\n", res.RecordError)
	}
	if len(res.Agents) == 0 {
		fmt.Fprintf(s.out, "nothing moved (%d branch(es) as last integrated)\n", res.Unmoved)
		return err
	}
	if perr := printPushed(s, res.Pushed); perr != nil {
		return perr
	}
	return err
}
