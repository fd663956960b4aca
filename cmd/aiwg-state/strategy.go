package main

import (
	"fmt"
	"slices"
	"strings"

	"github.com/aiwg/aiwg-state/merge"
	"github.com/aiwg/aiwg-state/merge/jsonmerge"
)

func strategyNames() []string {
	var out []string
	for _, st := range jsonmerge.Strategies() {
		out = append(out, string(st))
	}
	return out
}

// strategyOptions reads strategy set's STRATEGY, --keys and --fallback;
// an unknown strategy is a usage error.
func strategyOptions(strategy, keys, fallback string) (jsonmerge.Options, error) {
	var opts jsonmerge.Options
	var err error
	if opts.Strategy, err = jsonmerge.ParseStrategy(strategy); err != nil {
		return opts, err
	}
	if fallback != "" {
		if opts.Fallback, err = jsonmerge.ParseStrategy(fallback); err != nil {
			return opts, fmt.Errorf("--fallback: %w", err)
		}
	}
	if keys != "" {
		opts.Keys = map[string]jsonmerge.Strategy{}
		for _, item := range strings.Split(keys, ",") {
			k, st, ok := strings.Cut(strings.TrimSpace(item), ":")
			if !ok || k == "" {
				return opts, usagef("--keys: %q is not KEY:STRATEGY (e.g. --keys notes:merge-arrays,seen:max)", item)
			}
			if opts.Keys[k], err = jsonmerge.ParseStrategy(st); err != nil {
				return opts, fmt.Errorf("--keys %s: %w", k, err)
			}
		}
	}
	return opts, nil
}

// describeRule renders what a line of .gitattributes says about merges.
func describeRule(r jsonmerge.Rule) string {
	var parts []string
	switch {
	case r.SetsStrategy && r.Strategy != "":
		parts = append(parts, string(r.Strategy))
	case r.SetsStrategy:
		parts = append(parts, "(not an aiwg strategy: merge-objects)")
	}
	if r.SetsKeys && len(r.Keys) > 0 {
		parts = append(parts, "keys "+keysText(r.Keys))
	}
	if r.SetsFallback && r.Fallback != "" {
		parts = append(parts, "fallback "+string(r.Fallback))
	}
	return strings.Join(parts, ", ")
}

func keysText(keys map[string]jsonmerge.Strategy) string {
	names := make([]string, 0, len(keys))
	for k := range keys {
		names = append(names, k)
	}
	slices.Sort(names)
	var b strings.Builder
	for i, k := range names {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(k + ":" + string(keys[k]))
	}
	return b.String()
}

// strategyMeaning says what a strategy does with a clash, in a sentence.
var strategyMeaning = map[jsonmerge.Strategy]string{
	jsonmerge.MergeObjects:       "objects merge key by key; arrays both sides only appended to keep both sides' new elements; any other clash goes to the fallback",
	jsonmerge.MergeArrays:        "arrays merge element by element (objects matched by id, other elements by value); any other clash goes to the fallback",
	jsonmerge.LastWriteWins:      "the later write wins (the data's own updated_at, else the commits' clocks)",
	jsonmerge.FirstWriteWins:     "the earlier write wins (the data's own updated_at, else the commits' clocks)",
	jsonmerge.HigherPriorityWins: "the side with the higher priority wins; at equal priority, the later write",
	jsonmerge.Max:                "the larger value wins (numbers, true over false, strings by byte order)",
	jsonmerge.Sum:                "numbers add both sides' changes to the base (counters keep every increment)",
	jsonmerge.Manual:             "every clash is left a conflict, to resolve with aiwg-state resolve",
}

func printExplanation(s *session, e *merge.StrategyExplanation) {
	what := e.File
	if e.Key != "" {
		what += "#" + e.Key
	}
	var used []*jsonmerge.Rule
	cite := func(r *jsonmerge.Rule) string {
		if !slices.ContainsFunc(used, func(u *jsonmerge.Rule) bool { return u.Line == r.Line }) {
			used = append(used, r)
		}
		return fmt.Sprintf("line %d", r.Line)
	}
	switch {
	case e.ByKey != "":
		fmt.Fprintf(s.out, "%s: %s, for the key %s (aiwg-keys of %s; the innermost key named there decides)\n", what, e.Strategy, e.ByKey, cite(e.KeysRule))
	case e.Default:
		fmt.Fprintf(s.out, "%s: %s, the default: no line of .gitattributes gives %s an aiwg strategy\n", what, e.Strategy, e.File)
	default:
		fmt.Fprintf(s.out, "%s: %s (%s of .gitattributes)\n", what, e.Strategy, cite(e.StrategyRule))
	}
	fmt.Fprintf(s.out, "  %s: %s.\n", e.Strategy, strategyMeaning[e.Strategy])
	if e.Strategy == jsonmerge.MergeObjects || e.Strategy == jsonmerge.MergeArrays {
		if e.Fallback != "" {
			fmt.Fprintf(s.out, "  fallback: %s (%s)\n", e.Fallback, cite(e.FallbackRule))
		} else {
			fmt.Fprintf(s.out, "  fallback: none; what %s cannot settle is left a conflict\n", e.Strategy)
		}
	}
	for _, r := range used {
		fmt.Fprintf(s.out, "  line %d: %s  %s\n", r.Line, r.Pattern, describeRule(*r))
	}
	fmt.Fprintln(s.out, "  (merge --strategy S settles every path with S instead, for that merge)")
}
