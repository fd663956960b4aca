package main

import (
	"context"
	"fmt"
	"time"

	"github.com/aiwg/aiwg-state/queue"
	"github.com/urfave/cli/v2"
)

func newQueueCommand() *cli.Command {
	return &cli.Command{
		Name:  "queue",
		Usage: "queues of JSON messages: producers put, consumers take each message once, in order (tiered state)",
		Description: `The coordination tier of tiered state. A message is queues/<name>/<seq>-<id>.json;
put adds one (one commit), take removes the first (one commit), so two
consumers taking at once each get a different message, and the history
keeps every message and who took it. A queue name is identifiers joined
by slashes: a mailbox per agent is inbox/<agent>.

Examples:
   aiwg-state queue put alerts '{"level":"high","what":"disk full"}' --agent pulse
   aiwg-state queue take alerts --agent conductor --json
   aiwg-state queue take inbox/pulse --wait 1m         # block until a message comes
   aiwg-state queue peek alerts -n 5
   aiwg-state queue ls`,
		Subcommands: []*cli.Command{
			{
				Name:      "put",
				Usage:     "add a message (VALUE is JSON; - reads standard input) to the end of QUEUE",
				ArgsUsage: "QUEUE VALUE",
				Description: `Examples:
   aiwg-state queue put alerts '{"level":"high"}'
   aiwg-state queue put inbox/conductor --string "task t-17 done"`,
				Flags:  append(writeFlags(), &cli.BoolFlag{Name: "string", Aliases: []string{"s"}, Usage: "take VALUE as raw text, stored as a JSON string"}),
				Action: command(func(s *session) error { return runQueuePut(s.c.Context, s) }),
			},
			{
				Name:      "take",
				Usage:     "remove the first message of QUEUE and print its payload (with --json, the message)",
				ArgsUsage: "QUEUE",
				Description: `An empty queue is exit 3, at once or after --wait (or when Ctrl-C ends the
wait: nothing was taken).

Examples:
   aiwg-state queue take alerts
   aiwg-state queue take inbox/pulse --wait 30s --json`,
				Flags: append(writeFlags(), &cli.DurationFlag{Name: "wait", Usage: "wait this long for a message when the queue is empty"}),
				Action: command(func(s *session) error {
					return runQueueTake(s.c.Context, s, queueTakeOptions{
						Wait: s.c.Duration("wait"),
					})
				}),
			},
			{
				Name:      "peek",
				Usage:     "print the first messages of QUEUE without taking them",
				ArgsUsage: "QUEUE",
				Description: `Each line: sequence number, message id, producer, time, payload.

Examples:
   aiwg-state queue peek alerts
   aiwg-state queue peek alerts -n 1 --json`,
				Flags: append(readFlags(), &cli.IntFlag{Name: "n", Usage: "at most this many (default: all)"}),
				Action: command(func(s *session) error {
					return runQueuePeek(s.c.Context, s, queuePeekOptions{
						N: s.c.Int("n"),
					})
				}),
			},
			{
				Name:  "ls",
				Usage: "list the queues that hold messages, with their counts",
				Description: `Examples:
   aiwg-state queue ls --json`,
				Flags:  readFlags(),
				Action: command(func(s *session) error { return runQueueLs(s.c.Context, s) }),
			},
		},
	}
}

func runQueuePut(ctx context.Context, s *session) error {
	a, err := args(s.c, 2, 2)
	if err != nil {
		return err
	}
	v, err := s.value(a[1])
	if err != nil {
		return err
	}
	msg, m, err := s.store.Queues().Put(ctx, a[0], v, s.writeOptions())
	if err != nil {
		return bareTextHint(err, a[1])
	}
	return s.done(map[string]any{"message": msg, "mutation": m}, "%s %s #%d, commit %s", a[0], msg.ID, msg.Seq, shortHash(m.Commit))
}

// queueTakeOptions are the flags runQueueTake reads.
type queueTakeOptions struct {
	Wait time.Duration // --wait
}

func runQueueTake(ctx context.Context, s *session, opts queueTakeOptions) error {
	a, err := args(s.c, 1, 1)
	if err != nil {
		return err
	}
	msg, m, err := s.store.Queues().Take(ctx, a[0], queue.TakeOptions{Wait: opts.Wait}, s.writeOptions())
	if err != nil {
		return err
	}
	if s.json {
		return printJSON(s.out, map[string]any{"message": msg, "mutation": m})
	}
	return s.printDocument(msg.Payload)
}

// queuePeekOptions are the flags runQueuePeek reads.
type queuePeekOptions struct {
	N int // --n
}

func runQueuePeek(ctx context.Context, s *session, opts queuePeekOptions) error {
	a, err := args(s.c, 1, 1)
	if err != nil {
		return err
	}
	if err := s.mayRead(ctx, queue.Dir+"/"+a[0]+"/"); err != nil {
		return err
	}
	msgs, err := s.store.Queues().Peek(ctx, a[0], opts.N, s.readOptions())
	if err != nil {
		return err
	}
	if s.json {
		return printJSON(s.out, msgs)
	}
	for _, m := range msgs {
		fmt.Fprintf(s.out, "%6d  %s  %-16s %s  %s\n", m.Seq, m.ID, m.Producer, m.EnqueuedAt.UTC().Format(time.RFC3339), m.Payload)
	}
	return nil
}

func runQueueLs(ctx context.Context, s *session) error {
	if _, err := args(s.c, 0, 0); err != nil {
		return err
	}
	qs, err := s.store.Queues().List(ctx, s.readOptions())
	if err != nil {
		return err
	}
	if s.json {
		return printJSON(s.out, qs)
	}
	for _, q := range qs {
		fmt.Fprintf(s.out, "%-32s %d\n", q.Name, q.Messages)
	}
	return nil
}
