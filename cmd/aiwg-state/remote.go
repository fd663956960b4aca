package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/urfave/cli/v2"

	aiwgstate "github.com/aiwg/aiwg-state"
	"github.com/aiwg/aiwg-state/hooks"
	"github.com/aiwg/aiwg-state/internal/errkind"
	"github.com/aiwg/aiwg-state/merge"
	"github.com/aiwg/aiwg-state/repo"
)

func remoteCommands() []*cli.Command {
	strategyFlag := &cli.StringFlag{Name: "strategy", Usage: "settle every path with this strategy instead of .gitattributes"}
	mergeFlags := func() []cli.Flag {
		return append(commonFlags(), strategyFlag,
			&cli.StringFlag{Name: "agent", Usage: "the agent merge commits are authored by", EnvVars: []string{"AIWG_AGENT"}}, signingKeyFlag())
	}
	return []*cli.Command{
		{
			Name:  "remote",
			Usage: "manage the git remotes the store is pushed to and fetched from",
			Description: `A remote is any git server: a path, file://, http(s)://, ssh://
(or user@host:path, with your ssh agent, keys and known_hosts), git://.

Examples:
   aiwg-state remote add origin git@github.com:org/agent-state.git
   aiwg-state remote add origin https://git.example.com/state.git
   aiwg-state remote ls
   aiwg-state remote rm origin`,
			Subcommands: []*cli.Command{
				{
					Name: "add", Usage: "add a remote", ArgsUsage: "NAME URL", Flags: commonFlags(),
					Description: `Examples:
   aiwg-state remote add origin git@github.com:org/agent-state.git
   aiwg-state remote add backup /srv/git/state.git`,
					Action: command(func(s *session) error {
						a, err := args(s.c, 2, 2)
						if err != nil {
							return err
						}
						if err := s.store.AddRemote(s.c.Context, a[0], a[1]); err != nil {
							return err
						}
						return s.done(repo.Remote{Name: a[0], URL: repo.RedactURL(a[1])}, "added remote %s %s", a[0], repo.RedactURL(a[1]))
					}),
				},
				{
					Name: "ls", Usage: "list remotes", Flags: commonFlags(),
					Description: `Examples:
   aiwg-state remote ls           # NAME and URL; credentials in a URL show as xxxxx
   aiwg-state remote ls --json`,
					Action: command(func(s *session) error {
						if _, err := args(s.c, 0, 0); err != nil {
							return err
						}
						rs, err := s.store.Remotes(s.c.Context)
						if err != nil {
							return err
						}
						for i := range rs {
							rs[i].URL = repo.RedactURL(rs[i].URL)
						}
						if s.json {
							if rs == nil {
								rs = []repo.Remote{}
							}
							return printJSON(s.out, rs)
						}
						for _, r := range rs {
							fmt.Fprintf(s.out, "%s\t%s\n", r.Name, r.URL)
						}
						return nil
					}),
				},
				{
					Name: "rm", Aliases: []string{"remove"}, Usage: "remove a remote and its remote-tracking branches", ArgsUsage: "NAME", Flags: commonFlags(),
					Description: `Examples:
   aiwg-state remote rm backup`,
					Action: command(func(s *session) error {
						a, err := args(s.c, 1, 1)
						if err != nil {
							return err
						}
						if err := s.store.RemoveRemote(s.c.Context, a[0]); err != nil {
							return err
						}
						return s.done(map[string]any{"removed": a[0]}, "removed remote %s", a[0])
					}),
				},
			},
		},
		{
			Name:      "fetch",
			Usage:     "fetch a remote's branches (as REMOTE/BRANCH) and tags",
			ArgsUsage: "[REMOTE]",
			Description: `In a shallow clone (clone --depth N), --deepen N fetches N more
commits of history and --unshallow all of it.

Examples:
   aiwg-state fetch                  # from origin
   aiwg-state log --branch origin/main
   aiwg-state fetch --deepen 50      # a shallow clone: 50 more commits`,
			Flags: append(commonFlags(),
				&cli.IntFlag{Name: "deepen", Usage: "in a shallow clone, fetch `N` more commits of history"},
				&cli.BoolFlag{Name: "unshallow", Usage: "in a shallow clone, fetch all the history it lacks"}),
			Action: command(func(s *session) error {
				a, err := args(s.c, 0, 1)
				if err != nil {
					return err
				}
				fetch := s.store.Fetch
				switch n := s.c.Int("deepen"); {
				case n < 0 || (n > 0 && s.c.Bool("unshallow")):
					return usagef("--deepen takes a positive number of commits, and not with --unshallow")
				case n > 0 || s.c.Bool("unshallow"):
					fetch = func(ctx context.Context, remote string) ([]repo.RefUpdate, error) {
						return s.store.Deepen(ctx, remote, n)
					}
				}
				ups, err := fetch(s.c.Context, first(a))
				if err != nil {
					return err
				}
				return printUpdates(s, ups)
			}),
		},
		{
			Name:      "push",
			Usage:     "push a branch (and with --tags, the checkpoints) to a remote",
			ArgsUsage: "[REMOTE] [BRANCH]",
			Description: `The server compares and swaps: when it has commits this store lacks,
the push is refused (exit 6); pull, then push again. A branch with a merge
in progress is not pushed (exit 4). A refusal by the server's aiwg-state hook
names the commit, path, rule and agent (exit 3).

Examples:
   aiwg-state push                       # the store's branch to origin
   aiwg-state push origin agents/planner/main
   aiwg-state push --tags`,
			Flags: append(commonFlags(), &cli.BoolFlag{Name: "tags", Usage: "push every tag (checkpoints) too"}),
			Action: command(func(s *session) error {
				a, err := args(s.c, 0, 2)
				if err != nil {
					return err
				}
				res, err := s.store.Push(s.c.Context, first(a), aiwgstate.PushOptions{Branch: second(a, s.c.String("branch")), Tags: s.c.Bool("tags")})
				if err != nil && len(res) == 0 {
					return err // nothing was tried: no result to show beside the error
				}
				if perr := printPushed(s, res); perr != nil {
					return perr
				}
				return err
			}),
		},
		{
			Name:      "pull",
			Usage:     "fetch, then merge the remote's copy of a branch into it with the strategies",
			ArgsUsage: "[REMOTE] [BRANCH]",
			Description: `Conflicts persist as with merge (exit 4): see conflicts, resolve.

Examples:
   aiwg-state pull
   aiwg-state pull origin main --strategy last-write-wins`,
			Flags: mergeFlags(),
			Action: command(func(s *session) error {
				a, err := args(s.c, 0, 2)
				if err != nil {
					return err
				}
				res, err := s.store.Pull(s.c.Context, first(a), aiwgstate.PullOptions{Branch: second(a, s.c.String("branch")), Merge: mergeOptions(s)})
				if res == nil && err == nil {
					if s.json {
						return printJSON(s.out, map[string]any{"status": "nothing to pull"})
					}
					fmt.Fprintln(s.out, "nothing to pull: the remote has no such branch")
					return nil
				}
				return s.printMerge(res, err)
			}),
		},
		{
			Name:      "clone",
			Usage:     "make a new store from a remote store",
			ArgsUsage: "URL [DIR]",
			Description: `DIR is the new store itself, a bare git repository, as --store names one
(not a directory to hold it, as git clone's is). It defaults to
.aiwg/state.git under the current directory, where every command finds
it; elsewhere, name it with --store DIR or AIWG_STATE_STORE.

--filter=blob:none makes a partial clone: documents arrive from the remote
when first read (the server must allow filters: uploadpack.allowFilter).
--depth N makes a shallow clone of N commits per branch: history commands
stop at its boundary and say so; fetch --deepen N brings more.

Examples:
   aiwg-state clone https://git.example.com/state.git
   aiwg-state clone /srv/git/state.git /tmp/state.git
   aiwg-state clone --filter=blob:none https://git.example.com/state.git
   aiwg-state clone --depth 20 https://git.example.com/state.git`,
			Flags: []cli.Flag{jsonFlag(), noSyncFlag(),
				&cli.StringFlag{Name: "filter", Usage: "make a partial clone with git's object `FILTER` (blob:none, tree:0)"},
				&cli.IntFlag{Name: "depth", Usage: "make a shallow clone of `N` commits per branch"}},
			Action: func(c *cli.Context) error {
				a, err := args(c, 1, 2)
				if err != nil {
					return err
				}
				dir := aiwgstate.DefaultDir
				if len(a) == 2 {
					dir = a[1]
				}
				if c.Int("depth") < 0 {
					return usagef("--depth takes a positive number of commits")
				}
				st, err := aiwgstate.Clone(c.Context, a[0], dir, aiwgstate.CloneOptions{Options: aiwgstate.Options{NoSync: c.Bool("no-sync")},
					Filter: c.String("filter"), Depth: c.Int("depth")})
				if err != nil {
					return err
				}
				defer st.Close()
				ignore, err := aiwgstate.KeepOutOfWorkTree(c.Context, st.Dir())
				if err != nil {
					return fmt.Errorf("cloned into %s, but could not keep it out of the git project around it: %w", st.Dir(), err)
				}
				if c.Bool("json") {
					v := map[string]any{"store": st.Dir(), "branch": st.Branch()}
					if ignore != "" {
						v["ignore_file"] = ignore
					}
					return printJSON(c.App.Writer, v)
				}
				fmt.Fprintf(c.App.Writer, "cloned %s into %s (branch %s)\n", repo.RedactURL(a[0]), st.Dir(), st.Branch())
				printIgnored(c.App.Writer, ignore)
				if dir != aiwgstate.DefaultDir {
					fmt.Fprintf(c.App.Writer, "use it with --store %s, or export AIWG_STATE_STORE=%s\n", shellQuote(dir), shellQuote(dir))
				}
				return nil
			},
		},
		{
			Name:  "agent",
			Usage: "work as an agent on its own branch",
			Description: `An agent writes to agents/ID/NAME (NAME defaults to main), pushes it,
and merges main in with sync; a coordinator merges the agents' branches
with integrate.

Examples:
   aiwg-state agent start planner              # the store now writes agents/planner/main, as planner
   aiwg-state agent status                     # which agent writes, and why
   aiwg-state agent start planner try-2 --from main
   aiwg-state sync                             # fetch, merge main in, push`,
			Subcommands: []*cli.Command{{
				Name:      "start",
				Usage:     "put the store on the agent's branch agents/ID/NAME (created when new), and make ID its writes' author",
				ArgsUsage: "ID [NAME]",
				Description: `Agents write on their own branches, so their pushes never contend; sync
keeps them up to date and integrate (for a coordinator) merges them.
ID becomes the store's agent (aiwg.agent in its git config): later writes
are authored by it; --agent or AIWG_AGENT still override it.

Examples:
   aiwg-state agent start planner          # agents/planner/main
   aiwg-state agent start planner task-42 --from origin/main
   aiwg-state sync                         # then, in a loop`,
				Flags: append(commonFlags(), &cli.StringFlag{Name: "from", Usage: "where a new branch starts (default: the store's HEAD)"}),
				Action: command(func(s *session) error {
					a, err := args(s.c, 1, 2)
					if err != nil {
						return err
					}
					branch, err := s.store.StartAgent(s.c.Context, a[0], second(a, ""), s.c.String("from"))
					if err != nil {
						return err
					}
					return s.done(map[string]any{"branch": branch, "agent": a[0]}, "on branch %s; writes here are authored by %s (--agent or AIWG_AGENT overrides)", branch, a[0])
				}),
			}, {
				Name:  "status",
				Usage: "say which agent this store's writes are authored by, and why, and the branch they go to",
				Description: `The agent of a write is the first of: --agent, AIWG_AGENT, the store's
own agent (set by agent start, kept in the store's git config as
aiwg.agent), the login name ($USER); else "anonymous".

Examples:
   aiwg-state agent status
   AIWG_AGENT=reviewer aiwg-state agent status --json`,
				Flags: append(commonFlags(), &cli.StringFlag{Name: "agent", Usage: "the agent a write would name", EnvVars: []string{"AIWG_AGENT"}}),
				Action: command(func(s *session) error {
					if _, err := args(s.c, 0, 0); err != nil {
						return err
					}
					agent, from := s.agent()
					why := map[string]string{
						aiwgstate.AgentFromFlag:      "named by --agent",
						aiwgstate.AgentFromEnv:       "from AIWG_AGENT",
						aiwgstate.AgentFromStore:     "the store's agent (" + aiwgstate.AgentConfigKey + ", set by agent start)",
						aiwgstate.AgentFromUser:      "the login name ($USER); aiwg-state agent start NAME names one for this store",
						aiwgstate.AgentFromAnonymous: "no agent named; aiwg-state agent start NAME names one for this store",
					}[from]
					v := map[string]any{"agent": agent, "from": from, "store_agent": s.store.DefaultAgent(), "branch": s.store.Branch()}
					return s.done(v, "agent %s: %s\nbranch %s", agent, why, s.store.Branch())
				}),
			}},
		},
		{
			Name:      "sync",
			Usage:     "fetch, merge the upstream branch into the agent's branch, push: one command for an agent's loop",
			ArgsUsage: "[REMOTE]",
			Description: `Merges the remote's copy of the branch (another process of the same
agent may have pushed) and the upstream branch (default main) into the
branch with the strategies, then pushes it; a lost push race starts over
(bounded). Conflicts stop it with exit 4, persisted for resolve.

Examples:
   aiwg-state sync
   aiwg-state sync origin --upstream main --branch agents/planner/main`,
			Flags: append(mergeFlags(), &cli.StringFlag{Name: "upstream", Usage: "the remote branch merged in", Value: "main"}),
			Action: command(func(s *session) error {
				a, err := args(s.c, 0, 1)
				if err != nil {
					return err
				}
				res, err := s.store.Sync(s.c.Context, first(a), aiwgstate.SyncOptions{Branch: s.c.String("branch"), Upstream: s.c.String("upstream"), Merge: mergeOptions(s)})
				if res == nil || err != nil && res.Fetched == nil && res.Merged == nil && res.Pushed == nil {
					return err
				}
				if s.json {
					if perr := printJSON(s.out, res); perr != nil {
						return perr
					}
					return err
				}
				for _, m := range res.Merged {
					switch m.Status {
					case aiwgstate.MergeUpToDate:
					case aiwgstate.MergeConflicts:
						// Nothing merged yet: what is left is the news.
						fmt.Fprintf(s.out, "merge %s into %s: %d conflict(s) left (aiwg-state conflicts; resolve, then merge --continue)\n", m.From, m.Into, len(m.Conflicts))
						printConflicts(s, m.Conflicts)
					default:
						fmt.Fprintf(s.out, "merged %s into %s: %s, %d file(s)\n", m.From, m.Into, m.Status, len(m.Files))
					}
				}
				if err == nil {
					if perr := printPushed(s, res.Pushed); perr != nil {
						return perr
					}
				}
				return err
			}),
		},
		{
			Name:      "integrate",
			Usage:     "merge every agents/* branch of a remote into main and push it (for a coordinator)",
			ArgsUsage: "[REMOTE]",
			Description: `One merge per agent branch, reported per agent; a branch that
conflicts is left out (its merge undone) and reported, and integrate exits
4 after pushing the rest. Merge it by hand to resolve:
   aiwg-state merge origin/agents/planner/main
main keeps its first-parent history: it fast-forwards only over commits
whose first-parent chain holds its head, and otherwise gets a merge commit
(an agent branch that merged main in is not fast-forwarded onto). A branch
bringing a commit the policy on main refuses is left out and reported.

Examples:
   aiwg-state integrate
   aiwg-state integrate origin --into main --no-push --json`,
			Flags: append(mergeFlags(),
				&cli.StringFlag{Name: "into", Usage: "the branch agents are merged into", Value: "main"},
				&cli.BoolFlag{Name: "no-push", Usage: "integrate locally only"}),
			Action: command(func(s *session) error {
				a, err := args(s.c, 0, 1)
				if err != nil {
					return err
				}
				res, err := s.store.Integrate(s.c.Context, first(a), aiwgstate.IntegrateOptions{Into: s.c.String("into"), NoPush: s.c.Bool("no-push"), Merge: mergeOptions(s)})
				if err == nil && len(res.Conflicted()) > 0 {
					err = fmt.Errorf("%w: not integrated: %s", aiwgstate.ErrConflict, strings.Join(res.Conflicted(), ", "))
				}
				if res == nil || err != nil && len(res.Agents) == 0 {
					return err
				}
				if s.json {
					if perr := printJSON(s.out, res); perr != nil {
						return perr
					}
					return err
				}
				for _, am := range res.Agents {
					switch {
					case am.Error != "":
						fmt.Fprintf(s.out, "%s\t%s: error: %s\n", am.Agent, am.Branch, am.Error)
					case am.Status == aiwgstate.MergeConflicts:
						fmt.Fprintf(s.out, "%s\t%s: %d conflict(s), left out\n", am.Agent, am.Branch, len(am.Conflicts))
						printConflicts(s, am.Conflicts)
					default:
						fmt.Fprintf(s.out, "%s\t%s: %s, %d file(s)\n", am.Agent, am.Branch, am.Status, len(am.Files))
					}
				}
				if perr := printPushed(s, res.Pushed); perr != nil {
					return perr
				}
				return err
			}),
		},
		hooksCommand(),
		policyCommand(),
	}
}

