package main

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/aiwg/aiwg-state/event"
)

// eventBusCommands are the event bus's verbs, under the event command
// the state document's event add shares.
func eventBusCommands() []*cli.Command {
	filterFlags := func() []cli.Flag {
		return append(readFlags(),
			&cli.StringSliceFlag{Name: "type", Aliases: []string{"t"}, Usage: "only events of this type, or family (task.*); repeat for several"},
			&cli.StringFlag{Name: "source", Usage: "only events this agent emitted"},
			&cli.StringFlag{Name: "to", Usage: "only events for this agent (their target)"},
			&cli.StringFlag{Name: "correlation", Usage: "only events of this correlation id: one task's or run's"},
			&cli.StringFlag{Name: "since", Usage: "only events at or after this RFC 3339 time"},
			&cli.StringFlag{Name: "until", Usage: "only events before this RFC 3339 time"},
			&cli.IntFlag{Name: "n", Usage: "at most this many events, the oldest"},
		)
	}
	return []*cli.Command{
		{
			Name:      "emit",
			Usage:     "emit an event of TYPE from the agent (one commit), for --to AGENT or anyone",
			ArgsUsage: "TYPE",
			Description: `An event is data in the store: its own file,
events/<agent>/<day>/<time>-<id>.json, added in one commit whose Event
trailer names its type (log --event and watch --event find it). Files are
never rewritten, so agents emitting at once on their own branches merge
without a conflict. TYPE is names joined by dots: task.created,
handoff.requested, agent.started, system.alert, or your own.

Examples:
   aiwg-state event emit task.created --data '{"task":"t-17"}' --to coder --agent planner
   aiwg-state event emit handoff.requested --to reviewer --correlation run-7
   aiwg-state event emit agent.started --json`,
			Flags: append(writeFlags(),
				&cli.StringFlag{Name: "data", Usage: "the event's payload: JSON (- reads standard input)"},
				&cli.StringFlag{Name: "to", Usage: "the agent the event is for (default: anyone)"},
			),
			Action: command(func(s *session) error {
				return runEventEmit(s.c.Context, s, eventEmitOptions{Data: s.c.String("data"), To: s.c.String("to")})
			}),
		},
		{
			Name:  "ls",
			Usage: "list events at a revision, oldest first, by type, agent, target, correlation and time",
			Description: `Each line: time (UTC), id, type, source → target, correlation, payload.
--at reads any revision (commit, branch, tag, HEAD~N, a time): what the
bus held then.

Examples:
   aiwg-state event ls
   aiwg-state event ls --type task.* --since 2026-11-01T00:00:00Z
   aiwg-state event ls --source planner --to coder --json
   aiwg-state event ls --correlation run-7 --at agents/planner/main`,
			Flags:  filterFlags(),
			Action: command(func(s *session) error { return runEventLs(s.c.Context, s, false) }),
		},
		{
			Name:  "replay",
			Usage: "print the events a revision holds as JSON Lines, oldest first, with ls's filters",
			Description: `For a consumer rebuilding its view: one event a line, whole, in time
order (then by id).

Examples:
   aiwg-state event replay --type handoff.* | my-consumer
   aiwg-state event replay --correlation run-7 --at v1.2
   aiwg-state event replay --since 2026-11-20T00:00:00Z --until 2026-11-21T00:00:00Z`,
			Flags:  filterFlags(),
			Action: command(func(s *session) error { return runEventLs(s.c.Context, s, true) }),
		},
		{
			Name:  "subscriber",
			Usage: "durable subscribers on this machine (watch --subscriber): their cursors and dead letters",
			Description: `A subscriber's cursor and dead letters are kept in the store's git
directory, on this machine alone: never pushed or fetched.

Examples:
   aiwg-state event subscriber ls
   aiwg-state event subscriber show worker --json   # cursor and dead letters
   aiwg-state event subscriber rm worker            # start again from scratch`,
			Subcommands: []*cli.Command{
				{
					Name: "ls", Usage: "list the subscribers, with their cursor and dead letters",
					Description: `Examples:
   aiwg-state event subscriber ls
   aiwg-state event subscriber ls --json`,
					Flags:  commonFlags(),
					Action: command(func(s *session) error { return runSubscriberLs(s) }),
				},
				{
					Name: "show", Usage: "print a subscriber's cursor and its dead letters", ArgsUsage: "NAME",
					Description: `Examples:
   aiwg-state event subscriber show reviewer
   aiwg-state event subscriber show reviewer --json   # each dead letter's mutation and error`,
					Flags:  commonFlags(),
					Action: command(func(s *session) error { return runSubscriberShow(s) }),
				},
				{
					Name: "rm", Usage: "forget a subscriber: its cursor and dead letters", ArgsUsage: "NAME",
					Description: `The next watch --subscriber NAME starts again at --from (default: what
comes next). Exit 5 while the subscriber runs.

Examples:
   aiwg-state event subscriber rm reviewer`,
					Flags:  commonFlags(),
					Action: command(func(s *session) error { return runSubscriberRm(s) }),
				},
			},
		},
	}
}

// eventEmitOptions are the flags runEventEmit reads.
type eventEmitOptions struct {
	Data string // --data
	To   string // --to
}

