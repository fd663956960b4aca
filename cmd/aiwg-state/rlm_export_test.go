package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// exportDoc is the part of a state export these tests read.
type exportDoc struct {
	Variables map[string]struct {
		Metadata struct {
			Scope string `json:"scope"`
		} `json:"metadata"`
	} `json:"variables"`
	History struct {
		Mutations []struct {
			MutationID   string         `json:"mutation_id"`
			VariableName string         `json:"variable_name"`
			Metadata     map[string]any `json:"metadata"`
		} `json:"mutations"`
	} `json:"history"`
}

func decodeExport(t *testing.T, out string) exportDoc {
	t.Helper()
	var d exportDoc
	if err := json.Unmarshal([]byte(out), &d); err != nil {
		t.Fatalf("state export: %v\n%s", err, out)
	}
	return d
}

// TestStateExportEntryIDs: an apply that changes three variables of a
// state is one commit; its three history entries get three ids, each
// leading to that commit, and an import keeps them.
func TestStateExportEntryIDs(t *testing.T) {
	s := newStore(t)
	id := newState(t, s)
	var ops strings.Builder
	for i, n := range []string{"alpha", "beta", "gamma"} {
		fmt.Fprintf(&ops, `{"op":"put","file":"states/%s/variables/%s.json","value":{"name":%q,"value":%d,"type":"number","metadata":{"scope":"state"}}}`+"\n", id, n, n, i+1)
	}
	mustCLI(t, s, ops.String(), "apply", "-", "--agent", "importer")
	commit := strings.TrimSpace(gitOut(t, s, "rev-parse", "main"))
	out := mustCLI(t, s, "", "state", "export", id)
	d := decodeExport(t, out)
	seen := map[string]bool{}
	var ofApply []string
	for _, m := range d.History.Mutations {
		if seen[m.MutationID] {
			t.Fatalf("mutation id %s repeats:\n%s", m.MutationID, out)
		}
		seen[m.MutationID] = true
		if m.Metadata["commit"] == commit {
			ofApply = append(ofApply, m.MutationID)
		}
	}
	if len(ofApply) != 3 || ofApply[1] != ofApply[0]+".2" || ofApply[2] != ofApply[0]+".3" {
		t.Fatalf("the apply's entries: %v", ofApply)
	}
	for _, mid := range ofApply {
		plain, _, _ := strings.Cut(mid, ".")
		for _, rev := range []string{plain, mid} {
			shown := mustCLI(t, s, "", "show", rev, "--json")
			if !strings.Contains(shown, commit) {
				t.Fatalf("show %s does not lead to %s:\n%s", rev, commit, shown)
			}
		}
	}

	// export → import → export keeps the ids.
	file := filepath.Join(t.TempDir(), "state.json")
	os.WriteFile(file, []byte(out), 0o644)
	other := newStore(t)
	mustCLI(t, other, "", "state", "import", file)
	gitOut(t, other, "fsck", "--strict", "--no-dangling")
	again := decodeExport(t, mustCLI(t, other, "", "state", "export", id))
	if len(again.History.Mutations) != len(d.History.Mutations) {
		t.Fatalf("re-export has %d entries, the export %d", len(again.History.Mutations), len(d.History.Mutations))
	}
	for i, m := range again.History.Mutations {
		if w := d.History.Mutations[i]; m.MutationID != w.MutationID || m.VariableName != w.VariableName {
			t.Fatalf("entry %d: %s %s, exported as %s %s", i, m.MutationID, m.VariableName, w.MutationID, w.VariableName)
		}
	}
}

// TestStateExportKeepsStateScope: prompt, Final and the state's own
// variables are exported with the scope "state", and come back in it.
func TestStateExportKeepsStateScope(t *testing.T) {
	s := newStore(t)
	id := newState(t, s)
	mustCLI(t, s, "", "var", "set", "own_note", "kept", "--scope", "state")
	mustCLI(t, s, "", "final", "done")
	out := mustCLI(t, s, "", "state", "export", id)
	d := decodeExport(t, out)
	for _, n := range []string{"prompt", "Final", "own_note"} {
		if got := d.Variables[n].Metadata.Scope; got != "state" {
			t.Fatalf("%s exported with scope %q:\n%s", n, got, out)
		}
	}
	file := filepath.Join(t.TempDir(), "state.json")
	os.WriteFile(file, []byte(out), 0o644)
	other := newStore(t)
	mustCLI(t, other, "", "state", "import", file)
	if got := mustCLI(t, other, "", "var", "get", "own_note", "--state", id, "--scope", "state", "--raw"); got != "kept\n" {
		t.Fatalf("own_note after import, in scope state: %q", got)
	}
	if got := decodeExport(t, mustCLI(t, other, "", "state", "export", id)).Variables["own_note"].Metadata.Scope; got != "state" {
		t.Fatalf("re-exported scope %q", got)
	}
}
