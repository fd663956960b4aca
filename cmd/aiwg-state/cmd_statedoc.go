package main

import (
	"context"
	"io"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/aiwg/aiwg-state/objects"
	"github.com/aiwg/aiwg-state/statedoc"
	"github.com/aiwg/aiwg-state/store"
	"github.com/aiwg/aiwg-state/verbiage"
)

func stateDocCommandList() []*cli.Command {
	subFlag := stringFlag("sub", "a sub-goal of GOAL instead of the goal itself")
	summary := stringFlag("summary", "the summary")
	scope := []cli.Flag{
		stringFlag("project", "the project scope (its PROJECT-ID)", "p"),
		stringFlag("chat", "the chat scope (its CHAT-ID) within the project, default the ACTIVE-PROJECT"),
		&cli.BoolFlag{Name: "meta", Usage: "address the META tree instead of CONTENT"},
	}
	stringValue := &cli.BoolFlag{Name: "string", Aliases: []string{"s"}, Usage: "take VALUE as raw text"}
	return []*cli.Command{
		{
			Name:  "goal",
			Usage: "goals and sub-goals of the state document",
			Description: `Titles become verbiage keys ("ship it" -> SHIP-IT). Creating a goal or
sub-goal that exists, or naming one that does not, exits 3.

Examples:
   aiwg-state goal create "ship it" --summary "release 1.0"
   aiwg-state goal sub create ship-it "write docs"
   aiwg-state goal status SHIP-IT blocked
   aiwg-state goal note SHIP-IT "waiting on review" --sub WRITE-DOCS`,
			Subcommands: []*cli.Command{
				{
					Name: "create", Usage: "create a goal (one commit)", ArgsUsage: "TITLE",
					Description: `Examples:
   aiwg-state goal create "ship it" --summary "release 1.0"   # key SHIP-IT
   aiwg-state goal create "fix login" --agent planner`,
					Flags: stateWriteFlags(summary),
					Action: command(func(s *session) error {
						return runGoalCreate(s.c.Context, s, goalCreateOptions{
							Summary: s.c.String("summary"),
						})
					}),
				},
				{
					Name: "sub", Usage: "sub-goals",
					Description: `Examples:
   aiwg-state goal sub create SHIP-IT "write docs"   # the key WRITE-DOCS`,
					Subcommands: []*cli.Command{{
						Name: "create", Usage: "create a sub-goal of GOAL (one commit)", ArgsUsage: "GOAL TITLE",
						Description: `TITLE becomes the sub-goal's key, normalised as a verbiage key.

Examples:
   aiwg-state goal sub create SHIP-IT "write docs"   # the key WRITE-DOCS
   aiwg-state goal sub create SHIP-IT TESTS --summary "cover the merge drivers"`,
						Flags: stateWriteFlags(summary),
						Action: command(func(s *session) error {
							return runGoalSubCreate(s.c.Context, s, goalSubCreateOptions{
								Summary: s.c.String("summary"),
							})
						}),
					}},
				},
				{
					Name: "status", Usage: "set the STATUS of a goal or sub-goal", ArgsUsage: "GOAL STATUS",
					Description: `Examples:
   aiwg-state goal status SHIP-IT blocked
   aiwg-state goal status SHIP-IT done --sub WRITE-DOCS`,
					Flags: stateWriteFlags(subFlag),
					Action: command(func(s *session) error {
						return runGoalStatus(s.c.Context, s, goalStatusOptions{
							Sub: s.c.String("sub"),
						})
					}),
				},
				{
					Name: "note", Usage: "append to the NOTES of a goal or sub-goal", ArgsUsage: "GOAL TEXT",
					Description: `Examples:
   aiwg-state goal note SHIP-IT "waiting on review"
   aiwg-state goal note SHIP-IT "draft ready" --sub WRITE-DOCS`,
					Flags: stateWriteFlags(subFlag),
					Action: command(func(s *session) error {
						return runGoalNote(s.c.Context, s, goalNoteOptions{
							Sub: s.c.String("sub"),
						})
					}),
				},
			},
		},
		{
			Name:  "event",
			Usage: eventCommandUsage,
			Description: `Examples:
   aiwg-state event add SHIP-IT WRITE-DOCS --type reply --body "draft ready"
   aiwg-state latest                            # the first unseen event, marked seen
   aiwg-state event emit task.created --data '{"task":"t-17"}' --to coder
   aiwg-state event ls --type task.*`,
			Subcommands: append([]*cli.Command{{
				Name: "add", Usage: "append an unseen event to a sub-goal's EVENTS (one commit)", ArgsUsage: "GOAL SUB",
				Description: `Examples:
   aiwg-state event add SHIP-IT WRITE-DOCS --type reply --body "draft ready"
   aiwg-state latest`,
				Flags: stateWriteFlags(stringFlag("type", "the event's TYPE"), stringFlag("body", "the event's BODY"),
					stringFlag("id", "the event's ID (default: a new evt-XXXXXXXX)")),
				Action: command(func(s *session) error {
					return runEventAdd(s.c.Context, s, eventAddOptions{
						Type: s.c.String("type"),
						Body: s.c.String("body"),
						Id:   s.c.String("id"),
					})
				}),
			}}, eventBusCommands()...),
		},
		{
			Name:  "latest",
			Usage: "mark the first unseen event SEEN and brief on it; without one, the ready/thinking roll-up",
			Description: `Events are taken across sub-goals in key order (goals, then sub-goals,
then each sub-goal's EVENTS in order). Marking one is a commit; the roll-up
writes nothing.

Examples:
   aiwg-state latest
   aiwg-state latest --json`,
			Flags: stateWriteFlags(),
			Action: command(func(s *session) error {
				return runLatest(s.c.Context, s, latestOptions{
					Doc: s.c.String("doc"),
				})
			}),
		},
		{
			Name:      "request",
			Usage:     "send a request to a sub-goal: IN-FLIGHT and LAST-REQUEST (exit 4 while one is in flight)",
			ArgsUsage: "GOAL SUB TEXT | GOAL SUB --done",
			Description: `--done clears IN-FLIGHT once the answer is in, appending --note to
REQUEST-NOTES.

Examples:
   aiwg-state request SHIP-IT WRITE-DOCS "draft the README"
   aiwg-state request SHIP-IT WRITE-DOCS "again"      # exit 4: in flight
   aiwg-state request SHIP-IT WRITE-DOCS --done --note "answered"`,
			Flags: stateWriteFlags(&cli.BoolFlag{Name: "done", Usage: "clear IN-FLIGHT"}, stringFlag("note", "with --done: a REQUEST-NOTES entry")),
			Action: command(func(s *session) error {
				return runRequest(s.c.Context, s, requestOptions{
					Done: s.c.Bool("done"),
					Note: s.c.String("note"),
				})
			}),
		},
		{
			Name:  "item",
			Usage: "items at global, project or chat scope",
			Description: `PATH is slash or dot delimited (ALPHA/BETA or alpha.beta) and normalized
to verbiage keys, as are the object keys of a JSON VALUE. A VALUE that is
not JSON is stored as a string. set creates what is missing on the way;
a scalar on the way exits 3, as does get or del of a missing item.

Examples:
   aiwg-state item set alpha/beta '{"inner": {"leaf": 1}}'
   aiwg-state item set alpha.beta.inner.other "text"
   aiwg-state item get ALPHA/BETA
   aiwg-state item set --project p1 --chat c1 mood '"calm"'
   aiwg-state item del --project p1 notes --meta`,
			Subcommands: []*cli.Command{
				{
					Name: "set", Usage: "set an item (one commit)", ArgsUsage: "PATH VALUE",
					Description: `Examples:
   aiwg-state item set alpha/beta '{"inner": {"leaf": 1}}'   # stored as ALPHA/BETA/INNER/LEAF
   aiwg-state item set notes.todo "call the owner"           # not JSON: a string
   aiwg-state item set --project p1 --chat c1 mood '"calm"'`,
					Flags:  stateWriteFlags(append(scope, stringValue)...),
					Action: command(func(s *session) error { return runItemSet(s.c.Context, s) }),
				},
				{
					Name: "get", Usage: "print an item", ArgsUsage: "PATH",
					Description: `Examples:
   aiwg-state item get ALPHA/BETA
   aiwg-state item get notes.todo --raw        # a string without quotes
   aiwg-state item get --project p1 --chat c1 mood`,
					Flags: stateReadFlags(append(scope, &cli.BoolFlag{Name: "raw", Usage: "print a string value as plain text"})...),
					Action: command(func(s *session) error {
						return runItemGet(s.c.Context, s, itemGetOptions{
							Doc: s.c.String("doc"),
						})
					}),
				},
				{
					Name: "del", Aliases: []string{"rm"}, Usage: "delete an item (one commit)", ArgsUsage: "PATH",
					Description: `Examples:
   aiwg-state item del alpha/beta/inner
   aiwg-state item del --project p1 owner --meta`,
					Flags:  stateWriteFlags(scope...),
					Action: command(func(s *session) error { return runItemDel(s.c.Context, s) }),
				},
			},
		},
		{
			Name:  "project",
			Usage: "the ACTIVE-PROJECT of the state document",
			Description: `Examples:
   aiwg-state project select p1 --title "Website"`,
			Subcommands: []*cli.Command{{
				Name: "select", Usage: "make a project the ACTIVE-PROJECT (one commit)", ArgsUsage: "PROJECT-ID",
				Description: `Examples:
   aiwg-state project select p1 --title "Website"
   aiwg-state item set --chat c1 topic '"pricing"'   # chat c1 of p1`,
				Flags: stateWriteFlags(stringFlag("title", "the project's TITLE")),
				Action: command(func(s *session) error {
					return runProjectSelect(s.c.Context, s, projectSelectOptions{
						Title: s.c.String("title"),
					})
				}),
			}},
		},
		{
			Name:  "doc",
			Usage: "the state document as a whole: apply a patch or replacement, reset",
			Description: `Examples:
   aiwg-state doc apply patch.json
   aiwg-state doc reset`,
			Subcommands: []*cli.Command{
				{
					Name: "apply", Usage: "apply a JSON Patch (RFC 6902) or a replacement document, validated before it lands (one commit)",
					ArgsUsage: "FILE|-",
					Description: `A JSON array is a JSON Patch whose paths address the resolved document
(they reach into shards; the shards are written, the refs kept). Any other
JSON value replaces the document. Keys must already be verbiage keys (exit
2); a result that breaks the state document's shape, or a patch that does not apply,
exits 3 and writes nothing.

Examples:
   aiwg-state doc apply patch.json
   echo '[{"op":"replace","path":"/GOALS/SHIP-IT/STATUS","value":"done"}]' | aiwg-state doc apply -`,
					Flags:  stateWriteFlags(),
					Action: command(func(s *session) error { return runDocApply(s.c.Context, s) }),
				},
				{
					Name: "reset", Usage: "put the document back to the state document's default shape (one commit; shards are unmounted, not deleted)",
					Description: `Every goal, event, request, item and note goes from the document (history
keeps them): it needs --yes, or a yes typed at a terminal.

Examples:
   aiwg-state doc reset --yes
   aiwg-state doc reset --yes --agent admin -m "start over"`,
					Flags: append(stateWriteFlags(), &cli.BoolFlag{Name: "yes", Usage: "confirm: the document loses every goal, event, request, item and note"}),
					Action: command(func(s *session) error {
						return runDocReset(s.c.Context, s, docResetOptions{
							Doc: s.c.String("doc"),
						})
					}),
				},
			},
		},
		{
			Name:  "state-doc",
			Usage: "read and write keys of a state document through its shards",
			Description: `Keys are normalized to verbiage keys. A value "ref file://PATH" mounts
that JSON file there; "ref file://PATH VALUE" also writes VALUE as the
file's content (refused when the file is already mounted).

Examples:
   aiwg-state state-doc get GOALS
   aiwg-state state-doc get GOALS --no-resolve          # refs as stored
   aiwg-state state-doc set GOALS.OPS 'ref file://state/OPS/GOALS.json {}'
   aiwg-state state-doc set GOALS.OPS.QUEUE '[]'         # written to the shard
   aiwg-state state-doc locate GOALS.OPS.QUEUE           # state/OPS/GOALS.json QUEUE
   aiwg-state state-doc check`,
			Subcommands: []*cli.Command{
				{
					Name: "get", Usage: "print a key (default the whole document), shards inlined", ArgsUsage: "[KEYPATH]",
					Description: `Examples:
   aiwg-state state-doc get                           # the whole document
   aiwg-state state-doc get GOALS --no-resolve        # mounted shards as "ref file://..."
   aiwg-state state-doc get GOALS.SHIP-IT.STATUS --raw`,
					Flags: stateReadFlags(&cli.BoolFlag{Name: "no-resolve", Usage: "show refs as stored"},
						&cli.BoolFlag{Name: "raw", Usage: "print a string value as plain text"}),
					Action: command(func(s *session) error {
						return runStateDocGet(s.c.Context, s, stateDocGetOptions{
							Doc:       s.c.String("doc"),
							NoResolve: s.c.Bool("no-resolve"),
						})
					}),
				},
				{
					Name: "set", Usage: "set a key (one commit)", ArgsUsage: "KEYPATH VALUE",
					Description: `Examples:
   aiwg-state state-doc set GOALS.OPS 'ref file://state/OPS/GOALS.json {}'   # mount a new shard
   aiwg-state state-doc set GOALS.OPS.QUEUE '[]'                             # written to the shard
   aiwg-state state-doc set GOALS.SHIP-IT.OWNER 42 --string                  # "42", not 42`,
					Flags:  stateWriteFlags(stringValue),
					Action: command(func(s *session) error { return runStateDocSet(s.c.Context, s) }),
				},
				{
					Name: "del", Aliases: []string{"rm"}, Usage: "delete a key (one commit)", ArgsUsage: "KEYPATH",
					Description: `Examples:
   aiwg-state state-doc del GOALS.OPS.QUEUE
   aiwg-state state-doc del GOALS.SHIP-IT.OWNER --agent planner`,
					Flags:  stateWriteFlags(),
					Action: command(func(s *session) error { return runStateDocDel(s.c.Context, s) }),
				},
				{
					Name: "locate", Usage: "print the file and key path that store KEYPATH", ArgsUsage: "KEYPATH",
					Description: `Examples:
   aiwg-state state-doc locate GOALS.OPS.QUEUE     # state/OPS/GOALS.json QUEUE
   aiwg-state state-doc locate GOALS.SHIP-IT --json`,
					Flags: stateReadFlags(),
					Action: command(func(s *session) error {
						return runStateDocLocate(s.c.Context, s, stateDocLocateOptions{
							Doc: s.c.String("doc"),
						})
					}),
				},
				{
					Name: "check", Usage: "validate the document and its shards (exit 3 when invalid)",
					Description: `Examples:
   aiwg-state state-doc check                      # state/state.json is valid (2 files)
   aiwg-state state-doc check --at HEAD~1 --json`,
					Flags: stateReadFlags(),
					Action: command(func(s *session) error {
						return runStateDocCheck(s.c.Context, s, stateDocCheckOptions{
							Doc: s.c.String("doc"),
						})
					}),
				},
			},
		},
	}
}

