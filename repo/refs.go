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
	for depth := 0; depth < 5; depth++ {
		target, sym, err := r.readRef(name)
		if err != nil {
			return plumbing.ZeroHash, err
		}
		if sym == "" {
			return target, nil
		}
		name = sym
	}
	return plumbing.ZeroHash, fmt.Errorf("ref %s: symbolic refs nest too deep", name)
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
		line := strings.TrimSpace(string(data))
		if sym, ok := strings.CutPrefix(line, "ref: "); ok {
			return plumbing.ZeroHash, sym, nil
		}
		if !plumbing.IsHash(line) {
			return plumbing.ZeroHash, "", fmt.Errorf("ref %s: corrupt value %q", name, line)
		}
		return plumbing.NewHash(line), "", nil
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
	root := filepath.Join(r.dir, filepath.FromSlash(strings.TrimSuffix(prefix, "/")))
	err = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
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
		h, sym, err := r.readRef(name)
		if err == nil && sym == "" {
			out[name] = h
		}
		return nil
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

// UpdateRef moves ref name from old to new with git's lockfile protocol:
// <ref>.lock is created exclusively (waiting while another writer, ours or
// git's, holds it), the current value is compared with old, the new value is
// written and synced, and the lock is renamed over the ref. A zero old means
// "must not exist"; a zero new deletes the ref. A mismatch is a *StaleError.
func (r *Repo) UpdateRef(ctx context.Context, name string, old, new plumbing.Hash) error {
	return r.withLock(ctx, name, func(lock *fileLock) (bool, error) {
		cur, _, err := r.readRef(name)
		if err != nil && !errors.Is(err, ErrNotFound) {
			return false, err
		}
		if cur != old {
			return false, &StaleError{Ref: name, Expected: old, Current: cur}
		}
		if new.IsZero() {
			return true, r.deleteRefLocked(ctx, name)
		}
		_, err = lock.WriteString(new.String() + "\n")
		return false, err
	})
}

// withLock runs fn holding <name>.lock, then puts the value fn wrote in
// place of the ref and removes the lock; when fn reports that it deleted
// the ref, or fails, the lock is just removed.
func (r *Repo) withLock(ctx context.Context, name string, fn func(lock *fileLock) (deleted bool, err error)) error {
	path := filepath.Join(r.dir, filepath.FromSlash(name))
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("ref %s: %w", name, err)
	}
	lockPath := path + ".lock"
	lock, err := r.acquire(ctx, lockPath)
	if err != nil {
		return fmt.Errorf("ref %s: %w", name, err)
	}
	deleted, err := fn(lock)
	if err != nil || deleted {
		lock.release()
		if deleted && err == nil {
			r.removeEmptyRefDirs(filepath.Dir(path))
		}
		return err
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
