package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/aiwg/aiwg-state/rlm"
	"github.com/aiwg/aiwg-state/store"
)

func stateCommand() *cli.Command {
	return &cli.Command{
		Name:  "state",
		Usage: "RLM states: init, ls, show, status, end, export, import, on-complete",
		Description: `An RLM state is a prompt, a Final answer and named variables.
Its header is states/<id>/state.json; every variable is its own file, so
git log -- <file> is that variable's history.

Examples:
   aiwg-state state init --prompt "summarise the incident"
   aiwg-state state status
   aiwg-state state export > state.json`,
		Subcommands: []*cli.Command{
			{
				Name:      "init",
				Usage:     "create a state: header, read-only prompt, Final = null, initial checkpoint (one commit)",
				ArgsUsage: " ",
				Description: `Examples:
   aiwg-state state init --prompt "Analyze security risks in the auth module"
   aiwg-state state init --prompt "Summarize" --session sess-1 --tree tree-1a2b3c4d
   aiwg-state state init --prompt "Sub-task" --parent state-a1b2c3d4   # a child in a task tree
   aiwg-state state init --prompt "Triage" --model claude --temperature 0 --seed 7 --execution-mode seeded`,
				Flags: append(writeFlags(),
					&cli.StringFlag{Name: "prompt", Usage: "the original input (read-only afterwards)", Required: true},
					&cli.StringFlag{Name: "session", Usage: "session id (default: the parent's, else a session of the state's own)"},
					&cli.StringFlag{Name: "tree", Usage: "task tree id, tree-xxxxxxxx (default: the parent's)"},
					&cli.StringFlag{Name: "parent", Usage: "parent state id in a task tree"},
					&cli.StringFlag{Name: "model", Usage: "execution_config.model: the default model, for reproducibility"},
					&cli.Float64Flag{Name: "temperature", Usage: "execution_config.temperature (0 to 2)"},
					&cli.Int64Flag{Name: "seed", Usage: "execution_config.seed: the random seed"},
					&cli.StringFlag{Name: "execution-mode", Usage: "execution_config.execution_mode: strict, seeded, logged or default"},
					&cli.Int64Flag{Name: "context-window", Usage: "execution_config.context_window_tokens (at least 1000)"}),
				Action: command(func(s *session) error {
					return runStateInit(s.c.Context, s, stateInitOptions{
						Prompt:          s.c.String("prompt"),
						Session:         s.c.String("session"),
						Tree:            s.c.String("tree"),
						Parent:          s.c.String("parent"),
						ExecutionConfig: executionConfig(s.c),
					})
				}),
			},
			{
				Name:  "ls",
				Usage: "list the states on the branch, oldest first",
				Description: `Examples:
   aiwg-state state ls            # id, status, variable count, created, parent
   aiwg-state state ls --json`,
				Flags:  readFlags(),
				Action: command(func(s *session) error { return runStateLs(s.c.Context, s) }),
			},
			{
				Name:      "show",
				Usage:     "show a state's header, status and children",
				ArgsUsage: "[ID]",
				Description: `Examples:
   aiwg-state state show                   # the newest state
   aiwg-state state show state-a1b2c3d4
   aiwg-state state show --at HEAD~3 --json`,
				Flags:  rlmReadFlags(),
				Action: command(func(s *session) error { return runStateShow(s.c.Context, s) }),
			},
			{
				Name:      "end",
				Usage:     "end a state without a Final: --status error or cancelled (one commit)",
				ArgsUsage: "[ID]",
				Description: `The completion statuses of RLM state besides complete: the state's
header records the status, when and --reason. Its variables are read-only from then on
(exit 3); a rollback to a checkpoint taken before reopens it. A state
whose Final is set is complete and cannot end otherwise.

Examples:
   aiwg-state state end --status cancelled --reason "user stopped the run"
   aiwg-state state end state-a1b2c3d4 --status error --reason "tool timed out" --json`,
				Flags: append(rlmWriteFlags(),
					&cli.StringFlag{Name: "status", Usage: "error or cancelled", Required: true},
					&cli.StringFlag{Name: "reason", Usage: "why the state ended"}),
				Action: command(func(s *session) error {
					return runStateEnd(s.c.Context, s, stateEndOptions{
						Status: s.c.String("status"),
						Reason: s.c.String("reason"),
					})
				}),
			},
			{
				Name:      "status",
				Usage:     "complete, incomplete, error or cancelled (exit 0 either way)",
				ArgsUsage: "[ID]",
				Description: `Examples:
   aiwg-state state status                 # state-a1b2c3d4 incomplete
   aiwg-state state status state-a1b2c3d4 --json`,
				Flags:  rlmReadFlags(),
				Action: command(func(s *session) error { return runStateStatus(s.c.Context, s) }),
			},
			{
				Name:      "export",
				Usage:     "print a state as one document of the RLM state schema (validated)",
				ArgsUsage: "[ID]",
				Description: `History is derived from the commits, checkpoints from the tags, metadata is
counted. An export carries at most 10,000 mutations (the RLM state limit): page 1
is the newest 10,000, --page 2 the 10,000 before, and so on; history.page and
history.pages say where a page sits. Nothing is ever dropped from git.

Examples:
   aiwg-state state export > state.json
   aiwg-state state export state-a1b2c3d4 --page 2`,
				Flags: append(rlmReadFlags(), &cli.IntFlag{Name: "page", Usage: "history page (1 = newest)", Value: 1}),
				Action: command(func(s *session) error {
					return runStateExport(s.c.Context, s, stateExportOptions{
						Page: s.c.Int("page"),
					})
				}),
			},
			{
				Name:      "import",
				Usage:     "turn a state document into history: one commit per mutation, checkpoints as tags",
				ArgsUsage: "FILE|-",
				Description: `FILE is a document of the RLM state schema, as state export prints it. A
state the store already holds is refused (exit 3), unless:
   --as NEW-ID    imports it beside the one there, as a new state (checkpoints get new ids)
   --replace      makes the one there what the file says, in one commit: the
                  file's variables set, the state's own (state and temporary
                  scope) that the file lacks removed; history and checkpoints stay

Examples:
   aiwg-state state import state.json --agent importer
   aiwg-state state export --store a.git | aiwg-state state import - --store b.git
   aiwg-state state export state-1a2b3c4d > s.json
   aiwg-state state import s.json --replace        # back to what s.json says
   aiwg-state state import s.json --as state-5e6f7a8b`,
				Flags: append(writeFlags(),
					&cli.StringFlag{Name: "as", Usage: "import as a new state of this id (state- and 8 hex digits)"},
					&cli.BoolFlag{Name: "replace", Usage: "make the state the store holds what FILE says (one commit)"}),
				Action: command(func(s *session) error {
					return runStateImport(s.c.Context, s, stateImportOptions{
						As:      s.c.String("as"),
						Replace: s.c.Bool("replace"),
					})
				}),
			},
			{
				Name:      "on-complete",
				Usage:     "list, set or clear the command run once when a state's Final turns non-null",
				ArgsUsage: "[COMMAND]",
				Description: `The command runs through sh -c with AIWG_STATE_ID, AIWG_STATE_COMMIT and
AIWG_STATE_STORE set and Final's value (one line of JSON) on standard input, once per completion,
in the process whose write completed the state. It is kept in the store
manifest (.aiwg/store.json, section rlm.on_complete), versioned like the rest.
A handler runs only on machines that trust it: setting it here trusts it
here; a handler that arrives by pull or clone is skipped, with a warning,
until 'aiwg-state trust' (see its help).

Examples:
   aiwg-state state on-complete 'echo "$AIWG_STATE_ID done" >> completed.log'
   aiwg-state state on-complete            # list
   aiwg-state state on-complete --clear`,
				Flags: append(writeFlags(), &cli.BoolFlag{Name: "clear", Usage: "remove the handlers"}),
				Action: command(func(s *session) error {
					return runStateOnComplete(s.c.Context, s, stateOnCompleteOptions{
						Clear: s.c.Bool("clear"),
					})
				}),
			},
		},
	}
}

