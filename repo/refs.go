package repo

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"syscall"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/aiwg/aiwg-state/internal/errkind"
	"github.com/aiwg/aiwg-state/internal/sysfile"
)

// Ref returns the value of a full ref name ("refs/heads/main"), following
// symbolic refs. A missing ref is ErrNotFound.
func (r *Repo) Ref(name string) (plumbing.Hash, error) {
	first := name
	for depth := 0; depth < maxSymrefDepth; depth++ {
		target, sym, err := r.readRef(name)
		if err != nil {
			return plumbing.ZeroHash, err
		}
		if sym == "" {
			return target, nil
		}
		name = sym
	}
	return plumbing.ZeroHash, errkind.Errorf(ErrUnsupported, "%s: symbolic refs nest deeper than git follows them (%d links), or loop", first, maxSymrefDepth-1)
}

// Head returns the branch HEAD points at, as a full ref name.
func (r *Repo) Head() (string, error) {
	_, sym, err := r.readRef("HEAD")
	if err != nil {
		return "", err
	}
	if sym == "" {
		return "", errkind.Errorf(ErrDetached, "HEAD is detached; aiwg-state needs it on a branch")
	}
	return sym, nil
}

// SetHead points HEAD at a branch (a full ref name).
func (r *Repo) SetHead(ctx context.Context, ref string) error {
	return r.withLock(ctx, "HEAD", func(lock *fileLock) (bool, error) {
		_, err := lock.WriteString("ref: " + ref + "\n")
		return false, err
	})
}

// readRef reads one ref: a loose file first, then packed-refs.
func (r *Repo) readRef(name string) (plumbing.Hash, string, error) {
	data, err := sysfile.ReadFile(filepath.Join(r.dir, filepath.FromSlash(name)), 0)
	if err == nil {
		h, sym, ok := parseRefFile(data)
		if !ok {
			return plumbing.ZeroHash, "", fmt.Errorf("ref %s: corrupt value %q", name, strings.TrimSpace(string(data)))
		}
		return h, sym, nil
	}
	// A directory on the way (refs/heads/a for a/b) or at the name (a
	// for a/b, or an empty one a delete left) is not the ref.
	if !errors.Is(err, fs.ErrNotExist) && !errors.Is(err, syscall.ENOTDIR) && !errors.Is(err, syscall.EISDIR) {
		return plumbing.ZeroHash, "", fmt.Errorf("ref %s: %w", name, err)
	}
	packed, err := r.packedRefs()
	if err != nil {
		return plumbing.ZeroHash, "", err
	}
	if h, ok := packed[name]; ok {
		return h, "", nil
	}
	return plumbing.ZeroHash, "", fmt.Errorf("ref %s: %w", name, ErrNotFound)
}

// parseRefFile reads a loose ref's content as git does: "ref:" then
// optional whitespace and the target of a symbolic ref (git writes
// "ref: ", and reads "ref:refs/heads/main" too), or 40 hex digits
// followed by nothing or whitespace (and whatever follows it). A target
// outside refs/ (or one with "..", which would leave the refs
// directory) is refused as git refuses it.
func parseRefFile(data []byte) (plumbing.Hash, string, bool) {
	line := string(data)
	if rest, ok := strings.CutPrefix(line, "ref:"); ok {
		sym := strings.TrimSpace(rest)
		if !safeSymrefTarget(sym) {
			return plumbing.ZeroHash, "", false
		}
		return plumbing.ZeroHash, sym, true
	}
	if len(line) < 40 || !plumbing.IsHash(line[:40]) {
		return plumbing.ZeroHash, "", false
	}
	if len(line) > 40 && !isSpace(line[40]) {
		return plumbing.ZeroHash, "", false
	}
	return plumbing.NewHash(line[:40]), "", true
}

func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f'
}