func hooksCommand() *cli.Command {
	return &cli.Command{
		Name:  "hooks",
		Usage: "server-side validation of pushed state",
		Description: `The pre-receive hook checks every pushed commit as aiwg-state checks a
write (canonical JSON, the store's rules, its access policy) and refuses
the whole push when one breaks them.

Examples:
   aiwg-state hooks install --server /srv/git/state.git
   aiwg-state policy check agents/pulse/main   # what the hook would say, before pushing`,
		Subcommands: []*cli.Command{
			{
				Name:      "install",
				Usage:     "install the pre-receive hook that checks every pushed commit into a bare repository",
				ArgsUsage: " ",
				Description: `The hook runs this aiwg-state binary (or --binary) on every push: canonical
JSON, store paths, limits, the access policy (.aiwg/policy.json on the
server's default branch: HEAD's, or main while HEAD's has no commit) and no
merge in progress; tags are checkpoints only. A refused push leaves the
server's refs unchanged and tells the pusher the commit, path, rule and
agent. A HEAD that names a branch with no commit (git init --bare names
master) is pointed at main, the branch a store pushes.

When the policy names "pushers", the hook checks who pushes against the
agents each commit names: the pusher is the variable the repository's git
config aiwg.pusherVariable names, else REMOTE_USER (git http-backend behind
HTTP authentication), else GL_USER (gitolite).

Examples:
   aiwg-state hooks install --server /srv/git/state.git
   aiwg-state hooks install --server /srv/git/state.git --binary /usr/local/bin/aiwg-state`,
				Flags: []cli.Flag{
					&cli.StringFlag{Name: "server", Usage: "the server's bare repository", Required: true},
					&cli.StringFlag{Name: "binary", Usage: "the aiwg-state the hook runs (default: this one)"},
					&cli.BoolFlag{Name: "force", Usage: "replace a pre-receive hook aiwg-state did not write"},
					jsonFlag(),
				},
				Action: func(c *cli.Context) error {
					if _, err := args(c, 0, 0); err != nil {
						return err
					}
					bin := c.String("binary")
					if bin == "" {
						exe, err := os.Executable()
						if err != nil {
							return err
						}
						bin = exe
					}
					path, err := hooks.Install(c.String("server"), hooks.InstallOptions{Binary: bin, Force: c.Bool("force")})
					if err != nil {
						return err
					}
					if c.Bool("json") {
						return printJSON(c.App.Writer, map[string]any{"hook": path, "binary": bin})
					}
					fmt.Fprintf(c.App.Writer, "installed %s (runs %s)\n", path, bin)
					return nil
				},
			},
			{
				Name:      "run",
				Usage:     "run a hook (git calls this)",
				ArgsUsage: "HOOK",
				Hidden:    true,
				Action: func(c *cli.Context) error {
					a, err := args(c, 1, 1)
					if err != nil {
						return err
					}
					if a[0] != "pre-receive" {
						return usagef("unknown hook %q", a[0])
					}
					return runPreReceive(c, c.App.Reader, c.App.ErrWriter)
				},
			},
		},
	}
}

