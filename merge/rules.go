package merge

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/aiwg/aiwg-state/merge/jsonmerge"
	"github.com/aiwg/aiwg-state/repo"
	"github.com/aiwg/aiwg-state/store"
	"github.com/aiwg/aiwg-state/verbiage"
)

// Strategies lists the lines of the store's .gitattributes that assign
// merge strategies, in the file's order (the last line matching a path
// decides it).
func (m *Merges) Strategies(ctx context.Context, ro store.ReadOptions) ([]jsonmerge.Rule, error) {
	attrs, err := m.attributes(ro)
	if err != nil {
		return nil, err
	}
	return attrs.Rules(), nil
}

func (m *Merges) attributes(ro store.ReadOptions) (jsonmerge.Attributes, error) {
	root, err := m.s.Tree(ro)
	if err != nil {
		return jsonmerge.Attributes{}, err
	}
	data, err := m.s.Repo().ReadFileAt(root, store.AttributesPath)
	if err != nil && !errors.Is(err, repo.ErrNotFound) {
		return jsonmerge.Attributes{}, err
	}
	attrs, err := jsonmerge.ParseAttributes(data)
	if err != nil {
		return jsonmerge.Attributes{}, fmt.Errorf("%s: %w", store.AttributesPath, err)
	}
	return attrs, nil
}

// SetStrategy makes opts the merge strategy of the paths pattern matches
// (a gitattributes(5) pattern), in one commit that edits .gitattributes:
// the lines with exactly this pattern that set merge attributes are
// replaced by one, where the last of them was, else it is added at the
// end, where it wins over every line before it. The line says all three attributes, unsetting the fallback
// and keys opts leaves empty, so that it alone decides its paths.
func (m *Merges) SetStrategy(ctx context.Context, pattern string, opts jsonmerge.Options, wo store.WriteOptions) (*store.Mutation, error) {
	line, err := strategyLine(pattern, opts)
	if err != nil {
		return nil, err
	}
	return m.s.Commit(ctx, wo, "", func(tx *repo.Tx, rec *store.Recorder) error {
		data, err := tx.ReadFile(store.AttributesPath)
		if err != nil && !errors.Is(err, repo.ErrNotFound) {
			return err
		}
		var lines []string
		if len(data) > 0 {
			lines = strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
		}
		at := -1
		kept := lines[:0]
		for _, l := range lines {
			if linePattern(l) == pattern && setsMerge(l) {
				at = len(kept)
				continue
			}
			kept = append(kept, l)
		}
		if at < 0 {
			kept = append(kept, line)
		} else {
			kept = slices.Insert(kept, at, line)
		}
		out := []byte(strings.Join(kept, "\n") + "\n")
		if _, err := jsonmerge.ParseAttributes(out); err != nil {
			return fmt.Errorf("%w: %w", store.ErrUsage, err)
		}
		if err := tx.WriteFile(store.AttributesPath, out); err != nil {
			return err
		}
		rec.Add(store.OpUpdate, store.AttributesPath, "")
		rec.Subject = "strategy set " + pattern + " " + describeOptions(opts)
		return nil
	})
}

// setsMerge reports whether a .gitattributes line says anything of
// merging; a line of other attributes (diff=aiwg-json) for the same
// pattern is not the strategy's to replace.
func setsMerge(line string) bool {
	a, err := jsonmerge.ParseAttributes([]byte(line + "\n"))
	return err != nil || len(a.Rules()) > 0
}

