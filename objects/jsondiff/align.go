package jsondiff

import (
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/sergi/go-diff/diffmatchpatch"
)

// stepKind is one move of the walk that turns an old array into a new one.
type stepKind int

const (
	stepKeep     stepKind = iota // old[i] and new[j] are the same element (equal, or same id)
	stepPair                     // old[i] became new[j] in place: an edit, not a removal and an insertion
	stepRemove                   // old[i] is gone
	stepAdd                      // new[j] is new
	stepMoveFrom                 // old[i] leaves here for new[j], reached at its own stepMoveTo
	stepMoveTo                   // new[j] is old[i], moved from elsewhere in the array
)

type step struct {
	kind stepKind
	i, j int
}

// align matches the elements of two arrays. Steps visit old indices and new
// indices each in increasing order, which is what lets Patch track where an
// element sits while operations shift the array under it.
//
// Matching is a longest common subsequence over element identities; removals
// and insertions of one identity anywhere in the array become a move; what is
// left between two matches is paired up in place when neither side carries an
// id, so [1,2,3] → [1,5,3] is one change at index 1.
func align(old, new []any) []step {
	key := identityKey(old, new)
	oldIDs := identities(old, key)
	newIDs := identities(new, key)
	script := lcsScript(oldIDs, newIDs)

	// Pair removals and insertions of one identity, first with first.
	moveTarget := make(map[int]int) // old index → new index
	moveSource := make(map[int]int) // new index → old index
	removedByID := make(map[string][]int)
	for _, s := range script {
		if s.kind == stepRemove {
			removedByID[oldIDs[s.i]] = append(removedByID[oldIDs[s.i]], s.i)
		}
	}
	for _, s := range script {
		if s.kind != stepAdd {
			continue
		}
		queue := removedByID[newIDs[s.j]]
		if len(queue) == 0 {
			continue
		}
		moveTarget[queue[0]] = s.j
		moveSource[s.j] = queue[0]
		removedByID[newIDs[s.j]] = queue[1:]
	}

	out := make([]step, 0, len(script))
	for start := 0; start < len(script); {
		if script[start].kind == stepKeep {
			out = append(out, script[start])
			start++
			continue
		}
		end := start
		for end < len(script) && script[end].kind != stepKeep {
			end++
		}
		out = appendGap(out, script[start:end], oldIDs, newIDs, moveTarget, moveSource)
		start = end
	}
	return out
}

// appendGap emits the removals and insertions between two matches. Leftover
// elements without an id are paired k-th with k-th; an element with an id
// is a different entity from any other id, so it is never paired.
func appendGap(out, gap []step, oldIDs, newIDs []string, moveTarget, moveSource map[int]int) []step {
	var dels, ins []int
	for _, s := range gap {
		if s.kind == stepRemove {
			dels = append(dels, s.i)
		} else {
			ins = append(ins, s.j)
		}
	}
	partner := make(map[int]int) // old index → new index, for paired elements
	var pd, pi []int
	for _, i := range dels {
		if _, moved := moveTarget[i]; !moved && isValueID(oldIDs[i]) {
			pd = append(pd, i)
		}
	}
	for _, j := range ins {
		if _, moved := moveSource[j]; !moved && isValueID(newIDs[j]) {
			pi = append(pi, j)
		}
	}
	n := min(len(pd), len(pi))
	for k := range n {
		partner[pd[k]] = pi[k]
	}
	pairedNew := make(map[int]bool, n)
	for _, j := range pi[:n] {
		pairedNew[j] = true
	}

	a, b := 0, 0
	for a < len(dels) || b < len(ins) {
		if a < len(dels) {
			i := dels[a]
			if j, ok := partner[i]; ok {
				if b < len(ins) && ins[b] == j {
					out = append(out, step{stepPair, i, j})
					a++
					b++
					continue
				}
			} else {
				if j, moved := moveTarget[i]; moved {
					out = append(out, step{stepMoveFrom, i, j})
				} else {
					out = append(out, step{kind: stepRemove, i: i})
				}
				a++
				continue
			}
		}
		if b < len(ins) {
			j := ins[b]
			if !pairedNew[j] {
				if i, moved := moveSource[j]; moved {
					out = append(out, step{stepMoveTo, i, j})
				} else {
					out = append(out, step{kind: stepAdd, j: j})
				}
				b++
				continue
			}
		}
		// Unreachable: the k-th paired removal always meets the k-th paired
		// insertion. Kept only so a broken invariant cannot loop forever.
		panic("jsondiff: array alignment lost its pairing")
	}
	return out
}

