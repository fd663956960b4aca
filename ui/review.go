package ui

import (
	"net/http"
	"strings"

	"github.com/aiwg/aiwg-state/review"
	"github.com/aiwg/aiwg-state/store"
)

type reviewData struct {
	R         *review.Report
	Files     []fileChanges
	Conflicts int
}

// review is the pull-request view: ?base=main&head=agents/planner/main,
// or ?range=main...agents/planner/main.
func (a *app) review(r *http.Request) (string, *view, error) {
	q := r.URL.Query()
	base, head := q.Get("base"), q.Get("head")
	if rg := q.Get("range"); rg != "" {
		b, h, ok := strings.Cut(rg, "...")
		if !ok {
			return "", nil, badRequest("a range is BASE...HEAD, got %q", rg)
		}
		base, head = b, h
	}
	if base == "" {
		base = a.opts.Branch
	}
	if head == "" {
		return "", nil, badRequest("a review needs a head: ?base=BRANCH&head=BRANCH")
	}
	// A review judges every commit of the range (policy, schemas) and
	// dry-runs the merge: past Options.MaxReviewCommits that is the command
	// line's work, not a page's.
	n := 0
	err := a.st.Log(r.Context(), store.LogOptions{ReadOptions: store.ReadOptions{At: head, Branch: a.opts.Branch}, Exclude: base, AllParents: true},
		func(*store.Mutation) bool { n++; return n <= a.opts.MaxReviewCommits })
	if err != nil {
		return "", nil, err
	}
	if n > a.opts.MaxReviewCommits {
		return "", nil, badRequest("%s...%s holds more than %d commits: too many to review in a page; run aiwg-state review %s...%s", base, head, a.opts.MaxReviewCommits, base, head)
	}
	rep, err := review.Branch(r.Context(), a.st, base, head, review.Options{Limit: 100})
	if err != nil {
		return "", nil, err
	}
	d := &reviewData{R: rep, Files: withRows(rep.Changes), Conflicts: len(rep.Merge.Conflicts)}
	return "review", &view{Title: "Review " + base + "..." + head, Nav: "overview", Data: d}, nil
}
