package main

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/aiwg/aiwg-state/internal/when"
	"github.com/aiwg/aiwg-state/objects"
	"github.com/aiwg/aiwg-state/store"
	"github.com/aiwg/aiwg-state/trajectory"
)

func newTrajCommand() *cli.Command {
	return &cli.Command{
		Name:  "traj",
		Usage: "record, complete, report and learn from agent runs (RLM trajectories)",
		Description: `A trajectory is one agent run as Thought-Action-Observation iterations.
It lives in trajectories/<id>/: trajectory.json (task context, outcome,
metadata, quality metrics), iterations/0001.json, 0002.json, ... (one file and
one commit per iteration) and report.md. Every iteration and every completed
trajectory is validated against the RLM trajectory JSON Schema (exit 3 names the
field). Limits: 100 iterations and 10 MB per trajectory.

Examples:
   T=$(aiwg-state traj start --task-type bug_fixing --prompt 'Fix validateUser()')
   aiwg-state traj iter $T --thought-type research --thought 'find it' \
       --tool Grep --params '{"pattern": "validateUser"}' --status success \
       --result 'src/auth/validate.ts:42' --tokens-in 500 --tokens-out 100 --cost 0.006
   aiwg-state traj complete $T --status success --final 'added a null check'
   aiwg-state traj show $T
   aiwg-state traj analyze --task-type bug_fixing`,
		Subcommands: []*cli.Command{
			trajStartCommand(), trajIterCommand(), trajCompleteCommand(), trajShowCommand(),
			trajListCommand(), trajReportCommand(), trajAnalyzeCommand(), trajPruneCommand(), trajImportCommand(),
		},
	}
}

func trajStartCommand() *cli.Command {
	return &cli.Command{
		Name:      "start",
		Usage:     "start a trajectory; prints its id",
		ArgsUsage: "[-]",
		Description: `Creates trajectories/<id>/trajectory.json in one commit and prints the id
(traj-xxxxxxxx). "-" reads further header fields as a JSON object from
standard input (task_context.depth, metadata.temperature, ...); flags win.
Without --task a task id is generated, since the schema requires one.

Examples:
   aiwg-state traj start --task-type bug_fixing --prompt 'Fix validateUser()'
   aiwg-state traj start --task-type code_analysis --prompt 'Find uses of oldApi' \
       --task task-1a2b3c4d --tree tree-00c0ffee --model claude-sonnet-4.5
   echo '{"task_context": {"depth": 1}, "metadata": {"temperature": 0.2}}' |
       aiwg-state traj start --task-type refactoring --prompt 'Split store.go' -`,
		Flags: append(writeFlags(),
			&cli.StringFlag{Name: "task-type", Usage: "category of task: bug_fixing, code_analysis, documentation, ..."},
			&cli.StringFlag{Name: "prompt", Usage: "the task's prompt"},
			&cli.StringFlag{Name: "task", Usage: "task node id (task-xxxxxxxx; default: a new one)"},
			&cli.StringFlag{Name: "tree", Usage: "task tree id (tree-xxxxxxxx)"},
			&cli.StringFlag{Name: "state", Usage: "RLM state id (state-xxxxxxxx)"},
			&cli.StringFlag{Name: "parent", Usage: "parent task id, for a subtask"},
			&cli.StringFlag{Name: "model", Usage: "the model that runs the task"},
		),
		Action: command(func(s *session) error {
			return runTrajStart(s.c.Context, s, trajStartOptions{
				TaskType: s.c.String("task-type"),
				Prompt:   s.c.String("prompt"),
				Task:     s.c.String("task"),
				Tree:     s.c.String("tree"),
				State:    s.c.String("state"),
				Parent:   s.c.String("parent"),
				Model:    s.c.String("model"),
			})
		}),
	}
}

// trajStartOptions are the flags runTrajStart reads.
type trajStartOptions struct {
	TaskType string // --task-type
	Prompt   string // --prompt
	Task     string // --task
	Tree     string // --tree
	State    string // --state
	Parent   string // --parent
	Model    string // --model
}

func runTrajStart(ctx context.Context, s *session, opts trajStartOptions) error {
	a, err := args(s.c, 0, 1)
	if err != nil {
		return err
	}
	extra, err := trajStdinObject(s, a, 0)
	if err != nil {
		return err
	}
	if extra == nil && (opts.TaskType == "" || opts.Prompt == "") {
		return usagef("traj start needs --task-type and --prompt")
	}
	id, m, err := s.store.Trajectories().Start(ctx, trajectory.StartInput{
		TaskType: opts.TaskType, Prompt: opts.Prompt, Task: opts.Task,
		Tree: opts.Tree, State: opts.State, Parent: opts.Parent,
		Model: opts.Model, Extra: extra,
	}, s.writeOptions())
	if err != nil {
		return err
	}
	if s.json {
		return printJSON(s.out, map[string]any{"trajectory_id": id, "mutation": m})
	}
	fmt.Fprintln(s.out, id)
	return nil
}

