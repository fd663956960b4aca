package event

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"github.com/aiwg/aiwg-state/internal/errkind"
	"github.com/aiwg/aiwg-state/internal/sysfile"
	"github.com/aiwg/aiwg-state/repo"
	"github.com/aiwg/aiwg-state/store"
)

// subscribersDir is where subscribers live, under the store's git
// directory: local to this copy of the store, never pushed or fetched
// (no ref names them), and out of every tree.
const subscribersDir = "aiwg/subscribers"

// Subscriber is a durable subscription's state on this machine: its
// cursor and its dead letters.
type Subscriber struct {
	Name string
	dir  string
}

// Cursor is where a subscriber is: the commits whose whole history it has
// been delivered (store.WatchOptions.After).
type Cursor struct {
	Branch    string    `json:"branch,omitempty"`
	Commits   []string  `json:"cursor"`
	Delivered int64     `json:"delivered"`
	Updated   time.Time `json:"updated"`
}

// DeadLetter is a mutation a subscriber's handler failed on as many times
// as it was allowed to, set aside so that the commits after it are
// delivered.
type DeadLetter struct {
	Subscriber string          `json:"subscriber"`
	Mutation   *store.Mutation `json:"mutation"`
	Failures   int             `json:"failures"`
	Error      string          `json:"error"`
	Time       time.Time       `json:"time"`
}

// Subscriber is the subscriber named name on this copy of the store
// (created by its first Subscribe). A name is letters, digits, '_', '.'
// and '-', not starting with '.' or '-'.
func (v *Events) Subscriber(name string) (*Subscriber, error) {
	if name == "" || len(name) > 100 || !repo.ValidNamePart(name) {
		return nil, fmt.Errorf("%w: subscriber %q: a name is letters, digits, '_', '.' and '-'", store.ErrUsage, name)
	}
	return &Subscriber{Name: name, dir: filepath.Join(v.s.Dir(), filepath.FromSlash(subscribersDir), name)}, nil
}

// Subscribers lists the subscribers of this copy of the store, by name.
func (v *Events) Subscribers() ([]string, error) {
	es, err := os.ReadDir(filepath.Join(v.s.Dir(), filepath.FromSlash(subscribersDir)))
	if errors.Is(err, os.ErrNotExist) {
		return []string{}, nil
	}
	if err != nil {
		return nil, err
	}
	out := []string{}
	for _, e := range es {
		if e.IsDir() && repo.ValidNamePart(e.Name()) {
			out = append(out, e.Name())
		}
	}
	return out, nil
}

// Cursor reads the subscriber's cursor; ErrNoCursor when it has none.
func (sub *Subscriber) Cursor() (*Cursor, error) {
	b, err := os.ReadFile(filepath.Join(sub.dir, "cursor.json"))
	if errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("subscriber %s: %w", sub.Name, ErrNoCursor)
	}
	if err != nil {
		return nil, err
	}
	var c Cursor
	if err := json.Unmarshal(b, &c); err != nil || len(c.Commits) == 0 {
		return nil, errkind.Errorf(store.ErrInvalidRecord, "subscriber %s: its cursor %s is damaged (remove it to start again)", sub.Name, filepath.Join(sub.dir, "cursor.json"))
	}
	return &c, nil
}

// saveCursor replaces the cursor, durably: a crash leaves the old one or
// the new one.
func (sub *Subscriber) saveCursor(c *Cursor) error {
	b, err := json.Marshal(c)
	if err != nil {
		return err
	}
	path := filepath.Join(sub.dir, "cursor.json")
	tmp := path + ".tmp"
	os.Remove(tmp)
	if err := sysfile.WriteNew(tmp, 0o644, false, true, b, []byte("\n")); err != nil {
		return err
	}
	return sysfile.Rename(tmp, path)
}

// DeadLetters reads the subscriber's dead letters, oldest first.
func (sub *Subscriber) DeadLetters() ([]DeadLetter, error) {
	f, err := os.Open(filepath.Join(sub.dir, "dead-letters.jsonl"))
	if errors.Is(err, os.ErrNotExist) {
		return []DeadLetter{}, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	out := []DeadLetter{}
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 64<<20)
	for sc.Scan() {
		var d DeadLetter
		if json.Unmarshal(sc.Bytes(), &d) == nil {
			out = append(out, d) // a line a crash cut short is skipped
		}
	}
	return out, sc.Err()
}

