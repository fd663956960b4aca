package ui

import (
	"encoding/json"
	"fmt"
	"net/http"

	"github.com/aiwg/aiwg-state/store"
)

// liveEvent is what a page learns of a new commit.
type liveEvent struct {
	Commit  string `json:"commit"`
	Agent   string `json:"agent"`
	Subject string `json:"subject"`
	Time    string `json:"time"`
	// MutationID and Correlation are the trailers a history row shows.
	MutationID  string `json:"mutation_id,omitempty"`
	Correlation string `json:"correlation_id,omitempty"`
	// Mainline: the commit is on the branch's first-parent line (not one
	// that a merge brought in), so a history page lists it.
	Mainline bool `json:"mainline"`
}

// live streams the commits the branch gains as server-sent events
// ("event: commit", data a JSON liveEvent), from the store's watch, until
// the page goes away. ?from= is the commit the page was drawn at: what
// landed between drawing and connecting is streamed first.
func (a *app) live(w http.ResponseWriter, r *http.Request) {
	fl, ok := w.(http.Flusher)
	if !ok {
		http.Error(w, "streaming is not supported here", http.StatusInternalServerError)
		return
	}
	branch := a.branchOf(r)
	from := r.URL.Query().Get("from")
	if from != "" && !store.IsObjectIDName(from) {
		from = ""
	}
	head, err := a.st.Resolve("", branch)
	if err != nil {
		a.fail(w, r, err)
		return
	}
	line := head.String()
	if from != "" {
		// Only a commit of the branch's history: from anywhere else the
		// watch would stream all the history the two do not share.
		h, err := a.st.Resolve(from, branch)
		if ok, aerr := a.st.Repo().IsAncestor(h, head); err != nil || aerr != nil || !ok {
			from = ""
		} else {
			line = h.String()
		}
	}
	if from == "" {
		from = head.String()
	}
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusOK)
	fmt.Fprint(w, ": watching\n\n")
	fl.Flush()
	// onLine reports whether a commit is on the branch's first-parent
	// line: the commits from the head down to the line's last streamed
	// one, read again when a commit is not among those last read (a
	// merge's branch's commits come before the merge, and are not).
	mainline := map[string]bool{}
	onLine := func(commit string) bool {
		if mainline[commit] {
			return true
		}
		clear(mainline)
		a.st.Log(r.Context(), store.LogOptions{ReadOptions: store.ReadOptions{Branch: branch}, Limit: countLimit}, func(m *store.Mutation) bool {
			if m.Commit == line {
				return false
			}
			mainline[m.Commit] = true
			return true
		})
		return mainline[commit]
	}
	err = a.st.Watch(r.Context(), store.WatchOptions{Branch: branch, From: from, Poll: a.opts.Poll}, func(m *store.Mutation) bool {
		ev := liveEvent{Commit: m.Commit, Agent: m.Agent, Subject: m.Subject, Time: m.Time.UTC().Format("2006-01-02 15:04:05"),
			MutationID: m.MutationID, Correlation: m.Correlation}
		if onLine(m.Commit) {
			ev.Mainline, line = true, m.Commit
		}
		data, err := json.Marshal(ev)
		if err != nil {
			return false
		}
		if _, err := fmt.Fprintf(w, "event: commit\ndata: %s\n\n", data); err != nil {
			return false
		}
		fl.Flush()
		return true
	})
	if err != nil && r.Context().Err() == nil {
		fmt.Fprintf(w, "event: error\ndata: %q\n\n", err.Error())
		fl.Flush()
	}
}
