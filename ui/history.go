package ui

import (
	"errors"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/sergi/go-diff/diffmatchpatch"

	"github.com/aiwg/aiwg-state/internal/lanes"
	"github.com/aiwg/aiwg-state/internal/when"
	"github.com/aiwg/aiwg-state/objects/jsondiff"
	"github.com/aiwg/aiwg-state/repo"
	"github.com/aiwg/aiwg-state/store"
	"github.com/aiwg/aiwg-state/verbiage"
)

// scanLimit bounds the commits one history page reads while filling a
// page with filters that the index does not answer (agent, correlation
// id, time): a rare agent in a long history costs a few pages, each
// bounded, rather than one unbounded read.
const scanLimit = 5000

// sideLimit bounds the commits of a merged branch drawn under its merge.
const sideLimit = 10

type histFilter struct {
	Branch, At, Agent, File, Key, Corr, Since, Until string
}

// query is the filter as link pairs, with at replaced.
func (f histFilter) link(at string) string {
	return f.linkLane(at, "")
}

// linkLane is link for a page that starts beside the lanes an earlier
// page left open (the commits they wait for, comma-separated).
func (f histFilter) linkLane(at, open string) string {
	return link("/history", "branch", f.Branch, "agent", f.Agent, "file", f.File, "key", f.Key, "corr", f.Corr, "since", f.Since, "until", f.Until, "at", at, "lanes", open)
}

// maxLanes bounds the open lanes a page link may carry.
const maxLanes = 64

// openLanes reads a page link's lanes: commit names only, else none.
func openLanes(v string) []string {
	if v == "" {
		return nil
	}
	ls := strings.Split(v, ",")
	if len(ls) > maxLanes {
		return nil
	}
	for _, l := range ls {
		if !store.IsObjectIDName(l) {
			return nil
		}
	}
	return ls
}

type histRow struct {
	Graph string // the lanes drawn left of the commit, as git log --graph
	M     *store.Mutation
}

type historyData struct {
	Filter  histFilter
	Rows    []histRow
	Scanned int
	// Next is the link to the older page ("" at the end of history);
	// Partial: the page stopped at scanLimit before it was full.
	Next    string
	Partial bool
	First   string
	// Live: the page is the newest of the whole line, so the script
	// adds the commits that land at its top.
	Live bool
}

func (a *app) history(r *http.Request) (string, *view, error) {
	ctx := r.Context()
	q := r.URL.Query()
	f := histFilter{Branch: a.branchOf(r), At: q.Get("at"), Agent: q.Get("agent"), File: q.Get("file"), Key: q.Get("key"),
		Corr: q.Get("corr"), Since: q.Get("since"), Until: q.Get("until")}
	lo := store.LogOptions{ReadOptions: store.ReadOptions{Branch: f.Branch, At: f.At}}
	if f.File != "" {
		p, err := verbiage.CleanStorePath(f.File)
		if err != nil {
			return "", nil, badRequest("file: %v", err)
		}
		lo.File, lo.Key = p, f.Key
	} else if f.Key != "" {
		return "", nil, badRequest("a key path needs a file")
	}
	now := a.opts.Now()
	var since, until time.Time
	var err error
	if f.Since != "" {
		if since, err = when.Parse(f.Since, now); err != nil {
			return "", nil, badRequest("since: %v", err)
		}
		lo.Since = since
	}
	if f.Until != "" {
		if until, err = when.Parse(f.Until, now); err != nil {
			return "", nil, badRequest("until: %v", err)
		}
	}
	agent := ""
	if f.Agent != "" {
		agent = repo.IdentityName(f.Agent)
	}
	d := &historyData{Filter: f, First: f.link("")}
	var main []*store.Mutation
	var last *store.Mutation
	full := false
	err = a.st.Log(ctx, lo, func(m *store.Mutation) bool {
		if len(main) == a.opts.PageSize {
			full = true
			return false
		}
		d.Scanned++
		last = m
		keep := (agent == "" || m.Agent == agent) && (f.Corr == "" || m.Correlation == f.Corr) &&
			(until.IsZero() || !m.Time.After(until))
		if keep {
			main = append(main, m)
		}
		if d.Scanned >= scanLimit && len(main) < a.opts.PageSize {
			d.Partial = true
			return false
		}
		return true
	})
	if err != nil {
		return "", nil, err
	}
	// Lanes are drawn on the whole first-parent line only: a filtered
	// page may lack the commit where a merged branch forked.
	filtered := f.File != "" || agent != "" || f.Corr != "" || !until.IsZero()
	var open []string
	if !filtered {
		open = openLanes(q.Get("lanes"))
	}
	d.Live = f.At == "" && !filtered && f.Since == ""
	d.Rows, open, err = a.drawGraph(r, main, filtered, open)
	if err != nil {
		return "", nil, err
	}
	if full || d.Partial {
		// A full page ends at its last row, a partial one at the last
		// commit read; the next starts past it, beside the lane still
		// open.
		end := last
		if full {
			end = main[len(main)-1]
		}
		if len(end.Parents) > 0 {
			// Only lanes beside the main line carry on: the main
			// line's own lane is the next page's start.
			carry := ""
			if len(open) > 1 && len(open) <= maxLanes {
				carry = strings.Join(open, ",")
			}
			d.Next = f.linkLane(end.Parents[0], carry)
		}
	}
	title := "History of " + f.Branch
	if f.File != "" {
		title += " — " + f.File
		if f.Key != "" {
			title += "#" + f.Key
		}
	}
	return "history", &view{Title: title, Nav: "history", Branch: f.Branch, Data: d}, nil
}

