package ui

import (
	"context"
	"net/http"
	"sort"
	"strings"
	"time"

	"github.com/aiwg/aiwg-state/lease"
	"github.com/aiwg/aiwg-state/merge"
	"github.com/aiwg/aiwg-state/queue"
	"github.com/aiwg/aiwg-state/store"
)

// countLimit bounds an ahead or behind count: past it the page says
// "500+", so a branch forked long ago costs no more than a recent one.
const countLimit = 500

type branchRow struct {
	store.BranchInfo
	Agent         bool
	Main          string // the branch it is counted against
	Ahead, Behind int
	AheadMore     bool // Ahead reached countLimit
	BehindMore    bool
	Last          *store.Mutation
	Conflicts     []merge.ConflictEntry
}

type overviewData struct {
	Main      string
	Branches  []branchRow
	Agents    []branchRow
	Leases    []lease.Info
	Queues    []queue.Info
	Conflicts int
	Errors    []string
	// All: every branch is listed; otherwise Hidden were left out.
	All    bool
	Hidden int
}

// overviewLimit is how many branches of each group (branches, agent
// branches) the overview lists unless asked for all.
const overviewLimit = 50

func lastTime(r branchRow) time.Time {
	if r.Last == nil {
		return time.Time{}
	}
	return r.Last.Time
}

func (a *app) overview(r *http.Request) (string, *view, error) {
	ctx := r.Context()
	main := a.opts.Branch
	bs, err := a.st.Branches(ctx)
	if err != nil {
		return "", nil, err
	}
	d := &overviewData{Main: main, All: r.URL.Query().Get("branches") == "all"}
	for _, b := range bs {
		row := branchRow{BranchInfo: b, Main: main, Agent: strings.HasPrefix(b.Name, "agents/")}
		row.Last, _ = a.st.Show(ctx, b.Commit, store.ReadOptions{})
		if b.Merging {
			cs, err := a.st.Merges().Conflicts(ctx, store.ReadOptions{Branch: b.Name})
			if err != nil {
				d.Errors = append(d.Errors, "conflicts of "+b.Name+": "+err.Error())
			}
			row.Conflicts = cs
			d.Conflicts += len(cs)
		}
		if row.Agent {
			d.Agents = append(d.Agents, row)
		} else {
			d.Branches = append(d.Branches, row)
		}
	}
	// A swarm has many agent branches: the most recently written come
	// first, and unless all are asked for, the page counts and lists
	// only the first overviewLimit of each group.
	for _, rows := range []*[]branchRow{&d.Branches, &d.Agents} {
		sort.SliceStable(*rows, func(i, j int) bool { return lastTime((*rows)[i]).After(lastTime((*rows)[j])) })
		if !d.All && len(*rows) > overviewLimit {
			d.Hidden += len(*rows) - overviewLimit
			*rows = (*rows)[:overviewLimit]
		}
		for i := range *rows {
			row := &(*rows)[i]
			if row.Name != main && row.AliasOf == "" {
				row.Ahead, row.AheadMore = a.count(ctx, row.Commit, main)
				row.Behind, row.BehindMore = a.count(ctx, main, row.Commit)
			}
		}
	}
	ro := store.ReadOptions{Branch: main}
	if d.Leases, err = a.st.Leases().List(ctx, "", ro); err != nil {
		d.Errors = append(d.Errors, "leases: "+err.Error())
	}
	held := d.Leases[:0]
	for _, l := range d.Leases {
		if len(l.Locks) > len(l.Expired) || len(l.WaitQueue) > 0 {
			held = append(held, l)
		}
	}
	d.Leases = held
	if d.Queues, err = a.st.Queues().List(ctx, ro); err != nil {
		d.Errors = append(d.Errors, "queues: "+err.Error())
	}
	sort.Slice(d.Queues, func(i, j int) bool { return d.Queues[i].Name < d.Queues[j].Name })
	return "overview", &view{Title: "Overview", Nav: "overview", Data: d}, nil
}

// count is how many first-parent commits of at are not reachable from
// exclude (git rev-list --first-parent --count exclude..at), up to
// countLimit. The usual branch forked from a commit of at's first-parent
// line: the count is the walk down to it. Otherwise each commit is asked
// whether exclude reaches it.
func (a *app) count(ctx context.Context, at, exclude string) (int, bool) {
	bases, err := a.st.MergeBases(exclude, at, "")
	if err != nil {
		return 0, false
	}
	base := map[string]bool{}
	for _, b := range bases {
		base[b.String()] = true
	}
	n, found := 0, false
	err = a.st.Log(ctx, store.LogOptions{ReadOptions: store.ReadOptions{At: at}, Limit: countLimit + 1}, func(m *store.Mutation) bool {
		if base[m.Commit] {
			found = true
			return false
		}
		n++
		return true
	})
	if err == nil && !found {
		// At's first-parent line does not pass through the fork.
		n = 0
		err = a.st.Log(ctx, store.LogOptions{ReadOptions: store.ReadOptions{At: at}, Exclude: exclude, Limit: countLimit + 1}, func(*store.Mutation) bool {
			n++
			return true
		})
	}
	if err != nil {
		return 0, false
	}
	if n > countLimit {
		return countLimit, true
	}
	return n, false
}
