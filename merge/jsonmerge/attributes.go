package jsonmerge

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/aiwg/aiwg-state/verbiage"
)

// ErrInvalidAttributes is wrapped by ParseAttributes' errors: a line that
// names an aiwg strategy git would run but aiwg-state does not know, or a
// malformed aiwg-keys value. Lines git itself ignores are ignored here too.
var ErrInvalidAttributes = errors.New("invalid .gitattributes")

// DriverPrefix starts the merge attribute values that name our drivers:
// merge=aiwg-last-write-wins runs `aiwg-state merge-file --strategy
// last-write-wins` in a clone once install-drivers has registered it.
const DriverPrefix = "aiwg-"

// Attribute names read besides merge. Git passes them over (an attribute
// no one asks for does nothing), so a clone's plain git merge and
// aiwg-state agree on them: the driver reads them back from the work tree.
const (
	// AttrFallback names the secondary strategy of merge-objects and
	// merge-arrays: aiwg-fallback=last-write-wins.
	AttrFallback = "aiwg-fallback"
	// AttrKeys gives strategies to object keys at any depth:
	// aiwg-keys=EVENTS:merge-arrays,SEEN:max.
	AttrKeys = "aiwg-keys"
)

// Attributes are the merge settings of a .gitattributes file. The zero
// value matches nothing.
type Attributes struct {
	lines []attrLine
}

// attrLine is one pattern line and what it says about our three
// attributes; a nil field means the line does not mention the attribute.
type attrLine struct {
	pattern verbiage.Pattern
	// line is the line's number in the file, from 1; text the pattern
	// as written (unquoted).
	line int
	text string
	// strategy: "" with set true means the line sets merge to something
	// that is not ours (merge=text, -merge, !merge...).
	strategy    Strategy
	setStrategy bool
	fallback    *Strategy
	keys        map[string]Strategy
	setKeys     bool
}

// ParseAttributes reads a .gitattributes file. Git's rules hold: blank
// lines and # comments are skipped, a pattern may be "C-quoted", [attr]
// macro lines and patterns git refuses (negative ones) are ignored. For
// each attribute, the last line that matches a path and mentions the
// attribute decides it, as in gitattributes(5).
//
// The one departure: a line naming an unknown aiwg- driver is an error
// rather than a silent text merge, since a typo would otherwise merge agent
// state line by line.
func ParseAttributes(data []byte) (Attributes, error) {
	var a Attributes
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 4096), 1<<20)
	n := 0
	for sc.Scan() {
		n++
		line := strings.TrimSpace(sc.Text())
		if line == "" || line[0] == '#' {
			continue
		}
		pat, rest, ok := splitPattern(line)
		if !ok {
			continue
		}
		p, err := verbiage.CompilePattern(pat)
		if err != nil {
			continue // git ignores the line, with a warning at most
		}
		l := attrLine{pattern: p, line: n, text: pat}
		for _, tok := range strings.Fields(rest) {
			if err := l.read(tok); err != nil {
				return Attributes{}, fmt.Errorf("%w: line %d: %w", ErrInvalidAttributes, n, err)
			}
		}
		if l.setStrategy || l.fallback != nil || l.setKeys {
			a.lines = append(a.lines, l)
		}
	}
	if err := sc.Err(); err != nil {
		return Attributes{}, fmt.Errorf("%w: %v", ErrInvalidAttributes, err)
	}
	return a, nil
}

// splitPattern cuts the pattern off a line, unquoting a "C-quoted" one as
// git does; ok is false for a quoted pattern git could not read.
func splitPattern(line string) (pattern, rest string, ok bool) {
	if line[0] != '"' {
		i := strings.IndexAny(line, " \t")
		if i < 0 {
			return line, "", true
		}
		return line[:i], line[i:], true
	}
	for i := 1; i < len(line); i++ {
		switch line[i] {
		case '\\':
			i++
		case '"':
			p, err := strconv.Unquote(line[:i+1])
			if err != nil {
				return "", "", false
			}
			return p, line[i+1:], true
		}
	}
	return "", "", false
}