// stateInitOptions are the flags runStateInit reads.
type stateInitOptions struct {
	Prompt  string // --prompt
	Session string // --session
	Tree    string // --tree
	Parent  string // --parent
	// ExecutionConfig holds the execution settings given (--model,
	// --temperature, --seed, --execution-mode, --context-window) under
	// their execution_config keys; nil when none is.
	ExecutionConfig map[string]any
}

// executionConfig is the execution settings given on the command line,
// under their execution_config keys; nil when none is.
func executionConfig(c *cli.Context) map[string]any {
	config := map[string]any{}
	for flag, key := range map[string]string{"model": "model", "temperature": "temperature", "seed": "seed", "execution-mode": "execution_mode", "context-window": "context_window_tokens"} {
		if c.IsSet(flag) {
			config[key] = c.Value(flag)
		}
	}
	if len(config) == 0 {
		return nil
	}
	return config
}

func runStateInit(ctx context.Context, s *session, opts stateInitOptions) error {
	if _, err := args(s.c, 0, 0); err != nil {
		return err
	}
	info, m, err := s.store.States().Init(ctx, rlm.StateInit{Prompt: opts.Prompt, Session: opts.Session,
		Tree: opts.Tree, Parent: opts.Parent, ExecutionConfig: opts.ExecutionConfig}, s.writeOptions())
	if err != nil {
		return err
	}
	return s.done(map[string]any{"state": info, "mutation": m}, "%s %s created %s (session %s)", shortHash(m.Commit), m.MutationID, info.StateID, info.SessionID)
}

func runStateLs(ctx context.Context, s *session) error {
	if _, err := args(s.c, 0, 0); err != nil {
		return err
	}
	sts, err := s.store.States().List(ctx, s.readOptions())
	if err == nil {
		sts, err = s.readableStates(ctx, sts)
	}
	if err != nil {
		return err
	}
	if s.json {
		return printJSON(s.out, sts)
	}
	for _, st := range sts {
		parent := ""
		if st.ParentStateID != "" {
			parent = " parent " + st.ParentStateID
		}
		fmt.Fprintf(s.out, "%s  %-10s  %3d vars  %s%s\n", st.StateID, st.CompletionStatus, st.VariableCount, st.CreatedAt, parent)
	}
	return nil
}

