package merge

import (
	"context"
	"errors"
	"maps"
	"strings"
	"testing"

	"github.com/aiwg/aiwg-state/merge/jsonmerge"
	"github.com/aiwg/aiwg-state/store"
)

// FuzzStrategyLine: every line strategy set would write reads back, with
// git's rules, as exactly the rule it was asked for, and alone decides its
// pattern's paths.
func FuzzStrategyLine(f *testing.F) {
	f.Add("counters/*.json", "sum", "", "")
	f.Add("plan.json", "merge-objects", "notes:merge-arrays,seen:max", "last-write-wins")
	f.Add("state/**/*.json", "conflict", "EVENTS:merge-arrays", "")
	f.Add("a b", "max", "", "")
	f.Add("#x", "max", "k:max", "")
	f.Add("x.json", "max", "a=b:max", "sum")
	f.Fuzz(func(t *testing.T, pattern, strategy, keys, fallback string) {
		opts := jsonmerge.Options{Strategy: jsonmerge.Strategy(strategy), Fallback: jsonmerge.Strategy(fallback)}
		if keys != "" {
			opts.Keys = map[string]jsonmerge.Strategy{}
			for _, item := range strings.Split(keys, ",") {
				k, st, _ := strings.Cut(item, ":")
				opts.Keys[k] = jsonmerge.Strategy(st)
			}
		}
		line, err := strategyLine(pattern, opts)
		if err != nil {
			return
		}
		if strings.ContainsAny(line, "\n\r") {
			t.Fatalf("line %q spans lines", line)
		}
		attrs, err := jsonmerge.ParseAttributes([]byte("*.json merge=aiwg-last-write-wins aiwg-keys=x:max aiwg-fallback=max\n" + line + "\n"))
		if err != nil {
			t.Fatalf("%q does not read back: %v", line, err)
		}
		rules := attrs.Rules()
		if len(rules) != 2 {
			t.Fatalf("%q reads as %d rules", line, len(rules)-1)
		}
		r := rules[1]
		if r.Pattern != pattern || r.Strategy != opts.Strategy || r.Fallback != opts.Fallback || !r.SetsKeys || !r.SetsFallback || !maps.Equal(r.Keys, opts.Keys) && len(opts.Keys)+len(r.Keys) > 0 {
			t.Fatalf("%q reads back as %+v, asked for %q %+v", line, r, pattern, opts)
		}
		if linePattern(line) != pattern {
			t.Fatalf("linePattern(%q) = %q", line, linePattern(line))
		}
	})
}

func TestSetStrategyRefusesAndReplaces(t *testing.T) {
	ctx := context.Background()
	s, err := store.Init(ctx, t.TempDir(), store.InitOptions{Options: store.Options{NoSync: true}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	wo := store.WriteOptions{Agent: "coord"}
	for _, bad := range []jsonmerge.Options{{Strategy: "nope"}, {Strategy: jsonmerge.Max, Fallback: "nope"}, {Strategy: jsonmerge.Max, Keys: map[string]jsonmerge.Strategy{"a": "nope"}}} {
		if _, err := New(s).SetStrategy(ctx, "a.json", bad, wo); !errors.Is(err, jsonmerge.ErrUnknownStrategy) {
			t.Errorf("%+v: %v, want ErrUnknownStrategy", bad, err)
		}
	}
	for _, pat := range []string{"", "a b.json", "#a", "!a", `"a"`} {
		if _, err := New(s).SetStrategy(ctx, pat, jsonmerge.Options{Strategy: jsonmerge.Max}, wo); err == nil {
			t.Errorf("pattern %q taken", pat)
		}
	}
	if _, err := New(s).SetStrategy(ctx, "*.json", jsonmerge.Options{Strategy: jsonmerge.LastWriteWins}, wo); err != nil {
		t.Fatal(err)
	}
	rules, err := New(s).Strategies(ctx, store.ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if rules[0].Pattern != "*.json" || rules[0].Strategy != jsonmerge.LastWriteWins || rules[0].Keys != nil {
		t.Fatalf("the *.json line was not replaced where it stood: %+v", rules[0])
	}
	e, err := New(s).ExplainStrategy(ctx, "global/variables/x.json", "value", store.ReadOptions{})
	if err != nil || e.Strategy != jsonmerge.LastWriteWins || e.StrategyRule == nil || e.StrategyRule.Pattern != "**/variables/*.json" {
		t.Fatalf("explain: %+v, %v", e, err)
	}
	if _, err := New(s).SetStrategy(ctx, "*.json", jsonmerge.Options{Strategy: jsonmerge.LastWriteWins}, wo); !errors.Is(err, store.ErrNoChange) {
		t.Fatalf("setting the same rule again: %v, want store.ErrNoChange", err)
	}
}

// TestStoreAgentIsJudgedAndAuthored: a write that names no agent is
// authored by the store's agent, and the policy judges that same agent;
// strategies are a path like any other, which a worker the policy keeps to
// its own files cannot change.
func TestStoreAgentIsJudgedAndAuthored(t *testing.T) {
	t.Setenv("AIWG_AGENT", "")
	t.Setenv("USER", "someone-else")
	ctx := context.Background()
	s, err := store.Init(ctx, t.TempDir(), store.InitOptions{Options: store.Options{NoSync: true}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	policy := `{"roles": {"coordinator": ["conductor"]}, "rules": [
	  {"name": "coordinator writes all", "roles": ["coordinator"], "paths": ["**"]},
	  {"name": "own files", "agents": ["*"], "paths": ["agents/{agent}/**"]}]}`
	if _, err := s.SetPolicy(ctx, []byte(policy), store.WriteOptions{Agent: "conductor"}); err != nil {
		t.Fatal(err)
	}
	if err := s.SetDefaultAgent(ctx, "scout"); err != nil {
		t.Fatal(err)
	}
	m, err := s.Set(ctx, "agents/scout/notes.json", "n", []byte("1"), store.WriteOptions{})
	if err != nil {
		t.Fatalf("the store's agent writing its own file: %v", err)
	}
	if m.Agent != "scout" {
		t.Fatalf("authored by %q", m.Agent)
	}
	if _, err := s.Set(ctx, "agents/someone-else/notes.json", "n", []byte("1"), store.WriteOptions{}); !errors.Is(err, store.ErrDenied) {
		t.Fatalf("judged as another agent than the author: %v", err)
	}
	head, _ := s.Resolve("HEAD", "")
	if _, err := New(s).SetStrategy(ctx, "*.json", jsonmerge.Options{Strategy: jsonmerge.LastWriteWins}, store.WriteOptions{}); !errors.Is(err, store.ErrDenied) {
		t.Fatalf("a worker set a strategy: %v", err)
	}
	if now, _ := s.Resolve("HEAD", ""); now != head {
		t.Fatal("a refused strategy set moved the branch")
	}
	if _, err := New(s).SetStrategy(ctx, "*.json", jsonmerge.Options{Strategy: jsonmerge.LastWriteWins}, store.WriteOptions{Agent: "conductor"}); err != nil {
		t.Fatalf("the coordinator: %v", err)
	}
}