func trajIterCommand() *cli.Command {
	return &cli.Command{
		Name:      "iter",
		Usage:     "record one Thought-Action-Observation iteration (one commit)",
		ArgsUsage: "TRAJ [-]",
		Description: `Adds trajectories/TRAJ/iterations/NNNN.json. The store numbers iterations
1, 2, 3... without gaps, even with many writers at once; an iteration_number
given in the JSON must be the next one (else exit 6), so a retried write is
not recorded twice. "-" reads the iteration as a JSON object (the RLM trajectory
TAOIteration) from standard input; flags override its fields. Without
--description the action is described as "call TOOL". The 101st iteration
is refused (exit 3), as is one that would take the trajectory past 10 MB.

Examples:
   aiwg-state traj iter $T --thought-type research --thought 'locate the function' \
       --tool Grep --params '{"pattern": "validateUser", "path": "src/"}' \
       --status success --result 'src/auth/validate.ts:42' \
       --tokens-in 500 --tokens-out 100 --cost 0.006 --duration-ms 200
   aiwg-state traj iter $T --thought-type exception --thought 'grep needs a glob' \
       --tool Grep --status failure --result 'Is a directory' --error-type InvalidArgument
   aiwg-state traj iter $T --state-snapshot HEAD ... # links the state commit it saw
   cat iteration.json | aiwg-state traj iter $T -`,
		Flags: append(writeFlags(),
			&cli.StringFlag{Name: "thought-type", Usage: "goal, research, progress, extraction, reasoning, exception or synthesis"},
			&cli.StringFlag{Name: "thought", Usage: "the reasoning"},
			&cli.StringFlag{Name: "confidence", Usage: "confidence in the reasoning, 0 to 1"},
			&cli.StringFlag{Name: "tool", Usage: "the tool invoked (Read, Grep, Bash, ...)"},
			&cli.StringFlag{Name: "description", Usage: "what the action does (default: call TOOL)"},
			&cli.StringFlag{Name: "rationale", Usage: "why this action"},
			&cli.StringFlag{Name: "params", Usage: "the tool's parameters as a JSON object"},
			&cli.StringFlag{Name: "status", Usage: "success, failure, partial, timeout or error"},
			&cli.StringFlag{Name: "result", Usage: "the action's result (text)"},
			&cli.StringFlag{Name: "result-type", Usage: "text, json, file_path, error, exit_code or object"},
			&cli.StringFlag{Name: "extraction", Usage: "key information extracted from the result"},
			&cli.StringFlag{Name: "learned", Usage: "what was learned"},
			&cli.StringFlag{Name: "error-type", Usage: "error_details.error_type of a failed action"},
			&cli.StringFlag{Name: "error-message", Usage: "error_details.message of a failed action"},
			&cli.StringFlag{Name: "tokens-in", Usage: "input tokens"},
			&cli.StringFlag{Name: "tokens-out", Usage: "output tokens"},
			&cli.StringFlag{Name: "cost", Usage: "cost in USD (a decimal, summed exactly)"},
			&cli.StringFlag{Name: "duration-ms", Usage: "the iteration's duration in milliseconds"},
			&cli.StringFlag{Name: "state-snapshot", Usage: "a revision of the store whose state this iteration saw (HEAD, a commit)"},
		),
		Action: command(func(s *session) error {
			return runTrajIter(s.c.Context, s, trajIterOptions{
				ThoughtType:   s.c.String("thought-type"),
				Thought:       s.c.String("thought"),
				Confidence:    s.c.String("confidence"),
				Tool:          s.c.String("tool"),
				Description:   s.c.String("description"),
				Rationale:     s.c.String("rationale"),
				Status:        s.c.String("status"),
				Result:        s.c.String("result"),
				ResultType:    s.c.String("result-type"),
				Extraction:    s.c.String("extraction"),
				Learned:       s.c.String("learned"),
				ErrorType:     s.c.String("error-type"),
				ErrorMessage:  s.c.String("error-message"),
				Cost:          s.c.String("cost"),
				Params:        s.c.String("params"),
				StateSnapshot: s.c.String("state-snapshot"),
			})
		}),
	}
}

