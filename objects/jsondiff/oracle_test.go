package jsondiff

import (
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"reflect"
	"strconv"
	"testing"

	jsonpatch "github.com/evanphx/json-patch/v5"

	"github.com/aiwg/aiwg-state/internal/testutil"
	"github.com/aiwg/aiwg-state/objects"
)

func mustJSON(t testing.TB, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatalf("marshal: %v", err)
	}
	return b
}

// checkPatch is the oracle: the patch, applied by an independent RFC 6902
// implementation to old, must give new exactly. evanphx/json-patch is the
// reference; where it cannot address "" keys (see rfcApply) the strict
// applier in apply_test.go stands in, and it checks every pair besides.
func checkPatch(t testing.TB, old, new any) {
	t.Helper()
	oldBytes, newBytes := mustJSON(t, old), mustJSON(t, new)
	want := testutil.DecodeJSON(t, newBytes)
	ops := Patch(old, new)
	patchBytes := mustJSON(t, ops)
	report := func(what string, got any) {
		t.Helper()
		t.Fatalf("%s\nold:   %s\nnew:   %s\ngot:   %s\npatch: %s", what, oldBytes, newBytes, mustJSON(t, got), patchBytes)
	}

	got, err := rfcApply(testutil.DecodeJSON(t, oldBytes), patchBytes)
	if err != nil {
		report("strict apply: "+err.Error(), nil)
	}
	if !reflect.DeepEqual(got, want) {
		report("strict apply: patched document differs from new", got)
	}

	// evanphx applies patches to objects and arrays only, and not under "".
	container := func(v any) bool { k := kindOf(v); return k == kindObject || k == kindArray }
	if container(want) && container(testutil.DecodeJSON(t, oldBytes)) && !hasEmptyKey(want) && !hasEmptyKey(testutil.DecodeJSON(t, oldBytes)) {
		patch, err := jsonpatch.DecodePatch(patchBytes)
		if err != nil {
			report("DecodePatch: "+err.Error(), nil)
		}
		gotBytes, err := patch.Apply(oldBytes)
		if err != nil {
			report("evanphx Apply: "+err.Error(), nil)
		}
		if got := testutil.DecodeJSON(t, gotBytes); !reflect.DeepEqual(got, want) {
			report("evanphx: patched document differs from new", got)
		}
	}
	if same := objects.Equal(normalize(old), normalize(new)); same != (len(ops) == 0) {
		t.Fatalf("patch of %d ops between documents equal=%v", len(ops), same)
	}
}

// checkDiff asserts the invariants of Diff that hold for any pair.
func checkDiff(t testing.TB, old, new any) {
	t.Helper()
	changes := Diff(old, new, Options{})
	if same := objects.Equal(normalize(old), normalize(new)); same != (len(changes) == 0) {
		t.Fatalf("equal=%v but %d changes: %+v", same, len(changes), changes)
	}
	for _, c := range changes {
		if c.Kind == Moved && samePath(c.From, c.Path) {
			t.Fatalf("move onto itself: %+v", c)
		}
	}
	if !reflect.DeepEqual(changes, Diff(old, new, Options{})) {
		t.Fatal("Diff is not deterministic")
	}
}

// gen builds random documents shaped like agent state: nested objects,
// arrays of records with ids, plain lists, and awkward keys.
type gen struct {
	r *rand.Rand
	// emptyKey lets "" be drawn as a key; only some seeds do, so most pairs
	// stay within what evanphx/json-patch can apply.
	emptyKey bool
}

var awkwardKeys = []string{
	"a", "b", "c", "id", "name", "items", "a/b", "~", "~1", "~0", "/", "x.y", "*", "0", "1", "10",
	"ü", "k~0/~1", "task_id", "parent_id", "with space", `q"uote`, "back\\slash",
}

func (g gen) key() string {
	if g.emptyKey && g.r.IntN(20) == 0 {
		return ""
	}
	if g.r.IntN(4) == 0 {
		return awkwardKeys[g.r.IntN(len(awkwardKeys))]
	}
	return "k" + strconv.Itoa(g.r.IntN(12))
}

func (g gen) scalar() any {
	switch g.r.IntN(7) {
	case 0:
		return nil
	case 1:
		return g.r.IntN(2) == 0
	case 2:
		return json.Number(strconv.Itoa(g.r.IntN(20) - 5))
	case 3:
		return json.Number([]string{"3.25", "-0.5", "1e10", "12345678901234567890", "0"}[g.r.IntN(5)])
	case 4:
		return []string{"", "low", "high", "a/b", "~", "line one\nline two", "x"}[g.r.IntN(7)]
	default:
		return "s" + strconv.Itoa(g.r.IntN(30))
	}
}

func (g gen) value(depth int) any {
	if depth <= 0 || g.r.IntN(3) == 0 {
		return g.scalar()
	}
	switch g.r.IntN(4) {
	case 0:
		return g.object(depth - 1)
	case 1:
		return g.records(depth - 1)
	default:
		n := g.r.IntN(7)
		arr := make([]any, n)
		for i := range arr {
			arr[i] = g.value(depth - 1)
		}
		return arr
	}
}

func (g gen) object(depth int) map[string]any {
	n := g.r.IntN(6)
	m := make(map[string]any, n)
	for range n {
		m[g.key()] = g.value(depth)
	}
	return m
}

