// Package review is the report of a branch before it is merged: the
// mutations it brings (who, when, with which trailers), the net key-level
// change since it forked, what a merge would do key by key (which
// strategy settles each key both sides changed, which conflict), and the
// verdicts of the access policy and of the documents' schemas. The CLI's
// review command prints it; a bot or a Go program gets the same Report.
//
// A review reads and never writes: the merge is a dry run.
package review

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"

	aiwgstate "github.com/aiwg/aiwg-state"
	"github.com/aiwg/aiwg-state/docschema"
	"github.com/aiwg/aiwg-state/hooks"
	"github.com/aiwg/aiwg-state/merge"
	"github.com/aiwg/aiwg-state/objects/jsondiff"
	"github.com/aiwg/aiwg-state/store"
)

// DefaultLimit is how many mutations a report lists unless told.
const DefaultLimit = 200

// Options tune a review.
type Options struct {
	// Branch is where revisions relative to HEAD are taken ("" = the
	// store's default branch).
	Branch string
	// PolicyFrom is the revision whose policy, limits and schemas are in
	// force; default Base: a branch must not be judged by the rules it
	// brings itself.
	PolicyFrom string
	// Limit caps the mutations listed (0 = DefaultLimit); the report says
	// when it cut the list.
	Limit int
}

// Report is the review of Head for merging into Base.
type Report struct {
	Base       string `json:"base"`
	Head       string `json:"head"`
	BaseCommit string `json:"base_commit"`
	HeadCommit string `json:"head_commit"`
	// MergeBase is where Head forked from Base: the newest merge base,
	// when a criss-cross history has several (MergeBases lists them).
	MergeBase  string   `json:"merge_base"`
	MergeBases []string `json:"merge_bases,omitempty"`
	// OK is true when a merge would settle cleanly and both verdicts
	// pass.
	OK bool `json:"ok"`
	// Mutations are the commits Head has that Base has not (git log
	// Base..Head, every parent), newest first.
	Mutations          []*store.Mutation `json:"mutations"`
	MutationsTruncated bool              `json:"mutations_truncated,omitempty"`
	// Agents are the agents who wrote them, sorted.
	Agents []string `json:"agents"`
	// Changes are what Head changed since the merge base, key by key.
	Changes []store.FileDiff `json:"changes"`
	Merge   MergePreview     `json:"merge"`
	Policy  PolicyVerdict    `json:"policy"`
	Schemas SchemaVerdict    `json:"schemas"`
}

// Outcomes of a key in a merge preview.
const (
	// Taken: only Head changed it; the merge takes Head's change.
	Taken = "taken"
	// Settled: both sides changed it; the strategy settles it.
	Settled = "settled"
	// Conflict: both sides changed it and the strategy cannot settle it.
	Conflict = "conflict"
)

// MergePreview is what merging Head into Base would do, from a dry run.
type MergePreview struct {
	// Status is merge.MergeResult's (up-to-date, fast-forward, merged,
	// conflicts); "" when the dry run could not run, and Error says why.
	Status string `json:"status,omitempty"`
	Error  string `json:"error,omitempty"`
	// Keys are the keys Head changed, each with the strategy that rules
	// it in Base's .gitattributes and the outcome.
	Keys      []MergeKey            `json:"keys"`
	Conflicts []merge.ConflictEntry `json:"conflicts"`
}

// MergeKey is one key (or a whole file, Key "") Head changed.
type MergeKey struct {
	File string `json:"file"`
	Key  string `json:"key"`
	// Strategy rules the key in Base ("" for a file that is not JSON).
	Strategy string `json:"strategy,omitempty"`
	// Outcome is Taken, Settled or Conflict.
	Outcome string `json:"outcome"`
}

// PolicyVerdict is the access policy's verdict on every commit a merge
// would bring, as the server's hook gives it (policy check Base..Head).
type PolicyVerdict struct {
	OK         bool              `json:"ok"`
	Violations []hooks.Violation `json:"violations"`
	// Error is set when the check could not run.
	Error string `json:"error,omitempty"`
}

