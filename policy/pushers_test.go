package policy

import (
	"errors"
	"testing"
)

const withPushers = `{
  "roles": {"workers": ["alice", "bob"], "lease_admin": ["conductor"]},
  "pushers": {
    "alice-key": {"agents": ["alice"]},
    "ci": {"agents": ["conductor"], "roles": ["integrator", "lease_admin"]},
    "fleet": {"agents": ["worker-*"]}
  },
  "rules": [{"roles": ["workers"], "paths": ["agents/{agent}/**"]}]
}`

func TestPushers(t *testing.T) {
	p, err := Parse([]byte(withPushers))
	if err != nil {
		t.Fatal(err)
	}
	if !p.HasPushers() || !p.PusherRequired() {
		t.Fatal("a policy with pushers requires one by default")
	}
	alice, ok := p.Pusher("alice-key")
	if !ok || !alice.ActsAs("alice") || alice.ActsAs("bob") || alice.Holds(RoleIntegrator) {
		t.Fatalf("alice-key: %+v", alice)
	}
	ci, _ := p.Pusher("ci")
	if !ci.ActsAs("conductor") || !ci.Holds(RoleIntegrator) || !ci.Holds(RoleLeaseAdmin) {
		t.Fatalf("ci: %+v", ci)
	}
	fleet, _ := p.Pusher("fleet")
	if !fleet.ActsAs("worker-7") || fleet.ActsAs("alice") {
		t.Fatalf("fleet: %+v", fleet)
	}
	if _, ok := p.Pusher("mallory"); ok {
		t.Fatal("an unnamed pusher was found")
	}
	if !p.InRole("conductor", RoleLeaseAdmin) || p.InRole("alice", RoleLeaseAdmin) {
		t.Fatal("InRole")
	}
	var none *Policy
	if none.HasPushers() || none.PusherRequired() || none.InRole("a", RoleLeaseAdmin) {
		t.Fatal("no policy names no pushers and grants no roles")
	}
	open, err := Parse([]byte(`{"pushers": {"a": {"agents": ["a"]}}, "require_pusher": false, "rules": []}`))
	if err != nil || open.PusherRequired() {
		t.Fatalf("require_pusher false: %v, %v", open, err)
	}
}

func TestPushersInvalid(t *testing.T) {
	for name, doc := range map[string]string{
		"unknown field":         `{"pushers": {"a": {"agents": ["a"], "agent": "b"}}, "rules": []}`,
		"empty name":            `{"pushers": {"": {"agents": ["a"]}}, "rules": []}`,
		"control character":     `{"pushers": {"a\n": {"agents": ["a"]}}, "rules": []}`,
		"nothing granted":       `{"pushers": {"a": {}}, "rules": []}`,
		"bad agent pattern":     `{"pushers": {"a": {"agents": ["["]}}, "rules": []}`,
		"empty agent":           `{"pushers": {"a": {"agents": [""]}}, "rules": []}`,
		"agent role for pusher": `{"roles": {"workers": ["a"]}, "pushers": {"a": {"roles": ["workers"]}}, "rules": []}`,
		"unknown role":          `{"pushers": {"a": {"roles": ["admin"]}}, "rules": []}`,
		"require without any":   `{"require_pusher": true, "rules": []}`,
		"require is not a bool": `{"pushers": {"a": {"agents": ["a"]}}, "require_pusher": "yes", "rules": []}`,
		"pushers is not a map":  `{"pushers": ["a"], "rules": []}`,
		"agents is not a list":  `{"pushers": {"a": {"agents": "a"}}, "rules": []}`,
	} {
		if _, err := Parse([]byte(doc)); !errors.Is(err, ErrInvalid) {
			t.Errorf("%s: Parse = %v, want ErrInvalid", name, err)
		}
	}
}
