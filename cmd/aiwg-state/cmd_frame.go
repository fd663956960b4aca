package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/aiwg/aiwg-state/frame"
)

// frameFlags are what every frame command takes: the store, the run and
// who uses it.
func frameFlags(extra ...cli.Flag) []cli.Flag {
	return append(append(commonFlags(),
		&cli.StringFlag{Name: "run", Usage: "the run whose frame this is: a trajectory id, a correlation id (default: $AIWG_RUN)", EnvVars: []string{"AIWG_RUN"}},
		&cli.StringFlag{Name: "agent", Usage: "the agent using the frame (a run is its starter's alone)", EnvVars: []string{"AIWG_AGENT"}},
	), extra...)
}

func newFrameCommand() *cli.Command {
	return &cli.Command{
		Name:  "frame",
		Usage: "one run's scratch values: never versioned, discarded when the run ends",
		Description: `The frame tier: values for one run, keyed by a run id (--run or
$AIWG_RUN; a trajectory id ends its run when the trajectory completes).
A frame is never committed and never pushed. It lives in the server's
memory when aiwg-state serve runs the command, else in the store's git
directory (aiwg/frames/). It is discarded by frame clear, by its
trajectory's completion, or once its time to live (--ttl, from the last
set; default 24h) has passed. A run's keys and values together are bounded
by limits.max_frame_bytes (default 1 MiB; exit 3 past it) and by the
agent's sandbox profile. A run is its starting agent's alone.

Examples:
   export AIWG_RUN=$(aiwg-state traj start --task-type plan --prompt p)
   aiwg-state frame set sum 5
   aiwg-state frame set draft --string "first try" --ttl 1h
   aiwg-state frame get sum
   aiwg-state frame ls
   aiwg-state frame promote draft --to plan.json#summary
   aiwg-state frame clear`,
		Subcommands: []*cli.Command{
			{
				Name: "set",
				Description: `Examples:
   aiwg-state frame set sum 5 --run traj-1a2b3c4d
   aiwg-state frame set draft --string "first try" --ttl 1h`,
				Usage:     "keep VALUE (JSON; - reads standard input) at KEY in the run's frame",
				ArgsUsage: "KEY VALUE",
				Flags: frameFlags(
					&cli.BoolFlag{Name: "string", Aliases: []string{"s"}, Usage: "take VALUE as raw text, stored as a JSON string"},
					&cli.DurationFlag{Name: "ttl", Usage: "discard the run this long after this set (default 24h)"}),
				Action: command(func(s *session) error { return runFrameSet(s.c.Context, s) }),
			},
			{
				Name: "get",
				Description: `Examples:
   aiwg-state frame get sum --run traj-1a2b3c4d
   AIWG_RUN=traj-1a2b3c4d aiwg-state frame get draft --json`,
				Usage:     "print the value at KEY in the run's frame",
				ArgsUsage: "KEY",
				Flags:     frameFlags(),
				Action:    command(func(s *session) error { return runFrameGet(s.c.Context, s) }),
			},
			{
				Name: "ls",
				Description: `Examples:
   aiwg-state frame ls --run traj-1a2b3c4d
   aiwg-state frame ls --json`,
				Usage:  "list the run's keys, their sizes and when the run ends",
				Flags:  frameFlags(),
				Action: command(func(s *session) error { return runFrameLs(s.c.Context, s) }),
			},
			{
				Name: "rm",
				Description: `Examples:
   aiwg-state frame rm draft --run traj-1a2b3c4d`,
				Usage:     "remove KEY from the run's frame",
				ArgsUsage: "KEY",
				Flags:     frameFlags(),
				Action:    command(func(s *session) error { return runFrameRm(s.c.Context, s) }),
			},
			{
				Name: "clear",
				Description: `Examples:
   aiwg-state frame clear --run traj-1a2b3c4d`,
				Usage:  "discard the run's frame: the run has ended",
				Flags:  frameFlags(),
				Action: command(func(s *session) error { return runFrameClear(s.c.Context, s) }),
			},
			{
				Name: "prune",
				Description: `Examples:
   aiwg-state frame prune`,
				Usage: "discard every frame past its time to live",
				Flags: commonFlags(),
				Action: command(func(s *session) error {
					n, err := s.store.Frames().Prune(s.c.Context)
					if err != nil {
						return err
					}
					return s.done(map[string]any{"discarded": n}, "discarded %d frame(s)", n)
				}),
			},
			{
				Name:      "promote",
				Usage:     "write the value at KEY into versioned state, at --to FILE#KEYPATH, as one commit",
				ArgsUsage: "KEY",
				Description: `The commit's Frame-Run and Frame-Key trailers (and Source: frame, unless
--source says otherwise) say where the value came from; git log shows them.
The frame keeps the value.

Examples:
   aiwg-state frame promote summary --to plan.json#result --run traj-1a2b3c4d`,
				Flags: append(writeFlags(),
					&cli.StringFlag{Name: "run", Usage: "the run whose frame this is (default: $AIWG_RUN)", EnvVars: []string{"AIWG_RUN"}},
					&cli.StringFlag{Name: "to", Usage: "FILE#KEYPATH (or FILE: the whole document) the value is written to"}),
				Action: command(func(s *session) error { return runFramePromote(s.c.Context, s) }),
			},
		},
	}
}

