package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/urfave/cli/v2"
)

//go:generate go test -run ^TestCLIReferenceIsCurrent$ -update .

// writeReference writes the CLI reference (docs/cli.md) from the commands
// themselves: each command's usage, description and flags, as --help
// prints them, so that the reference cannot say what the CLI does not.
func writeReference(w io.Writer) {
	app := newApp(strings.NewReader(""), io.Discard, io.Discard)
	fmt.Fprintf(w, "# aiwg-state command reference\n\n")
	fmt.Fprintf(w, "<!-- Generated from the commands by `go generate ./cmd/aiwg-state`. Do not edit: change the commands' help instead. -->\n\n")
	fmt.Fprintf(w, "%s: %s.\n\n```text\n%s\n```\n\n", app.Name, app.Usage, appHelp)
	fmt.Fprintf(w, "Every command also takes `--help` (`-h`); `aiwg-state --version` prints the version.\n\n")
	fmt.Fprintf(w, "## Commands\n\n")
	var list func(cmds []*cli.Command, path string, depth int)
	list = func(cmds []*cli.Command, path string, depth int) {
		for _, c := range cmds {
			if c.Hidden {
				continue
			}
			p := strings.TrimSpace(path + " " + c.Name)
			fmt.Fprintf(w, "%s- [%s](#%s): %s\n", strings.Repeat("  ", depth), p, anchor("aiwg-state "+p), c.Usage)
			list(c.Subcommands, p, depth+1)
		}
	}
	list(app.Commands, "", 0)
	var walk func(cmds []*cli.Command, path string)
	walk = func(cmds []*cli.Command, path string) {
		for _, c := range cmds {
			if c.Hidden {
				continue
			}
			p := strings.TrimSpace(path + " " + c.Name)
			writeCommand(w, "aiwg-state "+p, c)
			walk(c.Subcommands, p)
		}
	}
	walk(app.Commands, "")
}

func writeCommand(w io.Writer, path string, c *cli.Command) {
	fmt.Fprintf(w, "\n## %s\n\n%s", path, upperFirst(c.Usage))
	if !strings.HasSuffix(c.Usage, ".") {
		fmt.Fprint(w, ".")
	}
	fmt.Fprint(w, "\n\n```text\n")
	usage := path
	if len(c.Subcommands) > 0 {
		usage += " COMMAND"
	}
	if len(c.Flags) > 0 {
		usage += " [options]"
	}
	if c.ArgsUsage != "" {
		usage += " " + c.ArgsUsage
	}
	fmt.Fprintln(w, usage)
	fmt.Fprint(w, "```\n")
	if len(c.Aliases) > 0 {
		fmt.Fprintf(w, "\nAlso: %s.\n", strings.Join(c.Aliases, ", "))
	}
	if d := strings.TrimSpace(c.Description); d != "" {
		fmt.Fprintf(w, "\n```text\n%s\n```\n", d)
	}
	if len(c.Subcommands) > 0 {
		fmt.Fprint(w, "\nCommands:\n\n")
		for _, s := range c.Subcommands {
			if !s.Hidden {
				fmt.Fprintf(w, "- [%s](#%s): %s\n", s.Name, anchor(path+" "+s.Name), s.Usage)
			}
		}
	}
	if len(c.Flags) > 0 {
		fmt.Fprint(w, "\nOptions:\n\n")
		for _, f := range c.Flags {
			name, usage, _ := strings.Cut(cli.FlagStringer(f), "\t")
			fmt.Fprintf(w, "- `%s`: %s\n", name, strings.TrimSpace(usage))
		}
	}
}

// anchor is the id GitHub gives a heading: lower case, spaces as dashes,
// punctuation other than - and _ dropped.
func anchor(heading string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(heading) {
		switch {
		case r == ' ':
			b.WriteByte('-')
		case r == '-' || r == '_' || r >= 'a' && r <= 'z' || r >= '0' && r <= '9':
			b.WriteRune(r)
		}
	}
	return b.String()
}

func upperFirst(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}
