package jsonmerge

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strconv"
	"testing"

	"github.com/aiwg/aiwg-state/verbiage"
)

// gen builds random JSON documents and random edits of them. Keys, strings
// and ids come from small pools so that the two sides of a merge touch the
// same paths often.
type gen struct{ r *rand.Rand }

var keyPool = []string{"a", "b", "c", "id", "ID", "EVENTS", "SEEN", "LAST-SEEN-IDX", "priority", "updated_at", "CREATED-AT", "task_id"}

func (g gen) scalar(key string) any {
	switch key {
	case "updated_at", "CREATED-AT":
		return fmt.Sprintf("2024-11-22T10:%02d:00Z", g.r.IntN(6))
	case "priority":
		return []string{"low", "high", "critical", "normal"}[g.r.IntN(4)]
	}
	switch g.r.IntN(6) {
	case 0:
		return nil
	case 1:
		return g.r.IntN(2) == 0
	case 2, 3:
		return json.Number(strconv.Itoa(g.r.IntN(6) - 1))
	}
	return []string{"x", "y", "z", "", "ü"}[g.r.IntN(5)]
}

func (g gen) value(key string, depth int) any {
	if depth <= 0 || g.r.IntN(3) == 0 {
		return g.scalar(key)
	}
	if g.r.IntN(3) == 0 {
		return g.array(depth)
	}
	return g.object(depth)
}

func (g gen) object(depth int) map[string]any {
	m := map[string]any{}
	for range g.r.IntN(5) {
		k := keyPool[g.r.IntN(len(keyPool))]
		m[k] = g.value(k, depth-1)
	}
	return m
}

func (g gen) array(depth int) []any {
	a := []any{}
	for range g.r.IntN(4) {
		a = append(a, g.element(depth))
	}
	return a
}

// element is a scalar or a record with an id, like log entries and tasks.
func (g gen) element(depth int) any {
	if g.r.IntN(2) == 0 {
		return g.scalar("")
	}
	m := g.object(depth - 1)
	m["ID"] = "e" + strconv.Itoa(g.r.IntN(5))
	return m
}

// edit returns a changed deep copy of v; the input is not modified.
func (g gen) edit(v any, depth int) any {
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		// Sorted keys keep the random stream, and so each failure,
		// reproducible.
		for _, k := range slices.Sorted(maps.Keys(x)) {
			e := x[k]
			switch g.r.IntN(8) {
			case 0: // delete
			case 1:
				out[k] = g.value(k, depth)
			case 2, 3:
				out[k] = g.edit(e, depth-1)
			default:
				out[k] = e
			}
		}
		if g.r.IntN(3) == 0 {
			k := keyPool[g.r.IntN(len(keyPool))]
			out[k] = g.value(k, depth)
		}
		return out
	case []any:
		var out []any
		for _, e := range x {
			switch g.r.IntN(6) {
			case 0:
			case 1:
				out = append(out, g.edit(e, depth-1))
			default:
				out = append(out, e)
			}
		}
		for range g.r.IntN(3) {
			out = append(out, g.element(depth))
		}
		if out == nil {
			out = []any{}
		}
		return out
	}
	if g.r.IntN(4) == 0 {
		return g.value("", depth)
	}
	return g.scalar("")
}

// optionsFor gives a strategy setup per index, covering every strategy and
// the state document key overrides.
func optionsFor(i int) Options {
	all := Strategies()
	o := Options{Strategy: all[i%len(all)]}
	switch (i / len(all)) % 3 {
	case 1:
		o.Fallback = []Strategy{LastWriteWins, Max, MergeArrays, HigherPriorityWins}[(i/len(all)/3)%4]
	case 2:
		o.Keys = map[string]Strategy{"EVENTS": MergeArrays, "SEEN": Max, "LAST-SEEN-IDX": Max, "c": FirstWriteWins}
	}
	return o
}

