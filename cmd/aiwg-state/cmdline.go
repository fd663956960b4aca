package main

import (
	"slices"
	"strconv"
	"strings"

	"github.com/urfave/cli/v2"
)

// The command line as urfave/cli v2 parses it, made to behave as the help
// says: flags anywhere after the command (reorderArgs), one-line usage
// errors with exit code 2 for what urfave/cli reports otherwise
// (onUsageError, checkRequired), and flag names computed once
// (withFixedNames).

// onUsageError turns urfave/cli's parse errors (unknown flag, missing flag
// value) into usage errors with exit code 2.
func onUsageError(c *cli.Context, err error, _ bool) error {
	// Go's flag package speaks of "flag -idle" and "parse error"; say it
	// as the command line is written, with what the flag takes. (Parsed
	// by hand: a package-level regular expression is compiled in every
	// process.)
	if value, name, ok := badFlagValue(err.Error()); ok {
		what := "a valid value"
		for _, f := range c.Command.Flags {
			if slices.Contains(f.Names(), name) {
				what = flagTakes(f)
			}
		}
		dashes := "--"
		if len(name) == 1 {
			dashes = "-"
		}
		return usagef("%s%s %q: want %s (see aiwg-state %s --help)", dashes, name, value, what, commandPath(c))
	}
	return usagef("%v (see --help)", err)
}

// badFlagValue reads the flag package's `invalid value "V" for flag -N: ...`.
func badFlagValue(msg string) (value, name string, ok bool) {
	rest, ok := strings.CutPrefix(msg, "invalid value ")
	if !ok {
		return "", "", false
	}
	i := strings.LastIndex(rest, " for flag -")
	if i < 0 {
		return "", "", false
	}
	value, err := strconv.Unquote(rest[:i])
	if err != nil {
		return "", "", false
	}
	name, _, _ = strings.Cut(strings.TrimLeft(rest[i+len(" for flag "):], "-"), ":")
	return value, name, name != ""
}

// flagTakes names the kind of value a flag takes.
func flagTakes(f cli.Flag) string {
	switch f.(type) {
	case fixedInt:
		return "a whole number"
	case *cli.DurationFlag:
		return "a duration such as 90s, 15m or 2h"
	case *cli.IntFlag, *cli.Int64Flag, *cli.UintFlag, *cli.Uint64Flag:
		return "a whole number"
	case *cli.Float64Flag:
		return "a number"
	case *cli.BoolFlag:
		return "true or false"
	}
	return "a valid value"
}

func setUsageErrors(cmds []*cli.Command) {
	for _, c := range cmds {
		c.OnUsageError = onUsageError
		checkRequired(c)
		for i, f := range c.Flags {
			c.Flags[i] = withFixedNames(f)
		}
		setUsageErrors(c.Subcommands)
	}
}

// commandPath is the running command's full name: "checkpoint prune".
func commandPath(ctx *cli.Context) string {
	var names []string
	for _, c := range ctx.Lineage() {
		if c.Command != nil && c.Command.Name != "" && c.Command.Name != ctx.App.Name {
			names = append([]string{c.Command.Name}, names...)
		}
	}
	return strings.Join(names, " ")
}

// checkRequired has the command check its required flags itself: urfave/cli
// reports a missing one with exit 1 and the whole help on standard output
// (not JSON under --json); this is a one-line usage error, exit 2.
func checkRequired(c *cli.Command) {
	var required []string
	for _, f := range c.Flags {
		switch f := f.(type) {
		case *cli.StringFlag:
			if f.Required {
				f.Required = false
				required = append(required, f.Name)
			}
		case *cli.IntFlag:
			if f.Required {
				f.Required = false
				required = append(required, f.Name)
			}
		}
	}
	if len(required) == 0 || c.Action == nil {
		return
	}
	action := c.Action
	c.Action = func(ctx *cli.Context) error {
		for _, name := range required {
			if !ctx.IsSet(name) {
				path := commandPath(ctx)
				return usagef("%s needs --%s (see aiwg-state %s --help)", path, name, path)
			}
		}
		return action(ctx)
	}
}

// withFixedNames computes a string or int flag's names once. urfave/cli
// derives them with a regular expression on every lookup and, before a
// command runs, looks up each flag not given once per flag of the command
// (runFlagActions): 285 replacements in a `set`, 8% of its instructions
// under callgrind. Bool flags stay as they are: urfave/cli and reorderArgs
// tell them by their type.
func withFixedNames(f cli.Flag) cli.Flag {
	switch f := f.(type) {
	case *cli.StringFlag:
		return fixedString{f, f.Names()}
	case *cli.IntFlag:
		return fixedInt{f, f.Names()}
	}
	return f
}

