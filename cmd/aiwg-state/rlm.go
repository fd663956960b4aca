package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	aiwgstate "github.com/aiwg/aiwg-state"
	"github.com/aiwg/aiwg-state/objects"
	"github.com/aiwg/aiwg-state/rlm"
	"github.com/aiwg/aiwg-state/verbiage"
)

func stateFlag() cli.Flag {
	return &cli.StringFlag{Name: "state", Usage: "the state (default: the newest state on the branch)", EnvVars: []string{"AIWG_STATE"}}
}

func rlmReadFlags() []cli.Flag  { return append(readFlags(), stateFlag()) }
func rlmWriteFlags() []cli.Flag { return append(writeFlags(), stateFlag()) }

func rlmCommands() []*cli.Command {
	return []*cli.Command{stateCommand(), varCommand(), finalCommand(), checkpointCommand(), rollbackCommand(), trustCommand()}
}

// stateArg is the state named by an optional ID argument, else --state.
func stateArg(s *session, a []string) string {
	if len(a) > 0 {
		return a[0]
	}
	return s.c.String("state")
}

func stateCommand() *cli.Command {
	return &cli.Command{
		Name:  "state",
		Usage: "RLM states: init, ls, show, status, end, export, import, on-complete",
		Description: `An RLM state (seed 000) is a prompt, a Final answer and named variables.
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
					if _, err := args(s.c, 0, 0); err != nil {
						return err
					}
					config := map[string]any{}
					for flag, key := range map[string]string{"model": "model", "temperature": "temperature", "seed": "seed", "execution-mode": "execution_mode", "context-window": "context_window_tokens"} {
						if s.c.IsSet(flag) {
							config[key] = s.c.Value(flag)
						}
					}
					if len(config) == 0 {
						config = nil
					}
					info, m, err := s.store.InitState(s.c.Context, aiwgstate.StateInit{Prompt: s.c.String("prompt"), Session: s.c.String("session"),
						Tree: s.c.String("tree"), Parent: s.c.String("parent"), ExecutionConfig: config}, s.writeOptions())
					if err != nil {
						return err
					}
					return s.done(map[string]any{"state": info, "mutation": m}, "%s %s created %s (session %s)", shortHash(m.Commit), m.MutationID, info.StateID, info.SessionID)
				}),
			},
			{
				Name:  "ls",
				Usage: "list the states on the branch, oldest first",
				Description: `Examples:
   aiwg-state state ls            # id, status, variable count, created, parent
   aiwg-state state ls --json`,
				Flags: readFlags(),
				Action: command(func(s *session) error {
					if _, err := args(s.c, 0, 0); err != nil {
						return err
					}
					sts, err := s.store.States(s.c.Context, s.readOptions())
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
				}),
			},
			{
				Name:      "show",
				Usage:     "show a state's header, status and children",
				ArgsUsage: "[ID]",
				Description: `Examples:
   aiwg-state state show                   # the newest state
   aiwg-state state show state-a1b2c3d4
   aiwg-state state show --at HEAD~3 --json`,
				Flags: rlmReadFlags(),
				Action: command(func(s *session) error {
					info, err := stateOfArg(s)
					if err != nil {
						return err
					}
					return s.printDocument(info)
				}),
			},
			{
				Name:      "end",
				Usage:     "end a state without a Final: --status error or cancelled (one commit)",
				ArgsUsage: "[ID]",
				Description: `Seed 000's completion statuses besides complete: the state's header records
the status, when and --reason. Its variables are read-only from then on
(exit 3); a rollback to a checkpoint taken before reopens it. A state
whose Final is set is complete and cannot end otherwise.

Examples:
   aiwg-state state end --status cancelled --reason "user stopped the run"
   aiwg-state state end state-a1b2c3d4 --status error --reason "tool timed out" --json`,
				Flags: append(rlmWriteFlags(),
					&cli.StringFlag{Name: "status", Usage: "error or cancelled", Required: true},
					&cli.StringFlag{Name: "reason", Usage: "why the state ended"}),
				Action: command(func(s *session) error {
					a, err := args(s.c, 0, 1)
					if err != nil {
						return err
					}
					info, m, err := s.store.EndState(s.c.Context, stateArg(s, a), s.c.String("status"), s.c.String("reason"), s.writeOptions())
					if err != nil {
						return err
					}
					return s.done(map[string]any{"state_id": info.StateID, "completion_status": info.CompletionStatus, "mutation": m},
						"%s %s, commit %s", info.StateID, info.CompletionStatus, shortHash(m.Commit))
				}),
			},
			{
				Name:      "status",
				Usage:     "complete, incomplete, error or cancelled (exit 0 either way)",
				ArgsUsage: "[ID]",
				Description: `Examples:
   aiwg-state state status                 # state-a1b2c3d4 incomplete
   aiwg-state state status state-a1b2c3d4 --json`,
				Flags: rlmReadFlags(),
				Action: command(func(s *session) error {
					info, err := stateOfArg(s)
					if err != nil {
						return err
					}
					out := map[string]any{"state_id": info.StateID, "completion_status": info.CompletionStatus, "final": info.Final}
					if info.EndedAt != "" {
						out["ended_at"], out["end_reason"] = info.EndedAt, info.EndReason
					}
					return s.done(out, "%s %s", info.StateID, info.CompletionStatus)
				}),
			},
			{
				Name:      "export",
				Usage:     "print a state as one document of the seed's schema (validated)",
				ArgsUsage: "[ID]",
				Description: `History is derived from the commits, checkpoints from the tags, metadata is
counted. An export carries at most 10,000 mutations (the seed's limit): page 1
is the newest 10,000, --page 2 the 10,000 before, and so on; history.page and
history.pages say where a page sits. Nothing is ever dropped from git.

Examples:
   aiwg-state state export > state.json
   aiwg-state state export state-a1b2c3d4 --page 2`,
				Flags: append(rlmReadFlags(), &cli.IntFlag{Name: "page", Usage: "history page (1 = newest)", Value: 1}),
				Action: command(func(s *session) error {
					a, err := args(s.c, 0, 1)
					if err != nil {
						return err
					}
					if s.c.Int("page") < 1 {
						return usagef("--page %d: pages count from 1 (the newest)", s.c.Int("page"))
					}
					out, err := s.store.ExportState(s.c.Context, stateArg(s, a), aiwgstate.ExportOptions{ReadOptions: s.readOptions(), Page: s.c.Int("page")})
					if err != nil {
						return err
					}
					_, err = s.out.Write(out)
					return err
				}),
			},
			{
				Name:      "import",
				Usage:     "turn a state document into history: one commit per mutation, checkpoints as tags",
				ArgsUsage: "FILE|-",
				Description: `FILE is a document of the seed's schema, as state export prints it. A
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
					a, err := args(s.c, 1, 1)
					if err != nil {
						return err
					}
					data, err := readFileArg(s.c, a[0])
					if err != nil {
						return usagef("%v", err)
					}
					info, err := s.store.ImportStateWith(s.c.Context, data, aiwgstate.ImportStateOptions{As: s.c.String("as"), Replace: s.c.Bool("replace")}, s.writeOptions())
					if errors.Is(err, aiwgstate.ErrNoChange) {
						return s.report(nil, err)
					}
					if err != nil {
						return err
					}
					return s.done(info, "imported %s", info.StateID)
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
					a, err := args(s.c, 0, 1)
					if err != nil {
						return err
					}
					if len(a) == 0 && !s.c.Bool("clear") {
						hs, err := s.store.CompletionHandlers(s.c.Context, s.readOptions())
						if err != nil {
							return err
						}
						if s.json {
							return printJSON(s.out, hs)
						}
						trust, err := s.store.HandlerTrust(s.c.Context, s.readOptions())
						if err != nil {
							return err
						}
						for _, h := range trust {
							note := ""
							if !h.Trusted {
								note = "  (not trusted here, does not run: aiwg-state trust --list)"
							}
							fmt.Fprintf(s.out, "%s: %s%s\n", h.Name, aiwgstate.CommandLine(h.Command), note)
						}
						return nil
					}
					var hs []aiwgstate.CompletionHandler
					if len(a) == 1 {
						hs = append(hs, aiwgstate.CompletionHandler{Name: "on-complete", Command: []string{"sh", "-c", a[0]}})
					}
					return s.report(s.store.SetCompletionHandlers(s.c.Context, hs, s.writeOptions()))
				}),
			},
		},
	}
}