// checkMerge asserts the properties every merge must have.
func checkMerge(t *testing.T, base, ours, theirs Side, opts Options) {
	t.Helper()
	got, missing, cs := Values(base, ours, theirs, opts)
	describe := func() string {
		return fmt.Sprintf("opts %+v\nbase   %s\nours   %s (%v)\ntheirs %s (%v)\nresult %s missing=%v\nconflicts %+v",
			opts, canonSide(base), canonSide(ours), ours.Clock, canonSide(theirs), theirs.Clock, canon(got), missing, cs)
	}

	// The result is valid JSON and survives a round trip unchanged.
	if !missing {
		enc, err := json.Marshal(got)
		if err != nil {
			t.Fatalf("result does not encode: %v\n%s", err, describe())
		}
		d := json.NewDecoder(bytes.NewReader(enc))
		d.UseNumber()
		var back any
		if err := d.Decode(&back); err != nil || !equal(back, got) {
			t.Fatalf("result does not round-trip (%v)\n%s", err, describe())
		}
	}

	// Swapping the sides gives the same result, except the values left at
	// conflicted paths, and the same conflicts seen from the other side.
	got2, missing2, cs2 := Values(base, theirs, ours, opts)
	if len(cs2) != len(cs) {
		t.Fatalf("swapped: %d conflicts, want %d\n%s\nswapped conflicts %+v", len(cs2), len(cs), describe(), cs2)
	}
	for i := range cs {
		if canonConflict(swapped(cs2[i])) != canonConflict(cs[i]) {
			t.Fatalf("swapped conflict %d differs:\n got %+v\nwant %+v\n%s", i, swapped(cs2[i]), cs[i], describe())
		}
	}
	a, b := val{got, !missing}, val{got2, !missing2}
	for _, c := range cs {
		a = setAt(a, c.Path, val{"<conflict>", true})
		b = setAt(b, c.Path, val{"<conflict>", true})
	}
	if !same(a, b) {
		t.Fatalf("swapped sides give another result\n got %s\n%s", canon(got2), describe())
	}

	// Every scalar of the result was written by someone: it is in the
	// base, ours or theirs at the same place (array positions aside).
	// Sum makes new numbers by design; sumHolds checks those.
	if usesSum(opts) {
		return
	}
	origin := map[string]bool{}
	for _, s := range []Side{base, ours, theirs} {
		if !s.Missing {
			scalars(s.Value, "", func(p, v string) { origin[p+"="+v] = true })
		}
	}
	if !missing {
		scalars(got, "", func(p, v string) {
			if !origin[p+"="+v] {
				t.Fatalf("result holds %s at %s, which no input has\n%s", v, p, describe())
			}
		})
	}

	// A value of one side that the result lost was lost to the other side's
	// change there: nothing disappears unless both sides wrote the path.
	res := val{got, !missing}
	for _, pair := range [][2]Side{{ours, theirs}, {theirs, ours}} {
		one, other := side(pair[0]), side(pair[1])
		leaves(one, nil, func(p verbiage.Path, v val) {
			if !same(at(res, p), v) && !wrote(other, side(base), p) && !underConflict(cs, p) {
				t.Fatalf("value %s at %s lost though the other side did not change it\n%s", canonVal(v), p, describe())
			}
		})
	}

	// A clean merge under conflict (Manual) only ever takes a side's value.
	if opts.Strategy == Manual && opts.Keys == nil && len(cs) == 0 {
		leaves(res, nil, func(p verbiage.Path, v val) {
			if m, ok := v.v.(map[string]any); ok && len(m) == 0 {
				return // both sides' keys deleted, each by one side
			}
			if !same(v, at(side(ours), p)) && !same(v, at(side(theirs), p)) {
				t.Fatalf("clean merge holds %s at %s, from neither side\n%s", canonVal(v), p, describe())
			}
		})
	}
}

// usesSum reports whether Sum settles any path under opts.
func usesSum(opts Options) bool {
	if opts.Strategy == Sum || opts.Fallback == Sum {
		return true
	}
	for _, s := range opts.Keys {
		if s == Sum {
			return true
		}
	}
	return false
}

// wrote reports whether a side wrote path p since base: changed the value
// there, or replaced or deleted an object above it (a write of everything
// below).
func wrote(side, base val, p verbiage.Path) bool {
	if !same(at(side, p), at(base, p)) {
		return true
	}
	for i := range p {
		q := at(side, p[:i])
		if _, isObj := q.v.(map[string]any); !(q.ok && isObj) && !same(q, at(base, p[:i])) {
			return true
		}
	}
	return false
}

func underConflict(cs []Conflict, p verbiage.Path) bool {
	for _, c := range cs {
		if p.HasPrefix(c.Path) {
			return true
		}
	}
	return false
}

func canonSide(s Side) string {
	if s.Missing {
		return "<missing>"
	}
	return canon(s.Value)
}

func canonVal(v val) string {
	if !v.ok {
		return "<missing>"
	}
	return canon(v.v)
}

// scalars calls fn with every scalar and its path, array indexes as "*".
func scalars(v any, path string, fn func(path, value string)) {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			scalars(e, path+"/"+strconv.Quote(k), fn)
		}
	case []any:
		for _, e := range x {
			scalars(e, path+"/*", fn)
		}
	default:
		fn(path, canon(v))
	}
}

// leaves calls fn for every path below objects that ends at a non-object or
// an empty object; arrays count as leaves, since their positions move.
func leaves(v val, path verbiage.Path, fn func(verbiage.Path, val)) {
	if m, ok := v.v.(map[string]any); ok && v.ok && len(m) > 0 {
		for k, e := range m {
			leaves(val{e, true}, path.Child(k), fn)
		}
		return
	}
	fn(path, v)
}

