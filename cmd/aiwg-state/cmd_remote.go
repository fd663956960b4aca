package main

import (
	"context"
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/aiwg/aiwg-state/repo"
)

func newRemoteCommand() *cli.Command {
	return &cli.Command{
		Name:  "remote",
		Usage: "manage the git remotes the store is pushed to and fetched from",
		Description: `A remote is any git server: a path, file://, http(s)://, ssh://
(or user@host:path, with your ssh agent, keys and known_hosts), git://.

Examples:
   aiwg-state remote add origin git@github.com:org/agent-state.git
   aiwg-state remote add origin https://git.example.com/state.git
   aiwg-state remote ls
   aiwg-state remote rm origin`,
		Subcommands: []*cli.Command{
			{
				Name: "add", Usage: "add a remote", ArgsUsage: "NAME URL", Flags: commonFlags(),
				Description: `Examples:
   aiwg-state remote add origin git@github.com:org/agent-state.git
   aiwg-state remote add backup /srv/git/state.git`,
				Action: command(func(s *session) error { return runRemoteAdd(s.c.Context, s) }),
			},
			{
				Name: "ls", Usage: "list remotes", Flags: commonFlags(),
				Description: `Examples:
   aiwg-state remote ls           # NAME and URL; credentials in a URL show as xxxxx
   aiwg-state remote ls --json`,
				Action: command(func(s *session) error { return runRemoteLs(s.c.Context, s) }),
			},
			{
				Name: "rm", Aliases: []string{"remove"}, Usage: "remove a remote and its remote-tracking branches", ArgsUsage: "NAME", Flags: commonFlags(),
				Description: `Examples:
   aiwg-state remote rm backup`,
				Action: command(func(s *session) error { return runRemoteRm(s.c.Context, s) }),
			},
		},
	}
}

func runRemoteAdd(ctx context.Context, s *session) error {
	a, err := args(s.c, 2, 2)
	if err != nil {
		return err
	}
	if err := s.store.AddRemote(ctx, a[0], a[1]); err != nil {
		return err
	}
	return s.done(repo.Remote{Name: a[0], URL: repo.RedactURL(a[1])}, "added remote %s %s", a[0], repo.RedactURL(a[1]))
}

func runRemoteLs(ctx context.Context, s *session) error {
	if _, err := args(s.c, 0, 0); err != nil {
		return err
	}
	rs, err := s.store.Remotes(ctx)
	if err != nil {
		return err
	}
	for i := range rs {
		rs[i].URL = repo.RedactURL(rs[i].URL)
	}
	if s.json {
		if rs == nil {
			rs = []repo.Remote{}
		}
		return printJSON(s.out, rs)
	}
	for _, r := range rs {
		fmt.Fprintf(s.out, "%s\t%s\n", r.Name, r.URL)
	}
	return nil
}

func runRemoteRm(ctx context.Context, s *session) error {
	a, err := args(s.c, 1, 1)
	if err != nil {
		return err
	}
	if err := s.store.RemoveRemote(ctx, a[0]); err != nil {
		return err
	}
	return s.done(map[string]any{"removed": a[0]}, "removed remote %s", a[0])
}
