package hooks

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"time"

	"github.com/aiwg/aiwg-state/lease"
	"github.com/aiwg/aiwg-state/policy"
	"github.com/aiwg/aiwg-state/repo"
)

// Rules of identity, as named in refusals.
const (
	// RuleIdentity: the pusher may not act as the agent a commit names
	// (its author or its committer), or is not known to the policy.
	RuleIdentity = "identity"
	// RuleNamespace: agents/<id>/* is agent id's to create and move.
	RuleNamespace = "namespace"
	// RuleIntegrator: bringing other agents' work that the default branch
	// does not have yet onto a branch (a merge, a fast-forward) is for the
	// integrator role.
	RuleIntegrator = "integrator"
	// RuleLease: another agent's live lease or wait is removed, changed or
	// forged by someone who is neither its holder nor a lease_admin.
	RuleLease = "lease"
)

// PusherConfig is the server's git configuration key naming the
// environment variable that holds the pusher's name, for servers that set
// one of their own (an SSH forced command's "env AIWG_PUSHER=alice ...").
// Without it, the pusher is REMOTE_USER (git http-backend behind a web
// server's authentication), else GL_USER (gitolite).
const PusherConfig = "aiwg.pusherVariable"

// agentRefPrefix is where agents keep their branches (package remote's
// AgentBranchPrefix, as a ref).
const agentRefPrefix = "refs/heads/agents/"

// leaseDir holds the lease records (lease.Dir).
const leaseDir = "leases/"

// Pusher is the identity the server authenticated for this push, read
// from the environment git gives the hook: the variable the repository's
// aiwg.pusherVariable names, or REMOTE_USER, or GL_USER. It returns the
// name ("" when the server did not say) and the variable it came from.
// The variables are the server's: git daemon and git http-backend pass a
// client none it could choose.
func Pusher(ctx context.Context, gitDir string, getenv func(string) string) (name, from string, err error) {
	var out []byte
	if v, ok := repo.LocalConfig(gitDir, PusherConfig, os.Environ()); ok {
		out = []byte(v) // the config file settles it: no git process
	} else {
		out, err = exec.CommandContext(ctx, "git", "--git-dir", gitDir, "config", "--get", PusherConfig).Output()
	}
	var exit *exec.ExitError
	switch {
	case err == nil:
		v := strings.TrimSpace(string(out))
		if v == "" {
			return "", "", fmt.Errorf("%s is set but empty", PusherConfig)
		}
		// The administrator named the variable: no other is believed.
		return strings.TrimSpace(getenv(v)), v, nil
	case errors.As(err, &exit) && exit.ExitCode() == 1: // not set
	default:
		return "", "", fmt.Errorf("git config %s: %w", PusherConfig, err)
	}
	for _, v := range []string{"REMOTE_USER", "GL_USER"} {
		if name := strings.TrimSpace(getenv(v)); name != "" {
			return name, v, nil
		}
	}
	return "", "", nil
}

// identity is what the checker knows of who pushes.
type identity struct {
	pusher  string            // "" when the server did not say
	entry   *policy.Pusher    // the policy's entry for pusher; nil when not named or not checked
	def     string            // the default branch's value before the push ("" when unborn)
	now     time.Time         // when a lease counts as run out
	authors map[string]string // commit -> author name, read once
}

// loadIdentity resolves the pusher once the policy in force is known:
// opts.Pusher, or what the server says through opts.Getenv; neither (a
// local `policy check`) knows no pusher.
func (c *checker) loadIdentity(ctx context.Context, opts Options, from string) error {
	c.id = identity{now: time.Now()}
	if _, _, err := c.cat.read(from + "^{commit}"); err == nil {
		c.id.def = from
	}
	if !c.policy.HasPushers() {
		return nil
	}
	name := opts.Pusher
	if name == "" && opts.Getenv != nil {
		var err error
		if name, _, err = Pusher(ctx, c.gitDir, opts.Getenv); err != nil {
			return err
		}
	}
	c.id.pusher = name
	if pu, ok := c.policy.Pusher(name); ok {
		c.id.entry = &pu
	}
	return nil
}

// knownPusher refuses, for a local check, a pusher the policy does not
// name: its pushes would all be refused.
func (c *checker) knownPusher() error {
	if c.id.pusher != "" && c.policy.HasPushers() && c.id.entry == nil {
		return fmt.Errorf("%w: pusher %q is not one of the policy's pushers", ErrRefused, c.id.pusher)
	}
	return nil
}

