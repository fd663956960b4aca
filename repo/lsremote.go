package repo

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
)

// LsRemote reads a remote's branches from one ref advertisement (git
// ls-remote --heads: with protocol v2 the server lists refs/heads/ only,
// no tags) and transfers no object: a coordinator learns which branches
// moved before it fetches any. The map is by full ref name.
func (r *Repo) LsRemote(ctx context.Context, remote string) (map[string]plumbing.Hash, error) {
	rawURL, err := r.RemoteURL(ctx, remote)
	if err != nil {
		return nil, err
	}
	out, err := r.gitRemote(ctx, rawURL, "ls-remote", "--heads", "--refs", "--", remote)
	if err != nil {
		return nil, err
	}
	return parseLsRemote(out)
}

// parseLsRemote reads "<hash>\t<ref>" lines.
func parseLsRemote(out []byte) (map[string]plumbing.Hash, error) {
	refs := map[string]plumbing.Hash{}
	for _, line := range strings.Split(string(out), "\n") {
		if line == "" {
			continue
		}
		h, name, ok := strings.Cut(line, "\t")
		if !ok || !plumbing.IsHash(h) || !strings.HasPrefix(name, "refs/") || strings.ContainsAny(name, " \t") {
			return nil, fmt.Errorf("%w: ls-remote line %q", ErrRemote, line)
		}
		refs[name] = plumbing.NewHash(h)
	}
	return refs, nil
}

// dropMissing removes from refspecs the one whose source is the remote ref
// git said it could not find ("couldn't find remote ref X").
func dropMissing(refspecs []string, err error) []string {
	if !errors.Is(err, ErrRemote) {
		return refspecs
	}
	_, rest, ok := strings.Cut(err.Error(), "couldn't find remote ref ")
	if !ok {
		return refspecs
	}
	missing, _, _ := strings.Cut(rest, ";")
	missing = strings.TrimSpace(missing)
	out := make([]string, 0, len(refspecs))
	for _, rs := range refspecs {
		src, _, _ := strings.Cut(strings.TrimPrefix(rs, "+"), ":")
		if src != missing {
			out = append(out, rs)
		}
	}
	return out
}