func isValueID(id string) bool { return strings.HasPrefix(id, "=") }

// identityKey picks the field that names the object elements of both arrays:
// "id", then "ID", then any "*_id" field in sorted order, whichever every
// object element carries as a string or number, unique within each array.
// Uniqueness rules out references such as parent_id.
func identityKey(old, new []any) string {
	var first map[string]any
	for _, arr := range [][]any{old, new} {
		for _, e := range arr {
			if m, ok := e.(map[string]any); ok {
				first = m
				break
			}
		}
		if first != nil {
			break
		}
	}
	if first == nil {
		return ""
	}
	candidates := []string{"id", "ID"}
	var suffixed []string
	for k := range first {
		if strings.HasSuffix(k, "_id") {
			suffixed = append(suffixed, k)
		}
	}
	sort.Strings(suffixed)
	candidates = append(candidates, suffixed...)
	for _, c := range candidates {
		if uniqueID(old, c) && uniqueID(new, c) {
			return c
		}
	}
	return ""
}

func uniqueID(arr []any, key string) bool {
	seen := make(map[string]bool)
	for _, e := range arr {
		m, ok := e.(map[string]any)
		if !ok {
			continue
		}
		v, ok := m[key]
		if !ok {
			return false
		}
		switch kindOf(v) {
		case kindString, kindNumber:
		default:
			return false
		}
		c := canonical(v)
		if seen[c] {
			return false
		}
		seen[c] = true
	}
	return true
}

// identities names each element: "#" and its id when it has one, "=" and
// its canonical value otherwise.
func identities(arr []any, key string) []string {
	out := make([]string, len(arr))
	for i, e := range arr {
		if m, ok := e.(map[string]any); ok && key != "" {
			out[i] = "#" + canonical(m[key])
			continue
		}
		out[i] = "=" + canonical(e)
	}
	return out
}

// lcsScript is the edit script (keep, remove, add) of a longest common
// subsequence of two identity lists. Identities become runes so go-diff's
// Myers implementation can run on them; with no timeout it is exact and
// deterministic, and needs linear memory where a DP table would be n×m.
func lcsScript(oldIDs, newIDs []string) []step {
	token := make(map[string]rune)
	next := 0
	toRunes := func(ids []string) ([]rune, bool) {
		rs := make([]rune, len(ids))
		for k, id := range ids {
			r, ok := token[id]
			if !ok {
				next++
				r = tokenRune(next)
				if r < 0 {
					return nil, false
				}
				token[id] = r
			}
			rs[k] = r
		}
		return rs, true
	}
	a, okA := toRunes(oldIDs)
	distinctOld := next
	b, okB := toRunes(newIDs)
	shared := false
	for _, r := range b {
		if int(r) <= int(tokenRune(distinctOld)) {
			shared = true
			break
		}
	}
	var script []step
	if !okA || !okB || !shared {
		// Nothing in common (Myers' worst case, quadratic in the length),
		// or more distinct elements than runes: nothing to match.
		for i := range oldIDs {
			script = append(script, step{kind: stepRemove, i: i})
		}
		for j := range newIDs {
			script = append(script, step{kind: stepAdd, j: j})
		}
		return script
	}
	dmp := diffmatchpatch.New()
	dmp.DiffTimeout = 0
	i, j := 0, 0
	for _, d := range dmp.DiffMainRunes(a, b, false) {
		n := utf8.RuneCountInString(d.Text)
		for range n {
			switch d.Type {
			case diffmatchpatch.DiffEqual:
				script = append(script, step{stepKeep, i, j})
				i++
				j++
			case diffmatchpatch.DiffDelete:
				script = append(script, step{kind: stepRemove, i: i})
				i++
			case diffmatchpatch.DiffInsert:
				script = append(script, step{kind: stepAdd, j: j})
				j++
			}
		}
	}
	return script
}

// tokenRune maps 1, 2, 3… onto valid runes (skipping surrogates, which do
// not survive go-diff's conversions to string), or -1 when they run out.
func tokenRune(n int) rune {
	if n < 0xd800 {
		return rune(n)
	}
	n += 0x800
	if n > utf8.MaxRune {
		return -1
	}
	return rune(n)
}