// records is an array of objects carrying a unique id, like a task list.
func (g gen) records(depth int) []any {
	n := g.r.IntN(7)
	arr := make([]any, n)
	idKey := []string{"id", "ID", "task_id"}[g.r.IntN(3)]
	for i := range arr {
		m := g.object(depth)
		m[idKey] = "t" + strconv.Itoa(i+100*g.r.IntN(3))
		if g.r.IntN(2) == 0 {
			m["parent_id"] = "p" // a non-unique *_id: must not be taken for identity
		}
		arr[i] = m
	}
	return dedupeIDs(arr, idKey)
}

func dedupeIDs(arr []any, key string) []any {
	seen := map[any]bool{}
	out := arr[:0]
	for _, e := range arr {
		id := e.(map[string]any)[key]
		if !seen[id] {
			seen[id] = true
			out = append(out, e)
		}
	}
	return out
}

func clone(v any) any {
	switch t := v.(type) {
	case map[string]any:
		m := make(map[string]any, len(t))
		for k, c := range t {
			m[k] = clone(c)
		}
		return m
	case []any:
		a := make([]any, len(t))
		for i, c := range t {
			a[i] = clone(c)
		}
		return a
	}
	return v
}

// mutate returns an edited copy of v: changed scalars, type changes, added
// and removed keys, renamed (moved) subtrees, and array insertions,
// deletions, reorders and in-place edits.
func (g gen) mutate(v any, depth int) any {
	if g.r.IntN(12) == 0 {
		return g.value(depth) // replace outright, often a type change
	}
	switch t := v.(type) {
	case map[string]any:
		m := make(map[string]any, len(t))
		keys := sortedKeys(t)
		for _, k := range keys {
			switch g.r.IntN(8) {
			case 0: // drop
			case 1, 2:
				m[k] = g.mutate(t[k], depth-1)
			case 3: // rename: the same subtree under another key
				m[g.key()+"_moved"] = clone(t[k])
			default:
				m[k] = clone(t[k])
			}
		}
		for range g.r.IntN(3) {
			if g.r.IntN(2) == 0 {
				m[g.key()] = g.value(depth - 1)
			}
		}
		return m
	case []any:
		a := make([]any, 0, len(t)+2)
		for _, e := range t {
			switch g.r.IntN(8) {
			case 0: // delete
			case 1:
				a = append(a, g.value(depth-1)) // insert before
				a = append(a, clone(e))
			case 2:
				a = append(a, g.mutate(e, depth-1))
			default:
				a = append(a, clone(e))
			}
		}
		if len(a) > 1 && g.r.IntN(3) == 0 { // reorder: swap or rotate
			i, j := g.r.IntN(len(a)), g.r.IntN(len(a))
			if g.r.IntN(2) == 0 {
				a[i], a[j] = a[j], a[i]
			} else {
				a = append(a[1:], a[0])
			}
		}
		if g.r.IntN(4) == 0 {
			a = append(a, g.value(depth-1))
		}
		if g.r.IntN(10) == 0 {
			g.r.Shuffle(len(a), func(i, j int) { a[i], a[j] = a[j], a[i] })
		}
		return a
	}
	if g.r.IntN(2) == 0 {
		return g.scalar()
	}
	return v
}

// TestPatchOracle is the key property: for hundreds of random pairs,
// applying Patch(old, new) to old with evanphx/json-patch gives new.
func TestPatchOracle(t *testing.T) {
	for seed := uint64(1); seed <= 800; seed++ {
		g := gen{r: rand.New(rand.NewPCG(seed, seed*7919)), emptyKey: seed%7 == 0}
		var old, new any
		switch seed % 4 {
		case 0: // unrelated documents
			old, new = g.object(4), g.object(4)
		case 1: // an array at the root
			old = g.value(4)
			if _, ok := old.([]any); !ok {
				old = []any{old, g.records(2)}
			}
			new = g.mutate(old, 4)
		default:
			old = g.object(4)
			new = g.mutate(old, 4)
		}
		if _, ok := new.(map[string]any); !ok {
			if _, ok := new.([]any); !ok {
				// evanphx applies patches to objects and arrays only.
				new = map[string]any{"v": new}
			}
		}
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			checkPatch(t, old, new)
			checkPatch(t, new, old)
			checkDiff(t, old, new)
		})
	}
}

// FuzzPatch runs the oracle on fuzzer-made pairs of JSON documents, and the
// invariants of Diff and the renderers besides.
func FuzzPatch(f *testing.F) {
	f.Add([]byte(`{"l":["a","b","c","d"]}`), []byte(`{"l":["d","a","X","c"]}`))
	f.Fuzz(func(t *testing.T, oldJSON, newJSON []byte) {
		if len(oldJSON) > 1<<15 || len(newJSON) > 1<<15 {
			t.Skip("too large to be worth the time")
		}
		old, err1 := testutil.TryDecodeJSON(oldJSON)
		new, err2 := testutil.TryDecodeJSON(newJSON)
		if err1 != nil || err2 != nil {
			t.Skip("not JSON")
		}
		checkPatch(t, old, new)
		checkDiff(t, old, new)
		changes := Diff(old, new, Options{})
		if err := WriteText(io.Discard, "f", changes, TextOptions{Color: true}); err != nil {
			t.Fatal(err)
		}
		if err := WriteMarkdown(io.Discard, "f", changes); err != nil {
			t.Fatal(err)
		}
		js, err := json.Marshal(changes)
		if err != nil || !json.Valid(js) {
			t.Fatalf("changes do not marshal: %v", err)
		}
	})
}