// drawGraph lays out the page's first-parent history with each merge's
// branch drawn beside it, as `aiwg-state log --graph` and git log --graph
// --oneline draw it (package lanes): the merged branch's own commits (what
// the merge brought, at most sideLimit of them) under the merge, each
// line of history in its own lane. A filtered page draws no lanes: it may
// lack the commits where they join.
//
// open is the lanes an earlier page left open; those this page leaves
// open are returned.
func (a *app) drawGraph(r *http.Request, main []*store.Mutation, filtered bool, open []string) ([]histRow, []string, error) {
	rows := make([]histRow, 0, len(main))
	if filtered {
		for _, m := range main {
			rows = append(rows, histRow{Graph: "*", M: m})
		}
		return rows, nil, nil
	}
	l := lanes.Resume(open)
	add := func(m *store.Mutation, parents []string) {
		line, below := l.Commit(m.Commit, parents)
		rows = append(rows, histRow{Graph: strings.TrimRight(line, " "), M: m})
		for _, b := range below {
			rows = append(rows, histRow{Graph: b})
		}
	}
	for _, m := range main {
		var parents []string
		if len(m.Parents) > 0 {
			parents = append(parents, m.Parents[0])
		}
		var side []*store.Mutation
		if len(m.Parents) > 1 {
			err := a.st.Log(r.Context(), store.LogOptions{ReadOptions: store.ReadOptions{At: m.Parents[1]}, Exclude: m.Parents[0], Limit: sideLimit + 1},
				func(s *store.Mutation) bool { side = append(side, s); return true })
			if err != nil && !errors.Is(err, store.ErrNotFound) {
				return nil, nil, err
			}
		}
		more := len(side) > sideLimit
		if more {
			side = side[:sideLimit]
		}
		if len(side) > 0 {
			parents = append(parents, side[0].Commit)
		}
		add(m, parents)
		for i, s := range side {
			var next []string
			switch {
			case i+1 < len(side):
				next = []string{side[i+1].Commit}
			case more:
				// The rest of the branch is left out: its lane goes
				// on to where it forked.
				if bases, err := a.st.MergeBases(m.Parents[0], m.Parents[1], ""); err == nil && len(bases) > 0 {
					next = []string{bases[0].String()}
				}
			case len(s.Parents) > 0:
				next = []string{s.Parents[0]}
			}
			add(s, next)
			if more && i == len(side)-1 && len(next) > 0 {
				// ⋮ in that lane: commits not drawn.
				ls := l.Open()
				if k := slices.Index(ls, next[0]); k >= 0 {
					marker := []rune(strings.Repeat("| ", len(ls)))
					marker[2*k] = '⋮'
					rows = append(rows, histRow{Graph: strings.TrimRight(string(marker), " ")})
				}
			}
		}
	}
	return rows, l.Open(), nil
}

type fileChanges struct {
	store.FileDiff
	Rows []changeRow
}

// changeRow is one key's change, old → new, as the CLI's diff lists it
// (arrays aligned element by element, moves paired).
type changeRow struct {
	Kind     string
	Path     string
	From     string
	Old, New string
	HasOld   bool
	HasNew   bool
	Text     bool // a long or multi-line string: shown as blocks
	// Diff is a Text change as spans: what stayed, what went, what came.
	Diff []diffSpan
}

