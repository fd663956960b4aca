package main

import (
	"context"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/tidwall/gjson"
	"github.com/urfave/cli/v2"

	"github.com/aiwg/aiwg-state/store"
)

func newCompletionCommand() *cli.Command {
	shell := func(name, how string, write func(io.Writer, []*cli.Command) error) *cli.Command {
		return &cli.Command{
			Name:        name,
			Usage:       "print the " + name + " completion script",
			Description: how,
			Action: func(c *cli.Context) error {
				return write(c.App.Writer, newApp(nil, io.Discard, io.Discard).Commands)
			},
		}
	}
	return &cli.Command{
		Name:  "completion",
		Usage: "shell completion for bash, zsh and fish: commands, flags, branches, files and key paths",
		Description: `Prints a script that completes aiwg-state's commands and flags, and the
store's branches, files and key paths (FILE#KEY, or the word after a
document) where a command takes them, read from the nearest store as
you type.

Examples:
   source <(aiwg-state completion bash)            # in ~/.bashrc
   source <(aiwg-state completion zsh)             # in ~/.zshrc
   aiwg-state completion fish > ~/.config/fish/completions/aiwg-state.fish`,
		Subcommands: []*cli.Command{
			shell("bash", "Examples:\n   source <(aiwg-state completion bash)", writeBashCompletion),
			shell("zsh", "Examples:\n   source <(aiwg-state completion zsh)", writeZshCompletion),
			shell("fish", "Examples:\n   aiwg-state completion fish > ~/.config/fish/completions/aiwg-state.fish", writeFishCompletion),
			{
				Name:      "words",
				Usage:     "the store's branches, the files under PREFIX's directory and a document's key paths, one a line (the scripts call it)",
				ArgsUsage: "[PREFIX [PREV]]",
				Hidden:    true,
				Flags:     commonFlags(),
				Action: command(func(s *session) error {
					return runCompletionWords(s.c.Context, s)
				}),
			},
		},
	}
}

// runCompletionWords prints the branches, and the entries of the
// directory the prefix names (directories with a trailing /). A prefix
// FILE#KEY offers the key paths of that document one level at a time
// (objects with a trailing .), and so does the word after a document
// (get FILE KEY), when the scripts pass that word as PREV.
func runCompletionWords(ctx context.Context, s *session) error {
	prefix := argAt(s.c.Args().Slice(), 0)
	if file, kp, ok := strings.Cut(prefix, "#"); ok {
		for _, k := range completeKeys(ctx, s, file, kp) {
			fmt.Fprintln(s.out, file+"#"+k)
		}
		return nil
	}
	if prev := argAt(s.c.Args().Slice(), 1); strings.HasSuffix(prev, ".json") && !strings.Contains(prefix, "/") {
		for _, k := range completeKeys(ctx, s, prev, prefix) {
			fmt.Fprintln(s.out, k)
		}
	}
	bs, err := s.store.Branches(ctx)
	if err != nil {
		return err
	}
	for _, b := range bs {
		fmt.Fprintln(s.out, b.Name)
	}
	dir := ""
	if i := strings.LastIndex(prefix, "/"); i >= 0 {
		dir = prefix[:i]
	}
	es, err := s.store.List(ctx, dir, store.ReadOptions{})
	if err != nil {
		return nil // no such directory: nothing to offer
	}
	for _, e := range es {
		if e.IsDir {
			fmt.Fprintln(s.out, e.Path+"/")
		} else {
			fmt.Fprintln(s.out, e.Path)
		}
	}
	return nil
}

// completeKeys lists the key paths one level below the object that
// typed (a key path being typed) is in: for "risk.le", the keys of
// "risk". Keys a key path cannot name plainly are left out.
func completeKeys(ctx context.Context, s *session, file, typed string) []string {
	doc, err := s.store.Cat(ctx, file, store.ReadOptions{})
	if err != nil || !gjson.ValidBytes(doc) {
		return nil
	}
	parent, at := "", gjson.ParseBytes(doc)
	if i := strings.LastIndex(typed, "."); i >= 0 {
		parent = typed[:i+1]
		at = at.Get(typed[:i])
	}
	if !at.IsObject() {
		return nil
	}
	var keys []string
	at.ForEach(func(k, v gjson.Result) bool {
		if k.Str == "" || strings.ContainsAny(k.Str, ".*?#\\|@ \t\n\"'$`()") {
			return true
		}
		if v.IsObject() {
			keys = append(keys, parent+k.Str+".")
		}
		keys = append(keys, parent+k.Str)
		return true
	})
	return keys
}

// completionTree is the command tree as the scripts need it: for each
// command path ("" is the top), its subcommands and its flags.
type completionTree struct {
	paths  []string
	subs   map[string][]string
	flags  map[string][]string
	usage  map[string]string
	valued map[string]bool // flags that take a value
}

func buildCompletionTree(cmds []*cli.Command) completionTree {
	t := completionTree{subs: map[string][]string{}, flags: map[string][]string{}, usage: map[string]string{}, valued: map[string]bool{}}
	var walk func(path string, cs []*cli.Command)
	walk = func(path string, cs []*cli.Command) {
		t.paths = append(t.paths, path)
		for _, c := range cs {
			if c.Hidden {
				continue
			}
			p := strings.TrimSpace(path + " " + c.Name)
			t.subs[path] = append(t.subs[path], c.Name)
			t.usage[p] = c.Usage
			for _, f := range c.Flags {
				for _, n := range f.Names() {
					dash := "--"
					if len(n) == 1 {
						dash = "-"
					}
					t.flags[p] = append(t.flags[p], dash+n)
					if !isBoolFlag(f) {
						t.valued[dash+n] = true
					}
				}
			}
			t.flags[p] = append(t.flags[p], "--help")
			if len(c.Subcommands) > 0 {
				walk(p, c.Subcommands)
			} else {
				t.paths = append(t.paths, p)
			}
		}
	}
	walk("", cmds)
	return t
}

