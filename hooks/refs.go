package hooks

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/aiwg/aiwg-state/checkpoint"
	"github.com/aiwg/aiwg-state/repo"
	"github.com/aiwg/aiwg-state/snapshot"
	"github.com/aiwg/aiwg-state/verbiage"
)

// newRefName says why a ref a push creates may not be made under its name
// ("" when it may): a branch and a tag of one name make that name mean
// two things (git log main would read the tag), and the branch HEAD names
// is given its first commit only while no other branch exists, else it
// would become the default branch, whose policy rules the server, without
// ever having held that policy.
func (c *checker) newRefName(ctx context.Context, u Update, updates []Update) (string, error) {
	if !u.Old.IsZero() {
		return "", nil
	}
	short := shortRef(u.Ref)
	other, kind := "refs/tags/"+short, "a tag"
	if strings.HasPrefix(u.Ref, "refs/tags/") {
		other, kind = "refs/heads/"+short, "a branch"
	}
	for _, o := range updates {
		if o.Ref == other && !o.New.IsZero() {
			return fmt.Sprintf("the push also creates %s named %s: git would read the name as one of them", kind, short), nil
		}
	}
	if ok, err := c.hasRef(ctx, other); err != nil {
		return "", err
	} else if ok {
		return fmt.Sprintf("the server has %s named %s (%s): git would read the name as one of them", kind, short, other), nil
	}
	if !strings.HasPrefix(u.Ref, "refs/heads/") || u.Ref != c.headRefName(ctx) || u.Ref == c.defaultRef(ctx) {
		return "", nil
	}
	// HEAD names an unborn branch other than main.
	others := false
	for _, o := range updates {
		others = others || (o.Ref != u.Ref && strings.HasPrefix(o.Ref, "refs/heads/") && !o.New.IsZero())
	}
	if !others {
		out, err := exec.CommandContext(ctx, "git", "--git-dir", c.gitDir, "for-each-ref", "--count=1", "--format=%(refname)", "refs/heads/").Output()
		if err != nil {
			return "", fmt.Errorf("git for-each-ref: %w", err)
		}
		others = len(bytes.TrimSpace(out)) > 0
	}
	if !others {
		return "", nil // the first branch of an empty server
	}
	return fmt.Sprintf("the server's HEAD names %s, which has no commit yet, and the default branch is %s: a push does not make another branch the default (on the server: git symbolic-ref HEAD %s, which aiwg-state hooks install does)",
		short, shortRef(c.defaultRef(ctx)), c.defaultRef(ctx)), nil
}

// headRefName is the branch HEAD names, born or not ("" when none).
func (c *checker) headRefName(ctx context.Context) string {
	c.defaultRef(ctx)
	return c.headRef
}

// hasRef says whether the server has ref (before the push).
func (c *checker) hasRef(ctx context.Context, ref string) (bool, error) {
	err := exec.CommandContext(ctx, "git", "--git-dir", c.gitDir, "show-ref", "--verify", "--quiet", ref).Run()
	if err == nil {
		return true, nil
	}
	if exit, ok := err.(*exec.ExitError); ok && exit.ExitCode() == 1 {
		return false, nil
	}
	return false, fmt.Errorf("git show-ref: %w", err)
}