// goalCreateOptions are the flags runGoalCreate reads.
type goalCreateOptions struct {
	Summary string // --summary
}

func runGoalCreate(ctx context.Context, s *session, opts goalCreateOptions) error {
	a, err := args(s.c, 1, 1)
	if err != nil {
		return err
	}
	return s.report(s.stateDoc().CreateGoal(ctx, a[0], opts.Summary, s.writeOptions()))
}

// goalSubCreateOptions are the flags runGoalSubCreate reads.
type goalSubCreateOptions struct {
	Summary string // --summary
}

func runGoalSubCreate(ctx context.Context, s *session, opts goalSubCreateOptions) error {
	a, err := args(s.c, 2, 2)
	if err != nil {
		return err
	}
	return s.report(s.stateDoc().CreateSubGoal(ctx, a[0], a[1], opts.Summary, s.writeOptions()))
}

// goalStatusOptions are the flags runGoalStatus reads.
type goalStatusOptions struct {
	Sub string // --sub
}

func runGoalStatus(ctx context.Context, s *session, opts goalStatusOptions) error {
	a, err := args(s.c, 2, 2)
	if err != nil {
		return err
	}
	return s.report(s.stateDoc().SetStatus(ctx, a[0], opts.Sub, a[1], s.writeOptions()))
}

