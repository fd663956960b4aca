package statedoc

import (
	"fmt"
	"testing"
)

// benchStore is a document of 20 goals x 5 sub-goals x 50 events, half
// of the sub-goals in shards.
func benchStore(b *testing.B) memFiles {
	doc := any(Default())
	fs := memFiles{}
	for g := range 20 {
		gk := "G-" + string(rune('A'+g))
		doc, _, _ = CreateGoal(doc, gk, "")
		for s := range 5 {
			sk := "S-" + string(rune('A'+s))
			doc, _, _ = CreateSubGoal(doc, gk, sk, "")
			for e := range 50 {
				doc, _, _ = AddEvent(doc, gk, sk, Event{ID: fmt.Sprint(e), Body: "body"})
			}
			if s%2 == 0 {
				sv := doc.(map[string]any)[KeyGoals].(map[string]any)[gk].(map[string]any)[KeySubGoals].(map[string]any)
				fs["state/"+gk+"/"+sk+".json"] = encode(b, sv[sk])
				sv[sk] = "ref file://" + gk + "/" + sk + ".json"
			}
		}
	}
	fs["state/state.json"] = encode(b, doc)
	return fs
}

// BenchmarkEventAdd is the work of one `event add` on a sharded document:
// load and validate, the verb, write back through the mounts, validate.
func BenchmarkEventAdd(b *testing.B) {
	fs := benchStore(b)
	b.ResetTimer()
	for range b.N {
		d, err := Load(fs, "state/state.json")
		if err != nil {
			b.Fatal(err)
		}
		nv, _, err := AddEvent(d.Resolved(), "G-C", "S-C", Event{ID: "new"})
		if err != nil {
			b.Fatal(err)
		}
		if ws, _, err := d.Update(fs, nv); err != nil || len(ws) != 1 {
			b.Fatal(err, len(ws))
		}
	}
}

// BenchmarkLoad is the check every write pays when a document has shards.
func BenchmarkLoad(b *testing.B) {
	fs := benchStore(b)
	b.ResetTimer()
	for range b.N {
		if _, err := Load(fs, "state/state.json"); err != nil {
			b.Fatal(err)
		}
	}
}