// frameRun is the run a frame command names, and who asks.
func (s *session) frameRun() (string, frame.Options, error) {
	run := s.c.String("run")
	if run == "" {
		run = s.inv.getenv("AIWG_RUN")
	}
	if strings.TrimSpace(run) == "" {
		return "", frame.Options{}, usagef("name the run: --run ID or AIWG_RUN=ID (a trajectory id, a correlation id)")
	}
	agent, _ := s.agent()
	return run, frame.Options{Agent: agent}, nil
}

func runFrameSet(ctx context.Context, s *session) error {
	a, err := args(s.c, 2, 2)
	if err != nil {
		return err
	}
	run, o, err := s.frameRun()
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
	o.TTL = s.c.Duration("ttl")
	if err := s.store.Frames().Set(ctx, run, a[0], v, o); err != nil {
		return err
	}
	return s.done(map[string]any{"run": run, "key": a[0]}, "set %s in the frame of run %s", a[0], run)
}

func runFrameGet(ctx context.Context, s *session) error {
	a, err := args(s.c, 1, 1)
	if err != nil {
		return err
	}
	run, o, err := s.frameRun()
	if err != nil {
		return err
	}
	v, err := s.store.Frames().Get(ctx, run, a[0], o)
	if err != nil {
		return err
	}
	if s.json {
		return printJSON(s.out, map[string]any{"run": run, "key": a[0], "value": json.RawMessage(v)})
	}
	return s.printDocument(json.RawMessage(v))
}

func runFrameLs(ctx context.Context, s *session) error {
	if _, err := args(s.c, 0, 0); err != nil {
		return err
	}
	run, o, err := s.frameRun()
	if err != nil {
		return err
	}
	r, err := s.store.Frames().Run(ctx, run, o)
	if err != nil {
		return err
	}
	type key struct {
		Key  string `json:"key"`
		Size int    `json:"size"`
	}
	keys := []key{}
	for _, k := range r.Keys() {
		keys = append(keys, key{k, len(r.Values[k])})
	}
	if s.json {
		return printJSON(s.out, map[string]any{"run": r.ID, "agent": r.Agent, "expires": r.Expires.UTC().Format(time.RFC3339), "bytes": r.Bytes(), "keys": keys})
	}
	fmt.Fprintf(s.out, "run %s (agent %s): %d bytes, discarded at %s\n", r.ID, r.Agent, r.Bytes(), r.Expires.UTC().Format(time.RFC3339))
	for _, k := range keys {
		fmt.Fprintf(s.out, "%s\t%d\n", k.Key, k.Size)
	}
	return nil
}

func runFrameRm(ctx context.Context, s *session) error {
	a, err := args(s.c, 1, 1)
	if err != nil {
		return err
	}
	run, o, err := s.frameRun()
	if err != nil {
		return err
	}
	if err := s.store.Frames().Delete(ctx, run, a[0], o); err != nil {
		return err
	}
	return s.done(map[string]any{"run": run, "key": a[0], "removed": true}, "removed %s from the frame of run %s", a[0], run)
}

func runFrameClear(ctx context.Context, s *session) error {
	if _, err := args(s.c, 0, 0); err != nil {
		return err
	}
	run, o, err := s.frameRun()
	if err != nil {
		return err
	}
	if err := s.store.Frames().Clear(ctx, run, o); err != nil {
		return err
	}
	return s.done(map[string]any{"run": run, "cleared": true}, "discarded the frame of run %s", run)
}

func runFramePromote(ctx context.Context, s *session) error {
	a, err := args(s.c, 1, 1)
	if err != nil {
		return err
	}
	run, o, err := s.frameRun()
	if err != nil {
		return err
	}
	to := s.c.String("to")
	if to == "" {
		return usagef("frame promote needs --to FILE#KEYPATH")
	}
	file, keypath, _ := strings.Cut(to, "#")
	if file == "" {
		return usagef("--to %q names no file", to)
	}
	wo := s.writeOptions()
	m, err := s.store.Frames().Promote(ctx, run, a[0], file, keypath, o, wo)
	return s.report(m, err)
}
