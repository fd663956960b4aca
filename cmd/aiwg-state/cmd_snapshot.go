package main

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/aiwg/aiwg-state/snapshot"
	"github.com/aiwg/aiwg-state/store"
)

func snapshotCommand() *cli.Command {
	tagger := func() []cli.Flag {
		return append(commonFlags(), &cli.StringFlag{Name: "agent", Usage: "the tagger", EnvVars: []string{"AIWG_AGENT"}}, signingKeyFlag())
	}
	return &cli.Command{
		Name:  "snapshot",
		Usage: "snapshots of any state (documents, directories, the whole store), as annotated tags snapshots/<name>",
		Description: `A snapshot is an annotated tag on the branch head: its tagger is the agent
and the time, its message the reason, the paths it covers and a description.
git tag -l 'snapshots/*' and git show snapshots/NAME show them to a plain
git user; push --tags takes them to a remote. restore brings the covered
paths back as one new commit (history stays), as rollback does for RLM
state.

Examples:
   aiwg-state snapshot create before-deploy tasks/ plan.json -m "all green"
   aiwg-state snapshot ls
   aiwg-state snapshot diff before-deploy          # what changed since
   aiwg-state snapshot restore before-deploy       # one new commit
   aiwg-state snapshot prune --keep 20 --older-than 720h`,
		Subcommands: []*cli.Command{
			{
				Name:      "create",
				Usage:     "tag the branch head as a snapshot of PATHs (none: the whole store)",
				ArgsUsage: "NAME [PATH…]",
				Description: `PATHs are documents or directories; none covers every document of the
store (not its settings: .aiwg/, .gitattributes). Each must exist. A name
is never reused (exit 3); a store keeps at most 1000 snapshots.

Examples:
   aiwg-state snapshot create nightly-0412 --reason scheduled
   aiwg-state snapshot create pre-merge agents/planner/ -m "before integrating"`,
				Flags: append(tagger(),
					&cli.StringFlag{Name: "message", Aliases: []string{"m"}, Usage: "why, in words"},
					&cli.StringFlag{Name: "reason", Value: "manual", Usage: "manual, scheduled or recovery"},
					&cli.StringFlag{Name: "at", Usage: "snapshot this revision instead of the branch head"}),
				Action: command(func(s *session) error { return runSnapshotCreate(s.c.Context, s) }),
			},
			{
				Name:  "ls",
				Usage: "list the snapshots, oldest first",
				Description: `Examples:
   aiwg-state snapshot ls
   aiwg-state snapshot ls --json`,
				Flags:  commonFlags(),
				Action: command(func(s *session) error { return runSnapshotLs(s.c.Context, s) }),
			},
			{
				Name:      "show",
				Usage:     "show a snapshot: its fields and the files it covers",
				ArgsUsage: "NAME",
				Description: `Examples:
   aiwg-state snapshot show before-deploy
   aiwg-state snapshot show before-deploy --json`,
				Flags:  commonFlags(),
				Action: command(func(s *session) error { return runSnapshotShow(s.c.Context, s) }),
			},
			{
				Name:      "diff",
				Usage:     "what changed, key by key, from a snapshot to REV (default: the branch head), over the paths it covers",
				ArgsUsage: "NAME [REV]",
				Description: `Examples:
   aiwg-state snapshot diff before-deploy
   aiwg-state snapshot diff before-deploy agents/planner/main --format markdown`,
				Flags: append(commonFlags(),
					&cli.StringFlag{Name: "format", Value: "text", Usage: "text, json, patch or markdown"},
					&cli.BoolFlag{Name: "color", Usage: "force colour in text output"}),
				Action: command(func(s *session) error { return runSnapshotDiff(s.c.Context, s) }),
			},
			{
				Name:      "restore",
				Usage:     "make the paths a snapshot covers (or PATHs of them) what they were, as one new commit",
				ArgsUsage: "NAME [PATH…]",
				Description: `Files the snapshot did not have under those paths are removed; each
document's time to live comes back with it. The commit's trailers say
Operation: restore and name the snapshot (Snapshot, Snapshot-Id); the
access policy judges it as any write. Nothing to restore writes nothing.

Examples:
   aiwg-state snapshot restore before-deploy
   aiwg-state snapshot restore before-deploy tasks/t-17.json --agent fixer`,
				Flags:  writeFlags(),
				Action: command(func(s *session) error { return runSnapshotRestore(s.c.Context, s) }),
			},
			{
				Name:  "prune",
				Usage: "remove snapshots' tags (the commits stay): past the newest --keep, older than --older-than, or both",
				Description: `With both, a snapshot goes when it is past the newest --keep and older
than --older-than.

Examples:
   aiwg-state snapshot prune --keep 20
   aiwg-state snapshot prune --older-than 720h
   aiwg-state snapshot prune --keep 5 --older-than 168h --json`,
				Flags: append(commonFlags(),
					&cli.IntFlag{Name: "keep", Usage: "how many of the newest to keep"},
					&cli.DurationFlag{Name: "older-than", Usage: "remove those taken longer ago than this (24h, 720h)"}),
				Action: command(func(s *session) error { return runSnapshotPrune(s.c.Context, s) }),
			},
		},
	}
}

