package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/aiwg/aiwg-state/memory"
	"github.com/aiwg/aiwg-state/store"
)

func newMemoryCommand() *cli.Command {
	return &cli.Command{
		Name:  "memory",
		Usage: "memory records: JSON payloads keyed by namespace, kind and id, with timestamps and a time to live (tiered state)",
		Description: `The durable memory tier of tiered state. A record is memory/<namespace>/<kind>/<id>.json
in the store: its payload, created_at, updated_at and, with --ttl,
ttl_seconds and expires_at. Every put, append, delete and prune is one
commit, so log and blame of a record are its history. Expired records are
gone for get and ls; prune removes them. Tiered state's namespaces are
session, long_term, daily_log and workflow (any identifier is allowed).
A cache across runs is a record with --ttl (whole seconds). Two ids of
one kind may not differ only in letter case (Alice, alice): the store's
paths may not, as checkouts on macOS and Windows would merge them.

Examples:
   aiwg-state memory put long_term preference theme '{"value":"dark"}'
   aiwg-state memory get long_term preference theme
   aiwg-state memory append daily_log entries 2026-11-24 '"deployed v2"'
   aiwg-state memory put session cooldown monitors '"2026-11-24T10:00:00Z"' --ttl 15m
   aiwg-state memory ls long_term --json
   aiwg-state memory prune
   aiwg-state memory export > memory.jsonl; aiwg-state memory import memory.jsonl`,
		Subcommands: []*cli.Command{
			{
				Name:      "put",
				Usage:     "write a record's payload (VALUE is JSON; - reads standard input)",
				ArgsUsage: "NAMESPACE KIND ID VALUE",
				Description: `A record that exists keeps its created_at; its time to live is what
this put says (none without --ttl).

Examples:
   aiwg-state memory put session context ctx1 '{"goal":"ship v2"}'
   aiwg-state memory put workflow checkpoint run-7 - < state.json
   aiwg-state memory put long_term fact sky --string "blue"`,
				Flags:  memoryValueFlags(),
				Action: command(writeMemory((*memory.Memory).Put)),
			},
			{
				Name:      "append",
				Usage:     "add VALUE to the list a record holds (a new list when there is none)",
				ArgsUsage: "NAMESPACE KIND ID VALUE",
				Description: `The record keeps its time to live unless --ttl gives a new one, counted
from now: each append moves its expiry to now + TTL. A record whose
payload is not a list is refused (exit 3).

Examples:
   aiwg-state memory append daily_log entries 2026-11-24 '{"at":"10:02","did":"deploy"}'`,
				Flags:  memoryValueFlags(),
				Action: command(writeMemory((*memory.Memory).Append)),
			},
			{
				Name:      "get",
				Usage:     "print a live record's payload (with --json, the whole record)",
				ArgsUsage: "NAMESPACE KIND ID",
				Description: `An absent or expired record is exit 3.

Examples:
   aiwg-state memory get long_term preference theme
   aiwg-state memory get session context ctx1 --json
   aiwg-state memory get long_term preference theme --at HEAD~3`,
				Flags:  readFlags(),
				Action: command(func(s *session) error { return runMemoryGet(s.c.Context, s) }),
			},
			{
				Name:      "ls",
				Usage:     "list live records, under NAMESPACE [KIND]",
				ArgsUsage: "[NAMESPACE [KIND]]",
				Description: `Each line: namespace/kind/id, updated_at, expiry, payload (shortened).

Examples:
   aiwg-state memory ls
   aiwg-state memory ls daily_log --json
   aiwg-state memory ls session cooldown --expired`,
				Flags:  append(readFlags(), &cli.BoolFlag{Name: "expired", Usage: "include records that have run out"}),
				Action: command(func(s *session) error { return runMemoryLs(s.c.Context, s) }),
			},
			{
				Name:      "rm",
				Usage:     "delete a record, live or expired",
				ArgsUsage: "NAMESPACE KIND ID",
				Description: `Examples:
   aiwg-state memory rm session context ctx1`,
				Flags:  writeFlags(),
				Action: command(func(s *session) error { return runMemoryRm(s.c.Context, s) }),
			},
			{
				Name:      "prune",
				Usage:     "delete every expired record (under NAMESPACE) in one commit",
				ArgsUsage: "[NAMESPACE]",
				Description: `With nothing expired, nothing is written (exit 0).

Examples:
   aiwg-state memory prune
   aiwg-state memory prune session --json`,
				Flags:  writeFlags(),
				Action: command(func(s *session) error { return runMemoryPrune(s.c.Context, s) }),
			},
			{
				Name:      "export",
				Usage:     "print live records as JSON Lines or Markdown (the tiered state bridges), under NAMESPACE [KIND]",
				ArgsUsage: "[NAMESPACE [KIND]]",
				Description: `--format jsonl (the default): one record a line, as memory import reads
them. --format markdown: a document for people, a section per namespace,
a heading per record with its times and payload.

Examples:
   aiwg-state memory export > memory.jsonl
   aiwg-state memory export long_term --at v1.0 > long_term.jsonl
   aiwg-state memory export --format markdown > memory.md`,
				Flags: append(readFlags(), &cli.BoolFlag{Name: "expired", Usage: "include records that have run out"},
					&cli.StringFlag{Name: "format", Value: "jsonl", Usage: "jsonl or markdown"}),
				Action: command(func(s *session) error { return runMemoryExport(s.c.Context, s) }),
			},
			{
				Name:      "import",
				Usage:     "write the records of a JSON Lines FILE (- reads standard input) in one commit",
				ArgsUsage: "FILE",
				Description: `Records keep their timestamps and expiry. A bad line writes nothing (exit
2, naming the line).

Examples:
   aiwg-state memory import memory.jsonl
   other-tool export | aiwg-state memory import -`,
				Flags:  writeFlags(),
				Action: command(func(s *session) error { return runMemoryImport(s.c.Context, s) }),
			},
		},
	}
}