// goalNoteOptions are the flags runGoalNote reads.
type goalNoteOptions struct {
	Sub string // --sub
}

func runGoalNote(ctx context.Context, s *session, opts goalNoteOptions) error {
	a, err := args(s.c, 2, 2)
	if err != nil {
		return err
	}
	return s.report(s.stateDoc().AddNote(ctx, a[0], opts.Sub, a[1], s.writeOptions()))
}

// eventAddOptions are the flags runEventAdd reads.
type eventAddOptions struct {
	Type string // --type
	Body string // --body
	Id   string // --id
}

func runEventAdd(ctx context.Context, s *session, opts eventAddOptions) error {
	a, err := args(s.c, 2, 2)
	if err != nil {
		return err
	}
	if opts.Type == "" && opts.Body == "" {
		return usagef("event add: an event needs --type or --body (or both)")
	}
	ev := statedoc.Event{ID: opts.Id, Type: opts.Type, Body: opts.Body}
	return s.report(s.stateDoc().AddEvent(ctx, a[0], a[1], ev, s.writeOptions()))
}

// latestOptions are the flags runLatest reads.
type latestOptions struct {
	Doc string // --doc
}

func runLatest(ctx context.Context, s *session, opts latestOptions) error {
	if _, err := args(s.c, 0, 0); err != nil {
		return err
	}
	b, m, err := s.store.StateDocument(opts.Doc).Latest(ctx, s.writeOptions())
	if err != nil {
		return err
	}
	if s.json {
		out := map[string]any{"briefing": b}
		if m != nil {
			out["commit"] = m.Commit
		}
		return printJSON(s.out, out)
	}
	_, err = io.WriteString(s.out, b.String())
	return err
}