// agentOfRef is the agent whose namespace ref is in ("" for other refs).
// A branch agents/<id> is id's too: git keeps no agents/<id>/* beside it,
// so whoever made it would lock id out of its namespace.
func agentOfRef(ref string) string {
	rest, ok := strings.CutPrefix(ref, agentRefPrefix)
	if !ok {
		return ""
	}
	agent, _, _ := strings.Cut(rest, "/")
	return agent
}

// checkPusher says why a ref update may not be made by this pusher at all
// ("" when it may): a policy that names pushers wants to know who pushes,
// and agents/<id>/* is moved by a pusher that may act as id (or an
// integrator). Without an authenticated pusher, the namespace is checked
// on the commits instead (checkOwnCommits).
func (c *checker) checkPusher(u Update) (rule, detail string) {
	p := c.policy
	if p == nil {
		return "", ""
	}
	if p.HasPushers() && c.id.pusher == "" {
		if p.PusherRequired() {
			return RuleIdentity, "the policy names pushers, and this server did not say who pushes: push through an authenticating server (HTTP authentication, SSH)"
		}
	} else if p.HasPushers() && c.id.entry == nil {
		return RuleIdentity, fmt.Sprintf("pusher %q is not one of the policy's pushers", c.id.pusher)
	}
	if u.Ref == strings.TrimSuffix(agentRefPrefix, "/") {
		// A branch named agents would keep every agent out of agents/*.
		return RuleNamespace, "agents/ holds the agents' branches: no branch is named agents"
	}
	agent := agentOfRef(u.Ref)
	if agent == "" || c.id.entry == nil {
		return "", ""
	}
	if !c.id.entry.ActsAs(agent) && !c.id.entry.Holds(policy.RoleIntegrator) {
		return RuleNamespace, fmt.Sprintf("agents/%s/* is agent %q's: pusher %q may not act as it", agent, agent, c.id.pusher)
	}
	return "", ""
}

// checkOwnCommits holds, when nobody authenticated the pusher, agent A's
// branches to A's commits: every commit a push brings to agents/A/* is
// authored by A. A branch may still be made to point at commits the
// server already took (agent start branches off main).
func (c *checker) checkOwnCommits(u Update, commits []string) error {
	agent := agentOfRef(u.Ref)
	if c.policy == nil || agent == "" || c.id.entry != nil {
		return nil
	}
	for _, h := range commits {
		author, err := c.author(h)
		if err != nil {
			return err
		}
		if author != repo.IdentityName(agent) {
			// The first is enough to act on: a long push of someone
			// else's commits should not print one line each.
			return c.add(Violation{Ref: u.Ref, Commit: h, Agent: author, Rule: RuleNamespace,
				Detail: fmt.Sprintf("agents/%s/* takes new commits by agent %q only", agent, agent)})
		}
	}
	return nil
}

// checkIdentity checks a new commit against the authenticated pusher: it
// may author and commit only as agents it may act as.
func (c *checker) checkIdentity(ref, h string, cm *repo.Commit) error {
	pu := c.id.entry
	if pu == nil {
		return nil
	}
	for _, who := range []struct{ role, name string }{{"author", cm.Author.Name}, {"committer", cm.Committer.Name}} {
		if pu.ActsAs(who.name) {
			continue
		}
		err := c.add(Violation{Ref: ref, Commit: h, Agent: cm.Author.Name, Rule: RuleIdentity,
			Detail: fmt.Sprintf("pusher %q may not act as agent %q (the commit's %s)", c.id.pusher, who.name, who.role)})
		if err != nil {
			return err
		}
	}
	return nil
}