// trajIterOptions are the flags runTrajIter reads.
type trajIterOptions struct {
	ThoughtType   string // --thought-type
	Thought       string // --thought
	Confidence    string // --confidence
	Tool          string // --tool
	Description   string // --description
	Rationale     string // --rationale
	Status        string // --status
	Result        string // --result
	ResultType    string // --result-type
	Extraction    string // --extraction
	Learned       string // --learned
	ErrorType     string // --error-type
	ErrorMessage  string // --error-message
	Cost          string // --cost
	Params        string // --params
	StateSnapshot string // --state-snapshot
}

func runTrajIter(ctx context.Context, s *session, opts trajIterOptions) error {
	a, err := args(s.c, 1, 2)
	if err != nil {
		return err
	}
	base, err := trajStdinObject(s, a, 1)
	if err != nil {
		return err
	}
	f := trajectory.IterationFields{
		ThoughtType: opts.ThoughtType, Thought: opts.Thought, Confidence: opts.Confidence,
		Tool: opts.Tool, Description: opts.Description, Rationale: opts.Rationale,
		Status: opts.Status, Result: opts.Result, ResultType: opts.ResultType,
		Extraction: opts.Extraction, Learned: opts.Learned,
		ErrorType: opts.ErrorType, ErrorMsg: opts.ErrorMessage,
		CostUSD: opts.Cost,
	}
	if p := opts.Params; p != "" {
		v, err := objects.Decode([]byte(p))
		if err != nil {
			return fmt.Errorf("--params: %w", err)
		}
		m, ok := v.(map[string]any)
		if !ok {
			return usagef("--params must be a JSON object, got %s", p)
		}
		f.Params = m
	}
	for _, n := range []struct {
		flag string
		dst  **int64
	}{{"tokens-in", &f.TokensIn}, {"tokens-out", &f.TokensOut}, {"duration-ms", &f.DurationMs}} {
		if v := s.c.String(n.flag); v != "" {
			i, err := strconv.ParseInt(v, 10, 64)
			if err != nil || i < 0 {
				return usagef("--%s must be a whole number of at least 0, got %q", n.flag, v)
			}
			*n.dst = &i
		}
	}
	if c := f.CostUSD; c != "" {
		// As the counts above: a bad flag is the command line's fault.
		if v, err := objects.Decode([]byte(c)); err != nil || objects.KindOf(v) != "a number" || strings.HasPrefix(c, "-") {
			return usagef("--cost must be a decimal number of at least 0, got %q", c)
		}
	}
	if base == nil && f.Tool == "" {
		if f.ThoughtType != "" || f.Thought != "" || f.Status != "" || f.Result != "" {
			return usagef("traj iter needs --tool: the action an iteration records (with --thought-type, --thought, --status, --result)")
		}
		return usagef("traj iter needs the iteration: flags (--thought-type, --thought, --tool, --status, --result, ...) or \"-\" with a JSON object on standard input")
	}
	n, m, err := s.store.Trajectories().RecordIteration(ctx, a[0], trajectory.IterationInput{JSON: base, Fields: f, StateSnapshot: opts.StateSnapshot}, s.writeOptions())
	if err != nil {
		return err
	}
	return s.done(map[string]any{"trajectory_id": a[0], "iteration": n, "mutation": m}, "%s %04d %s %s", a[0], n, shortHash(m.Commit), m.MutationID)
}

func trajCompleteCommand() *cli.Command {
	return &cli.Command{
		Name:      "complete",
		Usage:     "record a trajectory's outcome, totals and quality metrics",
		ArgsUsage: "TRAJ [-]",
		Description: `Writes outcome (status, final result, reason, iterations to completion),
metadata totals (tokens, cost summed exactly, duration, iteration count) and
the quality metrics computable from the iterations: successful and failed
iterations, retry count (the same tool again right after a failure),
efficiency (successful / all iterations) and error recovery (failures
followed later by a success / failures). "-" reads a JSON object of
further outcome, metadata and quality_metrics fields from standard input;
what it gives is kept over what is computed. The whole document is
validated (exit 3 names the field). A completed trajectory takes no more
iterations.

Examples:
   aiwg-state traj complete $T --status success --final 'fixed' --reason task_complete
   echo '{"quality_metrics": {"overall_quality": 0.9, "lessons_learned":
         [{"lesson": "check for null", "iteration": 2}]}}' |
       aiwg-state traj complete $T --status success -`,
		Flags: append(writeFlags(),
			&cli.StringFlag{Name: "status", Usage: "success, failure, partial_success, timeout, cancelled or error"},
			&cli.StringFlag{Name: "final", Usage: "the final result"},
			&cli.StringFlag{Name: "reason", Usage: "task_complete, max_iterations, timeout, error, user_cancel or Final_set"},
		),
		Action: command(func(s *session) error {
			return runTrajComplete(s.c.Context, s, trajCompleteOptions{
				Status: s.c.String("status"),
				Final:  s.c.String("final"),
				Reason: s.c.String("reason"),
			})
		}),
	}
}