func varCommand() *cli.Command {
	return &cli.Command{
		Name:  "var",
		Usage: "RLM variables: set, get, rm, mv, ls",
		Description: `Scopes: session (the default), temporary, tree, global, and state (the
state's own: prompt, Final, results of child states). A read resolves the
state's own, then temporary, tree, session, global.

Examples:
   aiwg-state var set open_risks 3
   aiwg-state var set draft_summary - < draft.md
   aiwg-state var get open_risks
   aiwg-state var ls --json`,
		Subcommands: []*cli.Command{
			{
				Name:      "set",
				Usage:     "set a variable (one commit)",
				ArgsUsage: "NAME VALUE|-",
				Description: `VALUE is JSON; text that is not JSON is taken as a string (--type text
always takes it verbatim). Types: text, number, boolean, null, json, array,
file_path, file_content; inferred from the value when --type is absent.
Values over 10 KB go to NAME.data beside the variable's file.

Examples:
   aiwg-state var set risk_count 3
   aiwg-state var set summary "Three risks found" --source task-1a2b3c4d
   aiwg-state var set endpoints '["/login", "/logout"]' --scope global
   aiwg-state var set scratch '{"step": 2}' --ttl 600        # temporary, expires
   aiwg-state var set threshold 0.8 --read-only --description "alert level"
   cat report.md | aiwg-state var set report - --type text`,
				Flags: append(rlmWriteFlags(),
					&cli.StringFlag{Name: "type", Usage: "text|number|boolean|null|json|array|file_path|file_content"},
					&cli.StringFlag{Name: "scope", Usage: "global|session|tree|temporary|state"},
					&cli.Int64Flag{Name: "ttl", Usage: "seconds until a temporary variable expires"},
					&cli.BoolFlag{Name: "read-only", Usage: "refuse later writes"},
					&cli.StringFlag{Name: "description", Usage: "what the variable is for"}),
				Action: command(func(s *session) error {
					a, err := args(s.c, 2, 2)
					if err != nil {
						return err
					}
					return s.setVariable(a[0], a[1])
				}),
			},
			{
				Name:      "get",
				Usage:     "print a variable's value (no commit; counts one access)",
				ArgsUsage: "NAME",
				Description: `Examples:
   aiwg-state var get risk_count
   aiwg-state var get summary --meta     # the variable with its metadata and access count
   aiwg-state var get report --raw       # a large value's file reference, not its content`,
				Flags: append(rlmReadFlags(),
					&cli.BoolFlag{Name: "meta", Usage: "print the whole variable with metadata"},
					&cli.BoolFlag{Name: "raw", Usage: "a large value's reference instead of its content; strings unquoted"},
					&cli.StringFlag{Name: "scope", Usage: "read one scope only"}),
				Action: command(func(s *session) error {
					a, err := args(s.c, 1, 1)
					if err != nil {
						return err
					}
					v, err := s.store.Variable(s.c.Context, s.c.String("state"), a[0], aiwgstate.GetOptions{ReadOptions: s.readOptions(),
						Scope: rlm.Scope(s.c.String("scope")), Raw: s.c.Bool("raw")})
					if err != nil {
						return err
					}
					if s.c.Bool("meta") || s.json {
						if !s.c.Bool("meta") {
							return printJSON(s.out, map[string]any{"name": v.Name, "value": v.Value, "type": v.Type})
						}
						return printVar(s, v)
					}
					if str, ok := v.Value.(string); ok && s.c.Bool("raw") {
						fmt.Fprintln(s.out, str)
						return nil
					}
					b, err := objects.Encode(v.Value)
					if err != nil {
						return err
					}
					_, err = s.out.Write(b)
					return err
				}),
			},
			{
				Name:      "rm",
				Usage:     "remove a variable (one commit)",
				ArgsUsage: "NAME",
				Description: `Examples:
   aiwg-state var rm scratch
   aiwg-state var rm endpoints --scope global
   aiwg-state var rm draft --state state-a1b2c3d4`,
				Flags: append(rlmWriteFlags(), &cli.StringFlag{Name: "scope", Usage: "the scope to remove from (default: the one a read finds)"}),
				Action: command(func(s *session) error {
					a, err := args(s.c, 1, 1)
					if err != nil {
						return err
					}
					return s.report(s.store.DeleteVariable(s.c.Context, s.c.String("state"), a[0], rlm.Scope(s.c.String("scope")), s.writeOptions()))
				}),
			},
			{
				Name:      "mv",
				Usage:     "rename a variable within its scope (one commit; refuses to overwrite)",
				ArgsUsage: "OLD NEW",
				Description: `Examples:
   aiwg-state var mv risk_count open_risks
   aiwg-state var mv endpoints api_endpoints --scope global`,
				Flags: append(rlmWriteFlags(), &cli.StringFlag{Name: "scope", Usage: "the scope of OLD (default: the one a read finds)"}),
				Action: command(func(s *session) error {
					a, err := args(s.c, 2, 2)
					if err != nil {
						return err
					}
					m, err := s.store.RenameVariable(s.c.Context, s.c.String("state"), a[0], a[1], rlm.Scope(s.c.String("scope")), s.writeOptions())
					if err == nil {
						s.warnNaming(a[1])
					}
					return s.report(m, err)
				}),
			},
			{
				Name:  "ls",
				Usage: "list the variables a state sees",
				Description: `Examples:
   aiwg-state var ls                       # name, type, scope, value preview
   aiwg-state var ls --scope global
   aiwg-state var ls --state state-a1b2c3d4 --json`,
				Flags: append(rlmReadFlags(), &cli.StringFlag{Name: "scope", Usage: "one scope only"}),
				Action: command(func(s *session) error {
					if _, err := args(s.c, 0, 0); err != nil {
						return err
					}
					vs, err := s.store.Variables(s.c.Context, s.c.String("state"), rlm.Scope(s.c.String("scope")), s.readOptions())
					if err != nil {
						return err
					}
					if s.json {
						return printJSON(s.out, vs)
					}
					for _, v := range vs {
						fmt.Fprintf(s.out, "%-24s %-12s %-9s %s\n", v.Name, v.Type, v.Metadata.Scope, previewValue(v.Value))
					}
					return nil
				}),
			},
		},
	}
}