// runPreReceive is the hook: git runs it in the repository's directory
// with the push's updates on standard input; a non-zero exit refuses the
// whole push, and what it prints reaches the pusher.
func runPreReceive(c *cli.Context, stdin io.Reader, stderr io.Writer) error {
	ups, err := hooks.ParseUpdates(stdin)
	if err != nil {
		return err
	}
	gitDir := os.Getenv("GIT_DIR")
	if gitDir == "" {
		gitDir = "."
	}
	err = hooks.Check(c.Context, gitDir, ups, hooks.Options{Validate: aiwgstate.ValidateKnownFile, Schemas: aiwgstate.SchemaValidator, Getenv: os.Getenv})
	var re *hooks.RefusedError
	if errors.As(err, &re) {
		for _, v := range re.Violations {
			fmt.Fprintln(stderr, "aiwg-state: refused: "+v.String())
		}
		return refusedSummary(re)
	}
	return err
}

// refusedSummary is the last line of a refusal: the access policy's when
// a policy rule is among those broken, else the store's.
func refusedSummary(re *hooks.RefusedError) error {
	if errors.Is(re, aiwgstate.ErrDenied) {
		return fmt.Errorf("%w: %d violation(s)", aiwgstate.ErrDenied, len(re.Violations))
	}
	return fmt.Errorf("%w: %d violation(s)", hooks.ErrRefused, len(re.Violations))
}