func runMemoryGet(ctx context.Context, s *session) error {
	a, err := args(s.c, 3, 3)
	if err != nil {
		return err
	}
	if err := s.mayRead(ctx, memoryKey(a).File()); err != nil {
		return err
	}
	r, err := s.store.Memory().Get(ctx, memoryKey(a), s.readOptions())
	if err != nil {
		return err
	}
	if s.json {
		return printJSON(s.out, r)
	}
	return s.printDocument(json.RawMessage(r.Payload))
}

func runMemoryLs(ctx context.Context, s *session) error {
	lo, err := s.memoryList()
	if err != nil {
		return err
	}
	recs, err := s.store.Memory().List(ctx, lo)
	if err == nil {
		recs, err = s.readableRecords(ctx, recs)
	}
	if err != nil {
		return err
	}
	if s.json {
		return printJSON(s.out, recs)
	}
	now := time.Now()
	for _, r := range recs {
		exp := "no expiry"
		if r.ExpiresAt != nil {
			exp = "expires " + r.ExpiresAt.UTC().Format(time.RFC3339)
			if r.Expired(now) {
				exp = "expired " + r.ExpiresAt.UTC().Format(time.RFC3339)
			}
		}
		p := string(r.Payload)
		if len(p) > 60 {
			p = p[:57] + "..."
		}
		fmt.Fprintf(s.out, "%-40s %s  %-30s %s\n", r.Key, r.UpdatedAt.UTC().Format(time.RFC3339), exp, p)
	}
	return nil
}

func runMemoryRm(ctx context.Context, s *session) error {
	a, err := args(s.c, 3, 3)
	if err != nil {
		return err
	}
	m, err := s.store.Memory().Delete(ctx, memoryKey(a), s.writeOptions())
	if err != nil {
		return err
	}
	return s.done(m, "%s %s", shortHash(m.Commit), m.Subject)
}

