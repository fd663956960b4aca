package hooks

import (
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"strings"
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
