package frame

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/aiwg/aiwg-state/internal/sysfile"
	"github.com/aiwg/aiwg-state/store"
)

// memBackend holds a long-lived process's runs.
type memBackend struct {
	mu   sync.Mutex
	runs map[string]*Run
	// What the runs take (memBytes), kept up to date by put and del so
	// that a set never walks every run: by run, in all, and by agent.
	size       map[string]int64
	total      int64
	agentRuns  map[string]int
	agentBytes map[string]int64
}

// put holds r as run, keeping the counts.
func (m *memBackend) put(run string, r *Run) {
	m.del(run)
	if m.size == nil {
		m.size, m.agentRuns, m.agentBytes = map[string]int64{}, map[string]int{}, map[string]int64{}
	}
	n := memBytes(r)
	m.runs[run], m.size[run] = r, n
	m.total += n
	m.agentRuns[r.Agent]++
	m.agentBytes[r.Agent] += n
}

// del drops run, keeping the counts.
func (m *memBackend) del(run string) {
	r, ok := m.runs[run]
	if !ok {
		return
	}
	n := m.size[run]
	delete(m.runs, run)
	delete(m.size, run)
	m.total -= n
	if m.agentRuns[r.Agent]--; m.agentRuns[r.Agent] <= 0 {
		delete(m.agentRuns, r.Agent)
		delete(m.agentBytes, r.Agent)
	} else {
		m.agentBytes[r.Agent] -= n
	}
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
		m.del(run)
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
		m.del(run)
		return nil
	}
	if err := m.makeRoom(run, next, now); err != nil {
		return err
	}
	m.put(run, next)
	return nil
}

// Bounds of the runs a process holds in memory: in all, and per agent, so
// that no agent grows a server's memory without bound one capped run at a
// time, nor fills it so that others cannot start one.
var (
	maxHeldRuns          = 4096
	maxHeldBytes   int64 = 256 << 20
	maxAgentRuns         = 64
	maxAgentBytes  int64 = 32 << 20
	runOverhead    int64 = 512 // a Run, its map and its id, as memory counts them
	keyOverhead    int64 = 64  // a map entry and its slices' headers
	maxAgentReport       = "64 runs and 32 MiB"
)

// memBytes is what a run takes in memory: its keys and values and what
// holding them costs, not only Bytes (a run of many tiny keys costs more
// than their length).
func memBytes(r *Run) int64 {
	return r.Bytes() + runOverhead + int64(len(r.ID)+len(r.Agent)) + keyOverhead*int64(len(r.Values))
}

// makeRoom lets run hold next within the bounds: runs past their time go
// first, then the same agent's least recently set runs (its own scratch
// values, never another agent's). What does not fit then is refused.
func (m *memBackend) makeRoom(run string, next *Run, now time.Time) error {
	n := memBytes(next)
	fits := func() (bool, bool) {
		runs, bytes := len(m.runs)+1, m.total+n
		agentRuns, agentBytes := m.agentRuns[next.Agent]+1, m.agentBytes[next.Agent]+n
		if old, ok := m.runs[run]; ok { // replaced: counted once
			runs--
			bytes -= m.size[run]
			if old.Agent == next.Agent {
				agentRuns--
				agentBytes -= m.size[run]
			}
		}
		return runs <= maxHeldRuns && bytes <= maxHeldBytes, agentRuns <= maxAgentRuns && agentBytes <= maxAgentBytes
	}
	all, own := fits()
	if all && own {
		return nil
	}
	for id := range m.runs {
		m.live(id, now)
	}
	for {
		if all, own = fits(); all && own {
			return nil
		}
		// The agent's oldest other run (the soonest to expire: the
		// least recently set, as a set renews the time to live).
		oldest := ""
		for id, r := range m.runs {
			if id != run && r.Agent == next.Agent && (oldest == "" || r.Expires.Before(m.runs[oldest].Expires)) {
				oldest = id
			}
		}
		if oldest == "" {
			return &TooManyRunsError{Limit: maxHeldRuns, Bytes: maxHeldBytes}
		}
		m.del(oldest)
	}
}

// TooManyRunsError is a run that does not fit in what a process holds,
// even once runs past their time and the agent's own older runs are gone.
type TooManyRunsError struct {
	Limit int
	Bytes int64
}

func (e *TooManyRunsError) Error() string {
	return fmt.Sprintf("the frames held here are full (at most %d runs and %d bytes in all; each agent's own runs, at most %s, make room for its new ones); let time to live pass, or end runs (frame clear): %v", e.Limit, e.Bytes, maxAgentReport, store.ErrLimit)
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
	m.del(run)
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
	if err := d.makeRoom(path, next.Agent, int64(len(data)), cur == nil, now); err != nil {
		return err
	}
	return sysfile.Replace(d.dir, path, data)
}