func previewValue(v any) string {
	b, _ := objects.Encode(v)
	s := strings.Join(strings.Fields(string(b)), " ")
	if len(s) > 60 {
		s = s[:57] + "..."
	}
	return s
}

func printVar(s *session, v *rlm.Variable) error {
	if s.json {
		return printJSON(s.out, v)
	}
	raw, err := json.Marshal(v)
	if err != nil {
		return err
	}
	out, err := objects.Canonical(raw)
	if err != nil {
		return err
	}
	_, err = s.out.Write(out)
	return err
}

func (s *session) warnNaming(name string) {
	for _, a := range verbiageAdvice(name) {
		s.warn(a)
	}
}

func (s *session) setVariable(name, arg string) error {
	data, err := readValue(s.c, arg)
	if err != nil {
		return err
	}
	text := string(data)
	if arg == "-" {
		text = strings.TrimSuffix(text, "\n")
	}
	var typ rlm.Type
	if t := s.c.String("type"); t != "" {
		if typ, err = rlm.ParseType(t); err != nil {
			return usagef("%v", err)
		}
	}
	value, typ, err := rlm.ParseValue(text, typ)
	if err != nil {
		return usagef("variable %s: %v", name, err)
	}
	vo := aiwgstate.VarOptions{Type: typ, Scope: rlm.Scope(s.c.String("scope")), ReadOnly: s.c.Bool("read-only"), Description: s.c.String("description")}
	if s.c.IsSet("ttl") {
		d := time.Duration(s.c.Int64("ttl")) * time.Second
		vo.TTL = &d
	}
	res, err := s.store.SetVariable(s.c.Context, s.c.String("state"), name, value, vo, s.writeOptions())
	if res != nil {
		for _, a := range res.Advice {
			s.warn(a)
		}
	} else if err == nil || errors.Is(err, aiwgstate.ErrNoChange) {
		s.warnNaming(name)
	}
	if err != nil {
		return s.report(nil, err)
	}
	if s.json {
		return printJSON(s.out, res)
	}
	return s.report(res.Mutation, nil)
}

