package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/urfave/cli/v2"

	aiwgstate "github.com/aiwg/aiwg-state"
	"github.com/aiwg/aiwg-state/internal/errkind"
	"github.com/aiwg/aiwg-state/repo"
)

func storeCommands() []*cli.Command {
	return []*cli.Command{
		{
			Name:      "init",
			Usage:     "create a store (a bare git repository, by default .aiwg/state.git here)",
			ArgsUsage: "[DIR]",
			Description: `The store's first commit on main holds its manifest (.aiwg/store.json)
and the default merge strategies (.gitattributes). Later commands find the
store from any subdirectory, as git finds .git; --store or AIWG_STATE_STORE
point elsewhere. Inside a git project, init writes .aiwg/.gitignore (or a
.gitignore in the store DIR) ignoring everything, so that the project's
git add . leaves the store's files out.

Examples:
   aiwg-state init
   aiwg-state init --store /srv/agents/state.git --branch trunk`,
			Flags: append(commonFlags(), &cli.StringFlag{Name: "agent", Usage: "the author of the first commit", EnvVars: []string{"AIWG_AGENT"}}),
			Action: func(c *cli.Context) error {
				a, err := args(c, 0, 1)
				if err != nil {
					return err
				}
				dir := c.String("store")
				if len(a) == 1 {
					dir = a[0]
				}
				if dir == "" {
					dir = aiwgstate.DefaultDir
				}
				st, err := aiwgstate.Init(c.Context, dir, aiwgstate.InitOptions{Options: aiwgstate.Options{Branch: c.String("branch"), NoSync: c.Bool("no-sync")}, Agent: c.String("agent")})
				if err != nil {
					return err
				}
				defer st.Close()
				ignore, err := aiwgstate.KeepOutOfWorkTree(c.Context, st.Dir())
				if err != nil {
					return fmt.Errorf("created store %s, but could not keep it out of the git project around it: %w", st.Dir(), err)
				}
				if c.Bool("json") {
					v := map[string]any{"store": st.Dir(), "branch": st.Branch()}
					if ignore != "" {
						v["ignore_file"] = ignore
					}
					return printJSON(c.App.Writer, v)
				}
				fmt.Fprintf(c.App.Writer, "created store %s (branch %s)\n", st.Dir(), st.Branch())
				printIgnored(c.App.Writer, ignore)
				return nil
			},
		},
		{
			Name:  "gc",
			Usage: "remove expired temporary variables (one commit) and pack the store's objects",
			Description: `Temporary variables past their --ttl are invisible to reads already;
gc removes their files in one commit (history keeps them). Then objects are
packed: writes extend a small tail pack and roll full ones up geometrically
once there are more than 50; gc --full packs everything into one pack with
git gc, for the smallest store. Both are safe while agents write. Packing
needs the git CLI. gc also removes what killed processes left (temporary
packs, stray lock files, indexes, bitmaps and .keep files whose pack or
writer is gone), indexes again with git index-pack a pack left without
its index, and drops a multi-pack-index naming a pack that is gone;
another gc running, ours or git's, is exit 5.

Examples:
   aiwg-state gc
   aiwg-state gc --full           # one pack, via git gc
   aiwg-state gc --json           # expired_removed, bytes_before, bytes_after

The sizes are of the objects (packs, their indexes, loose objects); what
git gc adds to speed reads up (bitmaps, the commit-graph) is not counted.`,
			Flags: append(writeFlags(), &cli.BoolFlag{Name: "full", Usage: "repack everything into one pack (git gc)"}),
			Action: command(func(s *session) error {
				_, removed, err := s.store.RemoveExpired(s.c.Context, s.writeOptions())
				if err != nil && !errors.Is(err, aiwgstate.ErrNoChange) && !(s.store.WorkTree() != "" && errors.Is(err, aiwgstate.ErrReadOnly)) {
					// (A git clone's checked-out branch is not written:
					// expiry is the store's to do; packing is not.)
					return err
				}
				before, _ := s.store.ObjectBytes()
				if err := s.store.GC(s.c.Context, s.c.Bool("full")); err != nil {
					return err
				}
				after, _ := s.store.ObjectBytes()
				if s.json {
					return printJSON(s.out, map[string]any{"expired_removed": nonNil(removed), "bytes_before": before, "bytes_after": after})
				}
				if len(removed) > 0 {
					fmt.Fprintf(s.out, "removed %d expired temporary variables\n", len(removed))
				}
				fmt.Fprintf(s.out, "objects: %d bytes -> %d bytes\n", before, after)
				return nil
			}),
		},
		{
			Name:  "fsck",
			Usage: "check the store for damage and say what repairs it (exit 3 when something is wrong)",
			Description: `Runs git fsck --strict (objects, connectivity, names), checks every pack
and its index against their checksums, the history index, and on the
default branch the manifest (.aiwg/store.json), the access policy
(.aiwg/policy.json), the schemas and the documents they rule. Each problem
is printed with the file at fault and its repair. Nothing is changed.

Examples:
   aiwg-state fsck
   aiwg-state fsck --json          # {"ok", "checks", "problems": [{check, file, problem, repair}]}`,
			Flags: commonFlags(),
			Action: command(func(s *session) error {
				rep, err := s.store.Fsck(s.c.Context)
				if err != nil {
					return err
				}
				if s.json {
					printJSON(s.out, map[string]any{"ok": len(rep.Problems) == 0, "checks": rep.Checks, "problems": rep.Problems})
				} else {
					for _, p := range rep.Problems {
						where := p.Check
						if p.File != "" {
							where += ": " + p.File
						}
						fmt.Fprintf(s.out, "damaged: %s: %s\n  repair: %s\n", where, oneLine(p.Problem), p.Repair)
					}
					if len(rep.Problems) == 0 {
						fmt.Fprintf(s.out, "ok: %s\n", strings.Join(rep.Checks, ", "))
					}
				}
				if len(rep.Problems) > 0 {
					return errkind.Errorf(repo.ErrCorrupt, "the store is damaged: fsck found %d problem(s), each printed with its repair", len(rep.Problems))
				}
				return nil
			}),
		},
		{
			Name:      "config",
			Usage:     "read or change the store's settings (the manifest .aiwg/store.json; one commit)",
			ArgsUsage: "[KEY [VALUE]]",
			Description: `Settings live in the store, versioned like everything else.

Examples:
   aiwg-state config                                   # the whole manifest
   aiwg-state config limits.max_document_bytes 1048576
   aiwg-state config sync false                        # skip fsync for every user of a scratch store`,
			Flags: writeFlags(),
			Action: command(func(s *session) error {
				a, err := args(s.c, 0, 2)
				if err != nil {
					return err
				}
				if len(a) == 2 {
					return s.report(s.store.SetConfig(s.c.Context, a[0], []byte(a[1]), s.writeOptions()))
				}
				key := argAt(a, 0)
				v, err := s.store.Config(s.c.Context, key, s.readOptions())
				if err != nil {
					return err
				}
				return s.printValue(aiwgstate.ManifestPath, key, v)
			}),
		},
		{
			Name:      "quickstart",
			Usage:     "create a scratch store and walk through a short agent session",
			ArgsUsage: "[DIR]",
			Description: `Runs, and prints, the commands of a first session: init, a few
mutations by two agents, a read, the log, the diff of the last change, and
plain git reading the same store. DIR defaults to a new temporary directory.

With --json, each step runs with --json, and the whole session is one
object: dir, store, and steps, each with its command, exit code and
output (JSON where the command printed JSON).

Examples:
   aiwg-state quickstart
   aiwg-state quickstart /tmp/tour    # the store stays in /tmp/tour/.aiwg/state.git
   aiwg-state quickstart --json | jq '.steps[] | .command'`,
			Flags:  []cli.Flag{jsonFlag()},
			Action: quickstart,
		},
	}
}

