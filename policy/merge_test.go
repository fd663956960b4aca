package policy

import "testing"

func TestTakenByMerge(t *testing.T) {
	tests := []struct {
		name    string
		result  string
		parents []string
		bases   []string
		want    bool
	}{
		{"the other side's change", "new", []string{"old", "new"}, []string{"old"}, true},
		{"our change kept", "ours", []string{"ours", "old"}, []string{"old"}, true},
		{"same change on both sides", "new", []string{"new", "new"}, []string{"old"}, true},
		{"an old entry brought back by an old parent", "old", []string{"new", "old"}, []string{"old"}, false},
		{"the other side's change thrown away", "old", []string{"old", "theirs"}, []string{"old"}, false},
		{"our change thrown away for the base", "old", []string{"ours", "theirs"}, []string{"old"}, false},
		{"a conflict settled as ours", "ours", []string{"ours", "theirs"}, []string{"old"}, false},
		{"a conflict settled as theirs", "theirs", []string{"ours", "theirs"}, []string{"old"}, false},
		{"written by hand", "hand", []string{"old", "new"}, []string{"old"}, false},
		{"deleted by hand", "", []string{"old", "old"}, []string{"old"}, false},
		{"deleted by the other side", "", []string{"old", ""}, []string{"old"}, true},
		{"added by the other side", "new", []string{"", "new"}, []string{""}, true},
		{"unrelated histories: theirs only", "x", []string{"", "x"}, nil, true},
		{"unrelated histories: ours dropped", "x", []string{"y", "x"}, nil, false},
		{"criss-cross bases that disagree", "b", []string{"a", "b"}, []string{"a", "b"}, false},
		{"criss-cross bases that agree", "new", []string{"old", "new"}, []string{"old", "old"}, true},
		{"octopus: one side's change", "new", []string{"old", "old", "new"}, []string{"old"}, true},
		{"octopus: one side's change dropped", "new", []string{"old", "other", "new"}, []string{"old"}, false},
		{"one parent", "x", []string{"y"}, []string{"y"}, false},
	}
	for _, tt := range tests {
		if got := TakenByMerge(tt.result, tt.parents, tt.bases); got != tt.want {
			t.Errorf("%s: TakenByMerge(%q, %q, %q) = %v, want %v", tt.name, tt.result, tt.parents, tt.bases, got, tt.want)
		}
	}
}
