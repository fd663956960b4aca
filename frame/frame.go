// Package frame is the frame tier of the tiered state specification:
// scratch values for one run, keyed by a run id (a trajectory id, a
// correlation id, an MCP session). A frame is never versioned and never
// pushed: it lives where the run lives, in memory in a long-lived process
// (`aiwg-state serve`, the MCP server: see Hold), else in a directory per
// run under the store's git directory (aiwg/frames/), and it is discarded
// when the run ends (Clear, End: a trajectory's completion, an MCP
// session's close) or when its time to live passes.
//
// A run's keys and values together are bounded by the store's
// limits.max_frame_bytes (and by the agent's sandbox profile); a set past
// it fails with store.ErrLimit and changes nothing. A run belongs to the
// agent that started it: another agent may neither read nor clear it.
// Promote writes one value into versioned state as one commit whose
// trailers name the run and the key it came from.
package frame

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/aiwg/aiwg-state/internal/errkind"
	"github.com/aiwg/aiwg-state/internal/sandbox"
	"github.com/aiwg/aiwg-state/objects"
	"github.com/aiwg/aiwg-state/repo"
	"github.com/aiwg/aiwg-state/store"
)

// Dir is where a store's frames are kept for runs of separate processes,
// inside its git directory: never in a commit, never fetched or pushed.
const Dir = "aiwg/frames"

// ReservedPath is the tree path reserved for the frame tier: a commit
// holding a file under it is refused, in-process and by the server's hook,
// since a frame committed by hand would make a run's scratch values
// history.
const ReservedPath = ".aiwg/frame/"

// DefaultTTL is how long a run's frame is kept after its last write when
// the run never ends explicitly.
const DefaultTTL = 24 * time.Hour

// MaxTTL is the longest a frame may be kept after its last write: a run
// is one task's, and a longer time to live would only let runs no one
// ends hold memory and disk.
const MaxTTL = 7 * 24 * time.Hour

// Trailers of a promoted value's commit.
const (
	TrailerRun = "Frame-Run"
	TrailerKey = "Frame-Key"
)

// Limits on names, so that a run id or key is a name and not a payload.
const (
	maxRunID = 200
	maxKey   = 256
)

var (
	// ErrInvalid: a run id, key or value that is not one.
	ErrInvalid = errors.New("invalid frame argument")
	// ErrNotFound: no such run or key (or the run's time has passed).
	ErrNotFound = store.ErrNotFound
)

// Run is one run's frame.
type Run struct {
	ID string `json:"run"`
	// Agent started the run; only it may use the run.
	Agent   string                     `json:"agent"`
	Expires time.Time                  `json:"expires"`
	Values  map[string]json.RawMessage `json:"values"`
}

// Bytes is the run's size as the cap counts it: its keys and values.
func (r *Run) Bytes() int64 {
	var n int64
	for k, v := range r.Values {
		n += int64(len(k) + len(v))
	}
	return n
}

