package jsonmerge

import (
	"slices"
	"strings"
	"testing"

	"github.com/aiwg/aiwg-state/internal/testutil"
)

// mergeCase is one three-way merge of realistic agent state. Clocks are wall
// times; ours is agent-a, theirs agent-b unless an agent is given.
type mergeCase struct {
	name                 string
	opts                 Options
	base, ours, theirs   string
	oursWall, theirsWall int64
	oursAgent, theirsAgt string
	want                 string
	wantConflicts        []string // paths
	reason               string   // substring of the first conflict's reason
}

func runCases(t *testing.T, cases []mergeCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			oa, ta := tc.oursAgent, tc.theirsAgt
			if oa == "" {
				oa = "agent-a"
			}
			if ta == "" {
				ta = "agent-b"
			}
			base := sideOf(t, tc.base, 0, "")
			ours := sideOf(t, tc.ours, tc.oursWall, oa)
			theirs := sideOf(t, tc.theirs, tc.theirsWall, ta)
			got, missing, conflicts := Values(base, ours, theirs, tc.opts)
			if missing {
				t.Fatalf("result missing")
			}
			if canon(got) != canon(testutil.DecodeJSON(t, tc.want)) {
				t.Errorf("result\n got %s\nwant %s", canon(got), canon(testutil.DecodeJSON(t, tc.want)))
			}
			if paths := conflictPaths(conflicts); !slices.Equal(paths, tc.wantConflicts) {
				t.Errorf("conflicts at %q, want %q", paths, tc.wantConflicts)
			}
			if tc.reason != "" && (len(conflicts) == 0 || !strings.Contains(conflicts[0].Reason, tc.reason)) {
				t.Errorf("conflicts %+v, want reason containing %q", conflicts, tc.reason)
			}
			// The same merge from the other side's point of view settles
			// every clash the same way.
			got2, _, conflicts2 := Values(base, theirs, ours, tc.opts)
			if len(conflicts) == 0 && canon(got2) != canon(got) {
				t.Errorf("swapped sides give %s, want %s", canon(got2), canon(got))
			}
			if len(conflicts2) != len(conflicts) {
				t.Fatalf("swapped sides give %d conflicts, want %d", len(conflicts2), len(conflicts))
			}
			for i := range conflicts {
				if canonConflict(swapped(conflicts2[i])) != canonConflict(conflicts[i]) {
					t.Errorf("swapped conflict %+v, want %+v", swapped(conflicts2[i]), conflicts[i])
				}
			}
		})
	}
}

func canonConflict(c Conflict) string {
	return strings.Join([]string{c.Path.String(), canon(c.Base), canon(c.Ours), canon(c.Theirs),
		boolText(c.BaseMissing), boolText(c.OursMissing), boolText(c.TheirsMissing), c.Reason}, "|")
}

func boolText(b bool) string {
	if b {
		return "1"
	}
	return "0"
}

// variables is a store of RLM variables, each with its own updated_at.
const variablesBase = `{"variables": {
	"model": {"type": "string", "value": "gpt-4", "updated_at": "2024-11-22T10:00:00Z"},
	"temperature": {"type": "number", "value": 0.2, "updated_at": "2024-11-22T10:00:00Z"},
	"budget": {"type": "number", "value": 100, "updated_at": "2024-11-22T10:00:00Z"}}}`

