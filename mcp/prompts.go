package mcp

import (
	"context"
	"fmt"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// Prompts teach a host's model the store's ways: each is a message that
// names the tools to call, in order, for one job.
var prompts = []struct {
	name, title, description string
	args                     []*sdk.PromptArgument
	text                     func(a map[string]string) string
}{
	{
		name: "record_trajectory", title: "Record this run as a trajectory",
		description: "Record the task you are about to do as an RLM trajectory, step by step.",
		args:        []*sdk.PromptArgument{{Name: "task", Description: "the task, as given", Required: true}, {Name: "task_type", Description: "bug_fixing, code_review, research, ..."}},
		text: func(a map[string]string) string {
			tt := a["task_type"]
			if tt == "" {
				tt = "general"
			}
			return fmt.Sprintf(`Record this run in the aiwg-state store as an RLM trajectory while you work.
1. Call traj_start with task_type %q and prompt %q; keep the trajectory_id it returns.
2. After each step (a thought, a tool call, its observation), call traj_iter with the id, thought_type (goal, research, progress, reasoning, ...) and thought,
   tool and description, status (success or failure) and result; add tokens_in, tokens_out and duration_ms when known.
   Pass traj (the id) and iter (the step number) on the store writes the step makes, so log links them.
3. When done, call traj_complete with the id, status (success, failure, partial or abandoned), final and reason.
If a call fails, its error is JSON with code and kind; fix what the error names and call again.

The task: %s`, tt, a["task"], a["task"])
		},
	},
	{
		name: "review_branch", title: "Review another agent's branch before merging",
		description: "Read what another agent changed on its branch, judge it, and merge or refuse.",
		args:        []*sdk.PromptArgument{{Name: "branch", Description: "the agent's branch, e.g. agents/planner/main", Required: true}, {Name: "into", Description: "the branch to merge into (default: the store's HEAD branch)"}},
		text: func(a map[string]string) string {
			into := a["into"]
			if into == "" {
				into = "HEAD"
			}
			return fmt.Sprintf(`Review the branch %[1]q of the aiwg-state store before it is merged into %[2]s.
1. Call diff with from %[2]q and to %[1]q: every changed key with its old and new value.
2. Call log with branch %[1]q (and agent, correlation or file to narrow it) to see who changed what, and why (source, trailers).
3. Call merge with from %[1]q, into %[2]q and dry_run true: whether it would settle, and which keys conflict.
4. Judge the changes against the task. If they are right, call merge without dry_run. On conflicts (kind conflict),
   call conflicts, settle each with resolve (take ours, theirs or base, or a value), then merge_continue; or merge_abort.
Say what you merged or refused, and why, naming the mutation ids.`, a["branch"], into)
		},
	},
	{
		name: "coordinate_work", title: "Take a task without racing other agents",
		description: "Take work from a queue, hold a lease on it while working, and record the outcome.",
		args:        []*sdk.PromptArgument{{Name: "queue", Description: "the queue of tasks", Required: true}},
		text: func(a map[string]string) string {
			return fmt.Sprintf(`Work through the queue %q of the aiwg-state store alongside other agents.
1. Call queue_take with name %q (wait "10s" to wait for work); an error of kind empty means there is none.
2. Call lease_acquire on a resource naming the task (e.g. tasks/<id>) with ttl "60s"; kind held means another agent has it: take the next.
3. While working, call lease_renew before the ttl runs out. Write results with set or apply, passing expect (the head you read)
   so that a concurrent write fails with kind stale instead of being overwritten: then get again and retry.
4. Call lease_release when done, and memory_put to keep what is worth remembering.`, a["queue"], a["queue"])
		},
	},
}

func (s *Server) addPrompts() {
	for _, p := range prompts {
		p := p
		s.sdk.AddPrompt(&sdk.Prompt{Name: p.name, Title: p.title, Description: p.description, Arguments: p.args},
			func(ctx context.Context, req *sdk.GetPromptRequest) (*sdk.GetPromptResult, error) {
				a := req.Params.Arguments
				for _, arg := range p.args {
					if arg.Required && a[arg.Name] == "" {
						return nil, fmt.Errorf("prompt %s needs the argument %s", p.name, arg.Name)
					}
				}
				return &sdk.GetPromptResult{Description: p.description, Messages: []*sdk.PromptMessage{{Role: "user", Content: &sdk.TextContent{Text: p.text(a)}}}}, nil
			})
	}
}