func runSnapshotCreate(ctx context.Context, s *session) error {
	a, err := args(s.c, 1, -1)
	if err != nil {
		return err
	}
	if slices.Contains(a[1:], "") {
		return usagef("snapshot create: an empty PATH (leave PATHs out for the whole store)")
	}
	wo := s.agentWrite()
	wo.Branch = s.c.String("branch")
	sn, err := s.store.Snapshots().Create(ctx, a[0], snapshot.CreateOptions{
		Paths:       a[1:],
		Reason:      s.c.String("reason"),
		Description: s.c.String("message"),
		At:          s.c.String("at"),
	}, wo)
	if err != nil {
		return err
	}
	return s.done(sn, "%s %s -> %s (%s)", sn.ID, strings.TrimPrefix(sn.Ref, "refs/tags/"), shortHash(sn.Commit), strings.Join(sn.Scope, ", "))
}

func runSnapshotLs(ctx context.Context, s *session) error {
	if _, err := args(s.c, 0, 0); err != nil {
		return err
	}
	all, err := s.store.Snapshots().List(ctx)
	if err != nil {
		return err
	}
	if s.json {
		return printJSON(s.out, all)
	}
	for _, sn := range all {
		fmt.Fprintf(s.out, "%s  %-24s %s  %-10s %-9s %s  %s\n", sn.ID, sn.Name, sn.Time.UTC().Format(time.RFC3339), sn.Agent, sn.Reason, shortHash(sn.Commit), strings.Join(sn.Scope, ","))
	}
	return nil
}

func runSnapshotShow(ctx context.Context, s *session) error {
	a, err := args(s.c, 1, 1)
	if err != nil {
		return err
	}
	sn, err := s.store.Snapshots().Get(ctx, a[0])
	if err != nil {
		return err
	}
	files, err := s.store.Snapshots().Files(ctx, a[0])
	if err != nil {
		return err
	}
	if s.json {
		return printJSON(s.out, map[string]any{"snapshot": sn, "files": nonNil(files)})
	}
	fmt.Fprintf(s.out, "snapshot %s (%s)\ntime:   %s\nagent:  %s\nreason: %s\nscope:  %s\ncommit: %s\n",
		sn.Name, sn.ID, sn.Time.UTC().Format(time.RFC3339), sn.Agent, sn.Reason, strings.Join(sn.Scope, ", "), sn.Commit)
	if sn.Description != "" {
		fmt.Fprintf(s.out, "\n    %s\n", strings.ReplaceAll(sn.Description, "\n", "\n    "))
	}
	fmt.Fprintf(s.out, "\n%d files:\n", len(files))
	for _, f := range files {
		fmt.Fprintf(s.out, "  %s\n", f)
	}
	return nil
}

func runSnapshotDiff(ctx context.Context, s *session) error {
	a, err := args(s.c, 1, 2)
	if err != nil {
		return err
	}
	format := s.c.String("format")
	if !slices.Contains([]string{"text", "json", "patch", "markdown"}, format) {
		return usagef("unknown --format %q: want text, json, patch or markdown", format)
	}
	rev := argAt(a, 1)
	if len(a) == 2 && rev == "" {
		return usagef("snapshot diff: an empty REV (leave it out for the branch head)")
	}
	d, _, err := s.store.Snapshots().Diff(ctx, a[0], rev, store.ReadOptions{Branch: s.c.String("branch")})
	if err != nil {
		return err
	}
	return writeDiffs(s, d.Files, format)
}

func runSnapshotRestore(ctx context.Context, s *session) error {
	a, err := args(s.c, 1, -1)
	if err != nil {
		return err
	}
	if slices.Contains(a[1:], "") {
		return usagef("snapshot restore: an empty PATH (leave PATHs out for all the snapshot covers)")
	}
	res, m, err := s.store.Snapshots().Restore(ctx, a[0], snapshot.RestoreOptions{Paths: a[1:]}, s.writeOptions())
	if err != nil {
		return s.report(m, err)
	}
	if s.json {
		return printJSON(s.out, map[string]any{"snapshot": res.Snapshot, "files": nonNil(res.Files), "commit": m})
	}
	fmt.Fprintf(s.out, "%s %s %s (%d files)\n", shortHash(m.Commit), m.MutationID, m.Subject, len(res.Files))
	return nil
}

func runSnapshotPrune(ctx context.Context, s *session) error {
	if _, err := args(s.c, 0, 0); err != nil {
		return err
	}
	if !s.c.IsSet("keep") && !s.c.IsSet("older-than") {
		return usagef("snapshot prune needs --keep N, --older-than D, or both")
	}
	removed, err := s.store.Snapshots().Prune(ctx, snapshot.PruneOptions{
		Keep:      s.c.Int("keep"),
		KeepSet:   s.c.IsSet("keep"),
		OlderThan: s.c.Duration("older-than"),
	})
	if err != nil {
		return err
	}
	if s.json {
		return printJSON(s.out, map[string]any{"removed": removed})
	}
	for _, sn := range removed {
		fmt.Fprintf(s.out, "removed %s %s (%s)\n", sn.ID, sn.Name, sn.Time.UTC().Format(time.RFC3339))
	}
	if len(removed) == 0 {
		fmt.Fprintln(s.out, "no snapshot to prune")
	}
	return nil
}
