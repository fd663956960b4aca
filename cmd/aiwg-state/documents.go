package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/urfave/cli/v2"

	aiwgstate "github.com/aiwg/aiwg-state"
	"github.com/aiwg/aiwg-state/objects"
)

func documentCommands() []*cli.Command {
	return []*cli.Command{
		{
			Name:      "get",
			Usage:     "print a document, or one key of it, as canonical JSON",
			ArgsUsage: "FILE [KEYPATH]",
			Description: `Examples:
   aiwg-state get plan.json                 # the whole document
   aiwg-state get plan.json risk.level      # one key (dot form)
   aiwg-state get plan.json items/0/title   # slash form; 0 indexes an array
   aiwg-state get plan.json 'items.*.id'    # a wildcard: {path: value, ...}
   aiwg-state get plan.json risk.level --at HEAD~3
   aiwg-state get plan.json --at 2026-11-01T12:00:00Z
   aiwg-state get plan.json title --raw     # a string without quotes`,
			Flags: append(readFlags(),
				&cli.BoolFlag{Name: "raw", Usage: "print a string value as plain text"},
				&cli.BoolFlag{Name: "no-resolve", Usage: "show a state document's \"ref file://\" mounts as stored, not the shards inlined"}),
			Action: command(func(s *session) error {
				a, err := args(s.c, 1, 2)
				if err != nil {
					return err
				}
				key, err := keyArg(a, 1)
				if err != nil {
					return err
				}
				ro := s.readOptions()
				ro.NoResolve = s.c.Bool("no-resolve")
				v, err := s.store.Get(s.c.Context, a[0], key, ro)
				if err != nil {
					return err
				}
				return s.printValue(a[0], key, v)
			}),
		},
		{
			Name:      "cat",
			Usage:     "print a document as stored",
			ArgsUsage: "FILE",
			Description: `Unlike get, a state document's "ref file://" mounts are printed as
stored, not with the shards inlined. A file that is not a .json document
(a trajectory's report.md) is printed as it is (with --json, as "text").

Examples:
   aiwg-state cat plan.json
   aiwg-state cat plan.json --at HEAD~2
   aiwg-state cat state/state.json      # mounts stay "ref file://..."
   aiwg-state cat trajectories/traj-1a2b3c4d/report.md`,
			Flags: readFlags(),
			Action: command(func(s *session) error {
				a, err := args(s.c, 1, 1)
				if err != nil {
					return err
				}
				if !strings.HasSuffix(a[0], ".json") {
					// Not a document (a trajectory's report.md): its
					// bytes, as git show prints them.
					data, err := s.store.ReadRaw(s.c.Context, a[0], s.readOptions())
					if err != nil {
						return err
					}
					if s.json {
						return printJSON(s.out, map[string]any{"file": a[0], "text": string(data)})
					}
					_, err = s.out.Write(data)
					return err
				}
				v, err := s.store.Cat(s.c.Context, a[0], s.readOptions())
				if err != nil {
					return err
				}
				return s.printValue(a[0], "", v)
			}),
		},
		{
			Name:      "ls",
			Usage:     "list a directory of the store",
			ArgsUsage: "[DIR]",
			Description: `Examples:
   aiwg-state ls                        # the top level; directories end in /
   aiwg-state ls docs
   aiwg-state ls states --at HEAD~5 --json`,
			Flags: readFlags(),
			Action: command(func(s *session) error {
				a, err := args(s.c, 0, 1)
				if err != nil {
					return err
				}
				dir := argAt(a, 0)
				es, err := s.store.List(s.c.Context, dir, s.readOptions())
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
			}),
		},
		{
			Name:      "set",
			Usage:     "set one key of a document (one commit)",
			ArgsUsage: "FILE KEYPATH VALUE",
			Description: `VALUE is JSON: a string needs quotes ('"high"'), or use --string.
"-" reads VALUE from standard input. A missing document or key is created;
a key path through a scalar is refused (exit 3), never turned into an object.
Setting a value a key already holds writes no commit.

Examples:
   aiwg-state set plan.json risk.level '"high"' --agent planner --source task-42
   aiwg-state set plan.json risk.score 0.8
   aiwg-state set plan.json notes --string 'call the owner'
   aiwg-state set plan.json items.- '{"id": 7}'     # "-" appends to an array
   echo '{"a": 1}' | aiwg-state set plan.json extra -
   aiwg-state set plan.json owner '"ops"' --expect HEAD   # exit 6 if someone wrote first`,
			Flags: append(writeFlags(), &cli.BoolFlag{Name: "string", Aliases: []string{"s"}, Usage: "take VALUE as raw text, stored as a JSON string"}),
			Action: command(func(s *session) error {
				a, err := args(s.c, 3, 3)
				if err != nil {
					return err
				}
				key, err := keyArg(a, 1)
				if err != nil {
					return err
				}
				v, err := s.value(a[2])
				if err != nil {
					return err
				}
				m, err := s.store.Set(s.c.Context, a[0], key, v, s.writeOptions())
				return s.report(m, bareTextHint(err, a[2]))
			}),
		},
		{
			Name:      "put",
			Usage:     "replace (or create) a whole document (one commit)",
			ArgsUsage: "FILE [VALUE|-]",
			Description: `Without VALUE, or with "-", the document is read from standard input.

Examples:
   aiwg-state put plan.json '{"goal": "ship", "risk": {"level": "low"}}'
   aiwg-state put plan.json < plan.json`,
			Flags: append(writeFlags(), &cli.BoolFlag{Name: "string", Aliases: []string{"s"}, Usage: "take VALUE as raw text, stored as a JSON string"}),
			Action: command(func(s *session) error {
				a, err := args(s.c, 1, 2)
				if err != nil {
					return err
				}
				src := "-"
				if len(a) == 2 {
					src = a[1]
				}
				v, err := s.value(src)
				if err != nil {
					return err
				}
				m, err := s.store.Put(s.c.Context, a[0], v, s.writeOptions())
				return s.report(m, bareTextHint(err, src))
			}),
		},
		{
			Name:      "del",
			Aliases:   []string{"rm"},
			Usage:     "delete a key of a document, or the document (one commit)",
			ArgsUsage: "FILE [KEYPATH]",
			Description: `Without KEYPATH, the whole document is deleted.

Examples:
   aiwg-state del plan.json draft               # one key
   aiwg-state del plan.json items.0             # an array element; later ones shift down
   aiwg-state del notes.json --agent cleaner    # the whole document`,
			Flags: writeFlags(),
			Action: command(func(s *session) error {
				a, err := args(s.c, 1, 2)
				if err != nil {
					return err
				}
				key, err := keyArg(a, 1)
				if err != nil {
					return err
				}
				return s.report(s.store.Delete(s.c.Context, a[0], key, s.writeOptions()))
			}),
		},
		{
			Name:      "mv",
			Usage:     "rename a document (one commit; refuses to overwrite)",
			ArgsUsage: "FILE NEWFILE",
			Description: `Examples:
   aiwg-state mv plan.json docs/plan.json
   aiwg-state mv draft.json docs/plan.json   # exit 3: docs/plan.json exists
   aiwg-state log docs/plan.json --follow    # the history across the move`,
			Flags: writeFlags(),
			Action: command(func(s *session) error {
				a, err := args(s.c, 2, 2)
				if err != nil {
					return err
				}
				return s.report(s.store.Move(s.c.Context, a[0], a[1], s.writeOptions()))
			}),
		},
		{
			Name:      "apply",
			Usage:     "apply JSON Lines of operations as one commit, all or nothing",
			ArgsUsage: "[FILE|-]",
			Description: `Each line is one operation:
   {"op":"set","file":"plan.json","path":"risk.level","value":"high"}
   {"op":"put","file":"b.json","value":{"x":1}}
   {"op":"del","file":"plan.json","path":"draft"}      # no path: the file
   {"op":"mv","file":"b.json","to":"c.json"}
All lines land in one commit, or none does (a bad line changes nothing).
--commit-each writes one commit per line instead, stopping at the first
failure. Blank lines and lines starting with # are skipped.

Examples:
   aiwg-state apply ops.jsonl --agent importer
   generate-ops | aiwg-state apply - --commit-each`,
			Flags: append(writeFlags(), &cli.BoolFlag{Name: "commit-each", Usage: "one commit per operation"}),
			Action: command(func(s *session) error {
				a, err := args(s.c, 0, 1)
				if err != nil {
					return err
				}
				data, err := readFileArg(s.c, argAt(append(a, "-"), 0))
				if err != nil {
					return err
				}
				ops, err := aiwgstate.ReadOps(bytes.NewReader(data))
				if err != nil {
					return err
				}
				if !s.c.Bool("commit-each") {
					return s.report(s.store.Apply(s.c.Context, ops, s.writeOptions()))
				}
				for i, op := range ops {
					m, err := s.store.Apply(s.c.Context, []aiwgstate.Op{op}, s.writeOptions())
					if err != nil && !errors.Is(err, aiwgstate.ErrNoChange) {
						return fmt.Errorf("line %d: %w (the %d lines before it were committed)", i+1, err, i)
					}
					if err := s.report(m, err); err != nil {
						return err
					}
				}
				return nil
			}),
		},
	}
}

