package repo

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/aiwg/aiwg-state/internal/errkind"
)

// repoFormat is what a repository's config says about its format:
// core.repositoryformatversion and the extensions.* keys, which tell a
// reader what it must understand before it touches the repository.
type repoFormat struct {
	version int
	// extensions maps each extension (lower case, after "extensions.") to
	// its last value; noValue ones ("[extensions] noop") map to "".
	extensions map[string]string
	noValue    map[string]bool
	// precious: extensions.preciousObjects is true; git never deletes a
	// pack or loose object of such a repository.
	precious bool
}

// v0Extensions are the extensions git honours in a version 0 repository
// too (and ignores any other there); v1Extensions the ones it knows only
// from version 1. This package handles all of them, objectformat only
// for sha1.
var (
	v0Extensions = map[string]bool{"noop": true, "preciousobjects": true, "partialclone": true, "worktreeconfig": true}
	v1Extensions = map[string]bool{"noop-v1": true, "objectformat": true}
)

// checkFormat reads dir's config and refuses, as git does, a repository
// whose format this package cannot read or write safely: a format version
// above 1, an extension it does not know in a version 1 repository, an
// extension of version 1 in a version 0 one, and objects named by another
// hash than SHA-1 (SHA-256: it would misread every object). It reports
// whether the repository keeps its objects precious.
func checkFormat(dir string) (repoFormat, error) {
	data, err := os.ReadFile(filepath.Join(dir, "config"))
	if errors.Is(err, fs.ErrNotExist) {
		return repoFormat{}, nil // no config: git's defaults, version 0 and SHA-1
	}
	if err != nil {
		return repoFormat{}, fmt.Errorf("%s: %w", filepath.Join(dir, "config"), err)
	}
	f := repoFormat{extensions: map[string]string{}, noValue: map[string]bool{}}
	var verr error
	err = parseGitConfig(data, func(key, value string, noValue bool) {
		switch {
		case key == "core.repositoryformatversion":
			v, err := strconv.Atoi(strings.TrimSpace(value))
			if err != nil || noValue {
				verr = errkind.Errorf(ErrUnsupported, "%s: core.repositoryformatversion %q is not a number (git refuses the repository too)", dir, value)
				return
			}
			f.version, verr = v, nil
		case strings.HasPrefix(key, "extensions."):
			ext := strings.TrimPrefix(key, "extensions.")
			f.extensions[ext], f.noValue[ext] = value, noValue
		}
	})
	if err != nil {
		return repoFormat{}, errkind.Errorf(ErrUnsupported, "%s: the config does not parse (%v); git refuses it too: fix it with an editor, `git config --file %s --list` shows where it stops", dir, err, filepath.Join(dir, "config"))
	}
	if verr != nil {
		return repoFormat{}, verr
	}
	if f.version > 1 {
		return repoFormat{}, errkind.Errorf(ErrUnsupported, "%s: core.repositoryformatversion is %d, a repository format newer than git's (0 and 1) and aiwg-state's", dir, f.version)
	}
	for ext, v := range f.extensions {
		switch {
		case ext == "preciousobjects":
			f.precious = f.noValue[ext] || configBool(v)
		case v0Extensions[ext]:
		case v1Extensions[ext] && f.version == 0:
			return repoFormat{}, errkind.Errorf(ErrUnsupported, "%s: extensions.%s needs core.repositoryformatversion 1, and the config says 0 (git refuses the repository too)", dir, ext)
		case ext == "objectformat":
			if h := strings.ToLower(v); h != "sha1" {
				return repoFormat{}, errkind.Errorf(ErrUnsupported, "%s names its objects by %s (git init --object-format=%s); aiwg-state reads SHA-1 repositories: make a new store, or clone this one into a SHA-1 repository", dir, strings.ToUpper(h), h)
			}
		case v1Extensions[ext]:
		case f.version >= 1:
			return repoFormat{}, errkind.Errorf(ErrUnsupported, "%s uses the repository extension extensions.%s, which aiwg-state does not know: it could misread or damage the store, so it leaves it alone (git refuses extensions it does not know the same way)", dir, ext)
		}
		// Version 0 ignores extensions it does not know, as git does.
	}
	return f, nil
}

// Writable refuses writes and maintenance in a repository whose objects
// are precious (extensions.preciousObjects): a commit replaces the pack it
// extends and removes the old one, and a repack removes the packs it
// rolls up, which such a repository forbids. Reads, fetches and ref
// updates go on.
func (r *Repo) Writable() error {
	if r.precious {
		return errkind.Errorf(ErrUnsupported, "%s keeps its objects precious (extensions.preciousObjects): git never deletes its packs, and aiwg-state's writes replace them; it is read-only to aiwg-state (clone it to write)", r.dir)
	}
	return nil
}

// configBool is git's reading of a boolean config value that is present.
func configBool(v string) bool {
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "false", "no", "off", "":
		return false
	case "true", "yes", "on":
		return true
	}
	n, err := strconv.Atoi(strings.TrimSpace(v))
	// git refuses a value that is neither; taken as true, the safer
	// reading of preciousObjects.
	return err != nil || n != 0
}

