package remote

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/aiwg/aiwg-state/merge"
	"github.com/aiwg/aiwg-state/repo"
	"github.com/aiwg/aiwg-state/store"
)

// ConflictDir is where the integrator keeps its conflict records, in the
// branch it integrates into: ConflictDir/<agent id>/<name>.json for the
// agent branch agents/<agent id>/<name>. An agent's sync fetches that
// branch anyway, so the record reaches the agent at no extra cost.
const ConflictDir = "swarm/conflicts"

// ConflictRecord is what the integrator writes when an agent's branch
// cannot be merged: the branch stays out of the integration branch until
// its next version merges cleanly, and the record says why.
type ConflictRecord struct {
	// Branch is the agent's branch; Tip the commit that did not merge.
	Branch string `json:"branch"`
	Tip    string `json:"tip"`
	// Into is the integration branch and Head its commit it was tried on.
	Into string `json:"into"`
	Head string `json:"head"`
	// Conflicts are the keys, with the integration branch's value (Into)
	// and the agent's (Agent).
	Conflicts []RecordedConflict `json:"conflicts"`
}

// RecordedConflict is one key both sides changed differently.
type RecordedConflict struct {
	File   string          `json:"file"`
	Key    string          `json:"key"`
	Reason string          `json:"reason"`
	Base   json.RawMessage `json:"base,omitempty"`
	// Into is the integration branch's value, Agent the agent's; absent
	// on the side that deleted the key.
	Into  json.RawMessage `json:"into,omitempty"`
	Agent json.RawMessage `json:"agent,omitempty"`
}

// RecordPath is the file holding the conflict record of a branch:
// ConflictDir/<id>/<name>.json for an agent's agents/<id>/<name>, and
// ConflictDir/<branch>.json for another (a shard's integration/K, whose
// merge into main a top-level pass records).
func RecordPath(branch string) string {
	rest := strings.TrimPrefix(shortBranch(branch), AgentBranchPrefix)
	if rest == "" || strings.HasPrefix(rest, "/") {
		return ""
	}
	return ConflictDir + "/" + rest + ".json"
}

// newRecord turns a merge's conflicts (ours: the integration branch,
// theirs: the agent's) into a record.
func newRecord(branch, tip, into, head string, cs []merge.ConflictEntry) ConflictRecord {
	rec := ConflictRecord{Branch: branch, Tip: tip, Into: shortBranch(into), Head: head, Conflicts: []RecordedConflict{}}
	for _, c := range cs {
		rc := RecordedConflict{File: c.File, Key: c.Key, Reason: c.Reason}
		if !c.BaseMissing {
			rc.Base = c.Base
		}
		if !c.OursMissing {
			rc.Into = c.Ours
		}
		if !c.TheirsMissing {
			rc.Agent = c.Theirs
		}
		rec.Conflicts = append(rec.Conflicts, rc)
	}
	return rec
}

// readRecord reads the conflict record of branch in the tree of the
// commit ref names; nil when there is none.
func (w *Swarm) readRecord(ref, branch string) (*ConflictRecord, error) {
	path := RecordPath(branch)
	if path == "" {
		return nil, nil
	}
	tip, err := w.s.Repo().Ref(ref)
	if errors.Is(err, repo.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	data, err := w.s.Repo().ReadFileAt(w.s.TreeOf(tip), path)
	if errors.Is(err, repo.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var rec ConflictRecord
	dec := json.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&rec); err != nil {
		// Another writer's file at that path: not a record, and no reason
		// to fail the sync over it.
		return nil, nil
	}
	if rec.Branch != shortBranch(branch) {
		return nil, nil
	}
	return &rec, nil
}

// recordOps are the writes that bring the integration branch's records up
// to date: a record for each conflicted branch, none for each branch that
// merged (or left the remote).
func (w *Swarm) recordOps(ref string, records map[string]*ConflictRecord) ([]store.Op, error) {
	var ops []store.Op
	branches := make([]string, 0, len(records))
	for b := range records {
		branches = append(branches, b)
	}
	sort.Strings(branches)
	for _, branch := range branches {
		rec := records[branch]
		path := RecordPath(branch)
		if path == "" {
			continue
		}
		old, err := w.readRecord(ref, branch)
		if err != nil {
			return nil, err
		}
		switch {
		case rec == nil && old != nil:
			ops = append(ops, store.Op{Op: "del", File: path})
		case rec != nil:
			body, err := json.Marshal(rec)
			if err != nil {
				return nil, fmt.Errorf("conflict record of %s: %w", branch, err)
			}
			ops = append(ops, store.Op{Op: "put", File: path, Value: body})
		}
	}
	return ops, nil
}