func policyCommand() *cli.Command {
	return &cli.Command{
		Name:  "policy",
		Usage: "the access policy: which agents may write which paths",
		Description: `The policy is .aiwg/policy.json in the store; every write is checked
against it in-process, and a server with the aiwg-state hook checks every
pushed commit. Rules are read in order; the first that names the agent (by
id, glob or role) and matches the path (gitattributes patterns, {agent} for
the agent's own id) decides; otherwise "default" (deny).

Example policy (seed 003's permission matrix):
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

Examples:
   aiwg-state policy set policy.json --agent conductor
   aiwg-state policy show
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
					err := hooks.CheckRevs(s.c.Context, s.store.Dir(), revs, hooks.Options{PolicyFrom: s.c.String("policy-from"), Validate: aiwgstate.ValidateKnownFile, Schemas: aiwgstate.SchemaValidator, Pusher: s.c.String("pusher")})
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
						if errors.Is(re, aiwgstate.ErrDenied) {
							kind = aiwgstate.ErrDenied
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
					a, err := args(s.c, 1, 1)
					if err != nil {
						return err
					}
					data, err := readFileArg(s.c, a[0])
					if err != nil {
						return err
					}
					wo := s.writeOptions()
					wo.Branch = s.c.String("branch")
					return s.report(s.store.SetPolicy(s.c.Context, data, wo))
				}),
			},
			{
				Name:  "show",
				Usage: "print the policy in force",
				Description: `Examples:
   aiwg-state policy show
   aiwg-state policy show --at HEAD~5 --json   # the policy as it was then`,
				Flags: readFlags(),
				Action: command(func(s *session) error {
					ro := s.readOptions()
					ro.Branch = s.c.String("branch")
					// A revision that does not exist is not a store
					// without a policy.
					if _, err := s.store.Resolve(ro.At, ro.Branch); err != nil {
						return err
					}
					data, err := s.store.Cat(s.c.Context, aiwgstate.PolicyPath, ro)
					if errors.Is(err, aiwgstate.ErrNotFound) {
						return fmt.Errorf("no policy: every agent may write every path (%s is absent): %w", aiwgstate.PolicyPath, err)
					}
					if err != nil {
						return err
					}
					_, err = s.out.Write(data)
					return err
				}),
			},
		},
	}
}