func changeRows(f store.FileDiff) []changeRow {
	out := make([]changeRow, 0, len(f.Changes))
	for _, c := range f.Changes {
		row := changeRow{Kind: string(c.Kind), Path: c.Path.String(), HasOld: c.Kind != jsondiff.Added, HasNew: c.Kind != jsondiff.Removed}
		if row.Path == "" {
			row.Path = "(document)"
		}
		if c.Kind == jsondiff.Moved {
			row.From = c.From.String()
		}
		if row.HasOld {
			row.Old = compactJSON(c.Old)
		}
		if row.HasNew {
			row.New = compactJSON(c.New)
		}
		os, ok1 := c.Old.(string)
		ns, ok2 := c.New.(string)
		row.Text = c.Kind == jsondiff.Changed && ok1 && ok2 && (len(os)+len(ns) > 120 || strings.ContainsAny(os+ns, "\n"))
		if row.Text {
			row.Old, row.New = os, ns
			row.Diff = textDiff(os, ns)
		}
		out = append(out, row)
	}
	return out
}

func withRows(fs []store.FileDiff) []fileChanges {
	out := make([]fileChanges, len(fs))
	for i, f := range fs {
		out[i] = fileChanges{FileDiff: f, Rows: changeRows(f)}
	}
	return out
}

type mutationData struct {
	M        *store.Mutation
	Files    []fileChanges
	Back     string
	SigError string
	// A commit of many files shows filesPerPage of them a page: From is
	// the first shown (0-based), Total all of them, Prev and Next the
	// links to the pages beside ("" at either end).
	From, Total int
	Prev, Next  string
}

// filesPerPage bounds the files a mutation page diffs, so an import of
// thousands of files is a few pages rather than one of megabytes.
const filesPerPage = 100

func (a *app) mutation(r *http.Request) (string, *view, error) {
	ctx := r.Context()
	rev := r.PathValue("rev")
	branch := a.branchOf(r)
	m, err := a.st.Show(ctx, rev, store.ReadOptions{Branch: branch})
	if err != nil {
		return "", nil, err
	}
	d := &mutationData{M: m, Back: link("/history", "branch", branch, "at", r.URL.Query().Get("from"))}
	if sigs, err := a.st.Signatures(store.ReadOptions{Branch: branch}); err != nil {
		d.SigError = err.Error()
	} else if err := sigs.Mark(m); err != nil {
		d.SigError = err.Error()
	}
	diff, err := a.st.Diff(ctx, store.DiffOptions{From: m.Commit})
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		return "", nil, err
	}
	if diff != nil {
		from, _ := strconv.Atoi(r.URL.Query().Get("files"))
		if from < 0 || from >= len(diff.Files) {
			from = 0
		}
		to := min(from+filesPerPage, len(diff.Files))
		d.From, d.Total = from, len(diff.Files)
		d.Files = withRows(diff.Files[from:to])
		page := func(at int) string {
			return link("/mutation/"+m.Commit, "branch", r.URL.Query().Get("branch"), "from", r.URL.Query().Get("from"), "files", strconv.Itoa(at))
		}
		if from > 0 {
			d.Prev = page(max(0, from-filesPerPage))
		}
		if to < len(diff.Files) {
			d.Next = page(to)
		}
	}
	return "mutation", &view{Title: "Mutation " + shortHash(m.Commit), Nav: "history", Branch: branch, Data: d}, nil
}

// diffSpan is a run of a text change: Op is "same", "removed" or "added".
type diffSpan struct{ Op, Text string }

// textDiffLimit bounds the strings a text change is diffed for (larger
// ones are shown whole, old and new).
const textDiffLimit = 64 << 10

// textDiff is the change from old to new as runs, cleaned up to whole
// words and lines where it can (as the CLI shows a long string's change).
func textDiff(old, new string) []diffSpan {
	if len(old)+len(new) > textDiffLimit {
		return nil
	}
	dmp := diffmatchpatch.New()
	dmp.DiffTimeout = 100 * time.Millisecond
	var ds []diffmatchpatch.Diff
	if strings.Contains(old+new, "\n") {
		a, b, lines := dmp.DiffLinesToChars(old, new)
		ds = dmp.DiffCharsToLines(dmp.DiffMain(a, b, false), lines)
	} else {
		ds = dmp.DiffCleanupSemantic(dmp.DiffMain(old, new, false))
	}
	out := make([]diffSpan, 0, len(ds))
	for _, d := range ds {
		op := "same"
		switch d.Type {
		case diffmatchpatch.DiffDelete:
			op = "removed"
		case diffmatchpatch.DiffInsert:
			op = "added"
		}
		out = append(out, diffSpan{op, d.Text})
	}
	return out
}
