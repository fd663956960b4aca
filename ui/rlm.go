package ui

import (
	"net/http"
	"path"
	"strings"

	"github.com/aiwg/aiwg-state/checkpoint"
	"github.com/aiwg/aiwg-state/rlm"
	"github.com/aiwg/aiwg-state/store"
)

type statesData struct {
	Rev    string
	States []rlm.StateInfo
}

func (a *app) states(r *http.Request) (string, *view, error) {
	ro, rev := a.readAt(r)
	ss, err := a.st.States().List(r.Context(), ro)
	if err != nil {
		return "", nil, err
	}
	return "states", &view{Title: "RLM states", Nav: "rlm", Data: &statesData{Rev: rev, States: ss}}, nil
}

type checkpointRow struct {
	checkpoint.Checkpoint
	Commit string
	// Files are what changed in the state's files from the checkpoint
	// to the revision shown.
	Files []fileChanges
	Error string
}

type stateData struct {
	Rev         string
	Info        *rlm.StateInfo
	Vars        []rlm.Variable
	Checkpoints []checkpointRow
}

func (a *app) state(r *http.Request) (string, *view, error) {
	ctx := r.Context()
	ro, rev := a.readAt(r)
	id := r.PathValue("id")
	info, err := a.st.States().Get(ctx, id, ro)
	if err != nil {
		return "", nil, err
	}
	d := &stateData{Rev: rev, Info: info}
	if d.Vars, err = a.st.States().Vars(ctx, info.StateID, "", ro); err != nil {
		return "", nil, err
	}
	cps, err := a.st.States().Checkpoints(ctx, info.StateID, ro)
	if err != nil {
		return "", nil, err
	}
	now, err := a.st.Resolve(ro.At, ro.Branch)
	if err != nil {
		return "", nil, err
	}
	// The state's own directory and those of the scopes it sees.
	dirs := []string{path.Dir(rlm.HeaderPath(info.StateID)) + "/"}
	for _, sd := range info.Header.Dirs() {
		dirs = append(dirs, sd.Dir+"/")
	}
	for _, cp := range cps {
		row := checkpointRow{Checkpoint: cp, Commit: cp.Commit.String()}
		diff, err := a.st.Diff(ctx, store.DiffOptions{From: row.Commit, To: now.String()})
		if err != nil {
			row.Error = err.Error()
		} else {
			var mine []store.FileDiff
			for _, f := range diff.Files {
				for _, dir := range dirs {
					if strings.HasPrefix(f.File, dir) {
						mine = append(mine, f)
						break
					}
				}
			}
			row.Files = withRows(mine)
		}
		d.Checkpoints = append(d.Checkpoints, row)
	}
	return "state", &view{Title: "RLM state " + info.StateID, Nav: "rlm", Data: d}, nil
}