// safeSymrefTarget accepts what a symbolic ref may point at: a name under
// refs/ that git's ref name rules accept (no "..", no empty component or
// one starting with ".", no control characters), so following it never
// leaves the repository's refs.
func safeSymrefTarget(name string) bool {
	if !strings.HasPrefix(name, "refs/") || strings.Contains(name, "..") || strings.Contains(name, "@{") {
		return false
	}
	for _, seg := range strings.Split(name, "/") {
		if seg == "" || strings.HasPrefix(seg, ".") || strings.HasSuffix(seg, ".lock") {
			return false
		}
	}
	for i := 0; i < len(name); i++ {
		if c := name[i]; c < 0x20 || c == 0x7f || c == '\\' || c == ':' || c == '?' || c == '*' || c == '[' || c == '^' || c == '~' || c == ' ' {
			return false
		}
	}
	return true
}

func (r *Repo) packedRefs() (map[string]plumbing.Hash, error) {
	data, err := sysfile.ReadFile(filepath.Join(r.dir, "packed-refs"), 0)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("packed-refs: %w", err)
	}
	out := make(map[string]plumbing.Hash)
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || line[0] == '#' || line[0] == '^' {
			continue
		}
		h, name, ok := strings.Cut(line, " ")
		if ok && plumbing.IsHash(h) {
			out[name] = plumbing.NewHash(h)
		}
	}
	return out, sc.Err()
}

// Refs lists refs under prefix (e.g. "refs/heads/"), loose values
// overriding packed ones, sorted by name.
func (r *Repo) Refs(prefix string) (map[string]plumbing.Hash, []string, error) {
	out, err := r.packedRefs()
	if err != nil {
		return nil, nil, err
	}
	if out == nil {
		out = make(map[string]plumbing.Hash)
	}
	for name := range out {
		if !strings.HasPrefix(name, prefix) {
			delete(out, name)
		}
	}
	err = r.walkLooseRefs(prefix, func(name string, h plumbing.Hash, sym string) {
		if sym == "" {
			out[name] = h
		} else {
			delete(out, name) // the loose symbolic ref wins over a packed value, as in git
		}
	})
	if err != nil {
		return nil, nil, err
	}
	names := make([]string, 0, len(out))
	for n := range out {
		names = append(names, n)
	}
	sort.Strings(names)
	return out, names, nil
}

// SymbolicRefs lists the symbolic refs under prefix (git symbolic-ref
// refs/heads/master refs/heads/main: an alias of a branch), each with the
// ref it names. Refs leaves them out: a listing of branches would show
// one branch twice, and a fetch report a tracked branch moved twice.
func (r *Repo) SymbolicRefs(prefix string) (map[string]string, error) {
	out := map[string]string{}
	err := r.walkLooseRefs(prefix, func(name string, _ plumbing.Hash, sym string) {
		if sym != "" {
			out[name] = sym
		}
	})
	return out, err
}

// walkLooseRefs calls fn with every loose ref under prefix that reads,
// its value and, for a symbolic ref, the ref it names.
func (r *Repo) walkLooseRefs(prefix string, fn func(name string, h plumbing.Hash, sym string)) error {
	root := filepath.Join(r.dir, filepath.FromSlash(strings.TrimSuffix(prefix, "/")))
	return filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			return err
		}
		if d.IsDir() || strings.HasSuffix(p, ".lock") {
			return nil
		}
		rel, _ := filepath.Rel(r.dir, p)
		name := filepath.ToSlash(rel)
		if !strings.HasPrefix(name, prefix) {
			return nil
		}
		if h, sym, err := r.readRef(name); err == nil {
			fn(name, h, sym)
		}
		return nil
	})
}