// Bounds of the runs kept on disk (a command run by itself, no server):
// the directory's files, and their size, rounded up to whole blocks as
// the disk counts them.
var (
	maxDiskRuns            = 1024
	maxDiskBytes     int64 = 256 << 20
	maxDiskAgentRuns       = 64
)

// diskBlock is the unit a file's size is counted in: a file of one byte
// still takes a block.
const diskBlock = 4096

func onDisk(n int64) int64 { return (n + diskBlock - 1) / diskBlock * diskBlock }

// makeRoom lets path (agent's run) take a file of size bytes within the
// disk bounds (called under the lock, the only writer): runs past their
// time go first, then agent's own least recently set runs, never another
// agent's. The bounds are counted from the directory's names and sizes;
// whose runs are whose is read (from each file's first bytes) only when a
// new run would pass a bound, or the directory holds more runs than one
// agent may.
func (d dirBackend) makeRoom(path, agent string, size int64, isNew bool, now time.Time) error {
	count := func() (int, int64) {
		es, err := os.ReadDir(d.dir)
		if err != nil {
			return 0, 0
		}
		runs, bytes := 1, onDisk(size)
		for _, e := range es {
			if !strings.HasSuffix(e.Name(), ".json") || filepath.Join(d.dir, e.Name()) == path {
				continue
			}
			runs++
			if info, err := e.Info(); err == nil {
				bytes += onDisk(info.Size())
			}
		}
		return runs, bytes
	}
	runs, bytes := count()
	fits := runs <= maxDiskRuns && bytes <= maxDiskBytes
	if fits && (!isNew || runs <= maxDiskAgentRuns) {
		return nil
	}
	d.removeExpired(now)
	for {
		runs, bytes = count()
		own := d.runsOf(agent, path)
		if runs <= maxDiskRuns && bytes <= maxDiskBytes && (!isNew || len(own)+1 <= maxDiskAgentRuns) {
			return nil
		}
		if len(own) == 0 {
			return &TooManyRunsError{Limit: maxDiskRuns, Bytes: maxDiskBytes}
		}
		oldest := own[0]
		for _, h := range own[1:] {
			if h.expires.Before(oldest.expires) {
				oldest = h
			}
		}
		if err := d.drop(oldest.path); err != nil {
			return err
		}
	}
}

type runHead struct {
	path    string
	expires time.Time
}

// runsOf lists agent's runs on disk but the one at except, reading each
// file's first bytes only (a Run's fields come in order: run, agent,
// expires, values).
func (d dirBackend) runsOf(agent, except string) []runHead {
	es, err := os.ReadDir(d.dir)
	if err != nil {
		return nil
	}
	var out []runHead
	for _, e := range es {
		path := filepath.Join(d.dir, e.Name())
		if !strings.HasSuffix(e.Name(), ".json") || path == except {
			continue
		}
		if a, exp, ok := readHead(path); ok && a == agent {
			out = append(out, runHead{path: path, expires: exp})
		}
	}
	return out
}

// readHead reads a run file's agent and expiry from its first bytes.
func readHead(path string) (agent string, expires time.Time, ok bool) {
	f, err := os.Open(path)
	if err != nil {
		return "", time.Time{}, false
	}
	defer f.Close()
	dec := json.NewDecoder(io.LimitReader(f, 4096))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return "", time.Time{}, false
	}
	var haveAgent, haveExpires bool
	for !(haveAgent && haveExpires) {
		k, err := dec.Token()
		if err != nil {
			return "", time.Time{}, false
		}
		switch k {
		case "agent":
			haveAgent = dec.Decode(&agent) == nil
		case "expires":
			haveExpires = dec.Decode(&expires) == nil
		case "run":
			var s string
			if dec.Decode(&s) != nil {
				return "", time.Time{}, false
			}
		default:
			return "", time.Time{}, false
		}
	}
	return agent, expires, true
}

// removeExpired removes the runs past their time; the caller holds the
// lock.
func (d dirBackend) removeExpired(now time.Time) int {
	es, err := os.ReadDir(d.dir)
	if err != nil {
		return 0
	}
	n := 0
	for _, e := range es {
		if !strings.HasSuffix(e.Name(), ".json") {
			continue
		}
		path := filepath.Join(d.dir, e.Name())
		data, err := os.ReadFile(path)
		if err != nil {
			continue
		}
		var r Run
		if json.Unmarshal(data, &r) != nil || !now.Before(r.Expires) {
			if os.Remove(path) == nil {
				n++
			}
		}
	}
	return n
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