// checkTag checks a new tag, which must be a checkpoint as aiwg-state
// writes one (package checkpoint): refs/tags/checkpoints/<state>/<name>,
// an annotated tag object of that name on a commit, whose message carries
// the checkpoint's id and its state, at most checkpoint.MaxPerState per
// state with those the server has; and its tagger is held to what a
// commit's author is: an agent the pusher may act as, and a signature
// when the policy requires the tagger's. It reports whether the tag broke
// no rule (the violations are added).
func (c *checker) checkTag(ctx context.Context, u Update) (bool, error) {
	added := false
	add := func(agent, rule, detail string) error {
		added = true
		return c.add(Violation{Ref: u.Ref, Commit: u.New.String(), Agent: agent, Rule: rule, Detail: detail})
	}
	if name, ok := strings.CutPrefix(u.Ref, snapshot.RefPrefix); ok && snapshot.CheckName(name) == nil {
		return c.checkSnapshotTag(ctx, u, name)
	}
	state, name, ok := strings.Cut(strings.TrimPrefix(u.Ref, checkpoint.RefPrefix), "/")
	if !strings.HasPrefix(u.Ref, checkpoint.RefPrefix) || !ok || !verbiage.ValidID(verbiage.PrefixState, state) || checkpoint.CheckName(name) != nil {
		return false, add("", RuleRef, "tags hold checkpoints and snapshots only: refs/tags/checkpoints/<state id>/<name> (aiwg-state checkpoint create) or refs/tags/snapshots/<name> (aiwg-state snapshot create), then aiwg-state push --tags")
	}
	t, body, err := c.annotatedTag(u, "a checkpoint is an annotated tag object (aiwg-state checkpoint create)", add)
	if t == nil {
		return false, err
	}
	tagger := t.Tagger.Name
	if _, st, _, ok := checkpoint.ParseMessage(t.Message); !ok || st != state {
		return false, add(tagger, RuleRef, fmt.Sprintf("not a checkpoint of %s: a checkpoint tag's message ends with the trailers %s: ckpt-… and %s: %s", state, checkpoint.TrailerCheckpoint, checkpoint.TrailerState, state))
	}
	if tagger == "" {
		return false, add(tagger, RuleIdentity, "the tag names no tagger: a checkpoint's tagger is the agent that made it")
	}
	// The cap counts the server's checkpoints of the state, and those
	// this push creates before this one.
	had, ok := c.tagsHad[state]
	if !ok {
		out, err := exec.CommandContext(ctx, "git", "--git-dir", c.gitDir, "for-each-ref", "--format=%(refname)", checkpoint.RefPrefix+state+"/").Output()
		if err != nil {
			return false, fmt.Errorf("git for-each-ref: %w", err)
		}
		had = len(strings.Fields(string(out)))
		if c.tagsHad == nil {
			c.tagsHad = map[string]int{}
		}
		c.tagsHad[state] = had
	}
	if n := had + c.tags[state]; n >= checkpoint.MaxPerState {
		where := "on the server"
		if c.tags[state] > 0 {
			where += " and earlier in this push"
		}
		if err := add(tagger, RuleLimit, fmt.Sprintf("%s has %d checkpoints %s, the limit is %d (the RLM state specification's): remove old ones on the server first", state, n, where, checkpoint.MaxPerState)); err != nil {
			return false, err
		}
	} else {
		if c.tags == nil {
			c.tags = map[string]int{}
		}
		c.tags[state]++
	}
	if err := c.checkTagger(ctx, u, t, body, add); err != nil {
		return false, err
	}
	return !added, nil
}

// checkTagger holds a tag's tagger to what a commit's author is: an agent
// the pusher may act as, and a signature when the policy requires the
// tagger's.
func (c *checker) checkTagger(ctx context.Context, u Update, t *repo.Tag, body []byte, add func(agent, rule, detail string) error) error {
	tagger := t.Tagger.Name
	if pu := c.id.entry; pu != nil && !pu.ActsAs(tagger) {
		if err := add(tagger, RuleIdentity, fmt.Sprintf("pusher %q may not act as agent %q (the tag's tagger)", c.id.pusher, tagger)); err != nil {
			return err
		}
	}
	if c.policy.SignatureRequired(tagger) {
		payload := body[:len(body)-len(t.PGPSignature)]
		detail, err := c.verify(ctx, "tag", u.New.String(), tagger, payload, []byte(t.PGPSignature))
		if err != nil {
			return err
		}
		if detail != "" {
			if err := add(tagger, RuleSigned, detail); err != nil {
				return err
			}
		}
	}
	return nil
}

// annotatedTag reads a pushed tag, which must be an annotated tag object
// named as its ref, and its body; when it is not, the violation (what it
// must be, and what it is) is added and the tag is nil.
func (c *checker) annotatedTag(u Update, what string, add func(agent, rule, detail string) error) (*repo.Tag, []byte, error) {
	typ, body, err := c.cat.read(u.New.String())
	if err != nil {
		return nil, nil, err
	}
	if typ != "tag" {
		return nil, nil, add("", RuleRef, what+", not a "+typ)
	}
	if detail := tagHeaders(body, strings.TrimPrefix(u.Ref, "refs/tags/")); detail != "" {
		return nil, nil, add("", RuleRef, detail)
	}
	t, err := repo.ParseTag(u.New, body)
	if err != nil {
		return nil, nil, add("", RuleRef, err.Error())
	}
	return t, body, nil
}