// value reads a VALUE argument as JSON bytes, honouring --string and "-".
func (s *session) value(arg string) ([]byte, error) {
	data, err := readValue(s.c, arg)
	if err != nil {
		return nil, err
	}
	if s.c.Bool("string") {
		if arg == "-" {
			data = bytes.TrimSuffix(data, []byte("\n"))
		}
		return json.Marshal(string(data))
	}
	return data, nil
}

// printValue prints a read value: canonical JSON as is, a string bare with
// --raw, or with --json an object naming what was read.
func (s *session) printValue(file, key string, v []byte) error {
	if s.json {
		return printJSON(s.out, map[string]any{"file": file, "key": key, "at": s.c.String("at"), "value": json.RawMessage(bytes.TrimSpace(v))})
	}
	if s.c.Bool("raw") {
		var str string
		if json.Unmarshal(v, &str) == nil {
			fmt.Fprintln(s.out, str)
			return nil
		}
	}
	_, err := s.out.Write(v)
	if len(v) > 0 && v[len(v)-1] != '\n' {
		fmt.Fprintln(s.out)
	}
	return err
}

// report prints the outcome of a write.
func (s *session) report(m *aiwgstate.Mutation, err error) error {
	if errors.Is(err, aiwgstate.ErrNoChange) {
		if s.json {
			return printJSON(s.out, map[string]any{"no_change": true})
		}
		fmt.Fprintln(s.out, "no change: the store already holds that; no commit written")
		return nil
	}
	if err != nil {
		return err
	}
	return s.done(m, "%s %s %s", shortHash(m.Commit), m.MutationID, m.Subject)
}

// bareTextHint adds to a value's JSON error the two ways to write text,
// when the value given on the command line reads as unquoted text: the
// shell ate the quotes of '"high"', or none were written.
func bareTextHint(err error, arg string) error {
	if err == nil || arg == "-" || !errors.Is(err, objects.ErrInvalidJSON) {
		return err
	}
	r, _ := utf8.DecodeRuneInString(arg)
	if !unicode.IsLetter(r) {
		return err
	}
	if strings.ContainsAny(arg, `'"\`) {
		return fmt.Errorf("%w (text is a JSON string: for this one, use --string)", err)
	}
	return fmt.Errorf("%w (text is a JSON string: '\"%s\"' in the shell, or --string)", err, arg)
}
