package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/aiwg/aiwg-state/docschema"
	"github.com/aiwg/aiwg-state/internal/errkind"
)

func newSchemaCommand() *cli.Command {
	return &cli.Command{
		Name:  "schema",
		Usage: "JSON Schemas the documents at given paths must meet, checked on every write (swarm shared state)",
		Description: `A schema rules the documents at its paths (gitattributes patterns, as the
access policy's): every write that would leave one of them breaking it is
refused (exit 3), naming the file and the first field at fault, and so is
a new schema that a document already there breaks. The rules live in
.aiwg/schemas.json and the schemas in .aiwg/schemas/, versioned like any
file. JSON Schema 2020-12 unless a schema's $schema says otherwise.

Examples:
   aiwg-state schema add agent agent.schema.json --path 'agents/*.json'
   aiwg-state schema ls
   aiwg-state schema check --at HEAD~10 --json
   aiwg-state schema rm agent`,
		Subcommands: []*cli.Command{
			{
				Name:      "add",
				Usage:     "rule the documents at --path by the JSON Schema in FILE (- reads standard input), as NAME",
				ArgsUsage: "NAME FILE",
				Description: `One commit. A schema of that NAME is replaced, with the paths given.

Examples:
   aiwg-state schema add agent agent.schema.json --path 'agents/*.json' --path 'agents/**/*.json'`,
				Flags: append(writeFlags(), &cli.StringSliceFlag{Name: "path", Usage: "a path pattern the schema rules (repeat for more)"}),
				Action: command(func(s *session) error {
					return runSchemaAdd(s.c.Context, s, schemaAddOptions{
						Path: s.c.StringSlice("path"),
					})
				}),
			},
			{
				Name:  "ls",
				Usage: "list the schema rules, first match first",
				Description: `Examples:
   aiwg-state schema ls --json`,
				Flags:  readFlags(),
				Action: command(func(s *session) error { return runSchemaLs(s.c.Context, s) }),
			},
			{
				Name:      "rm",
				Usage:     "drop the schema NAME and its rule (one commit); --all drops every rule and schema",
				ArgsUsage: "NAME",
				Description: `--all is also the way out of rules broken by plain git or a merge, which
refuse every write until they go.

Examples:
   aiwg-state schema rm agent
   aiwg-state schema rm --all`,
				Flags: append(writeFlags(), &cli.BoolFlag{Name: "all", Usage: "drop every rule and schema"}),
				Action: command(func(s *session) error {
					return runSchemaRm(s.c.Context, s, schemaRmOptions{
						All: s.c.Bool("all"),
					})
				}),
			},
			{
				Name:  "check",
				Usage: "validate every ruled document at a revision (exit 3 if any breaks its schema)",
				Description: `Writes through the store are checked as they land; this finds what plain git
or an older store left.

Examples:
   aiwg-state schema check
   aiwg-state schema check --at main~5 --json`,
				Flags:  readFlags(),
				Action: command(func(s *session) error { return runSchemaCheck(s.c.Context, s) }),
			},
		},
	}
}

// schemaAddOptions are the flags runSchemaAdd reads.
type schemaAddOptions struct {
	Path []string // --path
}

func runSchemaAdd(ctx context.Context, s *session, opts schemaAddOptions) error {
	a, err := args(s.c, 2, 2)
	if err != nil {
		return err
	}
	paths := opts.Path
	if len(paths) == 0 {
		return usagef("schema add: name the documents it rules with --path PATTERN")
	}
	data, err := readFileArg(s.c, a[1])
	if err != nil {
		return err
	}
	return s.report(s.store.Schemas().Add(ctx, a[0], paths, data, s.writeOptions()))
}

func runSchemaLs(ctx context.Context, s *session) error {
	if _, err := args(s.c, 0, 0); err != nil {
		return err
	}
	rules, err := s.store.Schemas().Rules(ctx, s.readOptions())
	if err != nil {
		return err
	}
	if s.json {
		return printJSON(s.out, rules.Rules)
	}
	for _, r := range rules.Rules {
		fmt.Fprintf(s.out, "%-40s %s\n", r.Schema, strings.Join(r.Paths, " "))
	}
	return nil
}

// schemaRmOptions are the flags runSchemaRm reads.
type schemaRmOptions struct {
	All bool // --all
}

func runSchemaRm(ctx context.Context, s *session, opts schemaRmOptions) error {
	a, err := args(s.c, 0, 1)
	if err != nil {
		return err
	}
	if (len(a) == 1) == opts.All {
		return usagef("schema rm: name one schema, or give --all")
	}
	return s.report(s.store.Schemas().Remove(ctx, argAt(a, 0), s.writeOptions()))
}

func runSchemaCheck(ctx context.Context, s *session) error {
	if _, err := args(s.c, 0, 0); err != nil {
		return err
	}
	bad, err := s.store.Schemas().Check(ctx, s.readOptions())
	if err != nil {
		return err
	}
	if s.json {
		if err := printJSON(s.out, bad); err != nil {
			return err
		}
	} else {
		for _, v := range bad {
			fmt.Fprintln(s.out, v.Error())
		}
	}
	if len(bad) > 0 {
		return errkind.Errorf(docschema.ErrInvalid, "%d documents break their schema", len(bad))
	}
	return nil
}