func TestLastWriteWins(t *testing.T) {
	lww := Options{Strategy: LastWriteWins}
	runCases(t, []mergeCase{{
		name: "data time beats the side clocks",
		opts: lww,
		base: variablesBase,
		ours: `{"variables": {
			"model": {"type": "string", "value": "claude", "updated_at": "2024-11-22T10:05:00Z"},
			"temperature": {"type": "number", "value": 0.2, "updated_at": "2024-11-22T10:00:00Z"},
			"budget": {"type": "number", "value": 100, "updated_at": "2024-11-22T10:00:00Z"}}}`,
		theirs: `{"variables": {
			"model": {"type": "string", "value": "gemini", "updated_at": "2024-11-22T10:03:00Z"},
			"temperature": {"type": "number", "value": 0.2, "updated_at": "2024-11-22T10:00:00Z"},
			"budget": {"type": "number", "value": 100, "updated_at": "2024-11-22T10:00:00Z"}}}`,
		oursWall: 1, theirsWall: 2, // theirs committed later but wrote earlier
		want: `{"variables": {
			"model": {"type": "string", "value": "claude", "updated_at": "2024-11-22T10:05:00Z"},
			"temperature": {"type": "number", "value": 0.2, "updated_at": "2024-11-22T10:00:00Z"},
			"budget": {"type": "number", "value": 100, "updated_at": "2024-11-22T10:00:00Z"}}}`,
	}, {
		name: "different variables changed on each side both survive",
		opts: lww,
		base: variablesBase,
		ours: `{"variables": {
			"model": {"type": "string", "value": "claude", "updated_at": "2024-11-22T10:05:00Z"},
			"temperature": {"type": "number", "value": 0.2, "updated_at": "2024-11-22T10:00:00Z"},
			"budget": {"type": "number", "value": 100, "updated_at": "2024-11-22T10:00:00Z"}}}`,
		theirs: `{"variables": {
			"model": {"type": "string", "value": "gpt-4", "updated_at": "2024-11-22T10:00:00Z"},
			"temperature": {"type": "number", "value": 0.9, "updated_at": "2024-11-22T10:01:00Z"},
			"budget": {"type": "number", "value": 100, "updated_at": "2024-11-22T10:00:00Z"},
			"goal": {"type": "string", "value": "ship", "updated_at": "2024-11-22T10:01:00Z"}}}`,
		oursWall: 1, theirsWall: 2,
		want: `{"variables": {
			"model": {"type": "string", "value": "claude", "updated_at": "2024-11-22T10:05:00Z"},
			"temperature": {"type": "number", "value": 0.9, "updated_at": "2024-11-22T10:01:00Z"},
			"budget": {"type": "number", "value": 100, "updated_at": "2024-11-22T10:00:00Z"},
			"goal": {"type": "string", "value": "ship", "updated_at": "2024-11-22T10:01:00Z"}}}`,
	}, {
		name:     "without data times the later clock wins",
		opts:     lww,
		base:     `{"config": {"mode": "plan"}}`,
		ours:     `{"config": {"mode": "act"}}`,
		theirs:   `{"config": {"mode": "review"}}`,
		oursWall: 20, theirsWall: 10,
		want: `{"config": {"mode": "act"}}`,
	}, {
		name:     "a data time on one side only is not compared",
		opts:     lww,
		base:     `{"config": {"mode": "plan"}}`,
		ours:     `{"config": {"mode": "act", "updated_at": "2030-01-01T00:00:00Z"}}`,
		theirs:   `{"config": {"mode": "review"}}`,
		oursWall: 10, theirsWall: 20,
		want: `{"config": {"mode": "review", "updated_at": "2030-01-01T00:00:00Z"}}`,
	}, {
		name:     "equal data times fall to the clocks",
		opts:     lww,
		base:     `{"v": {"value": 1, "updated_at": "2024-11-22T10:00:00Z"}}`,
		ours:     `{"v": {"value": 2, "updated_at": "2024-11-22T10:05:00Z"}}`,
		theirs:   `{"v": {"value": 3, "updated_at": "2024-11-22T10:05:00Z"}}`,
		oursWall: 5, theirsWall: 6,
		want: `{"v": {"value": 3, "updated_at": "2024-11-22T10:05:00Z"}}`,
	}, {
		name:     "equal clocks: the larger agent id wins",
		opts:     lww,
		base:     `{"status": "idle"}`,
		ours:     `{"status": "busy"}`,
		theirs:   `{"status": "done"}`,
		oursWall: 7, theirsWall: 7, oursAgent: "agent-z", theirsAgt: "agent-m",
		want: `{"status": "busy"}`,
	}, {
		name:     "equal clocks and agents: the larger canonical bytes win",
		opts:     lww,
		base:     `{"status": "idle"}`,
		ours:     `{"status": "busy"}`,
		theirs:   `{"status": "done"}`,
		oursWall: 7, theirsWall: 7, oursAgent: "agent-a", theirsAgt: "agent-a",
		want: `{"status": "done"}`,
	}, {
		name: "a later deletion wins over an earlier change",
		opts: lww,
		base: variablesBase,
		ours: `{"variables": {
			"model": {"type": "string", "value": "gpt-4", "updated_at": "2024-11-22T10:00:00Z"},
			"budget": {"type": "number", "value": 100, "updated_at": "2024-11-22T10:00:00Z"}}}`,
		theirs: `{"variables": {
			"model": {"type": "string", "value": "gpt-4", "updated_at": "2024-11-22T10:00:00Z"},
			"temperature": {"type": "number", "value": 0.7, "updated_at": "2024-11-22T10:02:00Z"},
			"budget": {"type": "number", "value": 100, "updated_at": "2024-11-22T10:00:00Z"}}}`,
		oursWall: 30, theirsWall: 20,
		want: `{"variables": {
			"model": {"type": "string", "value": "gpt-4", "updated_at": "2024-11-22T10:00:00Z"},
			"budget": {"type": "number", "value": 100, "updated_at": "2024-11-22T10:00:00Z"}}}`,
	}, {
		name:     "a later change wins over an earlier deletion",
		opts:     lww,
		base:     `{"variables": {"temperature": {"value": 0.2}}}`,
		ours:     `{"variables": {}}`,
		theirs:   `{"variables": {"temperature": {"value": 0.7}}}`,
		oursWall: 20, theirsWall: 30,
		want: `{"variables": {"temperature": {"value": 0.7}}}`,
	}, {
		name:     "a type change is a write like any other",
		opts:     lww,
		base:     `{"result": {"rows": 3}}`,
		ours:     `{"result": "failed"}`,
		theirs:   `{"result": {"rows": 4}}`,
		oursWall: 9, theirsWall: 8,
		want: `{"result": "failed"}`,
	}})
}

