package frame

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/aiwg/aiwg-state/store"
)

// memBackend holds a long-lived process's runs.
type memBackend struct {
	mu   sync.Mutex
	runs map[string]*Run
}

var holders = struct {
	sync.Mutex
	m map[string]*memBackend
	n map[string]int
}{m: map[string]*memBackend{}, n: map[string]int{}}

// Hold makes this process keep the frames of the store whose git
// directory is gitDir in memory, as `aiwg-state serve` and the MCP server
// do for the runs they serve, until release is called (then they are
// discarded: the process's runs end with it). Holds nest.
func Hold(gitDir string) (release func()) {
	key := filepath.Clean(gitDir)
	holders.Lock()
	if holders.m[key] == nil {
		holders.m[key] = &memBackend{runs: map[string]*Run{}}
	}
	holders.n[key]++
	holders.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			holders.Lock()
			defer holders.Unlock()
			if holders.n[key]--; holders.n[key] <= 0 {
				delete(holders.m, key)
				delete(holders.n, key)
			}
		})
	}
}

func held(gitDir string) *memBackend {
	holders.Lock()
	defer holders.Unlock()
	return holders.m[filepath.Clean(gitDir)]
}

func copyRun(r *Run) *Run {
	c := *r
	c.Values = make(map[string]json.RawMessage, len(r.Values))
	for k, v := range r.Values {
		c.Values[k] = v
	}
	return &c
}

func (m *memBackend) live(run string, now time.Time) *Run {
	r := m.runs[run]
	if r != nil && !now.Before(r.Expires) {
		delete(m.runs, run)
		return nil
	}
	return r
}

func (m *memBackend) update(run string, now time.Time, fn func(*Run) (*Run, error)) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	var cur *Run
	if r := m.live(run, now); r != nil {
		cur = copyRun(r) // fn's failure leaves the run as it was
	}
	next, err := fn(cur)
	if err != nil {
		return err
	}
	if next == nil {
		delete(m.runs, run)
		return nil
	}
	if cur == nil && len(m.runs) >= maxHeldRuns {
		// Agents must not grow a server's memory without bound, one
		// capped run at a time: runs past their time go first.
		for id := range m.runs {
			m.live(id, now)
		}
		if len(m.runs) >= maxHeldRuns {
			return &TooManyRunsError{Limit: maxHeldRuns}
		}
	}
	m.runs[run] = next
	return nil
}

// maxHeldRuns bounds the runs a process holds in memory at once.
var maxHeldRuns = 4096

// TooManyRunsError is a new run in a process that holds as many as it may.
type TooManyRunsError struct{ Limit int }

func (e *TooManyRunsError) Error() string {
	return fmt.Sprintf("this server holds %d runs' frames, the most it may; end some (frame clear) or let their time to live pass: %v", e.Limit, store.ErrLimit)
}

func (e *TooManyRunsError) Unwrap() error { return store.ErrLimit }

func (m *memBackend) load(run string, now time.Time) (*Run, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if r := m.live(run, now); r != nil {
		return copyRun(r), nil
	}
	return nil, nil
}

func (m *memBackend) remove(run string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.runs, run)
	return nil
}

func (m *memBackend) prune(now time.Time) (int, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	n := 0
	for id := range m.runs {
		if m.live(id, now) == nil {
			n++
		}
	}
	return n, nil
}

// dirBackend keeps each run as one file, named by its id's hash so that
// no id reaches outside the directory, replaced whole (a temporary file
// renamed over it) under the frames' lock, so a reader sees a frame as
// one write left it, never half of two.
type dirBackend struct{ dir string }

func (d dirBackend) file(run string) string {
	sum := sha256.Sum256([]byte(run))
	return filepath.Join(d.dir, hex.EncodeToString(sum[:16])+".json")
}

func (d dirBackend) read(path, run string, now time.Time) (*Run, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var r Run
	if err := json.Unmarshal(data, &r); err != nil || r.ID != run {
		// Damaged, or (by a hash collision) another run's: scratch
		// values are not worth failing a run for; start afresh.
		return nil, nil
	}
	if r.Values == nil {
		r.Values = map[string]json.RawMessage{}
	}
	if !now.Before(r.Expires) {
		return nil, nil
	}
	return &r, nil
}

// lock takes the frames' lock file (flock: released by the kernel if
// this process dies). One lock for every run: a frame's update is a few
// small file operations, and a lock file per run would pile up (removing
// one while another process waits on it would let two in at once).
func (d dirBackend) lock(string) (func(), error) {
	if err := os.MkdirAll(d.dir, 0o777); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(filepath.Join(d.dir, "lock"), os.O_CREATE|os.O_RDWR, 0o666)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		f.Close()
		return nil, err
	}
	return func() { f.Close() }, nil
}

func (d dirBackend) update(run string, now time.Time, fn func(*Run) (*Run, error)) error {
	path := d.file(run)
	unlock, err := d.lock(path)
	if err != nil {
		return err
	}
	defer unlock()
	cur, err := d.read(path, run, now)
	if err != nil {
		return err
	}
	next, err := fn(cur)
	if err != nil {
		return err
	}
	if next == nil {
		return d.drop(path)
	}
	data, err := json.Marshal(next)
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(d.dir, "tmp-*")
	if err != nil {
		return err
	}
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		os.Remove(tmp.Name())
		return err
	}
	if err := tmp.Close(); err != nil {
		os.Remove(tmp.Name())
		return err
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		os.Remove(tmp.Name())
		return err
	}
	return nil
}

// drop removes a run's file.
func (d dirBackend) drop(path string) error {
	if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}

func (d dirBackend) load(run string, now time.Time) (*Run, error) {
	return d.read(d.file(run), run, now)
}

func (d dirBackend) remove(run string) error {
	path := d.file(run)
	if _, err := os.Stat(d.dir); errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	unlock, err := d.lock(path)
	if err != nil {
		return err
	}
	defer unlock()
	return d.drop(path)
}

func (d dirBackend) prune(now time.Time) (int, error) {
	es, err := os.ReadDir(d.dir)
	if errors.Is(err, fs.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	n := 0
	for _, e := range es {
		name := e.Name()
		path := filepath.Join(d.dir, name)
		switch {
		case strings.HasPrefix(name, "tmp-"):
			// A writer's temporary file, left by a crash if older
			// than any write takes.
			if info, err := e.Info(); err == nil && now.Sub(info.ModTime()) > time.Hour {
				os.Remove(path)
			}
		case strings.HasSuffix(name, ".json"):
			data, err := os.ReadFile(path)
			if err != nil {
				continue
			}
			var r Run
			if json.Unmarshal(data, &r) == nil && now.Before(r.Expires) {
				continue
			}
			if unlock, err := d.lock(path); err == nil {
				// Read again under the lock: a set may have renewed it.
				if data, err := os.ReadFile(path); err == nil {
					var r Run
					if json.Unmarshal(data, &r) != nil || !now.Before(r.Expires) {
						if os.Remove(path) == nil {
							n++
						}
					}
				}
				unlock()
			}
		}
	}
	return n, nil
}
