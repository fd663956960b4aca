package main

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/urfave/cli/v2"
)

func newIncrCommand() *cli.Command {
	return &cli.Command{
		Name:      "incr",
		Usage:     "add N (default 1) to the number at a key, atomically (one commit)",
		ArgsUsage: "FILE KEYPATH [N]",
		Description: `An absent key or document counts as 0. The commit records what was added
in its Delta trailer (FILE#KEY N); two agents that increment one counter on
their own branches merge to the sum of both increments, without a conflict,
where the file's strategy is sum (aiwg-state strategy set 'counters/*.json'
sum). N is any JSON number; a negative one after --. A value that is not a
number is exit 3. The key's time to live, if it has one, stays.

Prints the new value (with --json, the commit too).

Examples:
   aiwg-state incr counters.json tasks.done
   aiwg-state incr counters.json tokens.used 1250 --agent planner
   aiwg-state incr counters.json budget.left -- -0.25`,
		Flags:  writeFlags(),
		Action: command(func(s *session) error { return runIncr(s.c.Context, s) }),
	}
}

func runIncr(ctx context.Context, s *session) error {
	a, err := args(s.c, 2, 3)
	if err != nil {
		return err
	}
	key, err := keyArg(a, 1)
	if err != nil {
		return err
	}
	if key == "" {
		return usagef("incr adds to a key: name its KEYPATH")
	}
	v, m, err := s.store.Incr(ctx, a[0], key, []byte(argAt(a, 2)), s.writeOptions())
	if err != nil {
		return err
	}
	if s.json {
		return printJSON(s.out, map[string]any{"file": a[0], "key": key, "value": json.RawMessage(v), "commit": m})
	}
	fmt.Fprintf(s.out, "%s\n", v)
	return nil
}