func TestFirstWriteWins(t *testing.T) {
	fww := Options{Strategy: FirstWriteWins}
	runCases(t, []mergeCase{{
		name:     "the earlier data time wins",
		opts:     fww,
		base:     `{"claim": {"owner": null, "updated_at": "2024-11-22T10:00:00Z"}}`,
		ours:     `{"claim": {"owner": "agent-a", "updated_at": "2024-11-22T10:05:00Z"}}`,
		theirs:   `{"claim": {"owner": "agent-b", "updated_at": "2024-11-22T10:03:00Z"}}`,
		oursWall: 1, theirsWall: 2,
		want: `{"claim": {"owner": "agent-b", "updated_at": "2024-11-22T10:03:00Z"}}`,
	}, {
		name:     "without data times the earlier clock wins",
		opts:     fww,
		base:     `{"lock": null}`,
		ours:     `{"lock": "agent-a"}`,
		theirs:   `{"lock": "agent-b"}`,
		oursWall: 200, theirsWall: 100,
		want: `{"lock": "agent-b"}`,
	}, {
		name:     "an earlier deletion wins",
		opts:     fww,
		base:     `{"draft": {"text": "x"}}`,
		ours:     `{}`,
		theirs:   `{"draft": {"text": "y"}}`,
		oursWall: 100, theirsWall: 200,
		want: `{}`,
	}, {
		name:     "same logical time: the smaller agent id wins",
		opts:     fww,
		base:     `{"lock": null}`,
		ours:     `{"lock": "agent-z"}`,
		theirs:   `{"lock": "agent-m"}`,
		oursWall: 5, theirsWall: 5, oursAgent: "agent-z", theirsAgt: "agent-m",
		want: `{"lock": "agent-m"}`,
	}})
}