// requestOptions are the flags runRequest reads.
type requestOptions struct {
	Done bool   // --done
	Note string // --note
}

func runRequest(ctx context.Context, s *session, opts requestOptions) error {
	if opts.Done {
		a, err := args(s.c, 2, 2)
		if err != nil {
			return err
		}
		return s.report(s.stateDoc().FinishRequest(ctx, a[0], a[1], opts.Note, s.writeOptions()))
	}
	a, err := args(s.c, 2, 3)
	if err != nil {
		return err
	}
	if len(a) == 2 {
		return usagef("request GOAL SUB TEXT: the request's text is missing (only --done takes none)")
	}
	return s.report(s.stateDoc().Request(ctx, a[0], a[1], a[2], s.writeOptions()))
}

func runItemSet(ctx context.Context, s *session) error {
	a, err := args(s.c, 2, 2)
	if err != nil {
		return err
	}
	p, err := statedoc.ItemPath(a[0])
	if err != nil {
		return err
	}
	v, err := s.stateValue(a[1])
	if err != nil {
		return err
	}
	return s.report(s.stateDoc().SetItem(ctx, s.scope(), p, v, s.writeOptions()))
}

// itemGetOptions are the flags runItemGet reads.
type itemGetOptions struct {
	Doc string // --doc
}