// at looks a path up through objects only.
func at(v val, p verbiage.Path) val {
	for _, s := range p {
		m, ok := v.v.(map[string]any)
		if !v.ok || !ok {
			return val{}
		}
		v = get(m, s.Key)
	}
	return v
}

// setAt returns v with the value at p replaced (objects and array indexes),
// creating nothing: a path that does not resolve leaves v as it is, except
// that the last step may add an object key.
func setAt(v val, p verbiage.Path, x val) val {
	if len(p) == 0 {
		return x
	}
	switch c := v.v.(type) {
	case map[string]any:
		out := make(map[string]any, len(c)+1)
		for k, e := range c {
			out[k] = e
		}
		if n := setAt(get(c, p[0].Key), p[1:], x); n.ok {
			out[p[0].Key] = n.v
		} else {
			delete(out, p[0].Key)
		}
		return val{out, true}
	case []any:
		i, ok := p[0].Index()
		if !ok || i >= len(c) {
			return v
		}
		out := append([]any(nil), c...)
		if n := setAt(val{c[i], true}, p[1:], x); n.ok {
			out[i] = n.v
		}
		return val{out, true}
	}
	return v
}

func TestMergeProperties(t *testing.T) {
	g := gen{rand.New(rand.NewPCG(1, 2))}
	const rounds = 6000
	for i := range rounds {
		base := g.object(4)
		ours, theirs := g.edit(base, 4), g.edit(base, 4)
		if g.r.IntN(5) == 0 {
			theirs = g.edit(ours, 4) // one side built on the other
		}
		clocks := []Clock{{Wall: 10, Agent: "a"}, {Wall: 20, Agent: "b"}, {Wall: 10, Agent: "a"}}
		oc, tc := clocks[g.r.IntN(3)], clocks[g.r.IntN(3)]
		opts := optionsFor(i)
		b := Side{Value: base}
		o := Side{Value: ours, Clock: oc, Missing: g.r.IntN(40) == 0}
		th := Side{Value: theirs, Clock: tc}
		checkMerge(t, b, o, th, opts)

		// Merging with the base or with itself changes nothing.
		for _, pair := range [][2]Side{{b, th}, {th, b}, {th, th}} {
			got, missing, cs := Values(b, pair[0], pair[1], opts)
			if missing || len(cs) != 0 || !equal(got, theirs) {
				t.Fatalf("Values(b, %s, %s) = %s missing=%v conflicts=%v; want the edited side",
					canonSide(pair[0]), canonSide(pair[1]), canon(got), missing, cs)
			}
		}
	}
}

// TestMergeDoesNotModifyInputs guards the sharing of subtrees: callers keep
// using their documents after a merge.
func TestMergeDoesNotModifyInputs(t *testing.T) {
	g := gen{rand.New(rand.NewPCG(5, 6))}
	for i := range 500 {
		base := g.object(4)
		ours, theirs := g.edit(base, 4), g.edit(base, 4)
		before := canon(base) + canon(ours) + canon(theirs)
		Values(Side{Value: base}, Side{Value: ours, Clock: Clock{Wall: 1}}, Side{Value: theirs, Clock: Clock{Wall: 2}}, optionsFor(i))
		if after := canon(base) + canon(ours) + canon(theirs); after != before {
			t.Fatalf("inputs changed by the merge")
		}
	}
}

func TestGeneratorCoversClashes(t *testing.T) {
	// The property test is only as good as its inputs: make sure they
	// produce conflicts and settled clashes of every strategy.
	g := gen{rand.New(rand.NewPCG(1, 2))}
	conflicts := map[Strategy]int{}
	for i := range 6000 {
		base := g.object(4)
		opts := optionsFor(i)
		_, _, cs := Values(Side{Value: base}, Side{Value: g.edit(base, 4)}, Side{Value: g.edit(base, 4), Clock: Clock{Wall: 1}}, opts)
		if opts.Keys == nil && opts.Fallback == "" {
			conflicts[opts.Strategy] += len(cs)
		}
	}
	for _, s := range []Strategy{Manual, MergeObjects, MergeArrays, Max} {
		if conflicts[s] < 50 {
			t.Errorf("only %d conflicts under %s: the generator rarely clashes", conflicts[s], s)
		}
	}
	for _, s := range []Strategy{LastWriteWins, FirstWriteWins, HigherPriorityWins} {
		if conflicts[s] != 0 {
			t.Errorf("%s left %d conflicts; it settles every clash", s, conflicts[s])
		}
	}
}
