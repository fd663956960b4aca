package main

import (
	"context"
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/aiwg/aiwg-state/objects"
	"github.com/aiwg/aiwg-state/rlm"
)

func varCommand() *cli.Command {
	return &cli.Command{
		Name:  "var",
		Usage: "RLM variables: set, get, rm, mv, ls",
		Description: `Scopes: session (the default), temporary, tree, global, and state (the
state's own: prompt, Final, results of child states). A read resolves the
state's own, then temporary, tree, session, global.

Examples:
   aiwg-state var set open_risks 3
   aiwg-state var set draft_summary - < draft.md
   aiwg-state var get open_risks
   aiwg-state var ls --json`,
		Subcommands: []*cli.Command{
			{
				Name:      "set",
				Usage:     "set a variable (one commit)",
				ArgsUsage: "NAME VALUE|-",
				Description: `VALUE is JSON; text that is not JSON is taken as a string (--type text
always takes it verbatim). Types: text, number, boolean, null, json, array,
file_path, file_content; inferred from the value when --type is absent.
Values over 10 KB go to NAME.data beside the variable's file.

Examples:
   aiwg-state var set risk_count 3
   aiwg-state var set summary "Three risks found" --source task-1a2b3c4d
   aiwg-state var set endpoints '["/login", "/logout"]' --scope global
   aiwg-state var set scratch '{"step": 2}' --ttl 600        # temporary, expires
   aiwg-state var set threshold 0.8 --read-only --description "alert level"
   cat report.md | aiwg-state var set report - --type text`,
				Flags: append(rlmWriteFlags(),
					&cli.StringFlag{Name: "type", Usage: "text|number|boolean|null|json|array|file_path|file_content"},
					&cli.StringFlag{Name: "scope", Usage: "global|session|tree|temporary|state"},
					&cli.Int64Flag{Name: "ttl", Usage: "seconds until a temporary variable expires"},
					&cli.BoolFlag{Name: "read-only", Usage: "refuse later writes"},
					&cli.StringFlag{Name: "description", Usage: "what the variable is for"}),
				Action: command(func(s *session) error { return runVarSet(s.c.Context, s) }),
			},
			{
				Name:      "get",
				Usage:     "print a variable's value (no commit; counts one access)",
				ArgsUsage: "NAME",
				Description: `Examples:
   aiwg-state var get risk_count
   aiwg-state var get summary --meta     # the variable with its metadata and access count
   aiwg-state var get report --raw       # a large value's file reference, not its content`,
				Flags: append(rlmReadFlags(),
					&cli.BoolFlag{Name: "meta", Usage: "print the whole variable with metadata"},
					&cli.BoolFlag{Name: "raw", Usage: "a large value's reference instead of its content; strings unquoted"},
					&cli.StringFlag{Name: "scope", Usage: "read one scope only"}),
				Action: command(func(s *session) error {
					return runVarGet(s.c.Context, s, varGetOptions{
						State: s.c.String("state"),
						Scope: s.c.String("scope"),
						Raw:   s.c.Bool("raw"),
						Meta:  s.c.Bool("meta"),
					})
				}),
			},
			{
				Name:      "rm",
				Usage:     "remove a variable (one commit)",
				ArgsUsage: "NAME",
				Description: `Examples:
   aiwg-state var rm scratch
   aiwg-state var rm endpoints --scope global
   aiwg-state var rm draft --state state-a1b2c3d4`,
				Flags: append(rlmWriteFlags(), &cli.StringFlag{Name: "scope", Usage: "the scope to remove from (default: the one a read finds)"}),
				Action: command(func(s *session) error {
					return runVarRm(s.c.Context, s, varRmOptions{
						State: s.c.String("state"),
						Scope: s.c.String("scope"),
					})
				}),
			},
			{
				Name:      "mv",
				Usage:     "rename a variable within its scope (one commit; refuses to overwrite)",
				ArgsUsage: "OLD NEW",
				Description: `Examples:
   aiwg-state var mv risk_count open_risks
   aiwg-state var mv endpoints api_endpoints --scope global`,
				Flags: append(rlmWriteFlags(), &cli.StringFlag{Name: "scope", Usage: "the scope of OLD (default: the one a read finds)"}),
				Action: command(func(s *session) error {
					return runVarMv(s.c.Context, s, varMvOptions{
						State: s.c.String("state"),
						Scope: s.c.String("scope"),
					})
				}),
			},
			{
				Name:  "ls",
				Usage: "list the variables a state sees",
				Description: `Examples:
   aiwg-state var ls                       # name, type, scope, value preview
   aiwg-state var ls --scope global
   aiwg-state var ls --state state-a1b2c3d4 --json`,
				Flags: append(rlmReadFlags(), &cli.StringFlag{Name: "scope", Usage: "one scope only"}),
				Action: command(func(s *session) error {
					return runVarLs(s.c.Context, s, varLsOptions{
						State: s.c.String("state"),
						Scope: s.c.String("scope"),
					})
				}),
			},
		},
	}
}

