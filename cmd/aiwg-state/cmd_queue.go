package main

import (
	"fmt"
	"time"

	"github.com/urfave/cli/v2"

	aiwgstate "github.com/aiwg/aiwg-state"
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
				Action: command(runQueuePut),
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
				Flags:  append(writeFlags(), &cli.DurationFlag{Name: "wait", Usage: "wait this long for a message when the queue is empty"}),
				Action: command(runQueueTake),
			},
			{
				Name:      "peek",
				Usage:     "print the first messages of QUEUE without taking them",
				ArgsUsage: "QUEUE",
				Description: `Each line: sequence number, message id, producer, time, payload.

Examples:
   aiwg-state queue peek alerts
   aiwg-state queue peek alerts -n 1 --json`,
				Flags:  append(readFlags(), &cli.IntFlag{Name: "n", Usage: "at most this many (default: all)"}),
				Action: command(runQueuePeek),
			},
			{
				Name:  "ls",
				Usage: "list the queues that hold messages, with their counts",
				Description: `Examples:
   aiwg-state queue ls --json`,
				Flags:  readFlags(),
				Action: command(runQueueLs),
			},
		},
	}
}

func runQueuePut(s *session) error {
	a, err := args(s.c, 2, 2)
	if err != nil {
		return err
	}
	v, err := s.value(a[1])
	if err != nil {
		return err
	}
	msg, m, err := s.store.PutMessage(s.c.Context, a[0], v, s.writeOptions())
	if err != nil {
		return bareTextHint(err, a[1])
	}
	return s.done(map[string]any{"message": msg, "mutation": m}, "%s %s #%d, commit %s", a[0], msg.ID, msg.Seq, shortHash(m.Commit))
}

func runQueueTake(s *session) error {
	a, err := args(s.c, 1, 1)
	if err != nil {
		return err
	}
	msg, m, err := s.store.TakeMessage(s.c.Context, a[0], aiwgstate.TakeOptions{Wait: s.c.Duration("wait")}, s.writeOptions())
	if err != nil {
		return err
	}
	if s.json {
		return printJSON(s.out, map[string]any{"message": msg, "mutation": m})
	}
	return s.printDocument(msg.Payload)
}

func runQueuePeek(s *session) error {
	a, err := args(s.c, 1, 1)
	if err != nil {
		return err
	}
	msgs, err := s.store.PeekMessages(s.c.Context, a[0], s.c.Int("n"), s.readOptions())
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

func runQueueLs(s *session) error {
	if _, err := args(s.c, 0, 0); err != nil {
		return err
	}
	qs, err := s.store.Queues(s.c.Context, s.readOptions())
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