type fixedString struct {
	*cli.StringFlag
	names []string
}

func (f fixedString) Names() []string { return f.names }

type fixedInt struct {
	*cli.IntFlag
	names []string
}

func (f fixedInt) Names() []string { return f.names }

// isGroup reports whether c is made of subcommands and does nothing itself.
func isGroup(c *cli.Command) bool { return c != nil && len(c.Subcommands) > 0 && c.Action == nil }

// commandNames lists a group's commands for an error message.
func commandNames(cmds []*cli.Command) string {
	names := make([]string, 0, len(cmds))
	for _, c := range cmds {
		if !c.Hidden {
			names = append(names, c.Name)
		}
	}
	return strings.Join(names, ", ")
}

// reorderArgs moves a command's flags after its command path and before
// its positional arguments. urfave/cli v2 stops parsing flags at the first
// argument, and reads flags placed before a subcommand's name as the
// parent's, so without this `aiwg-state set doc.json a 1 --json` would take
// --json as a value. Only names a command defines count as flags, so a
// value like -1 stays a value; "--" ends flags as usual. Anything else
// after the command that reads as a flag (-x, --xy) is refused rather than
// taken as an argument (a mistyped --agnet would be written as a key), as
// is a flag whose value is missing or is another of the command's flags,
// a group's unknown command, and an argument to a command whose usage
// shows none.
func reorderArgs(app *cli.App, args []string) ([]string, error) {
	if len(args) < 2 {
		return args, nil
	}
	var valued map[string]bool // walked only for a flag before the command: most calls have none
	path := []string{args[0]}
	var early []string      // flags met before the command path ended
	var earlyNames []string // their names
	groupFlags := 0         // how many of them came before the last command named
	rest := args[1:]
	var cmd *cli.Command
	cmds := app.Commands
	for len(rest) > 0 {
		a := rest[0]
		if a == "--" {
			break
		}
		if strings.HasPrefix(a, "-") {
			early = append(early, a)
			rest = rest[1:]
			name, _, hasEq := strings.Cut(strings.TrimLeft(a, "-"), "=")
			earlyNames = append(earlyNames, name)
			if valued == nil {
				valued = valueFlags(app.Commands)
			}
			if valued[name] && !hasEq && len(rest) > 0 {
				early = append(early, rest[0])
				rest = rest[1:]
			}
			continue
		}
		next := findCommand(cmds, a)
		if next == nil {
			// urfave/cli adds "help" (and "h") to every group as it
			// runs: `remote help add` prints add's help.
			if isGroup(cmd) && a != "help" && a != "h" {
				return nil, usagef("%s has no command %s (its commands: %s; see aiwg-state %s --help)", strings.Join(path[1:], " "), a, commandNames(cmds), strings.Join(path[1:], " "))
			}
			break
		}
		cmd = next
		path = append(path, a)
		rest = rest[1:]
		cmds = next.Subcommands
		groupFlags = len(early)
		if len(cmds) == 0 {
			break
		}
	}
	if cmd == nil || cmd.SkipFlagParsing {
		return args, nil // a command that hands its arguments on as they are (mcp)
	}
	if isGroup(cmd) {
		// Named alone, a group prints its help; anything more needs
		// one of its commands.
		for _, f := range early[groupFlags:] {
			if f != "--help" && f != "-h" && f != "-help" {
				return nil, usagef("%s needs one of its commands before %s: %s (see aiwg-state %s --help)", strings.Join(path[1:], " "), f, commandNames(cmds), strings.Join(path[1:], " "))
			}
		}
		return args, nil
	}
	// urfave/cli adds --help/-h to every command without listing it.
	takesValue := map[string]bool{"help": false, "h": false}
	isFlag := map[string]bool{"help": true, "h": true}
	// A flag that takes one value, given twice, would keep the last
	// silently (log --agent a --agent b shows b's writes only); a switch
	// given twice is harmless (wrappers append --json).
	once := map[string]string{} // a name of such a flag -> its first name
	for _, f := range cmd.Flags {
		isBool := isBoolFlag(f)
		_, isSlice := f.(*cli.StringSliceFlag)
		for _, n := range f.Names() {
			isFlag[n] = true
			takesValue[n] = !isBool
			if !isBool && !isSlice {
				once[n] = f.Names()[0]
			}
		}
	}
	given := map[string]bool{}
	twice := func(name string) error {
		first, ok := once[name]
		if !ok {
			return nil
		}
		if given[first] {
			dash := "--"
			if len(first) == 1 {
				dash = "-"
			}
			return usagef("flag %s%s is given twice; %s takes one (see aiwg-state %s --help)", dash, first, strings.Join(path[1:], " "), strings.Join(path[1:], " "))
		}
		given[first] = true
		return nil
	}
	for _, name := range earlyNames {
		if err := twice(name); err != nil {
			return nil, err
		}
	}
	flags := early
	var pos []string
	for i := 0; i < len(rest); i++ {
		a := rest[i]
		if a == "--" {
			pos = append(pos, rest[i+1:]...)
			break
		}
		name := strings.TrimLeft(a, "-")
		name, _, hasEq := strings.Cut(name, "=")
		if short := name[:min(1, len(name))]; len(a) > 2 && a[0] == '-' && a[1] != '-' && !isFlag[name] && takesValue[short] {
			// -n5 is -n 5, as getopt (and so git) reads a one-letter
			// flag with its value attached.
			if err := twice(short); err != nil {
				return nil, err
			}
			flags = append(flags, "-"+short, a[2:])
			continue
		}
		if strings.HasPrefix(a, "-") && isFlag[name] {
			if err := twice(name); err != nil {
				return nil, err
			}
			flags = append(flags, a)
			if takesValue[name] && !hasEq {
				if i+1 == len(rest) {
					return nil, usagef("flag %s needs a value (see aiwg-state %s --help)", a, strings.Join(path[1:], " "))
				}
				if next := rest[i+1]; next == "--" || strings.HasPrefix(next, "-") && isFlag[strings.TrimLeft(strings.SplitN(next, "=", 2)[0], "-")] {
					// --source --json would record a source named
					// "--json" and print text: most likely a value
					// left out.
					return nil, usagef("flag %s needs a value, and %s is a flag (for that very value, write %s=%s)", a, next, a, next)
				}
				flags = append(flags, rest[i+1])
				i++
			}
			continue
		}
		if looksLikeFlag(a) {
			cmdName := strings.Join(path[1:], " ")
			return nil, usagef("%s has no flag %s (see aiwg-state %s --help; to pass it as an argument, put -- before it)", cmdName, a, cmdName)
		}
		pos = append(pos, a)
	}
	out := append(path, flags...)
	for _, f := range flags {
		if f == "--help" || f == "-h" || f == "-help" {
			return out, nil // help takes no arguments; they would read as a topic
		}
	}
	if len(pos) > 0 && cmd.ArgsUsage == "" && len(cmd.Subcommands) == 0 {
		// Its help shows no arguments; ignoring one would let a
		// mistyped command line pass (gc extra, conflicts plan.json).
		cmdName := strings.Join(path[1:], " ")
		return nil, usagef("%s takes no arguments, got %s (see aiwg-state %s --help)", cmdName, strconv.Quote(pos[0]), cmdName)
	}
	if len(pos) > 0 {
		out = append(out, "--")
		out = append(out, pos...)
	}
	return out, nil
}

// looksLikeFlag: -x or --xy, as opposed to -1, - (standard input) or --.
func looksLikeFlag(a string) bool {
	a, ok := strings.CutPrefix(a, "-")
	if !ok {
		return false
	}
	a = strings.TrimPrefix(a, "-")
	return a != "" && (a[0] >= 'a' && a[0] <= 'z' || a[0] >= 'A' && a[0] <= 'Z')
}

// valueFlags are the names of flags that take a value, in any command.
func valueFlags(cmds []*cli.Command) map[string]bool {
	out := map[string]bool{}
	var walk func([]*cli.Command)
	walk = func(cs []*cli.Command) {
		for _, c := range cs {
			for _, f := range c.Flags {
				if isBool := isBoolFlag(f); !isBool {
					for _, n := range f.Names() {
						out[n] = true
					}
				}
			}
			walk(c.Subcommands)
		}
	}
	walk(cmds)
	return out
}

func findCommand(cmds []*cli.Command, name string) *cli.Command {
	for _, c := range cmds {
		if c.HasName(name) {
			return c
		}
	}
	return nil
}