// UpdateRef moves ref name from old to new with git's lockfile protocol:
// <ref>.lock is created exclusively (waiting while another writer, ours or
// git's, holds it), the current value is compared with old, the new value is
// written and synced, and the lock is renamed over the ref. A zero old means
// "must not exist"; a zero new deletes the ref. A mismatch is a *StaleError.
//
// A symbolic ref is followed to the ref it names, which is the one
// updated, as git update-ref does; deleting through one is refused (git
// update-ref -d would delete the ref it names, not the symbolic ref).
func (r *Repo) UpdateRef(ctx context.Context, name string, old, new plumbing.Hash) error {
	return r.withRefLock(ctx, name, func(target string, cur plumbing.Hash, lock *fileLock) (bool, error) {
		if new.IsZero() && target != name {
			return false, errkind.Errorf(ErrUnsupported, "%s is a symbolic ref to %s: deleting it here would delete %s (remove the symbolic ref with git symbolic-ref --delete %s)", name, target, target, name)
		}
		if cur != old {
			return false, &StaleError{Ref: name, Expected: old, Current: cur}
		}
		if new.IsZero() {
			return true, r.deleteRefLocked(ctx, name)
		}
		_, err := lock.WriteString(new.String() + "\n")
		return false, err
	})
}

// RefTarget is the ref a write on name moves: name itself, or, when name
// is a symbolic ref, the ref it leads to (which need not exist yet), with
// the rules withRefLock applies. Callers that guard a branch (a merge in
// progress, a checked-out branch) guard this one.
func (r *Repo) RefTarget(name string) (string, error) {
	chain := []string{name}
	for {
		_, sym, err := r.readRef(name)
		if err != nil && !errors.Is(err, ErrNotFound) {
			return "", err
		}
		if sym == "" {
			return name, nil
		}
		if err := symrefFollowable(chain, name, sym); err != nil {
			return "", err
		}
		chain = append(chain, sym)
		name = sym
	}
}

// symrefFollowable refuses to follow name (the last of chain) to sym
// when git would not (too deep, a loop), or when it would lead a branch
// out of refs/heads/.
func symrefFollowable(chain []string, name, sym string) error {
	first := chain[0]
	switch {
	case len(chain) >= maxSymrefDepth:
		return errkind.Errorf(ErrUnsupported, "%s: symbolic refs nest deeper than git follows them (%d links), or loop", first, maxSymrefDepth-1)
	case slices.Contains(chain, sym):
		return errkind.Errorf(ErrUnsupported, "%s: symbolic refs loop (%s -> %s)", first, strings.Join(chain, " -> "), sym)
	case strings.HasPrefix(first, "refs/heads/") && !strings.HasPrefix(sym, "refs/heads/"):
		return errkind.Errorf(ErrUnsupported, "%s is a symbolic ref to %s, which is not a branch: writes go to branches (refs/heads/)", name, sym)
	}
	return nil
}

// maxSymrefDepth is how many refs git reads following symbolic refs
// before it gives up (SYMREF_MAXDEPTH).
const maxSymrefDepth = 5

// errKeepRef ends a symbolic ref's withLock without writing it.
var errKeepRef = errors.New("symbolic ref kept")

// withRefLock runs fn holding the lock of the ref name leads to: a
// symbolic ref is followed to the ref it names, as git's ref updates do,
// each ref of the chain locked on the way, in git's order, and left as it
// is. fn gets the final ref's name and value (zero when it does not exist
// yet, as an unborn branch), and writes that ref's new value into lock.
// A branch (refs/heads/) is only followed to a branch: a write on a
// branch never moves a tag or a remote-tracking branch.
func (r *Repo) withRefLock(ctx context.Context, name string, fn func(target string, cur plumbing.Hash, lock *fileLock) (bool, error)) error {
	return r.withChainLock(ctx, []string{name}, fn)
}