// SchemaVerdict lists the documents Head changed that break their schema
// at Head.
type SchemaVerdict struct {
	OK         bool                  `json:"ok"`
	Violations []docschema.Violation `json:"violations"`
	Error      string                `json:"error,omitempty"`
}

// Branch reviews head for merging into base. base is best a branch: the
// merge preview merges into it (as a dry run) and is left out, with its
// Error said, when it is not one. Errors are those of reading the two
// revisions and their history; each verdict that cannot be reached says
// so in its Error instead.
func Branch(ctx context.Context, st *aiwgstate.Store, base, head string, opts Options) (*Report, error) {
	if base == "" || head == "" {
		return nil, fmt.Errorf("%w: a review needs a base and a head", store.ErrUsage)
	}
	if opts.Limit < 0 {
		return nil, fmt.Errorf("%w: a limit of %d mutations", store.ErrUsage, opts.Limit)
	}
	limit := opts.Limit
	if limit == 0 {
		limit = DefaultLimit
	}
	bc, err := st.Resolve(base, opts.Branch)
	if err != nil {
		return nil, err
	}
	hc, err := st.Resolve(head, opts.Branch)
	if err != nil {
		return nil, err
	}
	r := &Report{Base: base, Head: head, BaseCommit: bc.String(), HeadCommit: hc.String(),
		Mutations: []*store.Mutation{}, Agents: []string{}, Changes: []store.FileDiff{}}
	d, err := st.Diff(ctx, store.DiffOptions{From: r.BaseCommit, To: r.HeadCommit, MergeBase: true})
	if err != nil {
		return nil, err
	}
	r.MergeBase, r.Changes = d.From, nonNil(d.Files)
	if len(d.MergeBases) > 1 {
		r.MergeBases = d.MergeBases
	}
	agents := map[string]bool{}
	err = st.Log(ctx, store.LogOptions{ReadOptions: store.ReadOptions{At: r.HeadCommit}, Exclude: r.BaseCommit, AllParents: true}, func(m *store.Mutation) bool {
		if len(r.Mutations) == limit {
			r.MutationsTruncated = true
			return false
		}
		r.Mutations = append(r.Mutations, m)
		agents[m.Agent] = true
		return true
	})
	if err != nil {
		return nil, err
	}
	for a := range agents {
		r.Agents = append(r.Agents, a)
	}
	sort.Strings(r.Agents)
	r.Merge = preview(ctx, st, r, base, opts)
	r.Policy = policy(ctx, st, r, opts)
	r.Schemas = schemas(ctx, st, r)
	r.OK = r.Merge.Error == "" && len(r.Merge.Conflicts) == 0 && r.Policy.OK && r.Schemas.OK
	return r, nil
}