func runEventEmit(ctx context.Context, s *session, opts eventEmitOptions) error {
	a, err := args(s.c, 1, 1)
	if err != nil {
		return err
	}
	var data []byte
	if opts.Data != "" {
		if data, err = s.value(opts.Data); err != nil {
			return err
		}
	}
	wo := s.writeOptions()
	ev, m, err := s.store.Events().Emit(ctx, event.Input{Type: a[0], Target: opts.To, Correlation: wo.Correlation, Payload: data}, wo)
	if err != nil {
		return bareTextHint(err, opts.Data)
	}
	return s.done(map[string]any{"event": ev, "mutation": m}, "%s %s, commit %s", ev.Type, ev.ID, shortHash(m.Commit))
}

func eventFilter(s *session) (event.Filter, error) {
	f := event.Filter{Types: s.c.StringSlice("type"), Source: s.c.String("source"), Target: s.c.String("to"),
		Correlation: s.c.String("correlation"), Limit: s.c.Int("n")}
	var err error
	if f.Since, err = parseTime("since", s.c.String("since")); err != nil {
		return f, err
	}
	if f.Until, err = parseTime("until", s.c.String("until")); err != nil {
		return f, err
	}
	return f, nil
}

func runEventLs(ctx context.Context, s *session, replay bool) error {
	if _, err := args(s.c, 0, 0); err != nil {
		return err
	}
	f, err := eventFilter(s)
	if err != nil {
		return err
	}
	if replay {
		var werr error
		err := s.store.Events().Replay(ctx, f, s.readOptions(), func(e *event.Event) bool {
			werr = printJSON(s.out, e)
			return werr == nil
		})
		if err != nil {
			return err
		}
		return werr
	}
	if err := s.mayRead(ctx, event.Dir+"/"); err != nil {
		return err
	}
	es, err := s.store.Events().List(ctx, f, s.readOptions())
	if err != nil {
		return err
	}
	if s.json {
		return printJSON(s.out, es)
	}
	for _, e := range es {
		to := e.Target
		if to == "" {
			to = "*"
		}
		corr := e.Correlation
		if corr == "" {
			corr = "-"
		}
		fmt.Fprintf(s.out, "%s  %s  %-20s %s → %s  %s  %s\n", e.Time.UTC().Format("2006-01-02 15:04:05.000"), e.ID, e.Type, e.Source, to, corr, e.Payload)
	}
	return nil
}

// subscriberInfo is what subscriber ls and show print of a subscriber.
type subscriberInfo struct {
	Name        string             `json:"name"`
	Cursor      *event.Cursor      `json:"cursor,omitempty"`
	DeadLetters []event.DeadLetter `json:"dead_letters"`
}

func subscriberOf(s *session, name string) (*subscriberInfo, error) {
	sub, err := s.store.Events().Subscriber(name)
	if err != nil {
		return nil, err
	}
	cur, err := sub.Cursor()
	if err != nil {
		return nil, err
	}
	dead, err := sub.DeadLetters()
	if err != nil {
		return nil, err
	}
	return &subscriberInfo{Name: name, Cursor: cur, DeadLetters: dead}, nil
}

func runSubscriberLs(s *session) error {
	if _, err := args(s.c, 0, 0); err != nil {
		return err
	}
	names, err := s.store.Events().Subscribers()
	if err != nil {
		return err
	}
	out := []*subscriberInfo{}
	for _, n := range names {
		info, err := subscriberOf(s, n)
		if err != nil {
			continue // removed: no cursor
		}
		out = append(out, info)
	}
	if s.json {
		return printJSON(s.out, out)
	}
	for _, i := range out {
		fmt.Fprintf(s.out, "%-24s %s  delivered %d  dead letters %d  updated %s\n", i.Name, cursorText(i.Cursor), i.Cursor.Delivered, len(i.DeadLetters), i.Cursor.Updated.Format(time.RFC3339))
	}
	return nil
}

func cursorText(c *event.Cursor) string {
	var hs []string
	for _, h := range c.Commits {
		hs = append(hs, shortHash(h))
	}
	return strings.Join(hs, ",")
}

func runSubscriberShow(s *session) error {
	a, err := args(s.c, 1, 1)
	if err != nil {
		return err
	}
	info, err := subscriberOf(s, a[0])
	if err != nil {
		return err
	}
	if s.json {
		return printJSON(s.out, info)
	}
	fmt.Fprintf(s.out, "%s: cursor %s, %d delivered, updated %s\n", info.Name, cursorText(info.Cursor), info.Cursor.Delivered, info.Cursor.Updated.Format(time.RFC3339))
	for _, d := range info.DeadLetters {
		fmt.Fprintf(s.out, "dead letter: %s  %s  failed %d times: %s\n", shortHash(d.Mutation.Commit), d.Mutation.Subject, d.Failures, d.Error)
	}
	return nil
}

func runSubscriberRm(s *session) error {
	a, err := args(s.c, 1, 1)
	if err != nil {
		return err
	}
	sub, err := s.store.Events().Subscriber(a[0])
	if err != nil {
		return err
	}
	if err := sub.Remove(); err != nil {
		return err
	}
	return s.done(map[string]any{"removed": a[0]}, "subscriber %s removed", a[0])
}

// eventCommandUsage is the event command's usage line: the state
// document's sub-goal events and the event bus share it.
const eventCommandUsage = "events: emit, list and replay the event bus (emit, ls, replay, subscriber); a sub-goal's events (add)"
