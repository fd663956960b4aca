package review_test

import (
	"bytes"
	"context"
	"encoding/json"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/aiwg/aiwg-state/hooks"
	"github.com/aiwg/aiwg-state/internal/storetest"
	"github.com/aiwg/aiwg-state/internal/testutil"
	"github.com/aiwg/aiwg-state/merge/jsonmerge"
	"github.com/aiwg/aiwg-state/review"
	"github.com/aiwg/aiwg-state/store"
)

// TestBranchReport: a branch with a change only it made, a counter both
// sides changed under last-write-wins, a key both changed under the
// default strategy, a report that is not JSON, a commit the policy on the
// base forbids and a document that breaks its schema. The report names
// each, and agrees with git on what the branch brings.
func TestBranchReport(t *testing.T) {
	ctx := context.Background()
	st := storetest.New(t)
	lead := store.WriteOptions{Agent: "lead"}
	must := func(_ any, err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(st.Set(ctx, "plan.json", "risk", []byte(`"low"`), lead))
	must(st.Set(ctx, "counters.json", "n", []byte(`1`), lead))
	must(st.Merges().SetStrategy(ctx, "counters.json", jsonmerge.Options{Strategy: jsonmerge.LastWriteWins}, lead))
	must(st.Schemas().Add(ctx, "agent", []string{"agents/*.json"}, []byte(`{"type":"object","required":["name"]}`), lead))
	must(st.CreateBranch(ctx, "feat", ""))
	critic := store.WriteOptions{Agent: "critic", Branch: "feat", Source: `<img src=x onerror=alert(1)>`, Message: "<script>alert(1)</script> | *bold*"}
	must(st.Set(ctx, "plan.json", "risk", []byte(`"high"`), critic))
	critic.Message = ""
	must(st.Set(ctx, "counters.json", "n", []byte(`5`), critic))
	must(st.Set(ctx, "notes.json", "a", []byte(`1`), critic))
	// A plain git commit on the branch: a report.
	g := testutil.Git{GitDir: st.Dir()}
	c := testutil.CommitFile(t, g, "feat", "report.md", "# Report\n", "report\n")
	storetest.Git(t, st, "update-ref", "refs/heads/feat", c)
	// Meanwhile on main.
	ops := store.WriteOptions{Agent: "ops"}
	must(st.Set(ctx, "plan.json", "risk", []byte(`"medium"`), ops))
	must(st.Set(ctx, "counters.json", "n", []byte(`3`), ops))

	refs := storetest.Git(t, st, "for-each-ref")
	r, err := review.Branch(ctx, st, "main", "feat", review.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if r.OK || !r.Policy.OK || !r.Schemas.OK {
		t.Errorf("report OK %v despite a conflict; policy %+v, schemas %+v", r.OK, r.Policy, r.Schemas)
	}
	if want := strings.TrimSpace(storetest.Git(t, st, "merge-base", "main", "feat")); r.MergeBase != want {
		t.Errorf("merge base %s, git %s", r.MergeBase, want)
	}
	var got []string
	for _, m := range r.Mutations {
		got = append(got, m.Commit)
	}
	if want := strings.Fields(storetest.Git(t, st, "rev-list", "main..feat")); !slices.Equal(got, want) {
		t.Errorf("mutations %v, git rev-list main..feat %v", got, want)
	}
	var files []string
	for _, f := range r.Changes {
		files = append(files, f.File)
	}
	if want := strings.Fields(storetest.Git(t, st, "diff", "--name-only", "main...feat")); !slices.Equal(files, want) {
		t.Errorf("changes %v, git diff main...feat %v", files, want)
	}
	outcome := map[string]string{}
	for _, k := range r.Merge.Keys {
		outcome[k.File+"#"+k.Key] = k.Outcome + " " + k.Strategy
	}
	for key, want := range map[string]string{
		"plan.json#risk":  "conflict merge-objects",
		"counters.json#n": "settled last-write-wins",
		"notes.json#":     "taken merge-objects",
		"report.md#":      "taken ",
	} {
		if outcome[key] != want {
			t.Errorf("merge key %s: %q, want %q (all: %v)", key, outcome[key], want, outcome)
		}
	}
	if r.Merge.Status != "conflicts" || len(r.Merge.Conflicts) != 1 {
		t.Errorf("merge %s, conflicts %+v", r.Merge.Status, r.Merge.Conflicts)
	}
	// Nothing was written: main and feat are where they were, no merge
	// in progress.
	if after := storetest.Git(t, st, "for-each-ref"); after != refs {
		t.Errorf("refs moved:\n%s\nto\n%s", refs, after)
	}
	storetest.Fsck(t, st)

	// Markdown: agent-written text shows literally.
	var md bytes.Buffer
	if err := r.WriteMarkdown(&md); err != nil {
		t.Fatal(err)
	}
	// Outside code spans, no markup an agent wrote survives.
	prose := regexp.MustCompile("`[^`]*`").ReplaceAllString(md.String(), "")
	for _, bad := range []string{"<script>", "<img", "| *bold*"} {
		if strings.Contains(prose, bad) {
			t.Errorf("markdown carries %q raw:\n%s", bad, md.String())
		}
	}
	for _, want := range []string{"**Needs attention:** 1 conflict(s).", "`report.md`", "_not JSON, added._", "**conflict**", "`last-write-wins`", "✅ Every commit passes", "`Source: <img src=x onerror=alert(1)>`", `\<script\>alert(1)\</script\> \| \*bold\*`} {
		if !strings.Contains(md.String(), want) {
			t.Errorf("markdown lacks %q:\n%s", want, md.String())
		}
	}
	// Then a document that breaks its schema, by plain git (the store's
	// own writes refuse it), and a policy on the base under which critic
	// writes only under agents/critic/: both verdicts fail, and the merge
	// says why it cannot be tried.
	c = testutil.CommitFile(t, g, "feat", "agents/x.json", "{}\n", "bad agent\n")
	// The branch also brings a policy that lets everyone write
	// anything: the base's policy judges it, not its own.
	c = testutil.CommitFile(t, g, c, ".aiwg/policy.json", `{"rules": [{"name": "all", "agents": ["*"], "paths": ["**"]}]}`+"\n", "open up\n")
	storetest.Git(t, st, "update-ref", "refs/heads/feat", c)
	must(st.SetPolicy(ctx, []byte(`{"rules": [{"name": "lead writes all", "agents": ["lead", "ops"], "paths": ["**"]}, {"name": "critic's own", "agents": ["critic"], "paths": ["agents/critic/**"]}]}`), lead))
	r, err = review.Branch(ctx, st, "main", "feat", review.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if r.OK || r.Policy.OK || !slices.ContainsFunc(r.Policy.Violations, func(v hooks.Violation) bool { return v.Agent == "critic" && v.Path == "plan.json" }) {
		t.Errorf("policy %+v", r.Policy)
	}
	if r.Schemas.OK || len(r.Schemas.Violations) != 1 || r.Schemas.Violations[0].File != "agents/x.json" {
		t.Errorf("schemas %+v", r.Schemas)
	}
	if !strings.Contains(r.Merge.Error, "policy") {
		t.Errorf("merge preview under a refusing policy: %+v", r.Merge)
	}
	md.Reset()
	if err := r.WriteMarkdown(&md); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"❌ A push of these commits would be refused", "❌ Documents that break their schema", "| `agents/x.json` |"} {
		if !strings.Contains(md.String(), want) {
			t.Errorf("markdown lacks %q:\n%s", want, md.String())
		}
	}
	// JSON round trip for bots.
	b, _ := json.Marshal(r)
	var back map[string]any
	if err := json.Unmarshal(b, &back); err != nil || back["ok"] != false || back["merge_base"] != r.MergeBase {
		t.Errorf("json: %v %s", err, b)
	}
}

// TestBranchNothingToReview: a head the base contains has no mutations,
// no changes, and nothing in the way.
func TestBranchNothingToReview(t *testing.T) {
	ctx := context.Background()
	st := storetest.New(t)
	if _, err := st.Set(ctx, "a.json", "x", []byte(`1`), store.WriteOptions{Agent: "a"}); err != nil {
		t.Fatal(err)
	}
	if _, err := st.CreateBranch(ctx, "old", "HEAD~1"); err != nil {
		t.Fatal(err)
	}
	r, err := review.Branch(ctx, st, "main", "old", review.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !r.OK || len(r.Mutations) != 0 || len(r.Changes) != 0 || r.Merge.Status != "up-to-date" {
		t.Errorf("report %+v", r)
	}
	if _, err := review.Branch(ctx, st, "main", "nosuch", review.Options{}); err == nil {
		t.Error("a missing head reviewed")
	}
}
