package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/aiwg/aiwg-state/internal/errkind"
	"github.com/aiwg/aiwg-state/store"
)

func newQuickstartCommand() *cli.Command {
	return &cli.Command{
		Name:      "quickstart",
		Usage:     "create a scratch store and walk through a short agent session",
		ArgsUsage: "[DIR]",
		Description: `Runs, and prints, the commands of a first session: init, a few
mutations by two agents, a read, the log, the diff of the last change, and
plain git reading the same store. DIR defaults to a new temporary directory,
removed when the session ends unless --keep is given; a DIR you name stays.

With --json, each step runs with --json, and the whole session is one
object: dir, store, and steps, each with its command, exit code and
output (JSON where the command printed JSON).

Examples:
   aiwg-state quickstart
   aiwg-state quickstart --keep       # keep the scratch store to go on with it
   aiwg-state quickstart /tmp/tour    # the store stays in /tmp/tour/.aiwg/state.git
   aiwg-state quickstart --json | jq '.steps[] | .command'`,
		Flags: []cli.Flag{jsonFlag(),
			&cli.BoolFlag{Name: "keep", Usage: "keep the scratch store (a DIR you name is always kept)"}},
		Action: quickstart,
	}
}

// printIgnored says that an ignore file keeps a new store out of the git
// project around it (see store.KeepOutOfWorkTree).
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
	keep := c.Bool("keep")
	if len(a) == 1 {
		dir, keep = a[0], true
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return err
		}
	} else if dir, err = os.MkdirTemp("", "aiwg-quickstart-"); err != nil {
		return err
	}
	if !keep {
		// A scratch store is a demonstration: it goes with the session.
		defer os.RemoveAll(dir)
	}
	storeDir := filepath.Join(dir, store.DefaultDir)
	if _, err := os.Stat(storeDir); err == nil {
		return errkind.Errorf(store.ErrExists, "%s already holds a store (pick an empty DIR)", dir)
	}
	asJSON := c.Bool("json")
	w := c.App.Writer
	if asJSON {
		w = io.Discard
	}
	fmt.Fprintf(w, "A scratch store in %s. Every command below is a real aiwg-state command.\n\n", dir)
	fmt.Fprintf(w, "$ export AIWG_STATE_STORE=%s\n", storeDir)
	os.Setenv("AIWG_STATE_STORE", storeDir)
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
		gitArgs := []string{"--git-dir", storeDir, "log", "-3", "--format=%h %an %s%n    %(trailers:separator=%x2c )"}
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
		return printJSON(c.App.Writer, map[string]any{"dir": dir, "store": storeDir, "kept": keep, "steps": ran})
	}
	fmt.Fprintf(w, "\n%s\n", nextHint(keep, storeDir))
	fmt.Fprintf(w, "An agent calling aiwg-state in a loop: start `aiwg-state serve &` and run\nthe same command lines as `aiwg-state-client …`: the store stays open between them.\n")
	return nil
}

// nextHint is quickstart's last word: where to go on, in a form that works
// whether or not aiwg-state is installed (go run leaves no program behind).
func nextHint(kept bool, store string) string {
	var b strings.Builder
	if _, err := exec.LookPath("aiwg-state"); err == nil {
		b.WriteString("Next: aiwg-state --help")
	} else {
		b.WriteString("Next: install it with\n    go install github.com/aiwg/aiwg-state/cmd/...@latest\n" +
			"or, in a checkout of aiwg-state, run `go run ./cmd/aiwg-state --help`")
	}
	if kept {
		fmt.Fprintf(&b, "\nGo on with this store:\n    export AIWG_STATE_STORE=%s", store)
	} else {
		b.WriteString("\nThe scratch store is removed; `quickstart --keep` keeps it.")
	}
	return b.String()
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