// Keys are the run's keys, sorted.
func (r *Run) Keys() []string {
	keys := make([]string, 0, len(r.Values))
	for k := range r.Values {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// LimitError is a set that would take a run's frame past its cap.
type LimitError struct {
	Run   string
	Size  int64
	Limit int64
}

func (e *LimitError) Error() string {
	return fmt.Sprintf("run %q: the frame would hold %d bytes; the store's limit is %d (limits.max_frame_bytes): %v", e.Run, e.Size, e.Limit, store.ErrLimit)
}

func (e *LimitError) Unwrap() error { return store.ErrLimit }

// OwnerError is a use of a run another agent started.
type OwnerError struct {
	Run, Owner, Agent string
}

func (e *OwnerError) Error() string {
	return fmt.Sprintf("run %q is agent %q's frame; agent %q may not use it: %v", e.Run, e.Owner, e.Agent, store.ErrDenied)
}

func (e *OwnerError) Unwrap() error { return store.ErrDenied }

// backend keeps runs: in memory, or in a directory.
type backend interface {
	// update loads run (nil when absent or past its time), lets fn change
	// it and keeps what fn returns (nil: removes the run), atomically
	// with respect to other updates of the run.
	update(run string, now time.Time, fn func(r *Run) (*Run, error)) error
	load(run string, now time.Time) (*Run, error)
	remove(run string) error
	// prune removes every run past its time, and says how many.
	prune(now time.Time) (int, error)
}

// Frames is a store's frames.
type Frames struct {
	st *store.Store
	b  backend
}

// Of is the frames of st: held in this process's memory when a
// long-lived process holds them (Hold), else in st's git directory.
func Of(st *store.Store) *Frames {
	if m := held(st.Dir()); m != nil {
		return &Frames{st: st, b: m}
	}
	return &Frames{st: st, b: dirBackend{dir: st.Dir() + "/" + Dir}}
}

// Options are who asks, and for a set how long the run is kept.
type Options struct {
	// Agent is who uses the run; "" is a Go caller acting for itself,
	// bound by no profile.
	Agent string
	// TTL is how long the run is kept after this write (0: DefaultTTL).
	TTL time.Duration
}

func checkName(what, s string, max int) error {
	switch {
	case s == "":
		return errkind.Errorf(ErrInvalid, "empty %s", what)
	case len(s) > max:
		return errkind.Errorf(ErrInvalid, "%s of %d bytes; the most is %d", what, len(s), max)
	case !utf8.ValidString(s) || strings.ContainsFunc(s, func(r rune) bool { return r < 0x20 || r == 0x7f }):
		return errkind.Errorf(ErrInvalid, "%s %q holds a control character or is not UTF-8", what, s)
	}
	return nil
}

func (f *Frames) limit(ctx context.Context, agent string, size int64) error {
	pr, err := sandbox.ProfileOf(ctx, f.st, agent)
	if err != nil {
		return err
	}
	return pr.CheckFrame(agent, size)
}

func owned(r *Run, run, agent string) error {
	if r != nil && r.Agent != agent {
		return &OwnerError{Run: run, Owner: r.Agent, Agent: agent}
	}
	return nil
}

// Set keeps value (JSON) at key in run's frame, starting the run if need
// be. The run's keys and values together must stay within the store's
// limits.max_frame_bytes and the agent's profile.
func (f *Frames) Set(ctx context.Context, run, key string, value []byte, o Options) error {
	if err := checkName("run id", run, maxRunID); err != nil {
		return err
	}
	if err := checkName("key", key, maxKey); err != nil {
		return err
	}
	if !json.Valid(value) {
		return errkind.Errorf(objects.ErrInvalidJSON, "frame value for %q is not JSON", key)
	}
	canon, err := objects.Canonical(value)
	if err != nil {
		return err
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, canon); err != nil {
		return err
	}
	compact := buf.Bytes()
	if err := f.limit(ctx, o.Agent, 0); err != nil {
		return err
	}
	ttl := o.TTL
	if ttl <= 0 {
		ttl = DefaultTTL
	}
	if ttl > MaxTTL {
		return errkind.Errorf(ErrInvalid, "a frame's time to live of %s; the most is %s (a run is one task's)", ttl, MaxTTL)
	}
	max := f.st.TierLimits().MaxFrameBytes
	now := time.Now()
	return f.b.update(run, now, func(r *Run) (*Run, error) {
		if err := owned(r, run, o.Agent); err != nil {
			return nil, err
		}
		if r == nil {
			r = &Run{ID: run, Agent: o.Agent, Values: map[string]json.RawMessage{}}
		}
		size := r.Bytes() + int64(len(key)+len(compact))
		if old, had := r.Values[key]; had {
			size -= int64(len(key) + len(old))
		}
		if size > max {
			return nil, &LimitError{Run: run, Size: size, Limit: max}
		}
		if err := f.limit(ctx, o.Agent, size); err != nil {
			return nil, err
		}
		r.Values[key] = compact
		r.Expires = now.Add(ttl)
		return r, nil
	})
}

// Get is the value at key in run's frame.
func (f *Frames) Get(ctx context.Context, run, key string, o Options) ([]byte, error) {
	r, err := f.Run(ctx, run, o)
	if err != nil {
		return nil, err
	}
	v, ok := r.Values[key]
	if !ok {
		return nil, errkind.Errorf(ErrNotFound, "run %q has no frame key %q", run, key)
	}
	return v, nil
}

// Run is run's frame (its keys, values and time left).
func (f *Frames) Run(ctx context.Context, run string, o Options) (*Run, error) {
	if err := checkName("run id", run, maxRunID); err != nil {
		return nil, err
	}
	if err := f.limit(ctx, o.Agent, 0); err != nil {
		return nil, err
	}
	r, err := f.b.load(run, time.Now())
	if err != nil {
		return nil, err
	}
	if r == nil {
		return nil, errkind.Errorf(ErrNotFound, "no frame for run %q (never set, ended, or past its time to live)", run)
	}
	if err := owned(r, run, o.Agent); err != nil {
		return nil, err
	}
	return r, nil
}

// Delete removes one key of run's frame.
func (f *Frames) Delete(ctx context.Context, run, key string, o Options) error {
	if err := checkName("run id", run, maxRunID); err != nil {
		return err
	}
	return f.b.update(run, time.Now(), func(r *Run) (*Run, error) {
		if r == nil {
			return nil, errkind.Errorf(ErrNotFound, "no frame for run %q", run)
		}
		if err := owned(r, run, o.Agent); err != nil {
			return nil, err
		}
		if _, ok := r.Values[key]; !ok {
			return nil, errkind.Errorf(ErrNotFound, "run %q has no frame key %q", run, key)
		}
		delete(r.Values, key)
		return r, nil
	})
}

// Clear discards run's frame: the run has ended. A run that has none
// (never set, ended already) is no error.
func (f *Frames) Clear(ctx context.Context, run string, o Options) error {
	if err := checkName("run id", run, maxRunID); err != nil {
		return err
	}
	return f.b.update(run, time.Now(), func(r *Run) (*Run, error) {
		return nil, owned(r, run, o.Agent)
	})
}

// End discards run's frame whoever started it: the run is over (its
// trajectory completed, its MCP session closed).
func (f *Frames) End(run string) error {
	if checkName("run id", run, maxRunID) != nil {
		return nil // no run of that id can exist
	}
	return f.b.remove(run)
}

// Prune discards every frame past its time to live, and says how many.
func (f *Frames) Prune(ctx context.Context) (int, error) {
	return f.b.prune(time.Now())
}

// Promote writes the value at key of run's frame into versioned state, at
// file's keypath, as one commit whose trailers (Frame-Run, Frame-Key) say
// where it came from. The frame keeps the value.
func (f *Frames) Promote(ctx context.Context, run, key, file, keypath string, o Options, wo store.WriteOptions) (*store.Mutation, error) {
	v, err := f.Get(ctx, run, key, o)
	if err != nil {
		return nil, err
	}
	wo.Agent = o.Agent
	if wo.Source == "" {
		wo.Source = "frame"
	}
	wo.Trailers = append(append([]repo.Trailer(nil), wo.Trailers...),
		repo.Trailer{Key: TrailerRun, Value: run}, repo.Trailer{Key: TrailerKey, Value: key})
	return f.st.Set(ctx, file, keypath, v, wo)
}

// RuleReserved is the server hook's name for a pushed file under
// ReservedPath.
const RuleReserved = "tier"

// ValidateFile refuses, for the server's hook, a pushed file under the
// paths the disposable tiers reserve: a frame or cache is never history.
func ValidateFile(path string, _ []byte) (rule, detail string) {
	if reserved(path) {
		return RuleReserved, "the frame and cache tiers are never versioned: " + ReservedPath + " and " + cacheReserved + " hold no committed file"
	}
	return "", ""
}

// cacheReserved is the cache tier's reserved tree path (package cache's
// ReservedPath; the one check guards both).
const cacheReserved = ".aiwg/cache/"

// reserved reports whether path is, or is under, a path the disposable
// tiers reserve, compared as a checkout could see it: after Unicode NFKC
// (a fullwidth letter is its ASCII one) and case folding, as the store
// folds names it must keep apart. .aiwg/Frame/x.json would be .aiwg/frame
// on a case-insensitive checkout; a plain file named .aiwg/frame would
// stand where the tier's directory is. It is the one check of both the
// in-process guard and the server's hook.
func reserved(path string) bool {
	fold := strings.ToLower(norm.NFKC.String(path))
	for _, dir := range []string{ReservedPath, cacheReserved} {
		if strings.HasPrefix(fold, dir) || fold == strings.TrimSuffix(dir, "/") {
			return true
		}
	}
	return false
}

// ErrReserved: a write of a file the disposable tiers reserve.
var ErrReserved = errors.New("reserved for a disposable tier")

// ReservedError is a write that would commit a file under the disposable
// tiers' reserved paths: refused data (store.ErrInvalidRecord), of the
// kind ErrReserved.
type ReservedError struct{ Path string }

func (e *ReservedError) Error() string {
	return fmt.Sprintf("%s: the frame and cache tiers are never versioned (%s and %s are reserved): %v", e.Path, ReservedPath, cacheReserved, ErrReserved)
}

func (e *ReservedError) Unwrap() []error { return []error{ErrReserved, store.ErrInvalidRecord} }

// Guard is the store.Guard that keeps every write (a put, an apply, a
// merge, a rollback) from committing a file under the disposable tiers'
// reserved paths.
func Guard(_ *store.Store, tx *repo.Tx, _ store.WriteOptions, _ []store.Change) error {
	for _, p := range tx.Changed() {
		if !reserved(p) {
			continue
		}
		if _, err := tx.ReadFile(p); errors.Is(err, repo.ErrNotFound) {
			continue // removing one is a repair
		}
		return &ReservedError{Path: p}
	}
	return nil
}

// FastForward is the store.FastForwardGuard that keeps a fast-forward
// (a merge, a pull that writes no commit of its own) from bringing a file
// under the disposable tiers' reserved paths.
func FastForward(s *store.Store, ours, theirs plumbing.Hash) error {
	files, err := s.Repo().DiffTrees(s.TreeOf(ours), s.TreeOf(theirs))
	if err != nil {
		return err
	}
	for _, f := range files {
		if reserved(f.Path) && !f.New.IsZero() {
			return &ReservedError{Path: f.Path}
		}
	}
	return nil
}
