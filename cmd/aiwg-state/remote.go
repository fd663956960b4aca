package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/urfave/cli/v2"

	aiwgstate "github.com/aiwg/aiwg-state"
	"github.com/aiwg/aiwg-state/docschema"
	"github.com/aiwg/aiwg-state/hooks"
	"github.com/aiwg/aiwg-state/merge"
	"github.com/aiwg/aiwg-state/merge/jsonmerge"
	"github.com/aiwg/aiwg-state/repo"
	"github.com/aiwg/aiwg-state/store"
)

// remoteMergeFlags are the flags of the commands that merge what they
// fetch (fetch, pull, sync).
func remoteMergeFlags() []cli.Flag {
	return append(commonFlags(),
		&cli.StringFlag{Name: "strategy", Usage: "settle every path with this strategy instead of .gitattributes"},
		&cli.StringFlag{Name: "agent", Usage: "the agent merge commits are authored by", EnvVars: []string{"AIWG_AGENT"}}, signingKeyFlag())
}

// runPreReceive is the hook: git runs it in the repository's directory
// with the push's updates on standard input; a non-zero exit refuses the
// whole push, and what it prints reaches the pusher.
func runPreReceive(c *cli.Context, stdin io.Reader, stderr io.Writer) error {
	ups, err := hooks.ParseUpdates(stdin)
	if err != nil {
		return err
	}
	gitDir := os.Getenv("GIT_DIR")
	if gitDir == "" {
		gitDir = "."
	}
	timeout, err := hooks.Timeout(c.Context, gitDir)
	if err != nil {
		return err
	}
	err = hooks.CheckWithin(c.Context, timeout, gitDir, ups, hooks.Options{Validate: aiwgstate.ValidateKnownFile, Schemas: docschema.PushCheck, Getenv: os.Getenv})
	hooks.AutoGC(gitDir) // the server's maintenance, when it has work
	var re *hooks.RefusedError
	if errors.As(err, &re) {
		for _, v := range re.Violations {
			fmt.Fprintln(stderr, "aiwg-state: refused: "+v.String())
		}
		return refusedSummary(re)
	}
	return err
}

// refusedSummary is the last line of a refusal: the access policy's when
// a policy rule is among those broken, else the store's.
func refusedSummary(re *hooks.RefusedError) error {
	if errors.Is(re, store.ErrDenied) {
		return fmt.Errorf("%w: %d violation(s)", store.ErrDenied, len(re.Violations))
	}
	return fmt.Errorf("%w: %d violation(s)", hooks.ErrRefused, len(re.Violations))
}

func mergeOptions(s *session) merge.MergeOptions {
	return merge.MergeOptions{Strategy: jsonmerge.Strategy(s.c.String("strategy")), Write: s.agentWrite()}
}

func first(a []string) string {
	if len(a) > 0 {
		return a[0]
	}
	return ""
}

// second returns a[1] when present, else def.
func second(a []string, def string) string {
	if len(a) > 1 && a[1] != "" {
		return a[1]
	}
	return def
}

func printUpdates(s *session, ups []repo.RefUpdate) error {
	if s.json {
		type up struct {
			Ref string `json:"ref"`
			Old string `json:"old,omitempty"`
			New string `json:"new,omitempty"`
		}
		out := []up{}
		for _, u := range ups {
			v := up{Ref: u.Ref}
			if !u.Old.IsZero() {
				v.Old = u.Old.String()
			}
			if !u.New.IsZero() {
				v.New = u.New.String()
			}
			out = append(out, v)
		}
		return printJSON(s.out, out)
	}
	if len(ups) == 0 {
		fmt.Fprintln(s.out, "up to date")
	}
	for _, u := range ups {
		switch {
		case u.Old.IsZero():
			fmt.Fprintf(s.out, "new     %s %s\n", shortHash(u.New.String()), u.Ref)
		case u.New.IsZero():
			fmt.Fprintf(s.out, "gone    %s\n", u.Ref)
		default:
			fmt.Fprintf(s.out, "updated %s..%s %s\n", shortHash(u.Old.String()), shortHash(u.New.String()), u.Ref)
		}
	}
	return nil
}

func printPushed(s *session, res []repo.PushResult) error {
	if s.json {
		if res == nil {
			res = []repo.PushResult{}
		}
		return printJSON(s.out, res)
	}
	for _, r := range res {
		line := fmt.Sprintf("%-10s %s %s", r.Status, strings.TrimPrefix(r.Dst, "refs/heads/"), r.Summary)
		if r.Reason != "" {
			line += " (" + r.Reason + ")"
		}
		fmt.Fprintln(s.out, line)
	}
	return nil
}