// trajCompleteOptions are the flags runTrajComplete reads.
type trajCompleteOptions struct {
	Status string // --status
	Final  string // --final
	Reason string // --reason
}

func runTrajComplete(ctx context.Context, s *session, opts trajCompleteOptions) error {
	a, err := args(s.c, 1, 2)
	if err != nil {
		return err
	}
	extra, err := trajStdinObject(s, a, 1)
	if err != nil {
		return err
	}
	m, err := s.store.Trajectories().Complete(ctx, a[0], trajectory.CompletionInput{
		Status: opts.Status, Final: opts.Final, Reason: opts.Reason, Extra: extra,
	}, s.writeOptions())
	return s.report(m, err)
}

func trajShowCommand() *cli.Command {
	return &cli.Command{
		Name:      "show",
		Usage:     "show a trajectory: a timeline, or with --json the RLM trajectory document",
		ArgsUsage: "TRAJ",
		Description: `--json prints one document conforming to the RLM trajectory schema, iterations
included (assembled from the iteration files).

Examples:
   aiwg-state traj show $T
   aiwg-state traj show $T --json | jq '.iterations | length'
   aiwg-state traj show $T --at HEAD~3`,
		Flags:  readFlags(),
		Action: command(func(s *session) error { return runTrajShow(s.c.Context, s) }),
	}
}

func runTrajShow(ctx context.Context, s *session) error {
	a, err := args(s.c, 1, 1)
	if err != nil {
		return err
	}
	if err := s.mayRead(ctx, trajectory.Dir+"/"+a[0]+"/trajectory.json"); err != nil {
		return err
	}
	doc, err := s.store.Trajectories().Get(ctx, a[0], s.readOptions())
	if err != nil {
		return err
	}
	if s.json {
		return printJSON(s.out, doc)
	}
	printTrajTimeline(s, doc)
	return nil
}

func trajListCommand() *cli.Command {
	return &cli.Command{
		Name:    "ls",
		Aliases: []string{"list"},
		Usage:   "list trajectories (the RLM trajectory index, derived from the store)",
		Description: `One line per trajectory, oldest start first: id, start, task type,
status (an outcome, or running), iterations, cost, prompt.

Examples:
   aiwg-state traj ls
   aiwg-state traj ls --task-type bug_fixing --status success
   aiwg-state traj ls --since 7d --json`,
		Flags: append(readFlags(),
			&cli.StringFlag{Name: "task-type", Usage: "only this task type"},
			&cli.StringFlag{Name: "status", Usage: "only this outcome status, or running"},
			&cli.StringFlag{Name: "since", Usage: "only trajectories started since a date, an RFC 3339 time or an age (7d)"},
		),
		Action: command(func(s *session) error {
			return runTrajListLs(s.c.Context, s, trajListLsOptions{
				Since:    s.c.String("since"),
				TaskType: s.c.String("task-type"),
				Status:   s.c.String("status"),
			})
		}),
	}
}

// trajListLsOptions are the flags runTrajListLs reads.
type trajListLsOptions struct {
	Since    string // --since
	TaskType string // --task-type
	Status   string // --status
}

func runTrajListLs(ctx context.Context, s *session, opts trajListLsOptions) error {
	if _, err := args(s.c, 0, 0); err != nil {
		return err
	}
	since, err := trajSince(opts.Since, time.Now())
	if err != nil {
		return err
	}
	list, err := s.store.Trajectories().List(ctx, trajectory.Filter{TaskType: opts.TaskType, Status: opts.Status, Since: since}, s.readOptions())
	if err != nil {
		return err
	}
	if s.json {
		return printJSON(s.out, list)
	}
	for _, t := range list {
		started := "-"
		if !t.StartedAt.IsZero() {
			started = t.StartedAt.UTC().Format("2006-01-02 15:04")
		}
		fmt.Fprintf(s.out, "%s  %-16s  %-16s  %-15s  %3d  %-8s  %s\n", t.ID, started, t.TaskType, t.Status, t.Iterations, trajOrDash(t.CostUSD), trajClip(t.Prompt))
	}
	return nil
}