func runMemoryPrune(ctx context.Context, s *session) error {
	a, err := args(s.c, 0, 1)
	if err != nil {
		return err
	}
	keys, m, err := s.store.Memory().Prune(ctx, argAt(a, 0), s.writeOptions())
	if errors.Is(err, store.ErrNoChange) {
		return s.done(map[string]any{"pruned": []memory.Key{}}, "nothing has expired")
	}
	if err != nil {
		return err
	}
	return s.done(map[string]any{"pruned": keys, "mutation": m}, "%s %s", shortHash(m.Commit), m.Subject)
}

func runMemoryExport(ctx context.Context, s *session) error {
	lo, err := s.memoryList()
	if err != nil {
		return err
	}
	format := s.c.String("format")
	if format != "jsonl" && format != "markdown" {
		return usagef("--format is %q: want jsonl or markdown", format)
	}
	recs, err := s.store.Memory().List(ctx, lo)
	if err == nil {
		recs, err = s.readableRecords(ctx, recs)
	}
	if err != nil {
		return err
	}
	if format == "markdown" {
		return memory.WriteMarkdown(s.out, recs)
	}
	for _, r := range recs {
		if err := printJSON(s.out, r); err != nil {
			return err
		}
	}
	return nil
}

func runMemoryImport(ctx context.Context, s *session) error {
	a, err := args(s.c, 1, 1)
	if err != nil {
		return err
	}
	data, err := readFileArg(s.c, a[0])
	if err != nil {
		return err
	}
	recs, err := memory.ReadLines(bytes.NewReader(data))
	if err != nil {
		return err
	}
	if len(recs) == 0 {
		return usagef("memory import: %s holds no records", a[0])
	}
	res, err := s.store.Memory().Import(ctx, recs, s.writeOptions())
	if errors.Is(err, store.ErrNoChange) {
		return s.done(res, "nothing to import: the %d records are as the store has them", res.Unchanged)
	}
	if err != nil {
		return err
	}
	return s.done(res, "%s %s (%d unchanged)", shortHash(res.Mutation.Commit), res.Mutation.Subject, res.Unchanged)
}

func memoryKey(a []string) memory.Key { return memory.Key{Namespace: a[0], Kind: a[1], ID: a[2]} }

// memoryValueFlags are the flags of the commands that write a record's
// payload.
func memoryValueFlags() []cli.Flag {
	return append(writeFlags(),
		&cli.BoolFlag{Name: "string", Aliases: []string{"s"}, Usage: "take VALUE as raw text, stored as a JSON string"},
		&cli.DurationFlag{Name: "ttl", Usage: "the record expires this long from now (default: never)"},
	)
}

// writeMemory is the action of put and append: NAMESPACE KIND ID VALUE,
// --ttl, and the record written.
func writeMemory(write func(*memory.Memory, context.Context, memory.Key, []byte, time.Duration, store.WriteOptions) (*memory.Record, *store.Mutation, error)) func(*session) error {
	return func(s *session) error {
		a, err := args(s.c, 4, 4)
		if err != nil {
			return err
		}
		v, err := s.value(a[3])
		if err != nil {
			return err
		}
		r, m, err := write(s.store.Memory(), s.c.Context, memoryKey(a), v, s.c.Duration("ttl"), s.writeOptions())
		if err != nil {
			return bareTextHint(err, a[3])
		}
		return s.done(map[string]any{"record": r, "mutation": m}, "%s %s %s", shortHash(m.Commit), m.MutationID, m.Subject)
	}
}

// memoryList reads [NAMESPACE [KIND]], --at and --expired.
func (s *session) memoryList() (memory.ListOptions, error) {
	a, err := args(s.c, 0, 2)
	if err != nil {
		return memory.ListOptions{}, err
	}
	lo := memory.ListOptions{ReadOptions: s.readOptions(), Namespace: argAt(a, 0), Kind: argAt(a, 1), Expired: s.c.Bool("expired")}
	return lo, nil
}