func TestMergeObjects(t *testing.T) {
	runCases(t, []mergeCase{{
		name:   "disjoint deep changes, additions and deletions all survive",
		opts:   Options{Strategy: MergeObjects},
		base:   `{"execution_config": {"model": "m1", "limits": {"depth": 3, "tokens": 1000}, "tools": ["a"]}, "old": 1}`,
		ours:   `{"execution_config": {"model": "m1", "limits": {"depth": 5, "tokens": 1000}, "tools": ["a"]}, "old": 1, "added_by_a": true}`,
		theirs: `{"execution_config": {"model": "m2", "limits": {"depth": 3, "tokens": 1000, "time": 60}}, "added_by_b": null}`,
		want:   `{"execution_config": {"model": "m2", "limits": {"depth": 5, "tokens": 1000, "time": 60}}, "added_by_a": true, "added_by_b": null}`,
	}, {
		name:          "a scalar clash is a conflict by default and keeps ours",
		opts:          Options{Strategy: MergeObjects},
		base:          `{"execution_config": {"model": "m1", "depth": 3}}`,
		ours:          `{"execution_config": {"model": "m2", "depth": 4}}`,
		theirs:        `{"execution_config": {"model": "m3", "depth": 3}}`,
		want:          `{"execution_config": {"model": "m2", "depth": 4}}`,
		wantConflicts: []string{"execution_config.model"},
		reason:        "merge-objects cannot settle it: both sides changed the string differently",
	}, {
		name:     "the fallback settles what merge-objects cannot",
		opts:     Options{Strategy: MergeObjects, Fallback: LastWriteWins},
		base:     `{"execution_config": {"model": "m1", "depth": 3}}`,
		ours:     `{"execution_config": {"model": "m2", "depth": 4}}`,
		theirs:   `{"execution_config": {"model": "m3", "depth": 3}}`,
		oursWall: 1, theirsWall: 2,
		want: `{"execution_config": {"model": "m3", "depth": 4}}`,
	}, {
		name:          "delete against modify is a conflict",
		opts:          Options{Strategy: MergeObjects},
		base:          `{"a": {"x": 1}}`,
		ours:          `{}`,
		theirs:        `{"a": {"x": 2}}`,
		want:          `{}`,
		wantConflicts: []string{"a"},
		reason:        "deleted on one side, changed on the other",
	}, {
		name:          "arrays changed on both sides fall back too",
		opts:          Options{Strategy: MergeObjects},
		base:          `{"tools": ["a"]}`,
		ours:          `{"tools": ["b", "a"]}`,
		theirs:        `{"tools": ["a", "c"]}`,
		want:          `{"tools": ["b", "a"]}`,
		wantConflicts: []string{"tools"},
	}, {
		name:          "an array one side edited and the other appended to falls back",
		opts:          Options{Strategy: MergeObjects},
		base:          `{"tools": ["a"]}`,
		ours:          `{"tools": ["x", "b"]}`,
		theirs:        `{"tools": ["a", "c"]}`,
		want:          `{"tools": ["x", "b"]}`,
		wantConflicts: []string{"tools"},
	}, {
		name:   "arrays both sides only appended to keep both sides' elements",
		opts:   Options{Strategy: MergeObjects},
		base:   `{"notes": ["a"], "deep": {"log": []}}`,
		ours:   `{"notes": ["a", "b"], "deep": {"log": [{"id": 1}]}}`,
		theirs: `{"notes": ["a", "c", "d"], "deep": {"log": [{"id": 2}]}}`,
		want:   `{"notes": ["a", "b", "c", "d"], "deep": {"log": [{"id": 1}, {"id": 2}]}}`,
	}, {
		name:   "an array both sides created by appending is appended to",
		opts:   Options{Strategy: MergeObjects},
		base:   `{}`,
		ours:   `{"notes": ["b"]}`,
		theirs: `{"notes": ["c"]}`,
		want:   `{"notes": ["b", "c"]}`,
	}, {
		name:     "a merge-arrays fallback unions arrays",
		opts:     Options{Strategy: MergeObjects, Fallback: MergeArrays},
		base:     `{"tools": ["a"]}`,
		ours:     `{"tools": ["a", "b"]}`,
		theirs:   `{"tools": ["c"]}`,
		oursWall: 1, theirsWall: 2,
		want: `{"tools": ["b", "c"]}`,
	}, {
		name:   "both sides add the same object with different keys",
		opts:   Options{Strategy: MergeObjects},
		base:   `{}`,
		ours:   `{"meta": {"a": 1, "shared": "x"}}`,
		theirs: `{"meta": {"b": 2, "shared": "x"}}`,
		want:   `{"meta": {"a": 1, "b": 2, "shared": "x"}}`,
	}})
}

// subGoal is a state document sub-goal whose EVENTS log two agents append to.
const subGoalBase = `{"GOALS": {"LAUNCH": {"TITLE": "LAUNCH", "SUB-GOALS": {"DOCS": {
	"TITLE": "DOCS", "STATUS": "open", "NOTES": ["draft outline"],
	"EVENTS": [
		{"ID": "e1", "TYPE": "progress", "BODY": "outline done", "SEEN": false, "CREATED-AT": "2024-11-22T10:00:00Z"}
	],
	"IN-FLIGHT": false, "LAST-SEEN-IDX": -1}}}}}`

var subGoalOpts = Options{
	Strategy: MergeObjects,
	Keys:     map[string]Strategy{"EVENTS": MergeArrays, "NOTES": MergeArrays, "SEEN": Max, "LAST-SEEN-IDX": Max},
}