func (sub *Subscriber) addDeadLetters(ds []DeadLetter) error {
	f, err := os.OpenFile(filepath.Join(sub.dir, "dead-letters.jsonl"), os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	var b []byte
	for _, d := range ds {
		line, err := json.Marshal(d)
		if err != nil {
			f.Close()
			return err
		}
		b = append(append(b, line...), '\n')
	}
	if _, err := f.Write(b); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// Remove forgets the subscriber: its cursor and its dead letters. It
// fails with store.ErrLocked while it runs.
func (sub *Subscriber) Remove() error {
	unlock, err := sub.lock()
	if err != nil {
		return err
	}
	defer unlock()
	if _, err := os.Stat(sub.dir); errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("subscriber %s: %w", sub.Name, ErrNoCursor)
	}
	for _, f := range []string{"cursor.json", "dead-letters.jsonl", "cursor.json.tmp"} {
		if err := os.Remove(filepath.Join(sub.dir, f)); err != nil && !errors.Is(err, os.ErrNotExist) {
			return err
		}
	}
	return nil
}

// lock holds the subscriber for this process: one delivery at a time. The
// lock is the kernel's (flock), so a killed process leaves none.
func (sub *Subscriber) lock() (func(), error) {
	if err := os.MkdirAll(sub.dir, 0o755); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(filepath.Join(sub.dir, "lock"), os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, errkind.Errorf(store.ErrLocked, "subscriber %s is running in another process", sub.Name)
		}
		return nil, err
	}
	return func() { f.Close() }, nil
}

// SubscribeOptions say what a durable subscription delivers, and how.
type SubscribeOptions struct {
	// Watch chooses the branch, the filters (Event, Path, Agent, …) and
	// the poll; From is where a subscriber without a cursor starts ("":
	// what comes after it starts). After and OnCursor are the
	// subscriber's own.
	Watch store.WatchOptions
	// Batch hands the handler up to this many mutations at once (0 or 1:
	// one at a time).
	Batch int
	// MaxWait is how long a batch waits to fill once its first mutation
	// came (0: it goes as soon as no other mutation is waiting).
	MaxWait time.Duration
	// MaxFailures: a batch the handler fails on this many times in a row
	// is set aside as dead letters, one a mutation, and delivery goes on
	// (0: retried until it succeeds).
	MaxFailures int
	// Retry is the wait before the first retry (default 100ms), doubled
	// each time up to 5s.
	Retry time.Duration
}

// Validate refuses a negative count or wait.
func (o *SubscribeOptions) Validate() error {
	if o.Batch < 0 || o.MaxWait < 0 || o.MaxFailures < 0 || o.Retry < 0 {
		return fmt.Errorf("%w: a subscription's batch, wait, failures and retry are not negative", store.ErrUsage)
	}
	if len(o.Watch.After) > 0 || o.Watch.OnCursor != nil {
		return fmt.Errorf("%w: a subscriber keeps its own cursor", store.ErrUsage)
	}
	return o.Watch.Validate()
}