// checkGained keeps a pusher that is no integrator from bringing other
// agents' work onto a branch: every commit the update adds to the branch
// that the default branch does not have must be authored by an agent the
// pusher may act as. Bringing the default branch into one's own (sync)
// adds nothing of that kind; merging, or fast-forwarding onto, another
// agent's branch does. Commits new to the server are held to this too, but
// checkIdentity already names them.
func (c *checker) checkGained(ctx context.Context, u Update) error {
	pu := c.id.entry
	if pu == nil || pu.Holds(policy.RoleIntegrator) || !strings.HasPrefix(u.Ref, "refs/heads/") || u.New.IsZero() {
		return nil
	}
	args := []string{u.New.String(), "--not"}
	if !u.Old.IsZero() {
		args = append(args, u.Old.String())
	}
	if c.id.def != "" {
		args = append(args, c.id.def)
	}
	gained, err := c.revList(ctx, args...)
	if err != nil {
		return err
	}
	for _, h := range gained {
		author, err := c.author(h)
		if err != nil {
			return err
		}
		if pu.ActsAs(author) {
			continue
		}
		return c.add(Violation{Ref: u.Ref, Commit: h, Agent: author, Rule: RuleIntegrator,
			Detail: fmt.Sprintf("the push brings agent %q's work, which the default branch does not have, onto %s: pusher %q is no %s",
				author, strings.TrimPrefix(u.Ref, "refs/heads/"), c.id.pusher, policy.RoleIntegrator)})
	}
	return nil
}

// author is a commit's author name, read once per check.
func (c *checker) author(h string) (string, error) {
	if a, ok := c.id.authors[h]; ok {
		return a, nil
	}
	cm, err := c.readCommit(h)
	if err != nil {
		return "", err
	}
	if c.id.authors == nil {
		c.id.authors = map[string]string{}
	}
	c.id.authors[h] = cm.Author.Name
	return cm.Author.Name, nil
}

// checkLeases keeps other agents' leases theirs in a pushed commit, as
// in-process writes do: a lease file the commit wrote must be a lease
// record, and must not remove, change or forge another agent's live lease
// or wait, unless the commit's agent (or the pusher) is a lease_admin.
func (c *checker) checkLeases(ref, h string, cm *repo.Commit, changes []change) error {
	if c.policy == nil {
		return nil
	}
	agent := cm.Author.Name
	admin := c.policy.InRole(agent, policy.RoleLeaseAdmin) || (c.id.entry != nil && c.id.entry.Holds(policy.RoleLeaseAdmin))
	var baseTrees []string // a merge's, read once
	var err error
	for _, ch := range changes {
		rest, ok := strings.CutPrefix(ch.path, leaseDir)
		if !ok || !strings.HasSuffix(rest, ".json") {
			continue
		}
		resource := strings.TrimSuffix(rest, ".json")
		v := Violation{Ref: ref, Commit: h, Agent: agent, Path: ch.path, Rule: RuleLease}
		var next *lease.Record
		if !ch.deleted() {
			_, body, err := c.cat.read(ch.entry.hash)
			if err != nil {
				return err
			}
			if next, err = lease.Decode(resource, body); err != nil {
				v.Detail = err.Error()
				if err := c.add(v); err != nil {
					return err
				}
				continue
			}
		}
		if admin {
			continue
		}
		before := make([]*lease.Record, len(cm.Parents))
		for i, ph := range cm.Parents {
			p, err := c.readCommit(ph.String())
			if err != nil {
				return err
			}
			if before[i], err = c.leaseRecord(p.Tree.String(), ch.path, resource); err != nil {
				return err
			}
		}
		// A merge's own write is judged as a three-way merge of the
		// record: against the merge bases too, so that a merge with an
		// older commit neither drops a lease taken since nor brings back
		// one released since (lease.Foreign).
		if len(cm.Parents) > 1 && baseTrees == nil {
			if baseTrees, err = c.mergeBaseTrees(cm.Parents); err != nil {
				return err
			}
		}
		bases := make([]*lease.Record, len(baseTrees))
		for i, bt := range baseTrees {
			if bases[i], err = c.leaseRecord(bt, ch.path, resource); err != nil {
				return err
			}
		}
		if taken := lease.Foreign(agent, before, bases, next, c.id.now); len(taken) > 0 {
			v.Detail = taken[0] + ": a forced release is for the holder, or the policy's " + policy.RoleLeaseAdmin + " role"
			if err := c.add(v); err != nil {
				return err
			}
		}
	}
	return nil
}

// leaseRecord is the lease record at path in tree ("" = the empty tree);
// nil when absent, or when it does not decode (it held nobody's lease).
func (c *checker) leaseRecord(tree, path, resource string) (*lease.Record, error) {
	if tree == "" {
		return nil, nil
	}
	e, err := c.lookup(tree, path)
	if err != nil || e.hash == "" {
		return nil, err
	}
	_, body, err := c.cat.read(e.hash)
	if err != nil {
		return nil, err
	}
	r, _ := lease.Decode(resource, body)
	return r, nil
}