func (r *Repo) withChainLock(ctx context.Context, chain []string, fn func(target string, cur plumbing.Hash, lock *fileLock) (bool, error)) error {
	name := chain[len(chain)-1]
	var through error
	err := r.withLock(ctx, name, func(lock *fileLock) (bool, error) {
		cur, sym, err := r.readRef(name)
		if err != nil && !errors.Is(err, ErrNotFound) {
			return false, err
		}
		if sym == "" {
			return fn(name, cur, lock)
		}
		if err := symrefFollowable(chain, name, sym); err != nil {
			return false, err
		}
		through = r.withChainLock(ctx, append(slices.Clip(chain), sym), fn)
		return false, errKeepRef
	})
	if errors.Is(err, errKeepRef) {
		return through
	}
	return err
}

// withLock runs fn holding <name>.lock, then puts the value fn wrote in
// place of the ref and removes the lock; when fn reports that it deleted
// the ref, or fails, the lock is just removed.
func (r *Repo) withLock(ctx context.Context, name string, fn func(lock *fileLock) (deleted bool, err error)) error {
	path := filepath.Join(r.dir, filepath.FromSlash(name))
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return r.permissionError(fmt.Errorf("ref %s: %w", name, err))
	}
	lockPath := path + ".lock"
	lock, err := r.acquire(ctx, lockPath)
	if err != nil {
		return r.permissionError(fmt.Errorf("ref %s: %w", name, err))
	}
	deleted, err := fn(lock)
	if err != nil || deleted {
		lock.release()
		if deleted && err == nil {
			r.removeEmptyRefDirs(filepath.Dir(path))
		}
		// A pack the transaction could not write, as its ref.
		return r.permissionError(err)
	}
	err = lock.publish(path, r.syncing())
	if errors.Is(err, syscall.EISDIR) && syscall.Rmdir(path) == nil {
		// An empty directory left by refs deleted below it (by an older
		// version, or git), which git removes too; rmdir never takes a
		// file, nor a directory that still holds refs.
		err = lock.publish(path, r.syncing())
	}
	lock.release()
	if err != nil {
		return fmt.Errorf("ref %s: %w", name, err)
	}
	if r.syncing() {
		return syncDir(filepath.Dir(path))
	}
	return nil
}

// deleteRefLocked removes a ref's packed-refs line, holding
// packed-refs.lock for the rewrite, and then its loose file, in git's
// order: removing the loose file first would, should packed-refs be
// locked or the process die, leave the ref at its older packed value.
func (r *Repo) deleteRefLocked(ctx context.Context, name string) error {
	packed, err := r.packedRefs()
	if err != nil {
		return err
	}
	if _, ok := packed[name]; ok {
		if err := r.withLock(ctx, "packed-refs", func(lock *fileLock) (bool, error) {
			data, err := os.ReadFile(filepath.Join(r.dir, "packed-refs"))
			if err != nil {
				return false, err
			}
			var out bytes.Buffer
			skipPeeled := false
			for _, line := range strings.SplitAfter(string(data), "\n") {
				if skipPeeled && strings.HasPrefix(line, "^") {
					continue
				}
				skipPeeled = false
				if f := strings.Fields(line); len(f) == 2 && f[1] == name {
					skipPeeled = true
					continue
				}
				out.WriteString(line)
			}
			_, err = lock.Write(out.Bytes())
			return false, err
		}); err != nil {
			return err
		}
	}
	path := filepath.Join(r.dir, filepath.FromSlash(name))
	if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}

// removeEmptyRefDirs removes dir and its parents while they are empty, up
// to refs/<kind>/ (git does the same), so that deleting agents/planner
// leaves no directory in the way of a later branch named agents. It runs
// once the ref's lock is gone, since the lock is in dir.
func (r *Repo) removeEmptyRefDirs(dir string) {
	stop := filepath.Join(r.dir, "refs")
	for {
		parent := filepath.Dir(dir)
		if parent == stop || !strings.HasPrefix(dir, stop+string(filepath.Separator)) {
			return // refs/heads itself, refs/tags, ... stay
		}
		if os.Remove(dir) != nil {
			return // not empty (or gone)
		}
		dir = parent
	}
}
