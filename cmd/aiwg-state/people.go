package main

import (
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strings"

	"github.com/urfave/cli/v2"
)

// Output for people: colour and a pager, as git gives them, for the
// commands people read (log, blame, diff, show, review). Both only when
// standard output is a terminal, unless told: scripts and agents read
// plain text, and --json is never coloured nor paged.

// colorMode is --color: auto (a terminal, and NO_COLOR unset), always or
// never. Given alone, --color is always, as in git.
type colorMode struct{ mode string }

func (c *colorMode) String() string {
	if c == nil || c.mode == "" {
		return "auto"
	}
	return c.mode
}

func (c *colorMode) Set(v string) error {
	switch v {
	case "auto", "always", "never":
		c.mode = v
	case "true":
		c.mode = "always"
	case "false":
		c.mode = "never"
	default:
		return fmt.Errorf("want auto, always or never")
	}
	return nil
}

// IsBoolFlag lets --color stand alone (flag package and reorderArgs).
func (c *colorMode) IsBoolFlag() bool { return true }

func colorFlag() cli.Flag {
	return &cli.GenericFlag{Name: "color", Aliases: []string{"colour"}, Value: &colorMode{}, Usage: "colour: auto (on a terminal, unless NO_COLOR is set), always or never"}
}

func noPagerFlag() cli.Flag {
	return &cli.BoolFlag{Name: "no-pager", Usage: "never page: print straight to standard output"}
}

// peopleFlags are the output flags of the commands people read.
func peopleFlags() []cli.Flag { return []cli.Flag{colorFlag(), noPagerFlag()} }

// isBoolFlag reports whether f stands alone, without a value: a switch,
// or a flag like --color whose value is optional.
func isBoolFlag(f cli.Flag) bool {
	if _, ok := f.(*cli.BoolFlag); ok {
		return true
	}
	if g, ok := f.(*cli.GenericFlag); ok {
		if b, ok := g.Value.(interface{ IsBoolFlag() bool }); ok {
			return b.IsBoolFlag()
		}
	}
	return false
}

// color reports whether text output is coloured: --color, else a
// terminal without NO_COLOR.
func (s *session) color() bool {
	mode := "auto"
	if g, ok := s.c.Generic("color").(*colorMode); ok && g != nil {
		mode = g.String()
	}
	switch mode {
	case "always":
		return true
	case "never":
		return false
	}
	return !s.json && s.terminal() && s.inv.getenv("NO_COLOR") == ""
}

// ANSI colours, as git's defaults use them.
const (
	colorCommit = "33" // yellow: a commit id
	colorAgent  = "36" // cyan: who
	colorGraph  = "31" // red: the graph's lines
	colorDim    = "2"  // the mutation id
)

// paint wraps text in a colour when the output is coloured.
func (s *session) paint(code, text string) string {
	if !s.colored {
		return text
	}
	return "\x1b[" + code + "m" + text + "\x1b[m"
}

// pagerCommand is the pager to run: AIWG_PAGER, then GIT_PAGER, then
// PAGER, else less -FRX (which quits at once on output shorter than a
// screen). "" or "cat" is none.
func (s *session) pagerCommand() string {
	for _, k := range []string{"AIWG_PAGER", "GIT_PAGER", "PAGER"} {
		if v, ok := s.inv.lookupEnv(k); ok {
			return strings.TrimSpace(v)
		}
	}
	return "less -FRX"
}

// page sends the command's output through the pager when it goes to a
// terminal, and not for --json, --no-pager or a server's client; it
// returns what to call when the output is complete. A pager that does not
// start leaves the output unpaged.
func (s *session) page() (done func()) {
	s.colored = s.color()
	done = func() {}
	if s.json || s.c.Bool("no-pager") || s.inv.client != nil || !s.terminal() {
		return done
	}
	pager := s.pagerCommand()
	if pager == "" || pager == "cat" {
		return done
	}
	shell, flag := "sh", "-c"
	if runtime.GOOS == "windows" {
		shell, flag = "cmd", "/c"
	}
	cmd := exec.Command(shell, flag, pager)
	cmd.Stdout, cmd.Stderr = s.out, s.c.App.ErrWriter
	cmd.Env = os.Environ()
	if _, ok := s.inv.lookupEnv("LESS"); !ok {
		cmd.Env = append(cmd.Env, "LESS=FRX") // as git sets it
	}
	if _, ok := s.inv.lookupEnv("LV"); !ok {
		cmd.Env = append(cmd.Env, "LV=-c")
	}
	in, err := cmd.StdinPipe()
	if err != nil {
		return done
	}
	if err := cmd.Start(); err != nil {
		return done
	}
	out := s.out
	s.out = in
	return func() {
		in.Close()
		cmd.Wait() // the pager quit (q): the rest of the output is not wanted
		s.out = out
	}
}

// terminal reports whether the command's standard output is a terminal.
func (s *session) terminal() bool { return fakeTerminal || s.inv.terminal(s.c.App.Writer) }

// fakeTerminal: tests take their output for a terminal's, to see colour
// and the pager without one.
var fakeTerminal = false