func runItemGet(ctx context.Context, s *session, opts itemGetOptions) error {
	a, err := args(s.c, 1, 1)
	if err != nil {
		return err
	}
	p, err := statedoc.ItemPath(a[0])
	if err != nil {
		return err
	}
	doc := s.store.StateDocument(opts.Doc)
	data, err := doc.Item(ctx, s.scope(), p, s.readOptions())
	if err != nil {
		return err
	}
	return s.printValue(doc.Path(), p.String(), data)
}

func runItemDel(ctx context.Context, s *session) error {
	a, err := args(s.c, 1, 1)
	if err != nil {
		return err
	}
	p, err := statedoc.ItemPath(a[0])
	if err != nil {
		return err
	}
	return s.report(s.stateDoc().DeleteItem(ctx, s.scope(), p, s.writeOptions()))
}

// projectSelectOptions are the flags runProjectSelect reads.
type projectSelectOptions struct {
	Title string // --title
}

func runProjectSelect(ctx context.Context, s *session, opts projectSelectOptions) error {
	a, err := args(s.c, 1, 1)
	if err != nil {
		return err
	}
	return s.report(s.stateDoc().SelectProject(ctx, a[0], opts.Title, s.writeOptions()))
}

func runDocApply(ctx context.Context, s *session) error {
	a, err := args(s.c, 1, 1)
	if err != nil {
		return err
	}
	data, err := readFileArg(s.c, a[0])
	if err != nil {
		return usagef("%v", err)
	}
	return s.report(s.stateDoc().Apply(ctx, data, s.writeOptions()))
}

// docResetOptions are the flags runDocReset reads.
type docResetOptions struct {
	Doc string // --doc
}

func runDocReset(ctx context.Context, s *session, opts docResetOptions) error {
	if _, err := args(s.c, 0, 0); err != nil {
		return err
	}
	if err := s.confirm("doc reset empties the state document: every goal, event, request, item and note goes (history keeps them)"); err != nil {
		return err
	}
	return s.report(s.store.StateDocument(opts.Doc).Reset(ctx, s.writeOptions()))
}

