package repo

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
)

// Partial and shallow clones: repositories that lack objects on purpose.
//
// A partial clone (git clone --filter=blob:none) holds every commit but
// only the blobs (or, with tree:0, the trees) it was asked for; the
// promisor remote it came from supplies the rest on demand. Such an object
// is not absent: reading it as absent once made a write replace a whole
// document with the one key being set. So a miss in a partial clone asks
// the promisor remote, as git does, with git itself (the user's transports
// and credentials), and only when that fails is the read an error
// (*MissingObjectError), never "not found". In a repository that is not a
// partial clone, an object a tree or commit names and the store lacks is
// damage, reported as such.
//
// A shallow clone (git clone --depth N) holds commits down to a boundary
// listed in $GIT_DIR/shallow and none of their parents. As in git, a
// boundary commit reads as having no parents (Commit.Shallow says it is
// one), so history walks stop there instead of failing on a missing
// parent, and a revision beyond it is a *ShallowError.

// promisor is what a repository knows of its promisor remotes, read at
// the first miss.
type promisor struct {
	once    sync.Once
	remotes []string // configured promisor remotes, extensions.partialClone's first
	packs   bool     // .promisor packs exist (a partial clone, even without the config)

	mu       sync.Mutex
	failedAt time.Time // the last failed fetch: not retried for a while
	failErr  error
}

// lazyFetchPause is how long after a failed fetch misses are reported
// without asking the remote again: a history walk over an unreachable
// remote would otherwise wait out one failed connection per object.
const lazyFetchPause = 10 * time.Second

func (r *Repo) promisorInfo() *promisor {
	p := &r.partial
	p.once.Do(func() {
		// git config is a process; the config file's text says whether it
		// can name a promisor (an include may hide one).
		text, _ := os.ReadFile(filepath.Join(r.dir, "config"))
		lower := strings.ToLower(string(text))
		mayName := strings.Contains(lower, "promisor") || strings.Contains(lower, "partialclone") || strings.Contains(lower, "include")
		out, err := []byte(nil), errors.New("no promisor in the config")
		if mayName {
			out, err = r.git(context.Background(), nil, "config", "--get-regexp", `^(extensions\.partialclone|remote\..*\.promisor)$`)
		}
		if err == nil {
			var ext string
			var rs []string
			for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
				key, val, _ := strings.Cut(line, " ")
				switch {
				case key == "extensions.partialclone":
					ext = val
				case strings.HasPrefix(key, "remote.") && strings.HasSuffix(key, ".promisor") && gitTrue(val):
					rs = append(rs, strings.TrimSuffix(strings.TrimPrefix(key, "remote."), ".promisor"))
				}
			}
			if ext != "" {
				p.remotes = append(p.remotes, ext)
			}
			for _, name := range rs {
				if name != ext {
					p.remotes = append(p.remotes, name)
				}
			}
		}
		ms, _ := filepath.Glob(filepath.Join(r.dir, "objects", "pack", "pack-*.promisor"))
		p.packs = len(ms) > 0
	})
	return p
}

// gitTrue is git's reading of a boolean config value.
func gitTrue(v string) bool {
	switch strings.ToLower(v) {
	case "", "true", "yes", "on", "1":
		return true
	}
	return false
}

// IsPartial reports whether the repository is a partial clone: objects
// it lacks may be supplied by a promisor remote.
func (r *Repo) IsPartial() bool {
	p := r.promisorInfo()
	return len(p.remotes) > 0 || p.packs
}

