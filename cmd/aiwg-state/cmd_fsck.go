package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/aiwg/aiwg-state/internal/errkind"
	"github.com/aiwg/aiwg-state/repo"
)

func newFsckCommand() *cli.Command {
	return &cli.Command{
		Name:  "fsck",
		Usage: "check the store for damage and say what repairs it (exit 3 when something is wrong)",
		Description: `Runs git fsck --strict (objects, connectivity, names), checks every pack
and its index against their checksums, the history index, and on the
default branch the manifest (.aiwg/store.json), the access policy
(.aiwg/policy.json), the schemas and the documents they rule. Each problem
is printed with the file at fault and its repair. Nothing is changed.

Examples:
   aiwg-state fsck
   aiwg-state fsck --json          # {"ok", "checks", "problems": [{check, file, problem, repair}]}`,
		Flags:  commonFlags(),
		Action: command(func(s *session) error { return runFsck(s.c.Context, s) }),
	}
}

func runFsck(ctx context.Context, s *session) error {
	rep, err := s.store.Fsck(ctx)
	if err != nil {
		return err
	}
	if s.json {
		printJSON(s.out, map[string]any{"ok": len(rep.Problems) == 0, "checks": rep.Checks, "problems": rep.Problems, "warnings": rep.Warnings})
	} else {
		for _, p := range rep.Warnings {
			fmt.Fprintf(s.out, "warning: %s: %s: %s\n  hint: %s\n", p.Check, p.File, oneLine(p.Problem), p.Repair)
		}
		for _, p := range rep.Problems {
			where := p.Check
			if p.File != "" {
				where += ": " + p.File
			}
			fmt.Fprintf(s.out, "damaged: %s: %s\n  repair: %s\n", where, oneLine(p.Problem), p.Repair)
		}
		if len(rep.Problems) == 0 {
			fmt.Fprintf(s.out, "ok: %s\n", strings.Join(rep.Checks, ", "))
		}
	}
	if len(rep.Problems) > 0 {
		return errkind.Errorf(repo.ErrCorrupt, "the store is damaged: fsck found %d problem(s), each printed with its repair", len(rep.Problems))
	}
	return nil
}