// snapshotsKey counts snapshots in checker.tags and tagsHad, beside the
// checkpoints counted per state (no state id has a slash).
const snapshotsKey = "snapshots/"

// checkSnapshotTag checks a new snapshot tag as aiwg-state writes one
// (package snapshot): refs/tags/snapshots/<name>, an annotated tag object
// of that name on a commit, whose message is a snapshot's (snapshot.
// ParseMessage: its id, reason and scope, each path of which the commit
// has), at most snapshot.MaxSnapshots with those the server has; its
// tagger is held to what a checkpoint's is. It reports whether the tag
// broke no rule (the violations are added).
func (c *checker) checkSnapshotTag(ctx context.Context, u Update, name string) (bool, error) {
	added := false
	add := func(agent, rule, detail string) error {
		added = true
		return c.add(Violation{Ref: u.Ref, Commit: u.New.String(), Agent: agent, Rule: rule, Detail: detail})
	}
	t, body, err := c.annotatedTag(u, "a snapshot is an annotated tag object (aiwg-state snapshot create)", add)
	if t == nil {
		return false, err
	}
	tagger := t.Tagger.Name
	f, err := snapshot.ParseMessage(name, t.Message)
	if err != nil {
		return false, add(tagger, RuleRef, "not a snapshot as aiwg-state writes one: "+err.Error())
	}
	if tagger == "" {
		return false, add(tagger, RuleIdentity, "the tag names no tagger: a snapshot's tagger is the agent that made it")
	}
	for _, p := range f.Scope {
		if p == snapshot.Whole {
			continue
		}
		if _, _, err := c.cat.read(t.Target.String() + ":" + p); errors.Is(err, errMissing) {
			if err := add(tagger, RuleRef, fmt.Sprintf("the snapshot covers %s, which its commit %s does not have", p, short(t.Target.String()))); err != nil {
				return false, err
			}
		} else if err != nil {
			return false, err
		}
	}
	had, ok := c.tagsHad[snapshotsKey]
	if !ok {
		out, err := exec.CommandContext(ctx, "git", "--git-dir", c.gitDir, "for-each-ref", "--format=%(refname)", snapshot.RefPrefix).Output()
		if err != nil {
			return false, fmt.Errorf("git for-each-ref: %w", err)
		}
		had = len(strings.Fields(string(out)))
		if c.tagsHad == nil {
			c.tagsHad = map[string]int{}
		}
		c.tagsHad[snapshotsKey] = had
	}
	if n := had + c.tags[snapshotsKey]; n >= snapshot.MaxSnapshots {
		if err := add(tagger, RuleLimit, fmt.Sprintf("the server has %d snapshots with this push's, the limit is %d: remove old ones on the server first", n, snapshot.MaxSnapshots)); err != nil {
			return false, err
		}
	} else {
		if c.tags == nil {
			c.tags = map[string]int{}
		}
		c.tags[snapshotsKey]++
	}
	if err := c.checkTagger(ctx, u, t, body, add); err != nil {
		return false, err
	}
	return !added, nil
}

// tagHeaders says why a tag object's headers are not those of a
// checkpoint ("" when they are): object, type commit, tag (the ref's
// name) and tagger, once each, in that order, as git tag writes them.
// Another header, or one twice, is a tag that tools read differently.
func tagHeaders(body []byte, name string) string {
	head, _, _ := bytes.Cut(body, []byte("\n\n"))
	lines := strings.Split(string(head), "\n")
	keys := []string{"object", "type", "tag", "tagger"}
	if len(lines) != len(keys) {
		return "a checkpoint tag has the headers object, type, tag and tagger, once each, and no other"
	}
	for i, k := range keys {
		v, ok := strings.CutPrefix(lines[i], k+" ")
		if !ok {
			return "a checkpoint tag has the headers object, type, tag and tagger, once each, and no other"
		}
		switch {
		case k == "object" && !plumbing.IsHash(v):
			return fmt.Sprintf("the tag's object %q is no object id", v)
		case k == "type" && v != "commit":
			return "a checkpoint tags a commit, not a " + v
		case k == "tag" && v != name:
			return fmt.Sprintf("the tag object is named %q, not %q as its ref", v, name)
		}
	}
	return ""
}
