package policy

import (
	"fmt"
	"path"
	"slices"
	"strings"
	"unicode"
)

// Roles with a meaning of their own. They are granted to agents in "roles"
// (the agent of a commit is its author), like any role, or to pushers in
// "pushers" (the identity the server authenticated), which hold no others.
const (
	// RoleIntegrator, a pusher's role, may bring other agents' work that
	// the server's default branch does not have yet onto a branch, and may
	// move any agent's branches (agents/<id>/*). It never may write new
	// commits under their names.
	RoleIntegrator = "integrator"
	// RoleLeaseAdmin may force-release other agents' leases and waits.
	RoleLeaseAdmin = "lease_admin"
)

// Pusher is what an authenticated identity of the server (an HTTP user, an
// SSH key's name) may do: act as the agents its patterns match, and hold
// roles.
type Pusher struct {
	Agents []string `json:"agents,omitempty"`
	Roles  []string `json:"roles,omitempty"`
}

func (p *Policy) compilePushers() error {
	if p.RequirePusher != nil && *p.RequirePusher && len(p.Pushers) == 0 {
		return fmt.Errorf("require_pusher is set, but no pushers are named")
	}
	for name, pu := range p.Pushers {
		if name == "" || strings.IndexFunc(name, unicode.IsControl) >= 0 {
			return fmt.Errorf("pusher %q: a pusher is a non-empty name without control characters", name)
		}
		if len(pu.Agents) == 0 && len(pu.Roles) == 0 {
			return fmt.Errorf("pusher %q: names no agents and no roles", name)
		}
		for _, a := range pu.Agents {
			if err := checkSubject(a); err != nil {
				return fmt.Errorf("pusher %q: %v", name, err)
			}
		}
		for _, r := range pu.Roles {
			// Other roles are given to agents (in "roles"), whose
			// rules judge paths: a pusher acts through its agents.
			if r != RoleIntegrator && r != RoleLeaseAdmin {
				return fmt.Errorf("pusher %q: role %q: a pusher may hold %q or %q", name, r, RoleIntegrator, RoleLeaseAdmin)
			}
		}
	}
	return nil
}

// HasPushers reports whether the policy maps pushers to agents: a server
// then checks that each pushed commit's author and committer are agents
// the authenticated pusher may act as. Nil-safe.
func (p *Policy) HasPushers() bool { return p != nil && len(p.Pushers) > 0 }

// PusherRequired reports whether a push whose pusher the server does not
// know (git daemon, a local path) is refused: by default, when the policy
// names pushers; "require_pusher": false lets such pushes through, checked
// as without pushers.
func (p *Policy) PusherRequired() bool {
	if !p.HasPushers() {
		return false
	}
	return p.RequirePusher == nil || *p.RequirePusher
}

// Pusher is the entry of an authenticated pusher; false when the policy
// does not name it.
func (p *Policy) Pusher(name string) (Pusher, bool) {
	if p == nil {
		return Pusher{}, false
	}
	pu, ok := p.Pushers[name]
	return pu, ok
}

// ActsAs reports whether the pusher may act as agent: write commits it
// authors or commits, and move its branches.
func (pu Pusher) ActsAs(agent string) bool {
	for _, a := range pu.Agents {
		if ok, _ := path.Match(a, agent); ok {
			return true
		}
	}
	return false
}

// Holds reports whether the pusher holds role.
func (pu Pusher) Holds(role string) bool { return slices.Contains(pu.Roles, role) }

// InRole reports whether the policy grants role to agent (by "roles").
// Nil-safe: no policy grants nothing.
func (p *Policy) InRole(agent, role string) bool {
	if p == nil {
		return false
	}
	for _, m := range p.Roles[role] {
		if ok, _ := path.Match(m, agent); ok {
			return true
		}
	}
	return false
}
