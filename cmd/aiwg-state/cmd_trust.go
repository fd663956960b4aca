package main

import (
	"context"
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/aiwg/aiwg-state/rlm"
	"github.com/aiwg/aiwg-state/store"
)

func trustCommand() *cli.Command {
	return &cli.Command{
		Name:      "trust",
		Usage:     "consent to run the store's completion handlers on this machine, list or revoke that consent",
		ArgsUsage: "[NAME|DIGEST...]",
		Description: `A completion handler (state on-complete) is a command kept in the store's
versioned manifest, so anyone who can push to a remote you pull from can
change it. As git never transfers hooks, aiwg-state never runs a handler
that history brought until you trust its exact content here: its name and
command, named by a digest. The record lives under the store's git
directory (aiwg/trust.json), which no push or pull carries. A changed
handler is another handler and needs trust again; an untrusted one is
skipped with a warning, and the state still completes. Setting a handler
with 'state on-complete' trusts it on the machine that sets it.

Read the command before you trust it: --list prints each one in full.

Examples:
   aiwg-state trust --list              # the handlers, their digests, trusted or not
   aiwg-state trust                     # trust every handler the manifest holds now
   aiwg-state trust on-complete         # trust one, by name
   aiwg-state trust sha256:3f…          # trust exactly the content you read
   aiwg-state trust --revoke            # withdraw every trust (or name some)`,
		Flags: append(readFlags(),
			&cli.BoolFlag{Name: "list", Usage: "list the handlers and the trust recorded here; change nothing"},
			&cli.BoolFlag{Name: "revoke", Usage: "withdraw the trust of the named handlers (every one when none is named)"},
		),
		Action: command(func(s *session) error {
			return runTrust(s.c.Context, s, trustOptions{
				List:   s.c.Bool("list"),
				Revoke: s.c.Bool("revoke"),
				Branch: s.c.String("branch"),
			})
		}),
	}
}

// trustOptions are the flags runTrust reads.
type trustOptions struct {
	List   bool   // --list
	Revoke bool   // --revoke
	Branch string // --branch
}

func runTrust(ctx context.Context, s *session, opts trustOptions) error {
	match := s.c.Args().Slice()
	list, revoke := opts.List, opts.Revoke
	ro := s.readOptions()
	ro.Branch = opts.Branch
	switch {
	case list && revoke:
		return usagef("trust: --list and --revoke do not go together")
	case list:
		if len(match) > 0 {
			return usagef("trust --list takes no arguments")
		}
		return trustList(s, ro)
	case revoke:
		gone, err := s.store.States().Revoke(ctx, match)
		if err != nil {
			return err
		}
		if s.json {
			return printJSON(s.out, map[string]any{"revoked": nonNil(gone)})
		}
		if len(gone) == 0 {
			fmt.Fprintln(s.out, "nothing was trusted")
		}
		for _, t := range gone {
			fmt.Fprintf(s.out, "revoked %s %s: %s\n", handlerName(t.Name), t.Digest, rlm.CommandLine(t.Command))
		}
		return nil
	}
	done, err := s.store.States().Trust(ctx, ro, match)
	if err != nil {
		return err
	}
	if s.json {
		return printJSON(s.out, map[string]any{"trusted": done})
	}
	for _, t := range done {
		fmt.Fprintf(s.out, "trusted %s %s: %s\n", handlerName(t.Name), t.Digest, rlm.CommandLine(t.Command))
	}
	return nil
}

// trustList prints the manifest's handlers with their trust, and the
// trust recorded for handlers the manifest no longer holds.
func trustList(s *session, ro store.ReadOptions) error {
	hs, err := s.store.States().HandlerTrust(s.c.Context, ro)
	if err != nil {
		return err
	}
	recorded, err := s.store.States().TrustedHandlers(s.c.Context)
	if err != nil {
		return err
	}
	inForce := map[string]bool{}
	for _, h := range hs {
		inForce[h.Digest] = true
	}
	var stale []rlm.TrustedHandler
	for _, t := range recorded {
		if !inForce[t.Digest] {
			stale = append(stale, t)
		}
	}
	if s.json {
		return printJSON(s.out, map[string]any{"handlers": hs, "trusted_elsewhere": nonNil(stale)})
	}
	if len(hs) == 0 {
		fmt.Fprintln(s.out, "no completion handlers (state on-complete sets one)")
	}
	for _, h := range hs {
		mark := "NOT TRUSTED (does not run here; aiwg-state trust " + h.Digest + ")"
		if h.Trusted {
			mark = "trusted"
		}
		fmt.Fprintf(s.out, "%s %s %s\n    %s\n", handlerName(h.Name), h.Digest, mark, rlm.CommandLine(h.Command))
	}
	for _, t := range stale {
		fmt.Fprintf(s.out, "(trusted, no longer in the manifest) %s %s\n    %s\n", handlerName(t.Name), t.Digest, rlm.CommandLine(t.Command))
	}
	return nil
}

// handlerName shows a handler's name as CommandLine shows an argument: nothing in
// it can rewrite the terminal line it is read on.
func handlerName(n string) string { return rlm.CommandLine([]string{n}) }
