package main

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/urfave/cli/v2"

	aiwgstate "github.com/aiwg/aiwg-state"
	"github.com/aiwg/aiwg-state/docschema"
	"github.com/aiwg/aiwg-state/hooks"
	"github.com/aiwg/aiwg-state/internal/errkind"
	"github.com/aiwg/aiwg-state/store"
)

func policyCommand() *cli.Command {
	return &cli.Command{
		Name:  "policy",
		Usage: "the access policy: which agents may write which paths",
		Description: `The policy is .aiwg/policy.json in the store; every write is checked
against it in-process, and a server with the aiwg-state hook checks every
pushed commit. Rules are read in order; the first that names the agent (by
id, glob or role) and matches the path (gitattributes patterns, {agent} for
the agent's own id) decides; otherwise "default" (deny).

Example policy (the swarm shared state permission matrix):
   {"roles": {"coordinator": ["conductor"], "workers": ["pulse", "heartbeat"]},
    "rules": [
      {"name": "coordinator writes all", "roles": ["coordinator"], "paths": ["**"]},
      {"name": "only own sessions", "roles": ["workers"], "paths": ["agents/{agent}/**"]},
      {"name": "only own locks", "agents": ["*"], "paths": ["locks/{agent}/**"]}]}

On a server that authenticates pushers, "pushers" maps each to the agents
it may act as and to the roles "integrator" (merges other agents' work,
moves any agent's branch) and "lease_admin" (force-releases others'
leases); "require_pusher": false lets unauthenticated pushes through:
   "pushers": {"alice": {"agents": ["alice"]},
               "ci": {"agents": ["conductor"], "roles": ["integrator"]}}

Sandbox profiles bound what an agent may use per tier (documents read and
write, memory namespaces, queues, SQL tables, events and leases, cache,
frame); "sandbox" assigns them, or the presets minimal, compute-and-store,
network-restricted and operator-controlled, to agents and roles:
   "profiles": {"scraper": {"documents": {"read": ["public/**"], "write": ["agents/{agent}/**"]},
                            "memory": ["session"], "cache": {"allowed": true, "max_bytes": 65536}}},
   "sandbox": [{"agents": ["scraper-*"], "profile": "scraper"},
               {"roles": ["workers"], "profile": "compute-and-store"}]

Examples:
   aiwg-state policy set policy.json --agent conductor
   aiwg-state policy show
   aiwg-state policy explain scraper-1
   aiwg-state policy check agents/pulse/main`,
		Subcommands: []*cli.Command{
			{
				Name:      "check",
				Usage:     "check commits as the server hook would (exit 3 when one breaks a rule)",
				ArgsUsage: "[REV...]",
				Description: `REV is what git rev-list takes: a branch checks the commits it has that
no remote-tracking branch has (what a push would send); A..B a range.

Examples:
   aiwg-state policy check                      # the store's branch
   aiwg-state policy check agents/pulse/main --policy-from origin/main
   aiwg-state policy check main~10..main --json
   aiwg-state policy check --pusher alice      # as the server would take alice's push`,
				Flags: append(commonFlags(), &cli.StringFlag{Name: "policy-from", Usage: "the revision whose policy is in force (default: HEAD)"},
					&cli.StringFlag{Name: "pusher", Usage: "check the commits' agents as the server would for this authenticated pusher (policy pushers)"}),
				Action: command(func(s *session) error {
					return runPolicyCheck(s.c.Context, s, policyCheckOptions{
						PolicyFrom: s.c.String("policy-from"),
						Pusher:     s.c.String("pusher"),
					})
				}),
			},
			{
				Name:      "set",
				Usage:     "write the policy (one commit; the policy in force must let you)",
				ArgsUsage: "FILE|-",
				Description: `The policy is checked before it is written; a write that the policy in
force denies is refused (exit 3), so no agent can grant itself a path.

Examples:
   aiwg-state policy set policy.json --agent conductor
   aiwg-state policy show --json | jq '.rules += [{"name": "reviewers", "agents": ["reviewer"], "paths": ["reviews/**"]}]' | aiwg-state policy set - --agent conductor`,
				Flags: writeFlags(),
				Action: command(func(s *session) error {
					return runPolicySet(s.c.Context, s, policySetOptions{
						Branch: s.c.String("branch"),
					})
				}),
			},
			policyExplainCommand(),
			{
				Name:  "show",
				Usage: "print the policy in force",
				Description: `Examples:
   aiwg-state policy show
   aiwg-state policy show --at HEAD~5 --json   # the policy as it was then`,
				Flags: readFlags(),
				Action: command(func(s *session) error {
					return runPolicyShow(s.c.Context, s, policyShowOptions{
						Branch: s.c.String("branch"),
					})
				}),
			},
		},
	}
}