func TestMergeArrays(t *testing.T) {
	runCases(t, []mergeCase{{
		name: "both sides' events are kept in time order; SEEN and LAST-SEEN-IDX take the max",
		opts: subGoalOpts,
		base: subGoalBase,
		ours: `{"GOALS": {"LAUNCH": {"TITLE": "LAUNCH", "SUB-GOALS": {"DOCS": {
			"TITLE": "DOCS", "STATUS": "open", "NOTES": ["draft outline", "ask for review"],
			"EVENTS": [
				{"ID": "e1", "TYPE": "progress", "BODY": "outline done", "SEEN": true, "CREATED-AT": "2024-11-22T10:00:00Z"},
				{"ID": "e2", "TYPE": "progress", "BODY": "intro written", "SEEN": false, "CREATED-AT": "2024-11-22T10:02:00Z"}
			],
			"IN-FLIGHT": false, "LAST-SEEN-IDX": 0}}}}}`,
		theirs: `{"GOALS": {"LAUNCH": {"TITLE": "LAUNCH", "SUB-GOALS": {"DOCS": {
			"TITLE": "DOCS", "STATUS": "open", "NOTES": ["draft outline", "add diagrams"],
			"EVENTS": [
				{"ID": "e1", "TYPE": "progress", "BODY": "outline done", "SEEN": false, "CREATED-AT": "2024-11-22T10:00:00Z"},
				{"ID": "e3", "TYPE": "question", "BODY": "which audience?", "SEEN": false, "CREATED-AT": "2024-11-22T10:01:00Z"},
				{"ID": "e4", "TYPE": "progress", "BODY": "diagrams drafted", "SEEN": false, "CREATED-AT": "2024-11-22T10:05:00Z"}
			],
			"IN-FLIGHT": true, "LAST-SEEN-IDX": -1}}}}}`,
		oursWall: 2, theirsWall: 1,
		want: `{"GOALS": {"LAUNCH": {"TITLE": "LAUNCH", "SUB-GOALS": {"DOCS": {
			"TITLE": "DOCS", "STATUS": "open", "NOTES": ["draft outline", "add diagrams", "ask for review"],
			"EVENTS": [
				{"ID": "e1", "TYPE": "progress", "BODY": "outline done", "SEEN": true, "CREATED-AT": "2024-11-22T10:00:00Z"},
				{"ID": "e3", "TYPE": "question", "BODY": "which audience?", "SEEN": false, "CREATED-AT": "2024-11-22T10:01:00Z"},
				{"ID": "e2", "TYPE": "progress", "BODY": "intro written", "SEEN": false, "CREATED-AT": "2024-11-22T10:02:00Z"},
				{"ID": "e4", "TYPE": "progress", "BODY": "diagrams drafted", "SEEN": false, "CREATED-AT": "2024-11-22T10:05:00Z"}
			],
			"IN-FLIGHT": true, "LAST-SEEN-IDX": 0}}}}}`,
	}, {
		name:     "elements without times: the side with the older clock first",
		opts:     Options{Strategy: MergeArrays},
		base:     `{"iterations": [{"id": 1}]}`,
		ours:     `{"iterations": [{"id": 1}, {"id": 2, "by": "a"}, {"id": 4, "by": "a"}]}`,
		theirs:   `{"iterations": [{"id": 1}, {"id": 3, "by": "b"}]}`,
		oursWall: 50, theirsWall: 40,
		want: `{"iterations": [{"id": 1}, {"id": 3, "by": "b"}, {"id": 2, "by": "a"}, {"id": 4, "by": "a"}]}`,
	}, {
		name:     "removals on either side are kept and base order wins",
		opts:     Options{Strategy: MergeArrays},
		base:     `{"NOTES": ["a", "b", "c", "d"]}`,
		ours:     `{"NOTES": ["d", "c", "a"]}`,
		theirs:   `{"NOTES": ["a", "c", "d", "e"]}`,
		oursWall: 1, theirsWall: 2,
		want: `{"NOTES": ["a", "c", "d", "e"]}`,
	}, {
		name:     "an element added on both sides appears once",
		opts:     Options{Strategy: MergeArrays},
		base:     `{"tags": []}`,
		ours:     `{"tags": ["x", "y"]}`,
		theirs:   `{"tags": ["y", "z"]}`,
		oursWall: 1, theirsWall: 2,
		want: `{"tags": ["x", "y", "z"]}`,
	}, {
		name:     "duplicates pair up one to one",
		opts:     Options{Strategy: MergeArrays},
		base:     `{"log": ["tick", "tick"]}`,
		ours:     `{"log": ["tick"]}`,
		theirs:   `{"log": ["tick", "tick", "tick"]}`,
		oursWall: 1, theirsWall: 2,
		want: `{"log": ["tick", "tick"]}`,
	}, {
		name:     "an element changed differently on both sides: a conflict at its index",
		opts:     subGoalOpts,
		base:     `{"EVENTS": [{"ID": "e0"}, {"ID": "e1", "BODY": "v1", "SEEN": false}]}`,
		ours:     `{"EVENTS": [{"ID": "e1", "BODY": "v2", "SEEN": true}]}`,
		theirs:   `{"EVENTS": [{"ID": "e0"}, {"ID": "e1", "BODY": "v3", "SEEN": false}]}`,
		oursWall: 1, theirsWall: 2,
		want:          `{"EVENTS": [{"ID": "e1", "BODY": "v2", "SEEN": true}]}`,
		wantConflicts: []string{"EVENTS.0.BODY"},
	}, {
		name:          "an element removed on one side and changed on the other stays, in conflict",
		opts:          Options{Strategy: MergeArrays},
		base:          `{"tasks": [{"task_id": "t1", "status": "todo"}, {"task_id": "t2", "status": "todo"}]}`,
		ours:          `{"tasks": [{"task_id": "t2", "status": "todo"}]}`,
		theirs:        `{"tasks": [{"task_id": "t1", "status": "done"}, {"task_id": "t2", "status": "todo"}]}`,
		want:          `{"tasks": [{"task_id": "t1", "status": "done"}, {"task_id": "t2", "status": "todo"}]}`,
		wantConflicts: []string{"tasks.0"},
		reason:        "merge-arrays cannot settle it: deleted on one side",
	}, {
		name:          "not arrays on both sides falls back",
		opts:          Options{Strategy: MergeArrays},
		base:          `{"NOTES": ["a"]}`,
		ours:          `{"NOTES": "a"}`,
		theirs:        `{"NOTES": ["a", "b"]}`,
		want:          `{"NOTES": "a"}`,
		wantConflicts: []string{"NOTES"},
		reason:        "type changed: array and string",
	}, {
		name:     "numeric ts orders a log of plain records",
		opts:     Options{Strategy: MergeArrays},
		base:     `[]`,
		ours:     `[{"msg": "a1", "ts": 10}, {"msg": "a2", "ts": 30}]`,
		theirs:   `[{"msg": "b1", "ts": 20}, {"msg": "b2", "ts": 5}]`,
		oursWall: 1, theirsWall: 2,
		want: `[{"msg": "a1", "ts": 10}, {"msg": "b1", "ts": 20}, {"msg": "b2", "ts": 5}, {"msg": "a2", "ts": 30}]`,
	}})
}