func mergeOptions(s *session) aiwgstate.MergeOptions {
	return aiwgstate.MergeOptions{Strategy: merge.Strategy(s.c.String("strategy")), Write: s.agentWrite()}
}

func first(a []string) string {
	if len(a) > 0 {
		return a[0]
	}
	return ""
}

// second returns a[1] when present, else def.
func second(a []string, def string) string {
	if len(a) > 1 && a[1] != "" {
		return a[1]
	}
	return def
}

func printUpdates(s *session, ups []repo.RefUpdate) error {
	if s.json {
		type up struct {
			Ref string `json:"ref"`
			Old string `json:"old,omitempty"`
			New string `json:"new,omitempty"`
		}
		out := []up{}
		for _, u := range ups {
			v := up{Ref: u.Ref}
			if !u.Old.IsZero() {
				v.Old = u.Old.String()
			}
			if !u.New.IsZero() {
				v.New = u.New.String()
			}
			out = append(out, v)
		}
		return printJSON(s.out, out)
	}
	if len(ups) == 0 {
		fmt.Fprintln(s.out, "up to date")
	}
	for _, u := range ups {
		switch {
		case u.Old.IsZero():
			fmt.Fprintf(s.out, "new     %s %s\n", shortHash(u.New.String()), u.Ref)
		case u.New.IsZero():
			fmt.Fprintf(s.out, "gone    %s\n", u.Ref)
		default:
			fmt.Fprintf(s.out, "updated %s..%s %s\n", shortHash(u.Old.String()), shortHash(u.New.String()), u.Ref)
		}
	}
	return nil
}

func printPushed(s *session, res []repo.PushResult) error {
	if s.json {
		if res == nil {
			res = []repo.PushResult{}
		}
		return printJSON(s.out, res)
	}
	for _, r := range res {
		line := fmt.Sprintf("%-10s %s %s", r.Status, strings.TrimPrefix(r.Dst, "refs/heads/"), r.Summary)
		if r.Reason != "" {
			line += " (" + r.Reason + ")"
		}
		fmt.Fprintln(s.out, line)
	}
	return nil
}