// printIgnored says that an ignore file keeps a new store out of the git
// project around it (see aiwgstate.KeepOutOfWorkTree).
func printIgnored(w io.Writer, ignore string) {
	if ignore != "" {
		fmt.Fprintf(w, "kept the store out of the git project around it: %s ignores its files\n", ignore)
	}
}

func quickstart(c *cli.Context) error {
	a, err := args(c, 0, 1)
	if err != nil {
		return err
	}
	var dir string
	if len(a) == 1 {
		dir = a[0]
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return err
		}
	} else if dir, err = os.MkdirTemp("", "aiwg-quickstart-"); err != nil {
		return err
	}
	store := filepath.Join(dir, aiwgstate.DefaultDir)
	if _, err := os.Stat(store); err == nil {
		return errkind.Errorf(aiwgstate.ErrExists, "%s already holds a store (pick an empty DIR)", dir)
	}
	asJSON := c.Bool("json")
	w := c.App.Writer
	if asJSON {
		w = io.Discard
	}
	fmt.Fprintf(w, "A scratch store in %s. Every command below is a real aiwg-state command.\n\n", dir)
	fmt.Fprintf(w, "$ export AIWG_STATE_STORE=%s\n", store)
	os.Setenv("AIWG_STATE_STORE", store)
	var ran []quickstartStep
	for _, st := range quickstartSteps() {
		if st.note != "" {
			fmt.Fprintf(w, "\n# %s\n", st.note)
		}
		args := st.args
		if asJSON {
			args = append(args[:len(args):len(args)], "--json")
		}
		command := "aiwg-state " + strings.Join(quoteAll(args), " ")
		if st.stdin != "" {
			fmt.Fprintf(w, "$ %s <<'EOF'\n%sEOF\n", command, st.stdin)
		} else {
			fmt.Fprintf(w, "$ %s\n", command)
		}
		out := w
		var buf bytes.Buffer
		if asJSON {
			out = &buf
		}
		code := run(append([]string{"aiwg-state"}, args...), strings.NewReader(st.stdin), out, out)
		if code != exitOK {
			return fmt.Errorf("quickstart step %q failed with exit code %d: %s", strings.Join(args, " "), code, oneLine(buf.String()))
		}
		ran = append(ran, quickstartStep{Note: st.note, Command: command, Stdin: st.stdin, Exit: code, Output: jsonOrText(buf.Bytes())})
	}
	if _, err := exec.LookPath("git"); err == nil {
		fmt.Fprintf(w, "\n# Plain git reads the same history: the trailers are the audit record.\n")
		gitArgs := []string{"--git-dir", store, "log", "-3", "--format=%h %an %s%n    %(trailers:separator=%x2c )"}
		command := "git " + strings.Join(quoteAll(gitArgs), " ")
		fmt.Fprintf(w, "$ %s\n", command)
		out, err := exec.CommandContext(c.Context, "git", gitArgs...).CombinedOutput()
		w.Write(out)
		if err != nil {
			return fmt.Errorf("git log: %v", err)
		}
		ran = append(ran, quickstartStep{Note: "Plain git reads the same history.", Command: command, Output: jsonOrText(out)})
	}
	if asJSON {
		return printJSON(c.App.Writer, map[string]any{"dir": dir, "store": store, "steps": ran})
	}
	fmt.Fprintf(w, "\nNext: `aiwg-state --help`, and keep using this store with\n    export AIWG_STATE_STORE=%s\n", store)
	fmt.Fprintf(w, "An agent calling aiwg-state in a loop: start `aiwg-state serve &` and run\nthe same command lines as `aiwg-state-client …`: the store stays open between them.\n")
	return nil
}