func finalCommand() *cli.Command {
	return &cli.Command{
		Name:      "final",
		Usage:     "set Final: complete the state (once; the completion handlers trusted here run)",
		ArgsUsage: "VALUE|-",
		Description: `Final can be set once: a second writer is refused (exit 3) and learns
what Final holds. Set it to null (var set Final null) to reopen a state. In a
child state, Final is returned to the parent as result_<child id>, in the
same commit.

Examples:
   aiwg-state final "Found 2 TypeScript errors. Both fixed."
   aiwg-state final '{"risks": 3}' --state state-a1b2c3d4`,
		Flags: append(rlmWriteFlags(), &cli.StringFlag{Name: "type", Usage: "the value's type (default: inferred)"}),
		Action: command(func(s *session) error {
			a, err := args(s.c, 1, 1)
			if err != nil {
				return err
			}
			return s.setVariable("Final", a[0])
		}),
	}
}

func checkpointCommand() *cli.Command {
	cpFlags := func() []cli.Flag {
		return append(commonFlags(), stateFlag(), &cli.StringFlag{Name: "agent", Usage: "the tagger", EnvVars: []string{"AIWG_AGENT"}})
	}
	return &cli.Command{
		Name:  "checkpoint",
		Usage: "checkpoints of a state, kept as annotated tags checkpoints/<state>/<name>",
		Description: `git tag -l 'checkpoints/*' and git show <tag> show them to a plain git user.
A state keeps at most 100 checkpoints.

Examples:
   aiwg-state checkpoint create before_refactor
   aiwg-state checkpoint ls
   aiwg-state rollback before_refactor          # restore it as a new commit`,
		Subcommands: []*cli.Command{
			{
				Name:      "create",
				Usage:     "tag the branch head as a checkpoint (never overwrites one)",
				ArgsUsage: "NAME",
				Description: `Examples:
   aiwg-state checkpoint create before_decomposition -m "plan agreed, about to split"`,
				Flags: append(cpFlags(), &cli.StringFlag{Name: "message", Aliases: []string{"m"}, Usage: "what happened at this checkpoint"}),
				Action: command(func(s *session) error {
					a, err := args(s.c, 1, 1)
					if err != nil {
						return err
					}
					ck, err := s.store.CreateCheckpoint(s.c.Context, s.c.String("state"), a[0], s.c.String("message"), s.agentWrite())
					if err != nil {
						return err
					}
					return s.done(ck, "%s %s %s -> %s", ck.ID, ck.Name, strings.TrimPrefix(ck.Ref, "refs/tags/"), shortHash(ck.Commit.String()))
				}),
			},
			{
				Name:  "ls",
				Usage: "list a state's checkpoints, oldest first",
				Description: `Examples:
   aiwg-state checkpoint ls                # the newest state's
   aiwg-state checkpoint ls --state state-a1b2c3d4 --json`,
				Flags: cpFlags(),
				Action: command(func(s *session) error {
					cks, err := s.store.Checkpoints(s.c.Context, s.c.String("state"), aiwgstate.ReadOptions{})
					if err != nil {
						return err
					}
					if s.json {
						return printJSON(s.out, cks)
					}
					for _, c := range cks {
						fmt.Fprintf(s.out, "%s  %-24s %s  %s  %s\n", c.ID, c.Name, c.Time.UTC().Format(time.RFC3339), shortHash(c.Commit.String()), c.Description)
					}
					return nil
				}),
			},
			{
				Name:      "show",
				Usage:     "show one checkpoint",
				ArgsUsage: "NAME",
				Description: `Examples:
   aiwg-state checkpoint show before_decomposition
   aiwg-state checkpoint show initial_state --state state-a1b2c3d4 --json`,
				Flags: cpFlags(),
				Action: command(func(s *session) error {
					a, err := args(s.c, 1, 1)
					if err != nil {
						return err
					}
					c, err := s.store.Checkpoint(s.c.Context, s.c.String("state"), a[0], aiwgstate.ReadOptions{})
					if err != nil {
						return err
					}
					out := map[string]any{"checkpoint_id": c.ID, "name": c.Name, "state_id": c.State, "description": c.Description,
						"ref": c.Ref, "tag": c.Tag.String(), "commit": c.Commit.String(), "agent": c.Agent, "timestamp": c.Time.UTC().Format(time.RFC3339)}
					return s.printDocument(out)
				}),
			},
			{
				Name:      "rm",
				Usage:     "remove a checkpoint's tag (the commits stay)",
				ArgsUsage: "NAME",
				Description: `Examples:
   aiwg-state checkpoint rm before_decomposition
   aiwg-state checkpoint rm initial_state --state state-a1b2c3d4`,
				Flags: cpFlags(),
				Action: command(func(s *session) error {
					a, err := args(s.c, 1, 1)
					if err != nil {
						return err
					}
					c, err := s.store.DeleteCheckpoint(s.c.Context, s.c.String("state"), a[0], aiwgstate.ReadOptions{})
					if err != nil {
						return err
					}
					return s.done(map[string]any{"removed": c.ID, "name": c.Name}, "removed %s %s", c.ID, c.Name)
				}),
			},
			{
				Name:  "prune",
				Usage: "remove the oldest checkpoints until --keep remain",
				Description: `Examples:
   aiwg-state checkpoint prune --keep 10
   aiwg-state checkpoint prune --keep 3 --state state-a1b2c3d4`,
				Flags: append(cpFlags(), &cli.IntFlag{Name: "keep", Usage: "how many to keep", Required: true}),
				Action: command(func(s *session) error {
					rm, err := s.store.PruneCheckpoints(s.c.Context, s.c.String("state"), s.c.Int("keep"), aiwgstate.ReadOptions{})
					if err != nil {
						return err
					}
					if s.json {
						return printJSON(s.out, rm)
					}
					for _, c := range rm {
						fmt.Fprintf(s.out, "removed %s %s\n", c.ID, c.Name)
					}
					return nil
				}),
			},
		},
	}
}

