package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/aiwg/aiwg-state/policy"
)

// policyExplainCommand is `policy explain AGENT`.
func policyExplainCommand() *cli.Command {
	return &cli.Command{
		Name:      "explain",
		Usage:     "print what AGENT may do: its roles, the write rules that name it, its sandbox profile per tier",
		ArgsUsage: "AGENT",
		Description: `A write must pass the rules (first match decides) and the agent's sandbox
profile, if "sandbox" gives it one; reads, the cache and the frame are
bounded by the profile alone.

Examples:
   aiwg-state policy explain scraper-1
   aiwg-state policy explain worker-3 --json --at HEAD~1`,
		Flags:  readFlags(),
		Action: command(func(s *session) error { return runPolicyExplain(s.c.Context, s) }),
	}
}

func runPolicyExplain(ctx context.Context, s *session) error {
	a, err := args(s.c, 1, 1)
	if err != nil {
		return err
	}
	ro := s.readOptions()
	ro.Branch = s.c.String("branch")
	p, err := s.store.Policy(ctx, ro)
	if err != nil {
		return err
	}
	e := p.Explain(a[0])
	if s.json {
		return printJSON(s.out, e)
	}
	w := s.out
	fmt.Fprintf(w, "agent %s\n", e.Agent)
	if e.NoPolicy {
		fmt.Fprintln(w, "no policy: it may write every path and use every tier")
		return nil
	}
	if len(e.Roles) > 0 {
		fmt.Fprintf(w, "roles: %s\n", strings.Join(e.Roles, ", "))
	}
	fmt.Fprintln(w, "writes (first rule that matches the path decides):")
	for _, r := range e.Rules {
		fmt.Fprintf(w, "  %s %s: %s\n", r.Effect, r.Rule, strings.Join(r.Paths, " "))
	}
	fmt.Fprintf(w, "  otherwise: default %s\n", e.Default)
	pr := e.Profile
	if pr == nil {
		fmt.Fprintln(w, "sandbox profile: none (the rules alone bound it; every tier is open)")
		return nil
	}
	kind := "declared"
	if pr.Preset {
		kind = "preset"
	}
	list := func(xs []string) string {
		if len(xs) == 0 {
			return "none"
		}
		return strings.Join(xs, " ")
	}
	bound := func(t policy.Tier, what string) string {
		if !t.Allowed {
			return "no"
		}
		if t.MaxBytes == 0 {
			return "yes (within the store's " + what + ")"
		}
		return fmt.Sprintf("yes, up to %d bytes", t.MaxBytes)
	}
	fmt.Fprintf(w, "sandbox profile: %s (%s, by %s)\n", pr.Name, kind, pr.AssignedBy)
	fmt.Fprintf(w, "  documents read:  %s\n", list(pr.Documents.Read))
	fmt.Fprintf(w, "  documents write: %s\n", list(pr.Documents.Write))
	fmt.Fprintf(w, "  memory:          %s\n", list(pr.Memory))
	fmt.Fprintf(w, "  queues:          %s\n", list(pr.Queues))
	fmt.Fprintf(w, "  tables read:     %s\n", list(pr.Tables.Read))
	fmt.Fprintf(w, "  tables write:    %s\n", list(pr.Tables.Write))
	fmt.Fprintf(w, "  coordination:    %v (events, leases)\n", map[bool]string{true: "yes", false: "no"}[pr.Coordination])
	fmt.Fprintf(w, "  cache:           %s\n", bound(pr.Cache, "limits.max_cache_bytes"))
	fmt.Fprintf(w, "  frame:           %s\n", bound(pr.Frame, "limits.max_frame_bytes"))
	return nil
}