func trajReportCommand() *cli.Command {
	return &cli.Command{
		Name:      "report",
		Usage:     "write report.md beside the trajectory (one commit) and print it",
		ArgsUsage: "TRAJ",
		Description: `The report holds the goal, a timeline of the iterations and charts of
tokens and cost per iteration (Mermaid, which git hosts draw), each
thought → action → observation, errors and what recovered them, costs,
quality metrics and lessons. --no-write prints it without committing.

Examples:
   aiwg-state traj report $T
   aiwg-state traj report $T --no-write > report.md
   git --git-dir .aiwg/state.git show main:trajectories/$T/report.md`,
		Flags: append(writeFlags(), &cli.BoolFlag{Name: "no-write", Usage: "print the report without committing it"}),
		Action: command(func(s *session) error {
			return runTrajReport(s.c.Context, s, trajReportOptions{
				NoWrite: s.c.Bool("no-write"),
			})
		}),
	}
}

// trajReportOptions are the flags runTrajReport reads.
type trajReportOptions struct {
	NoWrite bool // --no-write
}

func runTrajReport(ctx context.Context, s *session, opts trajReportOptions) error {
	a, err := args(s.c, 1, 1)
	if err != nil {
		return err
	}
	if opts.NoWrite {
		doc, err := s.store.Trajectories().Get(ctx, a[0], store.ReadOptions{})
		if err != nil {
			return err
		}
		report := trajectory.Report(doc)
		if s.json {
			return printJSON(s.out, map[string]any{"trajectory_id": a[0], "report": string(report)})
		}
		_, err = s.out.Write(report)
		return err
	}
	report, m, err := s.store.Trajectories().WriteReport(ctx, a[0], s.writeOptions())
	if err != nil && !trajNoChange(err) {
		return err
	}
	if s.json {
		return printJSON(s.out, map[string]any{"trajectory_id": a[0], "report": string(report), "mutation": m})
	}
	_, err = s.out.Write(report)
	return err
}

func trajAnalyzeCommand() *cli.Command {
	return &cli.Command{
		Name:  "analyze",
		Usage: "learn from trajectories: success rate, iterations to success, failure patterns, tool sequences, cost per task type, prompt improvements",
		Description: `Over every trajectory (or one task type, or those started since a time):
  success rate            successful / completed trajectories
  iterations to success   mean iteration count of successful trajectories
  failure patterns        failed observations by error_type (or status), how
                          often the next iteration succeeded and with which tool
  tool sequences          the most frequent runs of --ngram consecutive tools
                          in successful trajectories
  by task type            counts, rates, tokens and cost (exact sums)
  tool success            each tool's calls and successes
  prompt improvements     patterns retried at least --min-retries times (a
                          tool called again after the same kind of failure in
                          one task type), with the prompts to make clearer;
                          and, per task type succeeding at least
                          --min-success-rate, a template from its successful
                          runs: the shortest run's prompt and tools, and
                          example prompts

Examples:
   aiwg-state traj analyze
   aiwg-state traj analyze --task-type bug_fixing --since 30d
   aiwg-state traj analyze --ngram 2 --top 5 --json
   aiwg-state traj analyze --format markdown > analysis.md   # with Mermaid charts`,
		Flags: append(readFlags(),
			&cli.StringFlag{Name: "task-type", Usage: "only this task type"},
			&cli.StringFlag{Name: "since", Usage: "only trajectories started since a date, an RFC 3339 time or an age (30d)"},
			&cli.IntFlag{Name: "ngram", Value: 3, Usage: "length of the tool sequences counted"},
			&cli.IntFlag{Name: "top", Value: 10, Usage: "how many failure patterns, tool sequences and retry patterns to list"},
			&cli.IntFlag{Name: "min-retries", Value: 2, Usage: "retries from which a retry pattern is listed"},
			&cli.Float64Flag{Name: "min-success-rate", Value: 0.8, Usage: "success rate (0 to 1) from which a task type gives a prompt template"},
			&cli.StringFlag{Name: "format", Value: "text", Usage: "text, or markdown: tables and Mermaid charts of the distributions, which git hosts draw (or --json)"},
		),
		Action: command(func(s *session) error {
			return runTrajAnalyze(s.c.Context, s, trajAnalyzeOptions{
				Since:          s.c.String("since"),
				Ngram:          s.c.Int("ngram"),
				Top:            s.c.Int("top"),
				TaskType:       s.c.String("task-type"),
				MinRetries:     s.c.Int("min-retries"),
				MinSuccessRate: s.c.Float64("min-success-rate"),
				Format:         s.c.String("format"),
			})
		}),
	}
}

// trajAnalyzeOptions are the flags runTrajAnalyze reads.
type trajAnalyzeOptions struct {
	Since          string  // --since
	Ngram          int     // --ngram
	Top            int     // --top
	TaskType       string  // --task-type
	MinRetries     int     // --min-retries
	MinSuccessRate float64 // --min-success-rate
	Format         string  // --format
}

