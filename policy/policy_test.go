package policy

import (
	"errors"
	"testing"
)

// swarmPolicy is the swarm shared state specification's permission matrix as a policy: the conductor writes
// everything, the guardian global health, each worker only its own sessions,
// everyone only their own locks.
const swarmPolicy = `{
  "roles": {
    "coordinator": ["conductor"],
    "workers": ["pulse", "heartbeat", "dream_weaver"]
  },
  "rules": [
    {"name": "coordinator writes all", "roles": ["coordinator"], "paths": ["**"]},
    {"name": "settings are the coordinator's", "agents": ["*"], "paths": [".aiwg/**", ".gitattributes"], "effect": "deny"},
    {"name": "guardian writes health", "agents": ["guardian"], "paths": ["global/health/**"]},
    {"name": "only own sessions", "roles": ["workers"], "paths": ["agents/{agent}/sessions/**"]},
    {"name": "only own locks", "agents": ["*"], "paths": ["locks/{agent}/**"]}
  ]
}`

func TestSeed003Matrix(t *testing.T) {
	p, err := Parse([]byte(swarmPolicy))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		agent, path string
		allowed     bool
		rule        string
	}{
		{"conductor", "global/config/settings.json", true, "rule 1 (coordinator writes all)"},
		{"conductor", ".aiwg/policy.json", true, "rule 1 (coordinator writes all)"},
		{"conductor", "agents/pulse/sessions/s1.json", true, "rule 1 (coordinator writes all)"},
		{"pulse", "global/config/settings.json", false, "default deny"},
		{"pulse", ".aiwg/policy.json", false, "rule 2 (settings are the coordinator's)"},
		{"pulse", ".gitattributes", false, "rule 2 (settings are the coordinator's)"},
		{"guardian", "global/health/status.json", true, "rule 3 (guardian writes health)"},
		{"guardian", "global/tasks/t.json", false, "default deny"},
		{"pulse", "agents/pulse/sessions/s1.json", true, "rule 4 (only own sessions)"},
		{"pulse", "agents/heartbeat/sessions/s1.json", false, "default deny"},
		{"heartbeat", "agents/heartbeat/sessions/a/b.json", true, "rule 4 (only own sessions)"},
		{"guardian", "agents/guardian/sessions/s.json", false, "default deny"}, // not a worker
		{"pulse", "locks/pulse/l1.json", true, "rule 5 (only own locks)"},
		{"guardian", "locks/guardian/l1.json", true, "rule 5 (only own locks)"},
		{"pulse", "locks/heartbeat/l1.json", false, "default deny"},
		// An id with glob characters must match only itself.
		{"*", "locks/pulse/l1.json", false, "default deny"},
		{"*", "locks/*/l1.json", true, "rule 5 (only own locks)"},
		// An id with a slash never stands for a path segment.
		{"pulse/x", "locks/pulse/x/l.json", false, "default deny"},
		{"..", "locks/../x.json", false, "default deny"},
	}
	for _, tt := range tests {
		d := p.Decide(tt.agent, tt.path)
		if d.Allowed != tt.allowed || d.Rule != tt.rule {
			t.Errorf("Decide(%q, %q) = %+v, want allowed=%v by %q", tt.agent, tt.path, d, tt.allowed, tt.rule)
		}
		err := p.Check(tt.agent, tt.path)
		if tt.allowed != (err == nil) {
			t.Errorf("Check(%q, %q) = %v", tt.agent, tt.path, err)
		}
		var den *Denial
		if err != nil && (!errors.Is(err, ErrDenied) || !errors.As(err, &den) || den.Agent != tt.agent || den.Path != tt.path) {
			t.Errorf("Check(%q, %q) error %v does not name agent and path", tt.agent, tt.path, err)
		}
	}
}

func TestFirstMatchWinsAndDefault(t *testing.T) {
	p, err := Parse([]byte(`{"default": "allow", "rules": [
		{"agents": ["bot-*"], "paths": ["secret/**"], "effect": "deny"},
		{"agents": ["bot-7"], "paths": ["secret/**"]}
	]}`))
	if err != nil {
		t.Fatal(err)
	}
	if p.Decide("bot-7", "secret/a.json").Allowed {
		t.Error("a later allow overrode an earlier deny")
	}
	if !p.Decide("human", "secret/a.json").Allowed {
		t.Error("default allow did not apply")
	}
	var none *Policy
	if d := none.Decide("anyone", "x.json"); !d.Allowed || d.Rule != "no policy" {
		t.Errorf("nil policy: %+v", d)
	}
}

func TestParseRefuses(t *testing.T) {
	for name, doc := range map[string]string{
		"unknown field":    `{"rules": [{"agents": ["a"], "paths": ["x"], "efect": "deny"}]}`,
		"bad effect":       `{"rules": [{"agents": ["a"], "paths": ["x"], "effect": "maybe"}]}`,
		"bad default":      `{"default": "sometimes", "rules": []}`,
		"no paths":         `{"rules": [{"agents": ["a"]}]}`,
		"no subjects":      `{"rules": [{"paths": ["x"]}]}`,
		"unknown role":     `{"rules": [{"roles": ["ghosts"], "paths": ["x"]}]}`,
		"bad path pattern": `{"rules": [{"agents": ["a"], "paths": ["x["]}]}`,
		"bad agent glob":   `{"rules": [{"agents": ["a["], "paths": ["x"]}]}`,
		"not JSON":         `{"rules": [`,
		"trailing data":    `{"rules": []} {}`,
	} {
		if _, err := Parse([]byte(doc)); !errors.Is(err, ErrInvalid) {
			t.Errorf("%s: Parse = %v, want ErrInvalid", name, err)
		}
	}
}

// FuzzParse: any input either parses into a policy whose decisions never
// panic, or fails with ErrInvalid.
func FuzzParse(f *testing.F) {
	f.Add([]byte(swarmPolicy), "pulse", "agents/pulse/sessions/s.json")
	f.Add([]byte(`{"default":"allow","rules":[]}`), "a", "x.json")
	f.Add([]byte(`{"rules":[{"agents":["*"],"paths":["{agent}/{agent}/**"]}]}`), "a[b", "a[b/a[b/c")
	f.Fuzz(func(t *testing.T, data []byte, agent, file string) {
		p, err := Parse(data)
		if err != nil {
			if !errors.Is(err, ErrInvalid) {
				t.Fatalf("error %v is not ErrInvalid", err)
			}
			return
		}
		d := p.Decide(agent, file)
		if d.Rule == "" {
			t.Fatal("decision names no rule")
		}
		if (p.Check(agent, file) == nil) != d.Allowed {
			t.Fatal("Check and Decide disagree")
		}
		if pu, ok := p.Pusher(file); ok && !p.HasPushers() {
			t.Fatalf("pusher %q of a policy without pushers: %+v", file, pu)
		} else if ok {
			pu.ActsAs(agent)
		}
		p.InRole(agent, RoleLeaseAdmin)
		if pr, by := p.ProfileOf(agent); pr != nil {
			if by == "" {
				t.Fatal("a profile given by no sandbox entry")
			}
			_ = pr.CheckRead(agent, file)
			pr.MayReadTable(file)
			pr.MayWriteTable(file)
			_ = pr.CheckCache(agent, int64(len(file)))
			_ = pr.CheckFrame(agent, int64(len(file)))
		}
		p.Explain(agent)
	})
}
