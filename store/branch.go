package store

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/aiwg/aiwg-state/internal/errkind"
	"github.com/aiwg/aiwg-state/repo"
	"github.com/aiwg/aiwg-state/verbiage"
)

// BranchInfo describes one branch of the store.
type BranchInfo struct {
	Name   string `json:"name"`
	Commit string `json:"commit"`
	// Head is set for the branch the store's HEAD points at.
	Head bool `json:"head,omitempty"`
	// Merging is set while the branch has a merge in progress.
	Merging bool `json:"merging,omitempty"`
	// AliasOf is set for a branch that is a symbolic ref to another
	// (git symbolic-ref refs/heads/master refs/heads/main): the branch
	// it names, which reads and writes on this one use.
	AliasOf string `json:"alias_of,omitempty"`
}

// Branches lists the store's branches by name.
func (s *Store) Branches(ctx context.Context) ([]BranchInfo, error) {
	refs, names, err := s.repo.Refs("refs/heads/")
	if err != nil {
		return nil, err
	}
	head, _ := s.repo.Head()
	_, merging, err := s.repo.Refs(MergeRefPrefix)
	if err != nil {
		return nil, err
	}
	inMerge := map[string]bool{}
	for _, m := range merging {
		inMerge[strings.TrimPrefix(m, MergeRefPrefix)] = true
	}
	out := make([]BranchInfo, 0, len(names))
	for _, n := range names {
		short := shortBranch(n)
		out = append(out, BranchInfo{Name: short, Commit: refs[n].String(), Head: n == head, Merging: inMerge[short]})
	}
	syms, err := s.repo.SymbolicRefs("refs/heads/")
	if err != nil {
		return nil, err
	}
	for n, target := range syms {
		h, err := s.repo.Ref(n)
		if err != nil {
			continue // names a branch that does not exist (yet)
		}
		out = append(out, BranchInfo{Name: shortBranch(n), Commit: h.String(), Head: n == head, AliasOf: shortBranch(target)})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// CreateBranch creates branch name at revision from ("" = the head of the
// default branch). An existing branch is ErrExists: a branch is never
// moved by creating it again.
func (s *Store) CreateBranch(ctx context.Context, name, from string) (BranchInfo, error) {
	if err := CheckBranchName(name); err != nil {
		return BranchInfo{}, err
	}
	if IsObjectIDName(name) {
		// git makes it, and then reads the name as the commit id, not
		// the branch (so does --at): the branch could only be read by
		// its full ref name.
		return BranchInfo{}, fmt.Errorf("%w: branch name %q is a full commit id, which revisions read as that commit: pick another name", verbiage.ErrInvalidName, name)
	}
	if strings.HasSuffix(name, "_HEAD") && strings.Trim(name, "ABCDEFGHIJKLMNOPQRSTUVWXYZ_") == "" {
		// ORIG_HEAD, FETCH_HEAD: git reads the file of that name in the
		// git directory before any branch.
		return BranchInfo{}, fmt.Errorf("%w: branch name %q reads as git's %s, not the branch: pick another name", verbiage.ErrInvalidName, name, name)
	}
	h, err := s.Resolve(from, "")
	if err != nil {
		return BranchInfo{}, err
	}
	ref := branchRef(name)
	if _, err := s.repo.Ref(ref); err == nil {
		return BranchInfo{}, fmt.Errorf("branch %s: %w", name, ErrExists)
	}
	if other := s.otherRefNamed(name); other != "" {
		// git would allow it, and from then on reads and writes naming
		// NAME would reach the new branch, not the one the user
		// fetched or tagged.
		return BranchInfo{}, &RefNameTakenError{Name: name, Is: other}
	}
	// Refs are files: a/b cannot sit beside a branch a, nor a beside a/b.
	_, names, err := s.repo.Refs("refs/heads/")
	if err != nil {
		return BranchInfo{}, err
	}
	for _, n := range names {
		if strings.HasPrefix(n, ref+"/") || strings.HasPrefix(ref, n+"/") {
			return BranchInfo{}, fmt.Errorf("%w: branch %s clashes with branch %s (one would be a directory of the other)", ErrExists, name, shortBranch(n))
		}
	}
	if err := s.repo.UpdateRef(ctx, ref, plumbing.ZeroHash, h); err != nil {
		if errors.Is(err, repo.ErrStale) {
			return BranchInfo{}, fmt.Errorf("branch %s: %w", name, ErrExists)
		}
		return BranchInfo{}, err
	}
	return BranchInfo{Name: name, Commit: h.String()}, nil
}

// otherRefNamed says what name refers to other than a branch: a
// remote-tracking branch or a tag (checkpoints are tags), or "". Reads
// take such names for --branch; writes cannot move them.
func (s *Store) otherRefNamed(name string) string {
	for _, k := range []struct{ prefix, what string }{
		{"refs/remotes/", "a remote-tracking branch (fetch moves it)"},
		{"refs/tags/", "a tag (tags do not move)"},
	} {
		if _, err := s.repo.Ref(k.prefix + name); err == nil {
			return k.what
		}
	}
	return ""
}

// DeleteBranch deletes a branch. As git branch -d does, it refuses a
// branch whose commits the store's HEAD branch does not contain (they would
// be lost at the next gc), and one with a merge in progress (exit 4), unless
// force is set, which drops the merge too. The branch HEAD points at cannot
// be deleted (switch first).
func (s *Store) DeleteBranch(ctx context.Context, name string, force bool) error {
	if err := CheckBranchName(name); err != nil {
		return err
	}
	ref := branchRef(name)
	h, err := s.repo.Ref(ref)
	if err != nil {
		return fmt.Errorf("branch %s: %w", name, err)
	}
	head, _ := s.repo.Head()
	if head == ref || s.RefTarget(head) == ref {
		// Name a branch that exists to switch to: main unless that is
		// this one.
		other := ""
		if bs, err := s.Branches(ctx); err == nil {
			for _, b := range bs {
				if b.Name != name && (other == "" || b.Name == "main") {
					other = b.Name
				}
			}
		}
		return &BranchInUseError{Name: name, Other: other}
	}
	if !force {
		if merging, err := s.HasConflicts(name); err == nil && merging {
			return &BranchNotMergedError{Name: name, Merging: true}
		}
		if hh, err := s.repo.Ref(head); err == nil {
			if merged, err := s.repo.IsAncestor(h, hh); err == nil && !merged {
				return &BranchNotMergedError{Name: name, Head: shortBranch(head)}
			}
		}
	}
	if m, err := s.repo.Ref(MergeRef(ref)); err == nil {
		if err := s.repo.UpdateRef(ctx, MergeRef(ref), m, plumbing.ZeroHash); err != nil {
			return err
		}
	}
	return s.repo.UpdateRef(ctx, ref, h, plumbing.ZeroHash)
}

// Switch points the store's HEAD, the default branch of every command, at
// an existing branch. Stores opened afterwards (the next command) use it;
// this Store keeps its default branch, which other goroutines may be using.
func (s *Store) Switch(ctx context.Context, name string) error {
	if err := CheckBranchName(name); err != nil {
		return err
	}
	ref := branchRef(name)
	if _, err := s.repo.Ref(ref); errors.Is(err, repo.ErrNotFound) {
		return &BranchMissingError{Name: name}
	} else if err != nil {
		return fmt.Errorf("branch %s: %w", name, err)
	}
	return s.setHead(ctx, ref)
}

// UseBranch points HEAD, and this Store's default branch, at branch (a
// branch that exists): unlike Switch, it moves this Store's default
// branch too, as an agent's store is its own. Call it before other
// goroutines use the Store.
func (s *Store) UseBranch(ctx context.Context, branch string) error {
	ref := s.Ref(branch)
	if err := s.setHead(ctx, ref); err != nil {
		return err
	}
	s.branch = ref
	return nil
}

// HeadMovable refuses (ErrReadOnly) to move HEAD to branch in a git
// clone: that would check branch out without its files, which is git
// checkout's job.
func (s *Store) HeadMovable(branch string) error { return s.headMovable(s.Ref(branch)) }

// setHead points HEAD at ref.
func (s *Store) setHead(ctx context.Context, ref string) error {
	if err := s.headMovable(ref); err != nil {
		return err
	}
	return s.repo.SetHead(ctx, ref)
}

// headMovable refuses to move HEAD in a git clone: that would check ref
// out without its files, which is git checkout's job.
func (s *Store) headMovable(ref string) error {
	if s.workTree != "" {
		return errkind.Errorf(ErrReadOnly, "%s is a git clone: its HEAD is git checkout's to move, with its files (git checkout %s)", s.workTree, shortBranch(ref))
	}
	return nil
}

// CheckBranchName applies git's check-ref-format rules to a branch name,
// so every branch the store makes is one git accepts, plus one of ours: a
// branch name does not start with "refs/" (it would be read as a full ref).
func CheckBranchName(name string) error {
	bad := func(why string) error {
		return fmt.Errorf("%w: branch name %q %s", verbiage.ErrInvalidName, name, why)
	}
	switch {
	case name == "" || name == "@":
		return bad("is not a name")
	case strings.HasPrefix(name, "-"):
		return bad("starts with '-'")
	case strings.HasPrefix(name, "refs/") || name == "HEAD":
		return bad("is reserved")
	case strings.HasSuffix(name, "/") || strings.HasSuffix(name, "."):
		return bad("ends with '/' or '.'")
	case strings.Contains(name, "..") || strings.Contains(name, "@{") || strings.Contains(name, "//"):
		return bad("holds '..', '@{' or '//'")
	case len(name) > 200:
		return bad("is longer than 200 bytes")
	}
	for _, c := range []byte(name) {
		if c < 0x20 || c == 0x7f || strings.IndexByte(" ~^:?*[\\", c) >= 0 {
			return bad(fmt.Sprintf("holds %q", c))
		}
	}
	for _, seg := range strings.Split(name, "/") {
		if seg == "" || strings.HasPrefix(seg, ".") || strings.HasSuffix(seg, ".lock") {
			return bad("has a component that is empty, starts with '.' or ends with '.lock'")
		}
	}
	return nil
}

// IsObjectIDName reports whether a ref's short name is a full object id
// (40 hex digits), which git's revision syntax reads as the object rather
// than the ref.
func IsObjectIDName(name string) bool {
	if len(name) != 40 {
		return false
	}
	for _, c := range []byte(name) {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F') {
			return false
		}
	}
	return true
}

// IsBranch reports whether name is a branch of the store or a
// remote-tracking branch (origin/main), rather than another revision: two
// branches are compared from their merge base, as git diff A...B does.
func (s *Store) IsBranch(name string) bool {
	if name == "" || strings.ContainsAny(name, "~^:") || name == "HEAD" || name == "@" {
		return false
	}
	for _, ref := range []string{"refs/heads/" + name, "refs/remotes/" + name} {
		if _, err := s.repo.Ref(ref); err == nil {
			return true
		}
	}
	return false
}