// fetchMissing asks the promisor remotes for objects, as git's own lazy
// fetch does (a fetch of the ids, with no negotiation, no tags and the
// blob:none filter, so asking for a tree does not bring its blobs). It
// returns nil when a fetch ran; whether it brought the objects is for the
// caller to read.
func (r *Repo) fetchMissing(ctx context.Context, hs []plumbing.Hash) (string, error) {
	p := r.promisorInfo()
	if len(p.remotes) == 0 {
		return "", errors.New("no promisor remote is configured")
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.failedAt.IsZero() && time.Since(p.failedAt) < lazyFetchPause {
		return p.remotes[0], p.failErr
	}
	var ids bytes.Buffer
	for _, h := range hs {
		ids.WriteString(h.String())
		ids.WriteByte('\n')
	}
	var lastErr error
	for _, remote := range p.remotes {
		// No automatic gc after it: the store runs its own maintenance,
		// and a repack started here would race the writers.
		cmd := gitCommand(ctx, r.dir, "-c", "fetch.negotiationAlgorithm=noop", "-c", "gc.auto=0", "-c", "maintenance.auto=false", "fetch", remote,
			"--no-tags", "--no-write-fetch-head", "--recurse-submodules=no", "--filter=blob:none", "--stdin")
		cmd.Stdin = bytes.NewReader(ids.Bytes())
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		if err := cmd.Run(); err != nil {
			rawURL, _ := r.RemoteURL(ctx, remote)
			lastErr = transportError(err, stderr.Bytes(), rawURL)
			continue
		}
		r.packAdded.Store(true) // the fetch added a pack
		p.failedAt, p.failErr = time.Time{}, nil
		return remote, nil
	}
	p.failedAt, p.failErr = time.Now(), lastErr
	return p.remotes[0], lastErr
}

// missingObject is the error for h, which the object reader did not find
// in the store (called without r.mu). In a partial clone it first fetches
// h; a nil error then means h is here now and the read should be retried.
func (r *Repo) missingObject(h plumbing.Hash) error {
	if !r.IsPartial() {
		return &MissingObjectError{Hash: h}
	}
	remote, err := r.fetchMissing(context.Background(), []plumbing.Hash{h})
	if err == nil {
		return nil
	}
	return &MissingObjectError{Hash: h, Promisor: true, Remote: remote, Cause: err}
}

// Prefetch brings the objects of hs this partial clone lacks in one fetch,
// so a command about to read many versions of a file (a log of a key, a
// blame) asks the remote once rather than once per version. Elsewhere it
// does nothing; a failure is left for the reads to report.
func (r *Repo) Prefetch(ctx context.Context, hs []plumbing.Hash) {
	if len(hs) == 0 || !r.IsPartial() {
		return
	}
	var missing []plumbing.Hash
	seen := map[plumbing.Hash]bool{}
	r.mu.Lock()
	for _, h := range hs {
		if h.IsZero() || seen[h] {
			continue
		}
		seen[h] = true
		if _, ok := r.cache.get(h); ok {
			continue
		}
		if _, err := r.objs.size(h); errors.Is(err, errNotHere) {
			missing = append(missing, h)
		}
	}
	r.objs.releaseRetired()
	r.mu.Unlock()
	if len(missing) > 0 {
		r.fetchMissing(ctx, missing)
	}
}

// shallow is the boundary of a shallow clone, reread when $GIT_DIR/shallow
// changes (a fetch --deepen moves it, --unshallow removes it).
type shallow struct {
	// next is when (in shallowClock) the file is to be looked at again;
	// set is the boundary read last (a nil map: not shallow). Both are
	// read without the lock: a cached commit read takes ~100 ns, which a
	// lock and a stat would multiply.
	next atomic.Int64
	set  atomic.Pointer[map[plumbing.Hash]bool]

	mu   sync.Mutex // serializes rereads
	path string
	sig  [3]int64 // inode, size, mtime of the file last read; zero: none
}

// shallowRecheck is how long the boundary read last is trusted without a
// stat: a write reads its head commit several times, each stat costing
// more than the cached read itself. Another process deepening the clone
// is seen this much later; this process's own fetches are seen at once.
const shallowRecheck = 20 * time.Millisecond

var clockStart = time.Now()

// shallowClock is monotonic nanoseconds.
func shallowClock() int64 { return int64(time.Since(clockStart)) }

// shallowSet returns the boundary commits, nil when the repository is not
// shallow. It costs at most one stat per shallowRecheck.
func (r *Repo) shallowSet() map[plumbing.Hash]bool {
	s := &r.shallow
	now := shallowClock()
	if now < s.next.Load() {
		if p := s.set.Load(); p != nil {
			return *p
		}
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.path == "" {
		s.path = filepath.Join(r.dir, "shallow")
	}
	var st syscall.Stat_t
	var sig [3]int64
	if err := syscall.Stat(s.path, &st); err == nil {
		sig = [3]int64{int64(st.Ino), st.Size, st.Mtim.Nano()}
	}
	if sig != s.sig || s.set.Load() == nil {
		var set map[plumbing.Hash]bool
		if sig != [3]int64{} {
			if data, err := os.ReadFile(s.path); err == nil {
				set = parseShallow(data)
			} else {
				sig = [3]int64{}
			}
		}
		s.sig = sig
		s.set.Store(&set)
	}
	s.next.Store(now + int64(shallowRecheck))
	return *s.set.Load()
}

// forgetShallow has the next read look at the shallow file again: after
// this process ran a fetch, which may have moved the boundary.
func (r *Repo) forgetShallow() { r.shallow.next.Store(0) }

// parseShallow reads git's shallow file: one commit id a line. Anything
// else (a line git would not write) is skipped; nil when no id is there.
func parseShallow(data []byte) map[plumbing.Hash]bool {
	var set map[plumbing.Hash]bool
	for _, line := range strings.Split(string(data), "\n") {
		line = strings.TrimSpace(line)
		if len(line) != 40 || !isHex(line) {
			continue
		}
		if set == nil {
			set = map[plumbing.Hash]bool{}
		}
		set[plumbing.NewHash(line)] = true
	}
	return set
}

// IsShallow reports whether the repository is a shallow clone.
func (r *Repo) IsShallow() bool { return len(r.shallowSet()) > 0 }

// ShallowBoundary returns the commits at the shallow boundary (git's
// $GIT_DIR/shallow), sorted; none when the repository is not shallow.
func (r *Repo) ShallowBoundary() []plumbing.Hash {
	set := r.shallowSet()
	out := make([]plumbing.Hash, 0, len(set))
	for h := range set {
		out = append(out, h)
	}
	sortHashes(out)
	return out
}

func sortHashes(hs []plumbing.Hash) {
	for i := 1; i < len(hs); i++ {
		for j := i; j > 0 && bytes.Compare(hs[j][:], hs[j-1][:]) < 0; j-- {
			hs[j], hs[j-1] = hs[j-1], hs[j]
		}
	}
}

// unknownRevision is the error for an object id the user named that the
// store does not have: in a shallow clone it may be history beyond the
// boundary.
func (r *Repo) unknownRevision(rev string, err error) error {
	if r.IsShallow() {
		return &ShallowError{Rev: rev}
	}
	var me *MissingObjectError
	if errors.As(err, &me) && me.Promisor && me.Cause != nil && !errors.Is(me.Cause, ErrNotFound) {
		// The remote could not be asked: the id may well exist there.
		return err
	}
	return fmt.Errorf("unknown revision %q: %w", rev, ErrNotFound)
}