func runTrajAnalyze(ctx context.Context, s *session, opts trajAnalyzeOptions) error {
	if _, err := args(s.c, 0, 0); err != nil {
		return err
	}
	since, err := trajSince(opts.Since, time.Now())
	if err != nil {
		return err
	}
	if opts.Ngram < 1 || opts.Top < 1 || opts.MinRetries < 1 {
		return usagef("--ngram, --top and --min-retries must be at least 1")
	}
	if opts.Format != "text" && opts.Format != "markdown" {
		return usagef("unknown --format %q: want text or markdown (or --json)", opts.Format)
	}
	if !(opts.MinSuccessRate > 0 && opts.MinSuccessRate <= 1) {
		return usagef("--min-success-rate must be above 0 and at most 1, got %v", opts.MinSuccessRate)
	}
	an, err := s.store.Trajectories().Analyze(ctx, trajectory.AnalyzeOptions{
		TaskType: opts.TaskType, Since: since, NGram: opts.Ngram, Top: opts.Top,
		MinRetries: opts.MinRetries, MinSuccessRate: opts.MinSuccessRate,
	}, s.readOptions())
	if err != nil {
		return err
	}
	if s.json {
		return printJSON(s.out, an)
	}
	if opts.Format == "markdown" {
		_, err := s.out.Write(trajectory.AnalysisMarkdown(an))
		return err
	}
	printTrajAnalysis(s, an)
	return nil
}

func trajPruneCommand() *cli.Command {
	return &cli.Command{
		Name:  "prune",
		Usage: "remove old trajectories in one commit (history keeps them)",
		Description: `Removes every trajectory whose last activity (completion, start or
iteration time; else its last commit) is older than --older-than (default
90d, the RLM trajectories' retention) in one commit. History keeps them:
git show REV:trajectories/<id>/trajectory.json.

Examples:
   aiwg-state traj prune
   aiwg-state traj prune --older-than 30d --json`,
		Flags: append(writeFlags(), &cli.StringFlag{Name: "older-than", Value: fmt.Sprintf("%dd", trajectory.RetentionDays), Usage: "age: days (90d), weeks (2w) or a duration (36h)"}),
		Action: command(func(s *session) error {
			return runTrajPrune(s.c.Context, s, trajPruneOptions{
				OlderThan: s.c.String("older-than"),
			})
		}),
	}
}

// trajPruneOptions are the flags runTrajPrune reads.
type trajPruneOptions struct {
	OlderThan string // --older-than
}

func runTrajPrune(ctx context.Context, s *session, opts trajPruneOptions) error {
	if _, err := args(s.c, 0, 0); err != nil {
		return err
	}
	age, err := trajectory.ParseAge(opts.OlderThan)
	if err != nil || age <= 0 {
		return usagef("--older-than: want an age like 90d, 2w or 36h, got %q", opts.OlderThan)
	}
	ids, m, err := s.store.Trajectories().Prune(ctx, age, s.writeOptions())
	if trajNoChange(err) {
		if s.json {
			return printJSON(s.out, map[string]any{"pruned": []string{}, "no_change": true})
		}
		fmt.Fprintln(s.out, "nothing to prune: no trajectory is older than "+opts.OlderThan)
		return nil
	}
	if err != nil {
		return err
	}
	if s.json {
		return printJSON(s.out, map[string]any{"pruned": ids, "mutation": m})
	}
	fmt.Fprintf(s.out, "pruned %d trajector%s in %s %s\n", len(ids), map[bool]string{true: "y", false: "ies"}[len(ids) == 1], shortHash(m.Commit), m.MutationID)
	for _, id := range ids {
		fmt.Fprintln(s.out, "  "+id)
	}
	return nil
}

func trajImportCommand() *cli.Command {
	return &cli.Command{
		Name:      "import",
		Usage:     "import trajectory JSON files of the RLM trajectory format (one commit each)",
		ArgsUsage: "FILE...",
		Description: `Each file is one trajectory document (iterations included). It is
validated against the schema, split into trajectory.json and one file per
iteration, and committed as one commit with an Imported-From trailer; the
commit is dated now (the document keeps its own times). A file whose id is
already in the store is refused unless --new-id gives it a fresh one. Files
are imported in order; the first failure stops the run and names the file.

Examples:
   aiwg-state traj import old-runs/*.json
   aiwg-state traj import --new-id successful_trajectory.json`,
		Flags: append(writeFlags(), &cli.BoolFlag{Name: "new-id", Usage: "give each imported trajectory a new id"}),
		Action: command(func(s *session) error {
			return runTrajImport(s.c.Context, s, trajImportOptions{
				NewId: s.c.Bool("new-id"),
			})
		}),
	}
}