// strategyLine is the .gitattributes line giving pattern opts.
func strategyLine(pattern string, opts jsonmerge.Options) (string, error) {
	if pattern == "" || strings.ContainsAny(pattern, " \t\r\n\"\\") || pattern[0] == '#' || pattern[0] == '!' || strings.HasPrefix(pattern, "[attr]") {
		return "", fmt.Errorf("%w: pattern %q: a gitattributes pattern without spaces, quotes or backslashes, not starting with # or ! (edit .gitattributes with git for others)", verbiage.ErrInvalidPattern, pattern)
	}
	if _, err := verbiage.CompilePattern(pattern); err != nil {
		return "", err
	}
	for _, st := range []jsonmerge.Strategy{opts.Strategy, opts.Fallback} {
		if st == "" {
			continue
		}
		if _, err := jsonmerge.ParseStrategy(string(st)); err != nil {
			return "", err
		}
	}
	if opts.Strategy == "" {
		return "", fmt.Errorf("%w: no strategy", store.ErrUsage)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%-24s merge=%s%s", pattern, jsonmerge.DriverPrefix, opts.Strategy)
	if len(opts.Keys) > 0 {
		keys := make([]string, 0, len(opts.Keys))
		for k, st := range opts.Keys {
			if k == "" || strings.ContainsAny(k, " \t\r\n,:=\"\\#") {
				return "", fmt.Errorf("%w: key %q for %s: a key name without spaces, commas, colons, = or quotes", store.ErrUsage, k, jsonmerge.AttrKeys)
			}
			if _, err := jsonmerge.ParseStrategy(string(st)); err != nil {
				return "", err
			}
			keys = append(keys, k+":"+string(st))
		}
		slices.Sort(keys)
		b.WriteString(" " + jsonmerge.AttrKeys + "=" + strings.Join(keys, ","))
	} else {
		b.WriteString(" -" + jsonmerge.AttrKeys)
	}
	if opts.Fallback != "" {
		b.WriteString(" " + jsonmerge.AttrFallback + "=" + string(opts.Fallback))
	} else {
		b.WriteString(" -" + jsonmerge.AttrFallback)
	}
	return b.String(), nil
}

// linePattern is the pattern of a .gitattributes line as written, "" for
// a blank line, a comment or a quoted pattern.
func linePattern(line string) string {
	line = strings.TrimSpace(line)
	if line == "" || line[0] == '#' || line[0] == '"' {
		return ""
	}
	pat, _, _ := strings.Cut(strings.ReplaceAll(line, "\t", " "), " ")
	return pat
}

// describeOptions renders opts as strategy set takes them.
func describeOptions(opts jsonmerge.Options) string {
	out := string(opts.Strategy)
	if len(opts.Keys) > 0 {
		keys := make([]string, 0, len(opts.Keys))
		for k, st := range opts.Keys {
			keys = append(keys, k+":"+string(st))
		}
		slices.Sort(keys)
		out += " --keys " + strings.Join(keys, ",")
	}
	if opts.Fallback != "" {
		out += " --fallback " + string(opts.Fallback)
	}
	return out
}

// StrategyExplanation says which strategy settles a clash at a key of a
// file, and which lines of .gitattributes decide it.
type StrategyExplanation struct {
	File string `json:"file"`
	Key  string `json:"key,omitempty"`
	// Strategy settles a clash at the key: the file's, or that of the
	// innermost key on the way named in aiwg-keys (ByKey).
	Strategy jsonmerge.Strategy `json:"strategy"`
	ByKey    string             `json:"by_key,omitempty"`
	// FileStrategy is the file's strategy; Default is true when no line
	// assigns one, and merge-objects applies.
	FileStrategy jsonmerge.Strategy `json:"file_strategy"`
	Default      bool               `json:"default,omitempty"`
	// Fallback settles what merge-objects and merge-arrays cannot; ""
	// leaves it a conflict.
	Fallback jsonmerge.Strategy `json:"fallback,omitempty"`
	// StrategyRule, FallbackRule and KeysRule are the lines deciding
	// each; nil for none.
	StrategyRule *jsonmerge.Rule `json:"strategy_rule,omitempty"`
	FallbackRule *jsonmerge.Rule `json:"fallback_rule,omitempty"`
	KeysRule     *jsonmerge.Rule `json:"keys_rule,omitempty"`
}

// ExplainStrategy says which strategy a merge uses for key (a key path;
// "" for the whole document) of file, and why: the lines of .gitattributes
// at ro that decide it, as aiwg-state merge and the git merge drivers read
// them.
func (m *Merges) ExplainStrategy(ctx context.Context, file, key string, ro store.ReadOptions) (*StrategyExplanation, error) {
	clean, err := verbiage.CleanStorePath(file)
	if err != nil {
		return nil, err
	}
	p, err := verbiage.ParsePath(key)
	if err != nil {
		return nil, err
	}
	attrs, err := m.attributes(ro)
	if err != nil {
		return nil, err
	}
	rules := attrs.Rules()
	opts, ok := attrs.Lookup(clean)
	e := &StrategyExplanation{File: clean, Key: p.String(), FileStrategy: opts.Strategy, Fallback: opts.Fallback}
	if !ok {
		e.FileStrategy, e.Default = jsonmerge.MergeObjects, true
	}
	si, fi, ki := attrs.Deciding(clean)
	for _, x := range []struct {
		i  int
		to **jsonmerge.Rule
	}{{si, &e.StrategyRule}, {fi, &e.FallbackRule}, {ki, &e.KeysRule}} {
		if x.i >= 0 {
			r := rules[x.i]
			*x.to = &r
		}
	}
	e.Strategy = e.FileStrategy
	// The innermost key of the path named in aiwg-keys decides, as the
	// merge does on its way down.
	for i := len(p) - 1; i >= 0; i-- {
		if st, ok := opts.Keys[p[i].Key]; ok && !p[i].Wildcard {
			e.Strategy, e.ByKey = st, p[i].Key
			break
		}
	}
	return e, nil
}
