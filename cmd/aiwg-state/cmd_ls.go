package main

import (
	"context"
	"fmt"

	"github.com/urfave/cli/v2"
)

func newLsCommand() *cli.Command {
	return &cli.Command{
		Name:      "ls",
		Usage:     "list a directory of the store",
		ArgsUsage: "[DIR]",
		Description: `Examples:
   aiwg-state ls                        # the top level; directories end in /
   aiwg-state ls docs
   aiwg-state ls states --at HEAD~5 --json`,
		Flags:  readFlags(),
		Action: command(func(s *session) error { return runLs(s.c.Context, s) }),
	}
}

func runLs(ctx context.Context, s *session) error {
	a, err := args(s.c, 0, 1)
	if err != nil {
		return err
	}
	dir := argAt(a, 0)
	es, err := s.store.List(ctx, dir, s.readOptions())
	if err == nil {
		es, err = s.readableEntries(ctx, es)
	}
	if err != nil {
		return err
	}
	if s.json {
		return printJSON(s.out, es)
	}
	for _, e := range es {
		if e.IsDir {
			fmt.Fprintln(s.out, e.Path+"/")
		} else {
			fmt.Fprintln(s.out, e.Path)
		}
	}
	return nil
}