// parseGitConfig reads git's config syntax as git's config parser does,
// calling fn with each key (section, subsection and name, the section
// and name in lower case: "core.bare", `remote.Origin.url`), its value
// with quotes and escapes undone, and whether it had no value at all
// ("[core] bare" means true). It does not follow include directives: git
// does not either when it reads the repository format.
func parseGitConfig(data []byte, fn func(key, value string, noValue bool)) error {
	p := &cfgParser{b: data}
	if strings.HasPrefix(string(data), "\xef\xbb\xbf") {
		p.i = 3
	}
	var section string
	comment := false
	for {
		c, eof := p.next()
		if eof {
			return nil
		}
		switch {
		case c == '\n':
			comment = false
		case comment || c == ' ' || c == '\t' || c == '\r':
		case c == '#' || c == ';':
			comment = true
		case c == '[':
			s, err := p.section()
			if err != nil {
				return err
			}
			section = s
		case isAlpha(c):
			if section == "" {
				return p.errorf("a key outside any section")
			}
			name := []byte{lower(c)}
			for {
				c, eof = p.next()
				if eof || !(isAlpha(c) || c >= '0' && c <= '9' || c == '-') {
					break
				}
				name = append(name, lower(c))
			}
			for !eof && (c == ' ' || c == '\t') {
				c, eof = p.next()
			}
			if eof || c == '\n' {
				fn(section+"."+string(name), "", true)
				continue
			}
			if c != '=' {
				return p.errorf("a key not followed by '='")
			}
			v, err := p.value()
			if err != nil {
				return err
			}
			fn(section+"."+string(name), v, false)
		default:
			return p.errorf("unexpected %q", c)
		}
	}
}

type cfgParser struct {
	b    []byte
	i    int
	line int // completed lines, for errors
}

// next returns the next character, "\r\n" read as "\n" as git does.
func (p *cfgParser) next() (byte, bool) {
	if p.i >= len(p.b) {
		return 0, true
	}
	c := p.b[p.i]
	p.i++
	if c == '\r' && p.i < len(p.b) && p.b[p.i] == '\n' {
		p.i++
		c = '\n'
	}
	if c == '\n' {
		p.line++
	}
	return c, false
}

func (p *cfgParser) errorf(format string, a ...any) error {
	return fmt.Errorf("line %d: %s", p.line+1, fmt.Sprintf(format, a...))
}

// section reads a section header after its '[': "core]" or
// `remote "origin"]`; the old "[branch.main]" form keeps its dots.
func (p *cfgParser) section() (string, error) {
	var name []byte
	for {
		c, eof := p.next()
		switch {
		case eof:
			return "", p.errorf("an unfinished section header")
		case c == ']':
			if len(name) == 0 {
				return "", p.errorf("an empty section name")
			}
			return string(name), nil
		case c == '\n':
			// git ends a header at the line's end, before any subsection.
			return "", p.errorf("an unfinished section header")
		case c == ' ' || c == '\t' || c == '\r':
			return p.subsection(string(name))
		case isAlpha(c) || c >= '0' && c <= '9' || c == '-' || c == '.':
			name = append(name, lower(c))
		default:
			return "", p.errorf("%q in a section name", c)
		}
	}
}

func (p *cfgParser) subsection(name string) (string, error) {
	c, eof := p.next()
	for !eof && (c == ' ' || c == '\t' || c == '\r') {
		c, eof = p.next()
	}
	if eof || c != '"' {
		return "", p.errorf("a section header without its quoted subsection")
	}
	sub := []byte(name + ".")
	for {
		c, eof = p.next()
		if eof || c == '\n' {
			return "", p.errorf("an unfinished subsection name")
		}
		if c == '"' {
			break
		}
		if c == '\\' {
			if c, eof = p.next(); eof || c == '\n' {
				return "", p.errorf("an unfinished subsection name")
			}
		}
		sub = append(sub, c)
	}
	if c, eof = p.next(); eof || c != ']' {
		return "", p.errorf("a subsection name not followed by ']'")
	}
	return string(sub), nil
}

// value reads a value after its '=', to the end of its line: whitespace
// around it dropped, inner runs of it kept, quotes removed, escapes
// undone, a backslash at the end of a line continuing it, and a comment
// (';' or '#' outside quotes) ending it.
func (p *cfgParser) value() (string, error) {
	var out []byte
	spaces, quote, comment := 0, false, false
	for {
		c, eof := p.next()
		if eof || c == '\n' {
			if quote {
				return "", p.errorf("an unterminated quoted value")
			}
			return string(out), nil
		}
		if comment {
			continue
		}
		if (c == ' ' || c == '\t' || c == '\r') && !quote {
			if len(out) > 0 {
				spaces++
			}
			continue
		}
		if !quote && (c == ';' || c == '#') {
			comment = true
			continue
		}
		for ; spaces > 0; spaces-- {
			out = append(out, ' ')
		}
		switch c {
		case '\\':
			c, eof = p.next()
			switch {
			case eof:
				return "", p.errorf("a backslash at the end of the file")
			case c == '\n':
				continue
			case c == 't':
				c = '\t'
			case c == 'b':
				c = '\b'
			case c == 'n':
				c = '\n'
			case c == '\\' || c == '"':
			default:
				return "", p.errorf("an unknown escape \\%c", c)
			}
			out = append(out, c)
		case '"':
			quote = !quote
		default:
			out = append(out, c)
		}
	}
}

func isAlpha(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }

func lower(c byte) byte {
	if c >= 'A' && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}