// trajImportOptions are the flags runTrajImport reads.
type trajImportOptions struct {
	NewId bool // --new-id
}

func runTrajImport(ctx context.Context, s *session, opts trajImportOptions) error {
	a, err := args(s.c, 1, -1)
	if err != nil {
		return err
	}
	type imported struct {
		File string          `json:"file"`
		ID   string          `json:"trajectory_id"`
		M    *store.Mutation `json:"mutation"`
	}
	var done []imported
	for _, file := range a {
		data, err := readFileArg(s.c, file)
		if err != nil {
			return err
		}
		id, m, err := s.store.Trajectories().Import(ctx, data, trajectory.ImportOptions{Name: file, NewID: opts.NewId}, s.writeOptions())
		if err != nil {
			if len(done) > 0 {
				return fmt.Errorf("%s (after importing %d file(s)): %w", file, len(done), err)
			}
			return err
		}
		done = append(done, imported{File: file, ID: id, M: m})
		if !s.json {
			fmt.Fprintf(s.out, "%s  %s  %s\n", id, shortHash(m.Commit), file)
		}
	}
	if s.json {
		return printJSON(s.out, done)
	}
	return nil
}

// stdinObject reads a JSON object from standard input when the optional
// argument is "-".
func trajStdinObject(s *session, a []string, pos int) ([]byte, error) {
	if len(a) <= pos {
		return nil, nil
	}
	if a[pos] != "-" {
		return nil, usagef("%s: unexpected argument %q (\"-\" reads a JSON object from standard input)", s.c.Command.Name, a[pos])
	}
	return readValue(s.c, "-")
}

func printTrajTimeline(s *session, doc map[string]any) {
	str := trajectory.Str
	status := str(doc, "outcome", "status")
	if status == "" {
		status = "running"
	}
	its, _ := doc["iterations"].([]any)
	fmt.Fprintf(s.out, "%s  %s  %s  %d iteration(s)\n", str(doc, "trajectory_id"), str(doc, "task_context", "task_type"), status, len(its))
	fmt.Fprintf(s.out, "task %s", str(doc, "task_context", "task_id"))
	for _, kv := range [][2]string{{"model", str(doc, "metadata", "model")}, {"started", str(doc, "metadata", "started_at")}, {"completed", str(doc, "metadata", "completed_at")}} {
		if kv[1] != "" {
			fmt.Fprintf(s.out, "  %s %s", kv[0], kv[1])
		}
	}
	fmt.Fprintf(s.out, "\nprompt: %s\n\n", oneLine(str(doc, "task_context", "task_prompt")))
	for _, raw := range its {
		it, _ := raw.(map[string]any)
		cost := ""
		if c := trajScalar(trajectory.Get(it, "cost", "total_tokens")); c != "" {
			cost += "  " + c + " tok"
		}
		if c := trajScalar(trajectory.Get(it, "cost", "total_cost_usd")); c != "" {
			cost += "  $" + c
		}
		fmt.Fprintf(s.out, "%4s  %-20s  %-10s  %-12s  %-8s%s\n", trajScalar(it["iteration_number"]), str(it, "timestamp"),
			str(it, "thought", "type"), str(it, "action", "tool"), str(it, "observation", "status"), cost)
		fmt.Fprintf(s.out, "      thought: %s\n", trajClip(str(it, "thought", "content")))
		fmt.Fprintf(s.out, "      action:  %s\n", trajClip(str(it, "action", "description")))
		result := trajectory.Get(it, "observation", "result")
		text, ok := result.(string)
		if !ok {
			text = trajScalar(result)
		}
		fmt.Fprintf(s.out, "      result:  %s\n", trajClip(text))
		if et := str(it, "observation", "error_details", "error_type"); et != "" {
			fmt.Fprintf(s.out, "      error:   %s %s\n", et, trajClip(str(it, "observation", "error_details", "message")))
		}
	}
	if status != "running" {
		fmt.Fprintf(s.out, "\noutcome: %s", status)
		if r := str(doc, "outcome", "completion_reason"); r != "" {
			fmt.Fprintf(s.out, " (%s)", r)
		}
		if f := str(doc, "outcome", "final_result"); f != "" {
			fmt.Fprintf(s.out, ": %s", trajClip(f))
		}
		fmt.Fprintf(s.out, "\ntotals: %s tokens, $%s, %s ms\n", trajOrDash(trajScalar(trajectory.Get(doc, "metadata", "total_tokens"))),
			trajOrDash(trajScalar(trajectory.Get(doc, "metadata", "total_cost_usd"))), trajOrDash(trajScalar(trajectory.Get(doc, "metadata", "total_duration_ms"))))
	}
}