// Subscribe delivers to handle, at least once and in commit order, every
// mutation of the branch that the options' filters keep, from the
// subscriber's cursor, until ctx ends (Subscribe then returns nil) or
// handle returns ErrStop. The cursor moves once handle has returned for
// a batch, so a process killed at any instant delivers again, when it
// restarts, what it had not finished, and nothing is missed: after a
// restart, after the branch moved on by a merge (the merged commits are
// delivered), after a reset (OnReset and OnDropped say so). A subscriber
// runs in one process at a time (store.ErrLocked otherwise).
func (sub *Subscriber) Subscribe(ctx context.Context, s *store.Store, o SubscribeOptions, handle func([]*store.Mutation) error) error {
	if err := o.Validate(); err != nil {
		return err
	}
	unlock, err := sub.lock()
	if err != nil {
		return err
	}
	defer unlock()
	cur, err := sub.Cursor()
	switch {
	case errors.Is(err, ErrNoCursor):
		h, err := s.Resolve(o.Watch.From, o.Watch.Branch)
		if err != nil {
			return err
		}
		cur = &Cursor{Branch: o.Watch.Branch, Commits: []string{h.String()}}
	case err != nil:
		return err
	}
	wo := o.Watch
	wo.From, wo.After = "", cur.Commits
	batchMax := max(o.Batch, 1)
	retry := o.Retry
	if retry <= 0 {
		retry = 100 * time.Millisecond
	}

	type item struct {
		m      *store.Mutation
		cursor []string
	}
	items := make(chan item, batchMax)
	wctx, stop := context.WithCancel(ctx)
	defer stop()
	watched := make(chan error, 1)
	send := func(it item) bool {
		select {
		case items <- it:
			return true
		case <-wctx.Done():
			return false
		}
	}
	// A mutation goes with the cursor that covers it (OnCursor follows
	// the function a mutation is streamed to), so that the cursor saved
	// once a batch is handled covers the batch's last mutation.
	var streamed *store.Mutation
	wo.OnCursor = func(c []string) {
		send(item{m: streamed, cursor: c})
		streamed = nil
	}
	go func() {
		watched <- s.Watch(wctx, wo, func(m *store.Mutation) bool {
			streamed = m
			return wctx.Err() == nil
		})
	}()

	var batch []*store.Mutation
	latest := cur.Commits
	saved := true
	var lastSave time.Time
	save := func() error {
		cur.Commits, cur.Updated = latest, time.Now().UTC()
		saved, lastSave = true, time.Now()
		return sub.saveCursor(cur)
	}
	if err := save(); err != nil { // the first run's starting point
		return err
	}
	flush := func() error {
		if len(batch) == 0 {
			return nil
		}
		wait := retry
		for failures := 1; ; failures++ {
			err := handle(batch)
			if err == nil || errors.Is(err, ErrStop) {
				cur.Delivered += int64(len(batch))
				batch = batch[:0]
				if serr := save(); serr != nil {
					return serr
				}
				return err
			}
			if o.MaxFailures > 0 && failures >= o.MaxFailures {
				var ds []DeadLetter
				for _, m := range batch {
					ds = append(ds, DeadLetter{Subscriber: sub.Name, Mutation: m, Failures: failures, Error: err.Error(), Time: time.Now().UTC()})
				}
				if derr := sub.addDeadLetters(ds); derr != nil {
					return derr
				}
				batch = batch[:0]
				return save()
			}
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(wait):
			}
			wait = min(wait*2, 5*time.Second)
		}
	}
	var timer <-chan time.Time
	for {
		if len(batch) > 0 && timer == nil {
			if o.MaxWait > 0 {
				timer = time.After(o.MaxWait)
			} else if len(items) == 0 {
				timer = time.After(0)
			}
		}
		select {
		case <-ctx.Done():
			if len(batch) == 0 && !saved {
				return save()
			}
			return nil
		case err := <-watched:
			if errors.Is(err, context.Canceled) && ctx.Err() != nil {
				return nil
			}
			if err == nil {
				err = flush()
			}
			return err
		case it := <-items:
			latest, saved = it.cursor, false
			if it.m != nil {
				batch = append(batch, it.m)
				if len(batch) >= batchMax {
					timer = nil
					if err := flush(); err != nil {
						return stopped(err, ctx)
					}
				}
				continue
			}
			if len(batch) == 0 && time.Since(lastSave) > 200*time.Millisecond {
				if err := save(); err != nil {
					return err
				}
			}
		case <-timer:
			timer = nil
			if err := flush(); err != nil {
				return stopped(err, ctx)
			}
		case <-time.After(250 * time.Millisecond):
			if len(batch) == 0 && !saved {
				if err := save(); err != nil {
					return err
				}
			}
		}
	}
}

// ErrStop, returned by a subscriber's handler, ends Subscribe once the
// batch counts as delivered.
var ErrStop = errors.New("stop the subscription")

// stopped is what Subscribe returns for err: nil when the handler asked
// to stop or ctx ended.
func stopped(err error, ctx context.Context) error {
	if errors.Is(err, ErrStop) || ctx.Err() != nil {
		return nil
	}
	return err
}
