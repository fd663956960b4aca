package statedoc

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/aiwg/aiwg-state/verbiage"
)

var words = []string{"ALPHA", "BETA", "GAMMA", "DELTA"}

// randomStore builds a state document with goals and sub-goals, some of
// them moved into shards (some nested: a sub-goal shard inside a goal
// shard).
func randomStore(t *testing.T, r *rand.Rand) memFiles {
	doc := any(Default())
	var err error
	for _, g := range words[:1+r.IntN(3)] {
		if doc, _, err = CreateGoal(doc, g, ""); err != nil {
			t.Fatal(err)
		}
		for _, s := range words[:1+r.IntN(3)] {
			if doc, _, err = CreateSubGoal(doc, g, s, ""); err != nil {
				t.Fatal(err)
			}
		}
	}
	fs := memFiles{}
	root := doc.(map[string]any)
	goals := root[KeyGoals].(map[string]any)
	for g, gv := range goals {
		gm := gv.(map[string]any)
		subs := gm[KeySubGoals].(map[string]any)
		shardGoal := r.IntN(2) == 0
		for s, sv := range subs {
			if r.IntN(2) == 0 {
				if shardGoal {
					subs[s] = "ref file://SUBS/" + s + ".json"
					fs["state/"+g+"/SUBS/"+s+".json"] = encode(t, sv)
				} else {
					subs[s] = "ref file://state/" + g + "-" + s + ".json"
					fs["state/"+g+"-"+s+".json"] = encode(t, sv)
				}
			}
		}
		if shardGoal {
			goals[g] = "ref file://" + g + "/GOAL.json"
			fs["state/"+g+"/GOAL.json"] = encode(t, gm)
		}
	}
	fs["state/state.json"] = encode(t, root)
	return fs
}

func randomEdit(r *rand.Rand, doc any) (any, []verbiage.Path, error) {
	g, s := words[r.IntN(4)], words[r.IntN(4)]
	switch r.IntN(6) {
	case 0:
		return AddEvent(doc, g, s, Event{ID: fmt.Sprint("E", r.IntN(1000)), Type: "t"})
	case 1:
		out, ps, _, err := Latest(doc)
		return out, ps, err
	case 2:
		return SetStatus(doc, g, s, words[r.IntN(4)])
	case 3:
		return Request(doc, g, s, "do it")
	case 4:
		return AddNote(doc, g, "", "note")
	default:
		return SetItem(doc, Scope{Project: fmt.Sprint("p", r.IntN(2))}, verbiage.Path{{Key: g}, {Key: s}}, r.IntN(9))
	}
}

// TestPropertyWritesFollowMounts: whatever the shard layout, an edit reads
// back exactly as made, and it writes only the files that hold the keys it
// changed (a write inside a mount leaves every parent's ref alone).
func TestPropertyWritesFollowMounts(t *testing.T) {
	n := 300
	if testing.Short() {
		n = 50
	}
	for seed := range n {
		r := rand.New(rand.NewPCG(uint64(seed), 7))
		fs := randomStore(t, r)
		for step := range 8 {
			d, err := Load(fs, "state/state.json")
			if err != nil {
				t.Fatalf("seed %d step %d: %v", seed, step, err)
			}
			nv, touched, err := randomEdit(r, d.Resolved())
			if err != nil {
				continue // a missing goal, a request in flight: refused, fine
			}
			ws, next, err := d.Update(fs, nv)
			if err != nil {
				t.Fatalf("seed %d step %d: update: %v", seed, step, err)
			}
			var owners []string
			for _, p := range touched {
				f, _ := d.Locate(p)
				owners = append(owners, f)
			}
			for _, w := range ws {
				if !slices.Contains(owners, w.Path) {
					t.Fatalf("seed %d step %d: wrote %s, but the edit changed keys in %v only", seed, step, w.Path, owners)
				}
			}
			fs = fs.apply(ws)
			again, err := Load(fs, "state/state.json")
			if err != nil || encode(t, again.Resolved()) != encode(t, nv) || len(again.Mounts()) != len(d.Mounts()) || encode(t, next.Resolved()) != encode(t, nv) {
				t.Fatalf("seed %d step %d: the edit does not read back (%v)", seed, step, err)
			}
		}
	}
}

// FuzzLoad: any document and shard bytes load or are refused with an
// error, never a panic; what loads writes back unchanged.
func FuzzLoad(f *testing.F) {
	f.Add(`{"ACTIVE-PROJECT": {}, "GOALS": {"A": "ref file://A.json"}, "ITEMS": {}}`, `{"SUB-GOALS": {}}`)
	f.Add(`{"ACTIVE-PROJECT": {}, "GOALS": {"A": "ref file://A.json"}, "ITEMS": {}}`, `{"B": "ref file://state.json"}`)
	f.Add(`{"ACTIVE-PROJECT": {}, "GOALS": {}, "ITEMS": {"GLOBAL": {"CONTENT": {"X": ["ref file://A.json", "ref file://A.json"]}}}}`, `[1]`)
	f.Add(`{"ACTIVE-PROJECT": {}, "GOALS": {}, "ITEMS": {"PROJECTS": [{"PROJECT-ID": "p", "ITEMS": "ref file://A.json"}]}}`, `{"META": {}, "CONTENT": {}}`)
	f.Fuzz(func(t *testing.T, doc, shard string) {
		fs := memFiles{"state/state.json": doc, "state/A.json": shard}
		d, err := Load(fs, "state/state.json")
		if err != nil {
			_ = err.Error()
			return
		}
		ws, _, err := d.Update(fs, d.Resolved())
		if err != nil {
			t.Fatalf("rewriting a loaded document unchanged: %v", err)
		}
		for _, w := range ws {
			if w.Path != "state/state.json" && w.Path != "state/A.json" {
				t.Fatalf("wrote %s", w.Path)
			}
			// Non-canonical input comes back canonical; nothing else.
			if canonOrEmpty(fs[w.Path]) != string(w.Data) {
				t.Fatalf("an unchanged document rewrote %s", w.Path)
			}
		}
	})
}