// branchFlags take a branch or revision; completed from the store.
var branchFlags = []string{"--branch", "-b", "--at", "--from", "--into", "--policy-from", "--expect", "--unchanged-since"}

func (t completionTree) valuedList() string {
	var v []string
	for f := range t.valued {
		v = append(v, f)
	}
	sort.Strings(v)
	return strings.Join(v, " ")
}

func writeBashCompletion(w io.Writer, cmds []*cli.Command) error {
	t := buildCompletionTree(cmds)
	var b strings.Builder
	b.WriteString(`# bash completion for aiwg-state: source <(aiwg-state completion bash)
_aiwg_state_subs() {
    case "$1" in
`)
	for _, p := range t.paths {
		if subs := t.subs[p]; len(subs) > 0 {
			fmt.Fprintf(&b, "    %q) echo %q ;;\n", p, strings.Join(subs, " "))
		}
	}
	b.WriteString(`    esac
}
_aiwg_state_flags() {
    case "$1" in
`)
	for _, p := range t.paths {
		if fl := t.flags[p]; len(fl) > 0 {
			fmt.Fprintf(&b, "    %q) echo %q ;;\n", p, strings.Join(fl, " "))
		}
	}
	fmt.Fprintf(&b, `    esac
}
_aiwg_state() {
    local cur prev path="" w i skip=0
    local valued=%q
    local branchy=%q
    cur="${COMP_WORDS[COMP_CWORD]}"
    prev="${COMP_WORDS[COMP_CWORD-1]}"
    for ((i = 1; i < COMP_CWORD; i++)); do
        w="${COMP_WORDS[i]}"
        if ((skip)); then skip=0; continue; fi
        case "$w" in
        --*=*) continue ;;
        -*) [[ " $valued " == *" $w "* ]] && skip=1; continue ;;
        esac
        if [[ " $(_aiwg_state_subs "$path") " == *" $w "* ]]; then
            path="${path:+$path }$w"
        else
            break
        fi
    done
    if [[ " $valued " == *" $prev "* ]]; then
        if [[ " $branchy " == *" $prev "* ]]; then
            COMPREPLY=($(compgen -W "$(aiwg-state completion words 2>/dev/null)" -- "$cur"))
        fi
        return 0
    fi
    if [[ "$cur" == -* ]]; then
        COMPREPLY=($(compgen -W "$(_aiwg_state_flags "$path")" -- "$cur"))
        return 0
    fi
    local subs
    subs="$(_aiwg_state_subs "$path")"
    if [[ -n "$subs" ]]; then
        COMPREPLY=($(compgen -W "$subs" -- "$cur"))
        return 0
    fi
    [[ -z "$path" ]] && return 0
    # A command's arguments: the store's branches and files.
    compopt -o nospace 2>/dev/null
    COMPREPLY=($(compgen -W "$(aiwg-state completion words "$cur" "$prev" 2>/dev/null)" -- "$cur"))
    local k
    for k in "${!COMPREPLY[@]}"; do
        [[ "${COMPREPLY[k]}" == */ || "${COMPREPLY[k]}" == *. ]] || COMPREPLY[k]="${COMPREPLY[k]} "
    done
}
complete -F _aiwg_state aiwg-state
`, t.valuedList(), strings.Join(branchFlags, " "))
	_, err := io.WriteString(w, b.String())
	return err
}

// writeZshCompletion: zsh runs the bash completion through its
// bashcompinit, which every zsh has.
func writeZshCompletion(w io.Writer, cmds []*cli.Command) error {
	if _, err := io.WriteString(w, "# zsh completion for aiwg-state: source <(aiwg-state completion zsh)\nautoload -U +X compinit && compinit\nautoload -U +X bashcompinit && bashcompinit\n"); err != nil {
		return err
	}
	return writeBashCompletion(w, cmds)
}

func writeFishCompletion(w io.Writer, cmds []*cli.Command) error {
	t := buildCompletionTree(cmds)
	var b strings.Builder
	b.WriteString("# fish completion for aiwg-state: aiwg-state completion fish > ~/.config/fish/completions/aiwg-state.fish\ncomplete -c aiwg-state -f\n")
	quote := func(s string) string {
		return "'" + strings.ReplaceAll(strings.ReplaceAll(s, `\`, `\\`), "'", `\'`) + "'"
	}
	for _, p := range t.paths {
		cond := "__fish_use_subcommand"
		if p != "" {
			cond = "__fish_seen_subcommand_from " + strings.Fields(p)[len(strings.Fields(p))-1]
		}
		for _, sub := range t.subs[p] {
			fmt.Fprintf(&b, "complete -c aiwg-state -n %s -a %s -d %s\n", quote(cond), quote(sub), quote(firstLine(t.usage[strings.TrimSpace(p+" "+sub)])))
		}
		if p == "" {
			continue
		}
		for _, f := range t.flags[p] {
			opt := "-l " + strings.TrimLeft(f, "-")
			if !strings.HasPrefix(f, "--") {
				opt = "-s " + strings.TrimLeft(f, "-")
			}
			if t.valued[f] {
				opt += " -r"
			}
			fmt.Fprintf(&b, "complete -c aiwg-state -n %s %s\n", quote(cond), opt)
		}
		if len(t.subs[p]) == 0 {
			fmt.Fprintf(&b, "complete -c aiwg-state -n %s -a '(aiwg-state completion words (commandline -ct) (commandline -opc)[-1] 2>/dev/null)'\n", quote(cond))
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	if len(s) > 80 {
		s = s[:77] + "..."
	}
	return s
}