// policyCheckOptions are the flags runPolicyCheck reads.
type policyCheckOptions struct {
	PolicyFrom string // --policy-from
	Pusher     string // --pusher
}

func runPolicyCheck(ctx context.Context, s *session, opts policyCheckOptions) error {
	revs := s.c.Args().Slice()
	if len(revs) == 0 {
		revs = []string{s.store.Branch()}
	}
	for _, r := range revs {
		// git rev-list would take an option here, and say
		// "ambiguous argument" for a typo.
		if strings.HasPrefix(r, "-") {
			return usagef("policy check: %s is not a revision", r)
		}
		for _, side := range strings.Split(strings.Replace(strings.TrimPrefix(r, "^"), "...", "..", 1), "..") {
			if side == "" {
				continue
			}
			if _, err := s.store.Resolve(side, ""); err != nil {
				return err
			}
		}
	}
	if len(revs) == 1 && !strings.Contains(revs[0], "..") {
		revs = append(revs, "--not", "--remotes")
	}
	err := hooks.CheckRevs(ctx, s.store.Dir(), revs, hooks.Options{PolicyFrom: opts.PolicyFrom, Validate: aiwgstate.ValidateKnownFile, Schemas: docschema.PushCheck, Pusher: opts.Pusher})
	var re *hooks.RefusedError
	if errors.As(err, &re) {
		if s.json {
			printJSON(s.out, map[string]any{"ok": false, "violations": re.Violations})
		} else {
			for _, v := range re.Violations {
				fmt.Fprintln(s.out, v.String())
			}
		}
		// Nothing was pushed: say what a push would meet.
		kind := error(hooks.ErrRefused)
		if errors.Is(re, store.ErrDenied) {
			kind = store.ErrDenied
		}
		return errkind.Errorf(kind, "%d violation(s): a push of these commits would be refused", len(re.Violations))
	}
	if err != nil {
		return err
	}
	if s.json {
		return printJSON(s.out, map[string]any{"ok": true, "violations": []any{}})
	}
	fmt.Fprintln(s.out, "ok: every commit passes")
	return nil
}

// policySetOptions are the flags runPolicySet reads.
type policySetOptions struct {
	Branch string // --branch
}

func runPolicySet(ctx context.Context, s *session, opts policySetOptions) error {
	a, err := args(s.c, 1, 1)
	if err != nil {
		return err
	}
	data, err := readFileArg(s.c, a[0])
	if err != nil {
		return err
	}
	wo := s.writeOptions()
	wo.Branch = opts.Branch
	return s.report(s.store.SetPolicy(ctx, data, wo))
}

// policyShowOptions are the flags runPolicyShow reads.
type policyShowOptions struct {
	Branch string // --branch
}

func runPolicyShow(ctx context.Context, s *session, opts policyShowOptions) error {
	ro := s.readOptions()
	ro.Branch = opts.Branch
	// A revision that does not exist is not a store
	// without a policy.
	if _, err := s.store.Resolve(ro.At, ro.Branch); err != nil {
		return err
	}
	data, err := s.store.Cat(ctx, store.PolicyPath, ro)
	if errors.Is(err, store.ErrNotFound) {
		return fmt.Errorf("no policy: every agent may write every path (%s is absent): %w", store.PolicyPath, err)
	}
	if err != nil {
		return err
	}
	_, err = s.out.Write(data)
	return err
}