func rollbackCommand() *cli.Command {
	return &cli.Command{
		Name:      "rollback",
		Usage:     "restore a state to a checkpoint as one new commit (history stays)",
		ArgsUsage: "NAME",
		Description: `The state's files become byte-identical to the checkpoint's, in one commit
with the trailers Operation: rollback and Checkpoint: ckpt-…; other states are
untouched. Restored: states/<id>/, temp/<id>/, and the state's session and
tree unless another state shares them; --shared restores those too. A
rollback whose only changes since the checkpoint are in a shared session
or tree is refused (exit 2) rather than reported as no change.
--hard moves the branch back to the checkpoint's commit instead, dropping
every later commit of every state from the branch; it needs --yes.

Examples:
   aiwg-state rollback before_decomposition
   aiwg-state rollback initial_state --hard --yes`,
		Flags: append(rlmWriteFlags(),
			&cli.BoolFlag{Name: "shared", Usage: "also restore the session and tree when other states share them"},
			&cli.BoolFlag{Name: "hard", Usage: "move the branch to the checkpoint (drops later commits)"},
			&cli.BoolFlag{Name: "yes", Usage: "confirm --hard"}),
		Action: command(func(s *session) error {
			a, err := args(s.c, 1, 1)
			if err != nil {
				return err
			}
			if s.c.Bool("hard") {
				if err := s.confirm("rollback --hard drops every commit after the checkpoint from the branch, for all states"); err != nil {
					return err
				}
				from, to, ck, err := s.store.RollbackHard(s.c.Context, s.c.String("state"), a[0], s.c.String("branch"))
				if err != nil {
					return err
				}
				return s.done(map[string]any{"from": from.String(), "to": to.String(), "checkpoint_id": ck.ID}, "branch moved %s -> %s (%s %s)", shortHash(from.String()), shortHash(to.String()), ck.ID, ck.Name)
			}
			m, _, err := s.store.Rollback(s.c.Context, s.c.String("state"), a[0], aiwgstate.RollbackOptions{Shared: s.c.Bool("shared")}, s.writeOptions())
			return s.report(m, err)
		}),
	}
}

func verbiageAdvice(name string) []string { return verbiage.NamingAdvice(name) }

// stateOfArg reads the state named by the optional ID argument (or
// --state, or the newest).
func stateOfArg(s *session) (*aiwgstate.StateInfo, error) {
	a, err := args(s.c, 0, 1)
	if err != nil {
		return nil, err
	}
	return s.store.State(s.c.Context, stateArg(s, a), s.readOptions())
}