// tasks carry the swarm shared state specification's priority.
func TestHigherPriorityWins(t *testing.T) {
	hpw := Options{Strategy: HigherPriorityWins}
	runCases(t, []mergeCase{{
		name:     "the higher named priority wins the clash",
		opts:     hpw,
		base:     `{"tasks": {"t1": {"priority": "high", "status": "todo", "assignee": null}}}`,
		ours:     `{"tasks": {"t1": {"priority": "critical", "status": "in-progress", "assignee": "agent-a"}}}`,
		theirs:   `{"tasks": {"t1": {"priority": "high", "status": "blocked", "assignee": "agent-b"}}}`,
		oursWall: 1, theirsWall: 2,
		want: `{"tasks": {"t1": {"priority": "critical", "status": "in-progress", "assignee": "agent-a"}}}`,
	}, {
		name:     "names are case-insensitive and urgent outranks high",
		opts:     hpw,
		base:     `{"t": {"PRIORITY": "LOW", "STATUS": "new"}}`,
		ours:     `{"t": {"PRIORITY": "High", "STATUS": "a"}}`,
		theirs:   `{"t": {"PRIORITY": "URGENT", "STATUS": "b"}}`,
		oursWall: 2, theirsWall: 1,
		want: `{"t": {"PRIORITY": "URGENT", "STATUS": "b"}}`,
	}, {
		name:     "numbers compare numerically",
		opts:     hpw,
		base:     `{"t": {"priority": 1, "owner": "x"}}`,
		ours:     `{"t": {"priority": 9, "owner": "a"}}`,
		theirs:   `{"t": {"priority": 10, "owner": "b"}}`,
		oursWall: 2, theirsWall: 1,
		want: `{"t": {"priority": 10, "owner": "b"}}`,
	}, {
		name:     "medium and normal tie: last write wins",
		opts:     hpw,
		base:     `{"t": {"priority": "low", "owner": "x"}}`,
		ours:     `{"t": {"priority": "medium", "owner": "a"}}`,
		theirs:   `{"t": {"priority": "normal", "owner": "b"}}`,
		oursWall: 2, theirsWall: 1,
		want: `{"t": {"priority": "medium", "owner": "a"}}`,
	}, {
		name:     "no priority: last write wins",
		opts:     hpw,
		base:     `{"t": {"owner": "x"}}`,
		ours:     `{"t": {"owner": "a"}}`,
		theirs:   `{"t": {"owner": "b"}}`,
		oursWall: 1, theirsWall: 2,
		want: `{"t": {"owner": "b"}}`,
	}, {
		name:     "a number against a name: last write wins",
		opts:     hpw,
		base:     `{"t": {"priority": "low", "owner": "x"}}`,
		ours:     `{"t": {"priority": 100, "owner": "a"}}`,
		theirs:   `{"t": {"priority": "critical", "owner": "b"}}`,
		oursWall: 3, theirsWall: 1,
		want: `{"t": {"priority": 100, "owner": "a"}}`,
	}})
}