// read takes one attribute token of a line.
func (l *attrLine) read(tok string) error {
	name, value, hasValue := strings.Cut(tok, "=")
	state := ""
	if !hasValue && (name != "" && (name[0] == '-' || name[0] == '!')) {
		state, name = name[:1], name[1:]
	}
	switch name {
	case "merge":
		l.setStrategy, l.strategy = true, ""
		if hasValue && strings.HasPrefix(value, DriverPrefix) {
			s, err := ParseStrategy(strings.TrimPrefix(value, DriverPrefix))
			if err != nil {
				return err
			}
			l.strategy = s
		}
	case AttrFallback:
		var s Strategy
		if hasValue {
			var err error
			if s, err = ParseStrategy(value); err != nil {
				return err
			}
		} else if state == "" {
			return fmt.Errorf("%s needs a value: %s=STRATEGY", AttrFallback, AttrFallback)
		}
		l.fallback = &s
	case AttrKeys:
		l.setKeys = true
		if !hasValue {
			if state == "" {
				//lint:ignore ST1005 the ellipsis is part of the syntax the message shows.
				return fmt.Errorf("%s needs a value: %s=KEY:STRATEGY,...", AttrKeys, AttrKeys)
			}
			return nil
		}
		keys, err := parseKeys(value)
		if err != nil {
			return err
		}
		l.keys = keys
	}
	return nil
}

// parseKeys reads KEY:STRATEGY,KEY:STRATEGY.
func parseKeys(v string) (map[string]Strategy, error) {
	out := map[string]Strategy{}
	for _, item := range strings.Split(v, ",") {
		k, s, ok := strings.Cut(item, ":")
		if !ok || k == "" {
			return nil, fmt.Errorf("%s: %q is not KEY:STRATEGY", AttrKeys, item)
		}
		st, err := ParseStrategy(s)
		if err != nil {
			return nil, err
		}
		out[k] = st
	}
	return out, nil
}

// Lookup returns the merge options for a file path and whether an aiwg
// driver is assigned to it. Each of strategy, fallback and keys is decided
// by the last matching line that mentions it.
func (a Attributes) Lookup(path string) (opts Options, ok bool) {
	gotStrategy, gotFallback, gotKeys := false, false, false
	for i := len(a.lines) - 1; i >= 0 && !(gotStrategy && gotFallback && gotKeys); i-- {
		l := &a.lines[i]
		if !l.pattern.Match(path) {
			continue
		}
		if l.setStrategy && !gotStrategy {
			gotStrategy = true
			opts.Strategy, ok = l.strategy, l.strategy != ""
		}
		if l.fallback != nil && !gotFallback {
			gotFallback = true
			opts.Fallback = *l.fallback
		}
		if l.setKeys && !gotKeys {
			gotKeys = true
			opts.Keys = l.keys
		}
	}
	return opts, ok
}

// Rule is a line of a .gitattributes file that mentions a merge attribute
// (see Attributes.Rules).
type Rule struct {
	// Line is the line's number in the file, from 1.
	Line int `json:"line"`
	// Pattern is the line's pattern, unquoted.
	Pattern string `json:"pattern"`
	// SetsStrategy: the line sets merge; Strategy is the aiwg strategy it
	// names, "" for a merge that is not ours (merge=text, -merge).
	SetsStrategy bool     `json:"-"`
	Strategy     Strategy `json:"strategy,omitempty"`
	// SetsFallback: the line mentions aiwg-fallback; Fallback is its
	// value, "" when the line unsets it.
	SetsFallback bool     `json:"-"`
	Fallback     Strategy `json:"fallback,omitempty"`
	// SetsKeys: the line mentions aiwg-keys; Keys is its value, nil when
	// the line unsets it.
	SetsKeys bool                `json:"-"`
	Keys     map[string]Strategy `json:"keys,omitempty"`
}

// Rules lists the lines that mention merge, aiwg-fallback or aiwg-keys,
// in the file's order.
func (a Attributes) Rules() []Rule {
	out := make([]Rule, len(a.lines))
	for i, l := range a.lines {
		out[i] = Rule{Line: l.line, Pattern: l.text, SetsStrategy: l.setStrategy, Strategy: l.strategy, SetsKeys: l.setKeys, Keys: l.keys}
		if l.fallback != nil {
			out[i].SetsFallback, out[i].Fallback = true, *l.fallback
		}
	}
	return out
}

// Deciding says which rules (indexes into Rules; -1 for none) decide a
// path's strategy, fallback and keys, as Lookup settles them: for each,
// the last matching rule that mentions it.
func (a Attributes) Deciding(path string) (strategy, fallback, keys int) {
	strategy, fallback, keys = -1, -1, -1
	for i := len(a.lines) - 1; i >= 0; i-- {
		l := &a.lines[i]
		if !l.pattern.Match(path) {
			continue
		}
		if l.setStrategy && strategy < 0 {
			strategy = i
		}
		if l.fallback != nil && fallback < 0 {
			fallback = i
		}
		if l.setKeys && keys < 0 {
			keys = i
		}
	}
	return strategy, fallback, keys
}