// quickstartStep is one command of quickstart --json.
type quickstartStep struct {
	Note    string `json:"note,omitempty"`
	Command string `json:"command"`
	Stdin   string `json:"stdin,omitempty"`
	Exit    int    `json:"exit"`
	Output  any    `json:"output"`
}

// jsonOrText is out as JSON when it is JSON, else as text.
func jsonOrText(out []byte) any {
	if json.Valid(out) {
		return json.RawMessage(bytes.TrimSpace(out))
	}
	return string(out)
}

type quickstartCommand struct {
	note  string
	args  []string
	stdin string
}

func quickstartSteps() []quickstartCommand {
	return []quickstartCommand{
		{"Create the store: a bare git repository whose first commit holds its manifest.", []string{"init"}, ""},
		{"The planner agent records its goal. Every mutation is one commit authored by the agent.", []string{"set", "plan.json", "goal", `"ship the login fix"`, "--agent", "planner", "--source", "user_input"}, ""},
		{"It sets an object; key paths create what is missing.", []string{"set", "plan.json", "risk", `{"level": "low", "owner": "ops"}`, "--agent", "planner"}, ""},
		{"A reviewer raises the risk, saying why (Source and Correlation-Id trailers).", []string{"set", "plan.json", "risk.level", `"high"`, "--agent", "reviewer", "--source", "task-42", "--correlation", "run-7"}, ""},
		{"A batch of operations is one commit, all or nothing.", []string{"apply", "-", "--agent", "planner"}, `{"op":"set","file":"plan.json","path":"steps","value":["write test","fix","deploy"]}` + "\n" + `{"op":"put","file":"notes/preferences.json","value":{"theme":"dark"}}` + "\n"},
		{"Writing a value the store already holds writes no commit.", []string{"set", "plan.json", "risk.level", `"high"`, "--agent", "reviewer"}, ""},
		{"Read one key, now and as it was two mutations ago.", []string{"get", "plan.json", "risk.level"}, ""},
		{"", []string{"get", "plan.json", "risk.level", "--at", "HEAD~2"}, ""},
		{"The audit log: who changed what, when, with which mutation id.", []string{"log"}, ""},
		{"Only the commits that changed one key, with old and new values.", []string{"log", "plan.json#risk.level"}, ""},
		{"Who last set each key of a document.", []string{"blame", "plan.json"}, ""},
		{"What the last change did, key by key.", []string{"diff"}, ""},
		{"What the reviewer's change did, for a pull-request review.", []string{"diff", "HEAD~1", "--format", "markdown"}, ""},
	}
}

func quoteAll(a []string) []string {
	out := make([]string, len(a))
	for i, x := range a {
		out[i] = shellQuote(x)
	}
	return out
}

func shellQuote(s string) string {
	if s != "" && !strings.ContainsAny(s, " \t\n\"'{}[]$%|&;<>()*?#!\\") {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