func runVarSet(ctx context.Context, s *session) error {
	a, err := args(s.c, 2, 2)
	if err != nil {
		return err
	}
	return s.setVariable(a[0], a[1])
}

// varGetOptions are the flags runVarGet reads.
type varGetOptions struct {
	State string // --state
	Scope string // --scope
	Raw   bool   // --raw
	Meta  bool   // --meta
}

func runVarGet(ctx context.Context, s *session, opts varGetOptions) error {
	a, err := args(s.c, 1, 1)
	if err != nil {
		return err
	}
	v, err := s.store.States().Var(ctx, opts.State, a[0], rlm.GetOptions{ReadOptions: s.readOptions(),
		Scope: rlm.Scope(opts.Scope), Raw: opts.Raw})
	if err != nil {
		return err
	}
	if err := s.mayReadVar(ctx, v); err != nil {
		return err
	}
	if opts.Meta || s.json {
		if !opts.Meta {
			return printJSON(s.out, map[string]any{"name": v.Name, "value": v.Value, "type": v.Type})
		}
		return printVar(s, v)
	}
	if str, ok := v.Value.(string); ok && opts.Raw {
		fmt.Fprintln(s.out, str)
		return nil
	}
	b, err := objects.Encode(v.Value)
	if err != nil {
		return err
	}
	_, err = s.out.Write(b)
	return err
}

// varRmOptions are the flags runVarRm reads.
type varRmOptions struct {
	State string // --state
	Scope string // --scope
}

func runVarRm(ctx context.Context, s *session, opts varRmOptions) error {
	a, err := args(s.c, 1, 1)
	if err != nil {
		return err
	}
	return s.report(s.store.States().DeleteVar(ctx, opts.State, a[0], rlm.Scope(opts.Scope), s.writeOptions()))
}

// varMvOptions are the flags runVarMv reads.
type varMvOptions struct {
	State string // --state
	Scope string // --scope
}

func runVarMv(ctx context.Context, s *session, opts varMvOptions) error {
	a, err := args(s.c, 2, 2)
	if err != nil {
		return err
	}
	m, err := s.store.States().RenameVar(ctx, opts.State, a[0], a[1], rlm.Scope(opts.Scope), s.writeOptions())
	if err == nil {
		s.warnNaming(a[1])
	}
	return s.report(m, err)
}

// varLsOptions are the flags runVarLs reads.
type varLsOptions struct {
	State string // --state
	Scope string // --scope
}

func runVarLs(ctx context.Context, s *session, opts varLsOptions) error {
	if _, err := args(s.c, 0, 0); err != nil {
		return err
	}
	vs, err := s.store.States().Vars(ctx, opts.State, rlm.Scope(opts.Scope), s.readOptions())
	if err == nil {
		vs, err = s.readableVars(ctx, vs)
	}
	if err != nil {
		return err
	}
	if s.json {
		return printJSON(s.out, vs)
	}
	for _, v := range vs {
		fmt.Fprintf(s.out, "%-24s %-12s %-9s %s\n", v.Name, v.Type, v.Metadata.Scope, previewValue(v.Value))
	}
	return nil
}