// preview runs the merge as a dry run and says, for each key Head
// changed, which strategy rules it and what becomes of it.
func preview(ctx context.Context, st *aiwgstate.Store, r *Report, base string, opts Options) MergePreview {
	p := MergePreview{Keys: []MergeKey{}, Conflicts: []merge.ConflictEntry{}}
	res, err := st.Merges().Merge(ctx, r.HeadCommit, merge.MergeOptions{Into: base, DryRun: true, Write: store.WriteOptions{Agent: "review"}})
	if err != nil && !errors.Is(err, store.ErrConflict) || res == nil {
		if err == nil {
			err = errors.New("no result")
		}
		p.Error = "the merge was not tried: " + err.Error()
		return p
	}
	p.Status = res.Status
	if res.Conflicts != nil {
		p.Conflicts = res.Conflicts
	}
	conflicted := map[string]bool{}
	for _, c := range p.Conflicts {
		conflicted[c.File+"#"+c.Key] = true
		conflicted[c.File+"#*"] = conflicted[c.File+"#*"] || c.Key == ""
	}
	// What Base's side changed since the fork: a key both sides changed
	// is settled by its strategy, unless it conflicts.
	ours, err := st.Diff(ctx, store.DiffOptions{From: r.MergeBase, To: r.BaseCommit})
	if err != nil {
		p.Error = "Base's side could not be read: " + err.Error()
		return p
	}
	oursChanged := map[string][]string{} // file -> key paths
	for _, f := range ours.Files {
		if f.Status == "binary" || f.Status == "renamed" || len(f.Changes) == 0 {
			oursChanged[f.File] = append(oursChanged[f.File], "")
		}
		for _, c := range f.Changes {
			oursChanged[f.File] = append(oursChanged[f.File], c.Path.String())
		}
	}
	baseRead := store.ReadOptions{At: r.BaseCommit}
	for _, f := range r.Changes {
		changes := f.Changes
		if f.Status == "binary" || f.Status == "renamed" || len(changes) == 0 {
			changes = []jsondiff.Change{{}}
		}
		for _, c := range changes {
			k := MergeKey{File: f.File, Key: c.Path.String(), Outcome: Taken}
			if f.Status != "binary" {
				if e, err := st.Merges().ExplainStrategy(ctx, f.File, k.Key, baseRead); err == nil {
					k.Strategy = string(e.Strategy)
				}
			}
			switch {
			case conflicted[f.File+"#"+k.Key] || conflicted[f.File+"#*"]:
				k.Outcome = Conflict
			case overlaps(oursChanged[f.File], k.Key, oursChanged[f.File] != nil):
				k.Outcome = Settled
				for _, c := range p.Conflicts {
					if c.File == f.File && overlaps([]string{c.Key}, k.Key, true) {
						k.Outcome = Conflict
					}
				}
			}
			p.Keys = append(p.Keys, k)
		}
	}
	return p
}

// overlaps reports whether key is, contains or lies within one of keys
// ("" is the whole document).
func overlaps(keys []string, key string, any bool) bool {
	if !any {
		return false
	}
	for _, k := range keys {
		if k == "" || key == "" || k == key || strings.HasPrefix(key, k+".") || strings.HasPrefix(k, key+".") {
			return true
		}
	}
	return false
}

// policy checks every commit a merge would bring as the server's hook
// would, under the policy of opts.PolicyFrom (default Base).
func policy(ctx context.Context, st *aiwgstate.Store, r *Report, opts Options) PolicyVerdict {
	v := PolicyVerdict{Violations: []hooks.Violation{}}
	from := opts.PolicyFrom
	if from == "" {
		from = r.BaseCommit
	}
	err := hooks.CheckRevs(ctx, st.Dir(), []string{r.BaseCommit + ".." + r.HeadCommit}, hooks.Options{PolicyFrom: from, Validate: aiwgstate.ValidateKnownFile, Schemas: docschema.PushCheck})
	var re *hooks.RefusedError
	switch {
	case errors.As(err, &re):
		v.Violations = re.Violations
	case err != nil:
		v.Error = err.Error()
	default:
		v.OK = true
	}
	return v
}

// schemas lists the documents Head changed that break their schema at
// Head.
func schemas(ctx context.Context, st *aiwgstate.Store, r *Report) SchemaVerdict {
	v := SchemaVerdict{Violations: []docschema.Violation{}}
	bad, err := st.Schemas().Check(ctx, store.ReadOptions{At: r.HeadCommit})
	if err != nil {
		v.Error = err.Error()
		return v
	}
	changed := map[string]bool{}
	for _, f := range r.Changes {
		changed[f.File] = true
	}
	for _, b := range bad {
		if changed[b.File] {
			v.Violations = append(v.Violations, b)
		}
	}
	v.OK = len(v.Violations) == 0
	return v
}

func nonNil[T any](v []T) []T {
	if v == nil {
		return []T{}
	}
	return v
}