func trajScalar(v any) string {
	if v == nil {
		return ""
	}
	if s, ok := v.(string); ok {
		return s
	}
	b, err := objects.Encode(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return oneLine(string(b))
}

func trajClip(s string) string {
	s = oneLine(s)
	if r := []rune(s); len(r) > 100 {
		return string(r[:100]) + "…"
	}
	return s
}

func trajOrDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// trajSince reads --since as every time flag is read (see parseTime).
func trajSince(v string, now time.Time) (time.Time, error) {
	if v == "" {
		return time.Time{}, nil
	}
	t, err := when.Parse(v, now)
	if err != nil {
		return t, usagef("--since %q: want %s", v, when.Forms)
	}
	return t, nil
}

func trajNoChange(err error) bool { return errors.Is(err, store.ErrNoChange) }

func printTrajAnalysis(s *session, an trajectory.Analysis) {
	w := s.out
	fmt.Fprintf(w, "trajectories %d, completed %d, successful %d\n", an.Trajectories, an.Completed, an.Successful)
	fmt.Fprintf(w, "success rate %.1f%%, average iterations to success %.2f, retries %d\n\n", an.SuccessRate*100, an.AverageIterationsToSuccess, an.RetryCount)
	fmt.Fprintf(w, "%-16s %6s %6s %8s %9s %10s %12s %10s\n", "task type", "runs", "done", "success", "iters/ok", "tokens", "cost USD", "cost/run")
	for _, t := range an.ByTaskType {
		fmt.Fprintf(w, "%-16s %6d %6d %7.1f%% %9.2f %10d %12s %10.6f\n", t.TaskType, t.Trajectories, t.Completed, t.SuccessRate*100, t.AverageIterationsToSuccess, t.TotalTokens, t.TotalCostUSD, t.AverageCostUSD)
	}
	fmt.Fprintf(w, "\nfailure patterns\n")
	if len(an.FailurePatterns) == 0 {
		fmt.Fprintln(w, "  none")
	}
	for _, p := range an.FailurePatterns {
		var rec []string
		for _, r := range p.RecoveryActions {
			rec = append(rec, fmt.Sprintf("%s×%d", r.Tool, r.Count))
		}
		fmt.Fprintf(w, "  %-24s %4d times, recovered next %d (%s), run succeeded %d\n", p.ErrorType, p.Occurrences, p.Recovered, trajOrDash(strings.Join(rec, ", ")), p.SuccessAfter)
	}
	fmt.Fprintf(w, "\neffective tool sequences (successful runs)\n")
	if len(an.ToolSequences) == 0 {
		fmt.Fprintln(w, "  none")
	}
	for _, q := range an.ToolSequences {
		fmt.Fprintf(w, "  %-40s %5d times in %d run(s)\n", strings.Join(q.Tools, " → "), q.Count, q.Trajectories)
	}
	fmt.Fprintf(w, "\ntool success\n")
	if len(an.ToolSuccess) == 0 {
		fmt.Fprintln(w, "  none")
	}
	for _, t := range an.ToolSuccess {
		fmt.Fprintf(w, "  %-24s %5d calls, %5d successful (%.1f%%)\n", t.Tool, t.Calls, t.Successful, t.SuccessRate*100)
	}
	pi := an.PromptImprovements
	fmt.Fprintf(w, "\nprompt improvements: high retry counts (instructions to make clearer)\n")
	if len(pi.HighRetryPatterns) == 0 {
		fmt.Fprintln(w, "  none")
	}
	for _, p := range pi.HighRetryPatterns {
		fmt.Fprintf(w, "  %s: %s retried after %s, %d retries (%s)\n", p.TaskType, p.Tool, p.ErrorType, p.Retries, strings.Join(p.Trajectories, ", "))
		for _, pr := range p.Prompts {
			fmt.Fprintf(w, "    prompt: %q\n", pr)
		}
	}
	fmt.Fprintf(w, "\nprompt improvements: templates from successful runs\n")
	if len(pi.Templates) == 0 {
		fmt.Fprintln(w, "  none")
	}
	for _, tp := range pi.Templates {
		fmt.Fprintf(w, "  %s (success %.1f%%, %d successful): %q in %d iteration(s), %s, from %s\n", tp.TaskType, tp.SuccessRate*100, tp.Successful, tp.Prompt, tp.Iterations, trajOrDash(strings.Join(tp.Tools, " → ")), tp.TrajectoryID)
	}
}