func TestMax(t *testing.T) {
	mx := Options{Strategy: Max}
	runCases(t, []mergeCase{{
		name:     "the larger counter wins, numerically",
		opts:     mx,
		base:     `{"LAST-SEEN-IDX": 1, "retries": 2.5}`,
		ours:     `{"LAST-SEEN-IDX": 9, "retries": 2.75}`,
		theirs:   `{"LAST-SEEN-IDX": 10, "retries": 2.6}`,
		oursWall: 2, theirsWall: 1,
		want: `{"LAST-SEEN-IDX": 10, "retries": 2.75}`,
	}, {
		name:   "negative and exponent forms",
		opts:   mx,
		base:   `{"a": 0, "b": 0}`,
		ours:   `{"a": -1, "b": 1e3}`,
		theirs: `{"a": -0.5, "b": 999}`,
		want:   `{"a": -0.5, "b": 1e3}`,
	}, {
		name:   "true wins over false",
		opts:   mx,
		base:   `{"SEEN": null}`,
		ours:   `{"SEEN": false}`,
		theirs: `{"SEEN": true}`,
		want:   `{"SEEN": true}`,
	}, {
		name:   "strings by byte order",
		opts:   mx,
		base:   `{"phase": "a"}`,
		ours:   `{"phase": "c"}`,
		theirs: `{"phase": "b"}`,
		want:   `{"phase": "c"}`,
	}, {
		name:   "equal numbers spelled differently keep the larger spelling",
		opts:   mx,
		base:   `{"n": 0}`,
		ours:   `{"n": 1}`,
		theirs: `{"n": 1.0}`,
		want:   `{"n": 1.0}`,
	}, {
		name:          "different types are a conflict",
		opts:          mx,
		base:          `{"n": 1}`,
		ours:          `{"n": 2}`,
		theirs:        `{"n": "3"}`,
		want:          `{"n": 2}`,
		wantConflicts: []string{"n"},
		reason:        "max cannot compare number and string",
	}, {
		name:          "a deletion is a conflict",
		opts:          mx,
		base:          `{"n": 1}`,
		ours:          `{}`,
		theirs:        `{"n": 2}`,
		want:          `{}`,
		wantConflicts: []string{"n"},
		reason:        "max cannot compare deletion and number",
	}})
}

