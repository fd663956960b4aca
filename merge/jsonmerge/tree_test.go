package jsonmerge

import (
	"fmt"
	"testing"
)

func TestTrees(t *testing.T) {
	blobs := map[string]string{
		"b1": `{"a":1,"b":1}`, "o1": `{"a":2,"b":1}`, "t1": `{"a":1,"b":2}`,
		"x": "text", "y": "text 2", "z": "text 3",
		"c0": `{"v":0}`, "c1": `{"v":1}`, "c2": `{"v":2}`,
	}
	load := func(id string) ([]byte, error) {
		b, ok := blobs[id]
		if !ok {
			return nil, fmt.Errorf("no blob %s", id)
		}
		return []byte(b), nil
	}
	files := []TreeFile{
		{Path: "z-theirs-only.json", Base: "b1", Ours: "b1", Theirs: "t1"},
		{Path: "ours-only.json", Base: "b1", Ours: "o1", Theirs: "b1"},
		{Path: "both.json", Base: "b1", Ours: "o1", Theirs: "t1"},
		{Path: "same.json", Base: "b1", Ours: "o1", Theirs: "o1"},
		{Path: "deleted-by-theirs.json", Base: "b1", Ours: "b1", Theirs: ""},
		{Path: "added-by-theirs.json", Base: "", Ours: "", Theirs: "t1"},
		{Path: "notes.txt", Base: "x", Ours: "y", Theirs: "z"},
		{Path: "del-vs-mod.json", Base: "c0", Ours: "", Theirs: "c1"},
		{Path: "lww/del-vs-mod.json", Base: "c0", Ours: "", Theirs: "c2"},
	}
	a, err := ParseAttributes([]byte("lww/*.json merge=aiwg-last-write-wins\n"))
	if err != nil {
		t.Fatal(err)
	}
	clocks := func(path string) (Clock, Clock, error) { return Clock{Wall: 1}, Clock{Wall: 2}, nil }
	r, err := Trees(files, TreeOptions{Attributes: a, Load: load, Clocks: clocks})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, f := range r.Files {
		switch {
		case f.Missing:
			got[f.Path] = f.From + ":deleted"
		case f.ID != "":
			got[f.Path] = f.From + ":" + f.ID
		default:
			got[f.Path] = f.From + ":" + string(f.Data)
		}
	}
	want := map[string]string{
		"z-theirs-only.json":     "theirs:t1",
		"both.json":              "merged:{\n  \"a\": 2,\n  \"b\": 2\n}\n",
		"deleted-by-theirs.json": "theirs:deleted",
		"added-by-theirs.json":   "theirs:t1",
		"lww/del-vs-mod.json":    "merged:{\n  \"v\": 2\n}\n", // theirs' later write wins over ours' deletion
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("files:\n%v\nwant\n%v", got, want)
	}
	var conflicted []string
	for _, c := range r.Conflicts {
		conflicted = append(conflicted, c.File)
	}
	if fmt.Sprint(conflicted) != "[del-vs-mod.json notes.txt]" {
		t.Errorf("conflicts %v", conflicted)
	}
	for _, c := range r.Conflicts {
		if c.File == "notes.txt" && (c.Reason == "" || c.OursID != "y") {
			t.Errorf("whole-file conflict %+v", c)
		}
	}
}
