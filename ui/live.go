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
	if from != "" {
		// Only a commit of the branch's history: from anywhere else the
		// watch would stream all the history the two do not share.
		h, err := a.st.Resolve(from, branch)
		if ok, aerr := a.st.Repo().IsAncestor(h, head); err != nil || aerr != nil || !ok {
			from = ""
		}
	}
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusOK)
	fmt.Fprint(w, ": watching\n\n")
	fl.Flush()
	err = a.st.Watch(r.Context(), store.WatchOptions{Branch: branch, From: from, Poll: a.opts.Poll}, func(m *store.Mutation) bool {
		data, err := json.Marshal(liveEvent{Commit: m.Commit, Agent: m.Agent, Subject: m.Subject, Time: m.Time.UTC().Format("2006-01-02 15:04:05")})
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