func runStateShow(ctx context.Context, s *session) error {
	info, err := stateOfArg(s)
	if err != nil {
		return err
	}
	return s.printDocument(info)
}

// stateEndOptions are the flags runStateEnd reads.
type stateEndOptions struct {
	Status string // --status
	Reason string // --reason
}

func runStateEnd(ctx context.Context, s *session, opts stateEndOptions) error {
	a, err := args(s.c, 0, 1)
	if err != nil {
		return err
	}
	info, m, err := s.store.States().End(ctx, stateArg(s, a), opts.Status, opts.Reason, s.writeOptions())
	if err != nil {
		return err
	}
	return s.done(map[string]any{"state_id": info.StateID, "completion_status": info.CompletionStatus, "mutation": m},
		"%s %s, commit %s", info.StateID, info.CompletionStatus, shortHash(m.Commit))
}

func runStateStatus(ctx context.Context, s *session) error {
	info, err := stateOfArg(s)
	if err != nil {
		return err
	}
	out := map[string]any{"state_id": info.StateID, "completion_status": info.CompletionStatus, "final": info.Final}
	if info.EndedAt != "" {
		out["ended_at"], out["end_reason"] = info.EndedAt, info.EndReason
	}
	return s.done(out, "%s %s", info.StateID, info.CompletionStatus)
}

// stateExportOptions are the flags runStateExport reads.
type stateExportOptions struct {
	Page int // --page
}

func runStateExport(ctx context.Context, s *session, opts stateExportOptions) error {
	a, err := args(s.c, 0, 1)
	if err != nil {
		return err
	}
	if opts.Page < 1 {
		return usagef("--page %d: pages count from 1 (the newest)", opts.Page)
	}
	if s.readAgent() != "" {
		// An export holds the header and every variable the state sees:
		// all of them must be readable.
		info, err := s.store.States().Get(ctx, stateArg(s, a), s.readOptions())
		if err != nil {
			return err
		}
		if err := s.mayReadState(ctx, info.StateID); err != nil {
			return err
		}
		vs, err := s.store.States().Vars(ctx, info.StateID, "", s.readOptions())
		if err != nil {
			return err
		}
		for i := range vs {
			if err := s.mayReadVar(ctx, &vs[i]); err != nil {
				return err
			}
		}
	}
	out, err := s.store.States().Export(ctx, stateArg(s, a), rlm.ExportOptions{ReadOptions: s.readOptions(), Page: opts.Page})
	if err != nil {
		return err
	}
	_, err = s.out.Write(out)
	return err
}

// stateImportOptions are the flags runStateImport reads.
type stateImportOptions struct {
	As      string // --as
	Replace bool   // --replace
}

func runStateImport(ctx context.Context, s *session, opts stateImportOptions) error {
	a, err := args(s.c, 1, 1)
	if err != nil {
		return err
	}
	if opts.As != "" && opts.Replace {
		return usagef("--as makes a new state and --replace changes the one there: one or the other")
	}
	data, err := readFileArg(s.c, a[0])
	if err != nil {
		return usagef("%v", err)
	}
	info, err := s.store.States().ImportWith(ctx, data, rlm.ImportOptions{As: opts.As, Replace: opts.Replace}, s.writeOptions())
	if errors.Is(err, store.ErrNoChange) {
		return s.report(nil, err)
	}
	if err != nil {
		return err
	}
	return s.done(info, "imported %s", info.StateID)
}

// stateOnCompleteOptions are the flags runStateOnComplete reads.
type stateOnCompleteOptions struct {
	Clear bool // --clear
}

func runStateOnComplete(ctx context.Context, s *session, opts stateOnCompleteOptions) error {
	a, err := args(s.c, 0, 1)
	if err != nil {
		return err
	}
	if len(a) == 0 && !opts.Clear {
		hs, err := s.store.States().CompletionHandlers(ctx, s.readOptions())
		if err != nil {
			return err
		}
		if s.json {
			return printJSON(s.out, hs)
		}
		trust, err := s.store.States().HandlerTrust(ctx, s.readOptions())
		if err != nil {
			return err
		}
		for _, h := range trust {
			note := ""
			if !h.Trusted {
				note = "  (not trusted here, does not run: aiwg-state trust --list)"
			}
			fmt.Fprintf(s.out, "%s: %s%s\n", h.Name, rlm.CommandLine(h.Command), note)
		}
		return nil
	}
	var hs []store.CompletionHandler
	if len(a) == 1 {
		hs = append(hs, store.CompletionHandler{Name: "on-complete", Command: []string{"sh", "-c", a[0]}})
	}
	return s.report(s.store.States().SetCompletionHandlers(ctx, hs, s.writeOptions()))
}