func TestManual(t *testing.T) {
	runCases(t, []mergeCase{{
		name:   "changes on one side merge cleanly",
		opts:   Options{Strategy: Manual},
		base:   `{"a": 1, "b": {"c": 2}}`,
		ours:   `{"a": 5, "b": {"c": 2}}`,
		theirs: `{"a": 1, "b": {"c": 2, "d": 3}}`,
		want:   `{"a": 5, "b": {"c": 2, "d": 3}}`,
	}, {
		name:     "every clash is recorded in path order and keeps ours",
		opts:     Options{Strategy: Manual},
		base:     `{"a": 1, "b": {"c": 2}, "d.e": [1], "z": true}`,
		ours:     `{"a": 5, "b": {"c": 3}, "d.e": [2], "z": true}`,
		theirs:   `{"a": 6, "b": "gone", "d.e": [3]}`,
		oursWall: 5, theirsWall: 6,
		want:          `{"a": 5, "b": {"c": 3}, "d.e": [2]}`,
		wantConflicts: []string{"a", "b", `d\.e`},
	}, {
		name:     "Keys override the strategy for a subtree",
		opts:     Options{Strategy: LastWriteWins, Keys: map[string]Strategy{"secrets": Manual}},
		base:     `{"secrets": {"k": "1"}, "plain": "1"}`,
		ours:     `{"secrets": {"k": "2"}, "plain": "2"}`,
		theirs:   `{"secrets": {"k": "3"}, "plain": "3"}`,
		oursWall: 1, theirsWall: 2,
		want:          `{"secrets": {"k": "2"}, "plain": "3"}`,
		wantConflicts: []string{"secrets.k"},
	}, {
		name:          "an unknown strategy in Options is a conflict, not a guess",
		opts:          Options{Strategy: "newest"},
		base:          `{"a": 1}`,
		ours:          `{"a": 2}`,
		theirs:        `{"a": 3}`,
		want:          `{"a": 2}`,
		wantConflicts: []string{"a"},
		reason:        `unknown strategy "newest"`,
	}})
}

func TestConflictRecord(t *testing.T) {
	base := sideOf(t, `{"x": {"y": 1}}`, 0, "")
	ours := Side{Value: testutil.DecodeJSON(t, `{}`)}
	theirs := sideOf(t, `{"x": {"y": 2}}`, 0, "")
	_, _, cs := Values(base, ours, theirs, Options{})
	if len(cs) != 1 {
		t.Fatalf("got %d conflicts, want 1", len(cs))
	}
	c := cs[0]
	if c.Path.String() != "x" || c.Path.Pointer() != "/x" || c.BaseMissing || !c.OursMissing || c.TheirsMissing ||
		canon(c.Base) != `{"y":1}` || c.Ours != nil || canon(c.Theirs) != `{"y":2}` {
		t.Errorf("conflict %+v", c)
	}
}

func TestWholeDocuments(t *testing.T) {
	doc := `{"a": 1}`
	tests := []struct {
		name               string
		base, ours, theirs Side
		wantMissing        bool
		want               string
		wantConflicts      int
	}{
		{"deleted on both sides", sideOf(t, doc, 0, ""), Side{Missing: true}, Side{Missing: true}, true, "", 0},
		{"deleted on one side, unchanged on the other", sideOf(t, doc, 0, ""), Side{Missing: true}, sideOf(t, doc, 0, ""), true, "", 0},
		{"added on one side", Side{Missing: true}, Side{Missing: true}, sideOf(t, doc, 0, ""), false, doc, 0},
		{"added differently on both sides", Side{Missing: true}, sideOf(t, `{"a": 1}`, 0, ""), sideOf(t, `{"b": 2}`, 0, ""), false, `{"a": 1, "b": 2}`, 0},
		{"deleted against changed", sideOf(t, doc, 0, ""), Side{Missing: true}, sideOf(t, `{"a": 2}`, 0, ""), true, "", 1},
		{"root scalar clash", sideOf(t, `1`, 0, ""), sideOf(t, `2`, 0, ""), sideOf(t, `3`, 0, ""), false, `2`, 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, missing, cs := Values(tc.base, tc.ours, tc.theirs, Options{})
			if missing != tc.wantMissing || len(cs) != tc.wantConflicts {
				t.Fatalf("missing=%v conflicts=%+v, want missing=%v and %d conflicts", missing, cs, tc.wantMissing, tc.wantConflicts)
			}
			if !missing && canon(got) != canon(testutil.DecodeJSON(t, tc.want)) {
				t.Errorf("got %s, want %s", canon(got), tc.want)
			}
			if tc.wantConflicts > 0 && cs[0].Path == nil {
				t.Errorf("root conflict path is nil, want empty")
			}
		})
	}
}
