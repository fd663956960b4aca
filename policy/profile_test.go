package policy

import (
	"errors"
	"testing"
)

const sandboxPolicy = `{
  "default": "allow",
  "roles": {"workers": ["worker-*"]},
  "rules": [{"name": "no settings", "agents": ["*"], "paths": [".aiwg/policy.json"], "effect": "deny"}],
  "profiles": {
    "scraper": {
      "documents": {"read": ["public/**", "agents/{agent}/**"], "write": ["agents/{agent}/**"]},
      "memory": ["session"],
      "queues": ["alerts"],
      "tables": {"read": ["*"], "write": ["scraped_*"]},
      "cache": {"allowed": true, "max_bytes": 100},
      "frame": {"max_bytes": 1000}
    },
    "sealed": {"frame": {"allowed": false}}
  },
  "sandbox": [
    {"agents": ["scraper-*"], "profile": "scraper"},
    {"agents": ["sealed"], "profile": "sealed"},
    {"roles": ["workers"], "profile": "minimal"},
    {"agents": ["op"], "profile": "operator-controlled"},
    {"agents": ["cs"], "profile": "compute-and-store"},
    {"agents": ["net"], "profile": "network-restricted"}
  ]
}`

func mustParse(t *testing.T, doc string) *Policy {
	t.Helper()
	p, err := Parse([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestProfileNarrowsWrites(t *testing.T) {
	p := mustParse(t, sandboxPolicy)
	for _, c := range []struct {
		agent, file string
		ok          bool
		rule        string
	}{
		{"scraper-1", "agents/scraper-1/notes.json", true, ""},
		{"scraper-1", "agents/scraper-2/notes.json", false, "documents.write"},
		{"scraper-1", "public/index.json", false, "documents.write"},
		{"scraper-1", "memory/session/fact/a.json", true, ""},
		{"scraper-1", "memory/long_term/fact/a.json", false, "memory"},
		{"scraper-1", "queues/alerts/0001.json", true, ""},
		{"scraper-1", "queues/jobs/0001.json", false, "queues"},
		{"scraper-1", "tables/scraped_pages/1.json", true, ""},
		{"scraper-1", "tables/users/1.json", false, "tables.write"},
		{"scraper-1", ".aiwg/tables/users.json", false, "tables.write"},
		{"scraper-1", "events/x/1.json", false, "coordination"},
		{"scraper-1", "leases/r.json", false, "coordination"},
		{"scraper-1", ".aiwg/ttl/agents/scraper-1/notes.json", true, ""},
		{"scraper-1", ".aiwg/ttl/public/index.json", false, "documents.write"},
		{"worker-3", "agents/worker-3/x.json", false, "documents.write"},
		{"worker-3", "memory/session/fact/a.json", false, "memory"},
		{"op", "events/x/1.json", true, ""},
		{"op", "queues/jobs/1.json", true, ""},
		{"cs", "queues/jobs/1.json", false, "queues"},
		{"cs", "events/x/1.json", false, "coordination"},
		{"cs", "memory/any/fact/1.json", true, ""},
		{"net", "queues/jobs/1.json", true, ""},
		{"net", "leases/r.json", false, "coordination"},
		{"nobody", "anything.json", true, ""}, // no profile: the rules alone
	} {
		d := p.Decide(c.agent, c.file)
		if d.Allowed != c.ok {
			t.Errorf("%s %s: allowed %v (%s), want %v", c.agent, c.file, d.Allowed, d.Rule, c.ok)
			continue
		}
		if c.ok {
			continue
		}
		err := p.Check(c.agent, c.file)
		var pe *ProfileError
		if !errors.As(err, &pe) || !errors.Is(err, ErrDenied) || pe.Rule != c.rule {
			t.Errorf("%s %s: Check = %v, want a ProfileError of rule %s", c.agent, c.file, err, c.rule)
		}
	}
	// The rules still come first: a profile never widens them.
	if d := p.Decide("op", ".aiwg/policy.json"); d.Allowed || d.Profile != nil || d.Rule != "rule 1 (no settings)" {
		t.Errorf("op writes the policy: %+v", d)
	}
}

func TestProfileReadsAndTiers(t *testing.T) {
	p := mustParse(t, sandboxPolicy)
	pr, by := p.ProfileOf("scraper-9")
	if pr == nil || pr.Name() != "scraper" || by != "sandbox entry 1" {
		t.Fatalf("ProfileOf = %v %q", pr, by)
	}
	if err := pr.CheckRead("scraper-9", "public/a.json"); err != nil {
		t.Error(err)
	}
	if err := pr.CheckRead("scraper-9", "private/a.json"); err == nil {
		t.Error("read of private/ allowed")
	}
	if !pr.MayReadTable("users") || pr.MayWriteTable("users") || !pr.MayWriteTable("scraped_x") {
		t.Error("table rules")
	}
	if err := pr.CheckCache("scraper-9", 100); err != nil {
		t.Error(err)
	}
	var pe *ProfileError
	if err := pr.CheckCache("scraper-9", 101); !errors.As(err, &pe) || pe.Rule != "cache.max_bytes" {
		t.Errorf("cache over its bound: %v", err)
	}
	if err := pr.CheckFrame("scraper-9", 1001); !errors.As(err, &pe) || pe.Rule != "frame.max_bytes" {
		t.Errorf("frame over its bound: %v", err)
	}
	minimal, _ := p.ProfileOf("worker-1")
	if err := minimal.CheckCache("worker-1", 0); !errors.As(err, &pe) || pe.Rule != "cache.allowed" || pe.Profile != "minimal" {
		t.Errorf("minimal uses the cache: %v", err)
	}
	if err := minimal.CheckFrame("worker-1", 10); err != nil {
		t.Errorf("minimal has no frame: %v", err)
	}
	if minimal.MayReadTable("x") || minimal.MayUseMemory("session") || minimal.MayUseQueue("q") {
		t.Error("minimal reaches a tier it should not")
	}
	sealed, _ := p.ProfileOf("sealed")
	if err := sealed.CheckFrame("sealed", 1); !errors.As(err, &pe) || pe.Rule != "frame.allowed" {
		t.Errorf("sealed frame: %v", err)
	}
	var none *Profile
	if !none.MayReadTable("x") || !none.MayWriteTable("x") || none.CheckCache("a", 1<<40) != nil || none.CheckWrite("a", "x") != nil {
		t.Error("an agent without a profile is bounded by it")
	}
}

func TestProfileRefusesPlaceholderEscape(t *testing.T) {
	p := mustParse(t, sandboxPolicy)
	for _, agent := range []string{"scraper-..", "scraper-[b]"} {
		if d := p.Decide(agent, "agents/scraper-b/x.json"); d.Allowed {
			t.Errorf("%q writes another agent's subtree", agent)
		}
	}
	if d := p.Decide("scraper-*", "agents/scraper-b/x.json"); d.Allowed {
		t.Error("a glob agent id reaches another agent's subtree")
	}
}

func TestProfileParseErrors(t *testing.T) {
	for name, doc := range map[string]string{
		"unknown profile":   `{"rules": [], "sandbox": [{"agents": ["a"], "profile": "nope"}]}`,
		"no profile":        `{"rules": [], "sandbox": [{"agents": ["a"]}]}`,
		"no subject":        `{"rules": [], "sandbox": [{"profile": "minimal"}]}`,
		"unknown role":      `{"rules": [], "sandbox": [{"roles": ["r"], "profile": "minimal"}]}`,
		"misspelt field":    `{"rules": [], "profiles": {"p": {"documnets": {}}}}`,
		"bad pattern":       `{"rules": [], "profiles": {"p": {"documents": {"read": ["x["]}}}}`,
		"bad table pattern": `{"rules": [], "profiles": {"p": {"tables": {"read": ["["]}}}}`,
		"negative bound":    `{"rules": [], "profiles": {"p": {"cache": {"max_bytes": -1}}}}`,
	} {
		if _, err := Parse([]byte(doc)); !errors.Is(err, ErrInvalid) {
			t.Errorf("%s: Parse = %v, want ErrInvalid", name, err)
		}
	}
}

func TestExplain(t *testing.T) {
	p := mustParse(t, sandboxPolicy)
	e := p.Explain("worker-2")
	if e.Profile == nil || e.Profile.Name != "minimal" || !e.Profile.Preset || e.Profile.Cache.Allowed || !e.Profile.Frame.Allowed {
		t.Fatalf("explain worker-2: %+v", e.Profile)
	}
	if len(e.Roles) != 1 || e.Roles[0] != "workers" || len(e.Rules) != 1 {
		t.Errorf("roles %v rules %v", e.Roles, e.Rules)
	}
	if e := (*Policy)(nil).Explain("a"); !e.NoPolicy || e.Profile != nil {
		t.Errorf("no policy: %+v", e)
	}
}

// TestPresetsNeverWriteSettings: a preset's documents.write "**" leaves
// out the store's own settings, so that rules broad enough to let an agent
// write .aiwg/policy.json do not let a preset-sandboxed agent lift its
// sandbox; a declared profile that names them may.
func TestPresetsNeverWriteSettings(t *testing.T) {
	for _, name := range PresetNames {
		p, err := Parse([]byte(`{"default": "allow", "rules": [], "sandbox": [{"agents": ["a"], "profile": "` + name + `"}]}`))
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range []string{".aiwg/policy.json", ".aiwg/store.json", ".aiwg/zz/x.json", ".gitattributes"} {
			var pe *ProfileError
			if err := p.Check("a", f); !errors.As(err, &pe) || pe.Rule != "documents.write" {
				t.Errorf("%s writes %s: %v", name, f, err)
			}
		}
		if name != "minimal" {
			if err := p.Check("a", "plan.json"); err != nil {
				t.Errorf("%s: plan.json: %v", name, err)
			}
		}
	}
	p, err := Parse([]byte(`{"default": "allow", "rules": [], "profiles": {"ops": {"documents": {"write": ["**"]}}}, "sandbox": [{"agents": ["a"], "profile": "ops"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Check("a", ".aiwg/policy.json"); err != nil {
		t.Errorf("a declared profile naming **: %v", err)
	}
}