// stateDocGetOptions are the flags runStateDocGet reads.
type stateDocGetOptions struct {
	Doc       string // --doc
	NoResolve bool   // --no-resolve
}

func runStateDocGet(ctx context.Context, s *session, opts stateDocGetOptions) error {
	a, err := args(s.c, 0, 1)
	if err != nil {
		return err
	}
	key := argAt(a, 0)
	p, err := verbiage.ParsePath(key)
	if err != nil {
		return err
	}
	if err := s.mayReadStateDoc(ctx, opts.Doc); err != nil {
		return err
	}
	v, err := s.store.StateDocument(opts.Doc).Get(ctx, p, s.readOptions(), opts.NoResolve)
	if err != nil {
		return err
	}
	return s.printValue(s.docName(), key, v)
}

func runStateDocSet(ctx context.Context, s *session) error {
	a, err := args(s.c, 2, 2)
	if err != nil {
		return err
	}
	p, err := verbiage.ParsePath(a[0])
	if err != nil {
		return err
	}
	v, err := s.stateValue(a[1])
	if err != nil {
		return err
	}
	return s.report(s.stateDoc().Set(ctx, p, v, s.writeOptions()))
}

func runStateDocDel(ctx context.Context, s *session) error {
	a, err := args(s.c, 1, 1)
	if err != nil {
		return err
	}
	p, err := verbiage.ParsePath(a[0])
	if err != nil {
		return err
	}
	return s.report(s.stateDoc().Delete(ctx, p, s.writeOptions()))
}

// stateDocLocateOptions are the flags runStateDocLocate reads.
type stateDocLocateOptions struct {
	Doc string // --doc
}

func runStateDocLocate(ctx context.Context, s *session, opts stateDocLocateOptions) error {
	a, err := args(s.c, 1, 1)
	if err != nil {
		return err
	}
	p, err := verbiage.ParsePath(a[0])
	if err != nil {
		return err
	}
	f, k, err := s.store.StateDocument(opts.Doc).Locate(ctx, p, s.readOptions())
	if err != nil {
		return err
	}
	return s.done(map[string]string{"file": f, "key": k}, "%s %s", f, k)
}

// stateDocCheckOptions are the flags runStateDocCheck reads.
type stateDocCheckOptions struct {
	Doc string // --doc
}

func runStateDocCheck(ctx context.Context, s *session, opts stateDocCheckOptions) error {
	d, err := s.store.StateDocument(opts.Doc).Load(ctx, s.readOptions())
	if err != nil {
		return err
	}
	return s.done(map[string]any{"file": d.Path(), "valid": true, "files": d.Files()}, "%s is valid (%d files)", d.Path(), len(d.Files()))
}

// The state document: domain verbs (goal, event, latest, request,
// item, project, doc) and key access through shards (state-doc).

func docFlag() cli.Flag {
	return &cli.StringFlag{Name: "doc", Usage: "the verbiage-ruled state document (default: state/state.json)"}
}

func stateWriteFlags(extra ...cli.Flag) []cli.Flag {
	return append(append(writeFlags(), docFlag()), extra...)
}

func stateReadFlags(extra ...cli.Flag) []cli.Flag {
	return append(append(readFlags(), docFlag()), extra...)
}

// stateDoc is the state document --doc names.
func (s *session) stateDoc() *store.StateDocument {
	return s.store.StateDocument(s.c.String("doc"))
}

// stateValue reads VALUE: JSON when it parses, else the text as a string
// (the state document's json-or-string); --string forces text.
func (s *session) stateValue(arg string) (any, error) {
	data, err := readValue(s.c, arg)
	if err != nil {
		return nil, err
	}
	if arg == "-" {
		data = []byte(strings.TrimSuffix(string(data), "\n"))
	}
	if !s.c.Bool("string") {
		if v, err := objects.Decode(data); err == nil {
			return v, nil
		}
	}
	return string(data), nil
}

func stringFlag(name, usage string, aliases ...string) *cli.StringFlag {
	return &cli.StringFlag{Name: name, Usage: usage, Aliases: aliases}
}

func (s *session) scope() statedoc.Scope {
	return statedoc.Scope{Project: s.c.String("project"), Chat: s.c.String("chat"), Meta: s.c.Bool("meta")}
}

func (s *session) docName() string {
	if d := s.c.String("doc"); d != "" {
		return d
	}
	return statedoc.DefaultPath
}
