package main

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/aiwg/aiwg-state/cache"
)

func cacheFlags(extra ...cli.Flag) []cli.Flag {
	return append(append(commonFlags(),
		&cli.StringFlag{Name: "agent", Usage: "the agent using the cache (its sandbox profile bounds it)", EnvVars: []string{"AIWG_AGENT"}},
	), extra...)
}

func newCacheCommand() *cli.Command {
	return &cli.Command{
		Name:  "cache",
		Usage: "warm values with a time to live, on this machine: never versioned, never pushed",
		Description: `The cache tier: entries kept under the store's git directory
(aiwg/cache/), never committed, never fetched or pushed, so each clone has
its own. A cache is not history: what it holds is what this machine
computed lately (a cooldown, a throttle, a warm answer), worth nothing to
another clone and nothing to an audit. An entry outlives runs until its
--ttl passes; the cache is bounded by limits.max_cache_bytes (default 64
MiB), past which the least recently used entries are evicted. Any number
of processes may use it at once; a read never sees half a write.

Examples:
   aiwg-state cache set monitors/last_run '"2026-03-01T12:00:00Z"' --ttl 15m
   aiwg-state cache get monitors/last_run
   aiwg-state cache ls
   aiwg-state cache rm monitors/last_run
   aiwg-state cache prune`,
		Subcommands: []*cli.Command{
			{
				Name: "set",
				Description: `Examples:
   aiwg-state cache set monitors/last_run '"2026-03-01T12:00:00Z"' --ttl 15m
   aiwg-state cache set answer --string 42 --agent scraper-1`,
				Usage:     "keep VALUE (JSON; - reads standard input) under KEY",
				ArgsUsage: "KEY VALUE",
				Flags: cacheFlags(
					&cli.BoolFlag{Name: "string", Aliases: []string{"s"}, Usage: "take VALUE as raw text, stored as a JSON string"},
					&cli.DurationFlag{Name: "ttl", Usage: "the entry expires this long from now (default: never; eviction may drop it sooner)"}),
				Action: command(func(s *session) error { return runCacheSet(s.c.Context, s) }),
			},
			{
				Name: "get",
				Description: `Examples:
   aiwg-state cache get monitors/last_run
   aiwg-state cache get monitors/last_run --json`,
				Usage:     "print the value under KEY (exit 3 when absent, expired or evicted)",
				ArgsUsage: "KEY",
				Flags:     cacheFlags(),
				Action:    command(func(s *session) error { return runCacheGet(s.c.Context, s) }),
			},
			{
				Name: "rm",
				Description: `Examples:
   aiwg-state cache rm monitors/last_run`,
				Usage:     "remove the entry under KEY",
				ArgsUsage: "KEY",
				Flags:     cacheFlags(),
				Action:    command(func(s *session) error { return runCacheRm(s.c.Context, s) }),
			},
			{
				Name: "ls",
				Description: `Examples:
   aiwg-state cache ls
   aiwg-state cache ls --json`,
				Usage:  "list the live entries: key, size, expiry",
				Flags:  cacheFlags(),
				Action: command(func(s *session) error { return runCacheLs(s.c.Context, s) }),
			},
			{
				Name: "prune",
				Description: `Examples:
   aiwg-state cache prune`,
				Usage:  "remove expired entries and count the cache's size afresh",
				Flags:  commonFlags(),
				Action: command(func(s *session) error { return runCachePrune(s.c.Context, s) }),
			},
		},
	}
}

func (s *session) cacheOptions() cache.Options {
	agent, _ := s.agent()
	return cache.Options{Agent: agent}
}

func runCacheSet(ctx context.Context, s *session) error {
	a, err := args(s.c, 2, 2)
	if err != nil {
		return err
	}
	v, err := readValue(s.c, a[1])
	if err != nil {
		return err
	}
	if s.c.Bool("string") {
		v, _ = json.Marshal(string(v))
	}
	if s.c.Duration("ttl") < 0 {
		return usagef("--ttl must be positive")
	}
	o := s.cacheOptions()
	o.TTL = s.c.Duration("ttl")
	if err := s.store.Cache().Set(ctx, a[0], v, o); err != nil {
		return err
	}
	return s.done(map[string]any{"key": a[0]}, "cached %s", a[0])
}

func runCacheGet(ctx context.Context, s *session) error {
	a, err := args(s.c, 1, 1)
	if err != nil {
		return err
	}
	v, e, err := s.store.Cache().Get(ctx, a[0], s.cacheOptions())
	if err != nil {
		return err
	}
	if s.json {
		return printJSON(s.out, map[string]any{"key": e.Key, "value": json.RawMessage(v), "expires": e.Expires, "set": e.Set})
	}
	return s.printDocument(json.RawMessage(v))
}

func runCacheRm(ctx context.Context, s *session) error {
	a, err := args(s.c, 1, 1)
	if err != nil {
		return err
	}
	ok, err := s.store.Cache().Remove(ctx, a[0], s.cacheOptions())
	if err != nil {
		return err
	}
	if !ok {
		return s.done(map[string]any{"key": a[0], "removed": false}, "no cache entry %s", a[0])
	}
	return s.done(map[string]any{"key": a[0], "removed": true}, "removed %s", a[0])
}

func runCacheLs(ctx context.Context, s *session) error {
	es, err := s.store.Cache().List(ctx, s.cacheOptions())
	if err != nil {
		return err
	}
	if s.json {
		return printJSON(s.out, map[string]any{"entries": es})
	}
	for _, e := range es {
		exp := "no expiry"
		if !e.Expires.IsZero() {
			exp = "expires " + e.Expires.UTC().Format(time.RFC3339)
		}
		fmt.Fprintf(s.out, "%s\t%d\t%s\n", e.Key, e.Size, exp)
	}
	return nil
}

func runCachePrune(ctx context.Context, s *session) error {
	res, err := s.store.Cache().Prune(ctx)
	if err != nil {
		return err
	}
	return s.done(res, "removed %d entries (%d bytes); %d entries (%d bytes) left", res.Removed, res.Freed, res.Entries, res.Bytes)
}
