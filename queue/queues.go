package queue

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/aiwg/aiwg-state/internal/errkind"
	"github.com/aiwg/aiwg-state/objects"
	"github.com/aiwg/aiwg-state/repo"
	"github.com/aiwg/aiwg-state/store"
	"github.com/aiwg/aiwg-state/verbiage"
)

// Queues is the queue API of one store (aiwgstate.Store.Queues): the
// glue that keeps each Message as a file and takes it in a commit.
type Queues struct{ s *store.Store }

// Of is the queue API of s.
func Of(s *store.Store) *Queues { return &Queues{s: s} }

// Trailers of a queue commit.
const (
	// Trailer is what the commit did: put or take.
	Trailer = "Queue"
	// TrailerMessageID is the message it did it to.
	TrailerMessageID = "Message-Id"
)

// Put adds payload (JSON) to the end of queue (the tiered state specification's
// queue.Put): one commit adding its file, authored by the producing agent.
func (q *Queues) Put(ctx context.Context, name string, payload []byte, wo store.WriteOptions) (*Message, *store.Mutation, error) {
	if err := CheckName(name); err != nil {
		return nil, nil, err
	}
	var msg *Message
	m, err := q.s.Commit(ctx, wo, "queue put "+name, func(tx *repo.Tx, rec *store.Recorder) error {
		// Read with the branch lock held, so that enqueued_at follows
		// the queue's order.
		now := wo.Time
		if now.IsZero() {
			now = q.s.Now()
		}
		files, err := files(tx, name)
		if err != nil {
			return err
		}
		var last uint64
		if len(files) > 0 {
			last, _ = IsFile(files[len(files)-1])
		}
		if msg, err = New(name, objects.NewID(verbiage.PrefixMessage), last, payload, q.s.Agent(wo.Agent), now); err != nil {
			return err
		}
		b, err := msg.Encode()
		if err != nil {
			return err
		}
		if err := tx.WriteFile(msg.File(), b); err != nil {
			return err
		}
		rec.Add(store.OpCreate, msg.File(), "")
		rec.Trailer(Trailer, "put")
		rec.Trailer(TrailerMessageID, msg.ID)
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	return msg, m, nil
}

// queueFiles lists the message files of queue name as tx sees them, in
// queue order.
func files(tx *repo.Tx, name string) ([]string, error) {
	es, err := tx.ReadDir(Dir + "/" + name)
	if errors.Is(err, repo.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []string
	for _, e := range es {
		if _, ok := IsFile(e.Name); ok && !e.IsDir {
			out = append(out, e.Name)
		}
	}
	slices.Sort(out)
	return out, nil
}

// TakeOptions say how Take waits.
type TakeOptions struct {
	// Wait for a message up to this long when the queue is empty (0:
	// fail at once with ErrEmpty).
	Wait time.Duration
	// Poll is how often a waiting take reads the queue (default 50ms,
	// rising to 500ms).
	Poll time.Duration
}

// Take removes the first message of queue and returns it: one
// commit, authored by the consuming agent, so each message is taken by
// exactly one consumer however many take at once, and the history keeps
// it (git show COMMIT^:FILE).
func (q *Queues) Take(ctx context.Context, name string, to TakeOptions, wo store.WriteOptions) (*Message, *store.Mutation, error) {
	if err := CheckName(name); err != nil {
		return nil, nil, err
	}
	if to.Wait < 0 {
		return nil, nil, fmt.Errorf("%w: a negative wait", store.ErrUsage)
	}
	deadline := q.s.Now().Add(to.Wait)
	poll := to.Poll
	if poll <= 0 {
		poll = 50 * time.Millisecond
	}
	for {
		var msg *Message
		m, err := q.s.Commit(ctx, wo, "queue take "+name, func(tx *repo.Tx, rec *store.Recorder) error {
			files, err := files(tx, name)
			if err != nil {
				return err
			}
			if len(files) == 0 {
				return errkind.Errorf(ErrEmpty, "queue %s is empty", name)
			}
			file := Dir + "/" + name + "/" + files[0]
			data, err := tx.ReadFile(file)
			if err != nil {
				return err
			}
			if msg, err = Decode(file, data); err != nil {
				return &store.BrokenFileError{Kind: store.BrokenQueueHead, File: file, Err: errkind.Errorf(store.ErrInvalidRecord, "%v: it stops the queue", err)}
			}
			if err := tx.Remove(file); err != nil {
				return err
			}
			rec.Add(store.OpDelete, file, "")
			rec.Trailer(Trailer, "take")
			rec.Trailer(TrailerMessageID, msg.ID)
			return nil
		})
		if err == nil {
			return msg, m, nil
		}
		if !errors.Is(err, ErrEmpty) {
			return nil, nil, err
		}
		// Empty: wait for a put, reading the queue without committing.
		for {
			now := q.s.Now()
			if !now.Before(deadline) {
				if to.Wait > 0 {
					err = fmt.Errorf("%w (waited %s)", err, to.Wait)
				}
				return nil, nil, err
			}
			select {
			case <-ctx.Done():
				return nil, nil, errkind.Errorf(ErrEmpty, "interrupted while waiting for a message on %s: %w", name, ctx.Err())
			case <-time.After(min(poll, deadline.Sub(now))):
			}
			poll = min(poll*3/2, 500*time.Millisecond)
			msgs, err := q.Peek(ctx, name, 1, store.ReadOptions{Branch: wo.Branch})
			if err != nil {
				return nil, nil, err
			}
			if len(msgs) > 0 {
				break
			}
		}
	}
}

// Peek returns the first n messages of queue (0: all) without
// taking them.
func (q *Queues) Peek(ctx context.Context, name string, n int, ro store.ReadOptions) ([]Message, error) {
	if err := CheckName(name); err != nil {
		return nil, err
	}
	if n < 0 {
		return nil, fmt.Errorf("%w: a negative count", store.ErrUsage)
	}
	root, err := q.s.Tree(ro)
	if err != nil {
		return nil, err
	}
	es, err := q.s.Repo().ReadDirAt(root, Dir+"/"+name)
	if errors.Is(err, repo.ErrNotFound) {
		return []Message{}, nil
	}
	if err != nil {
		return nil, err
	}
	out := []Message{}
	for _, e := range es {
		if _, ok := IsFile(e.Name); !ok || e.IsDir {
			continue
		}
		if n > 0 && len(out) == n {
			break
		}
		file := Dir + "/" + name + "/" + e.Name
		data, err := q.s.Repo().ReadFileAt(root, file)
		if err != nil {
			return nil, err
		}
		m, err := Decode(file, data)
		if err != nil {
			return nil, &store.BrokenFileError{Kind: store.BrokenQueueMessage, File: file, Err: errkind.Errorf(store.ErrInvalidRecord, "%v", err)}
		}
		out = append(out, *m)
	}
	return out, nil
}

// Info is a queue and how many messages it holds.
type Info struct {
	Name     string `json:"name"`
	Messages int    `json:"messages"`
}

// List lists the queues that hold messages, in name order.
func (q *Queues) List(ctx context.Context, ro store.ReadOptions) ([]Info, error) {
	root, err := q.s.Tree(ro)
	if err != nil {
		return nil, err
	}
	counts := map[string]int{}
	err = q.s.Repo().Walk(root, Dir, func(path string, _ plumbing.Hash) error {
		dir, file := path[:strings.LastIndex(path, "/")], path[strings.LastIndex(path, "/")+1:]
		if _, ok := IsFile(file); ok {
			counts[strings.TrimPrefix(dir, Dir+"/")]++
		}
		return ctx.Err()
	})
	if err != nil && !errors.Is(err, repo.ErrNotFound) {
		return nil, err
	}
	out := []Info{}
	for name, n := range counts {
		out = append(out, Info{Name: name, Messages: n})
	}
	slices.SortFunc(out, func(a, b Info) int { return strings.Compare(a.Name, b.Name) })
	return out, nil
}

// Records is the rule over the files of queues/: each is a queue message, whatever
// the write (put, set, mv, apply, a merge) or the push that leaves it
// there. RecordGuard is its store.Guard and ValidateFile its check in the
// server's hook.
var Records = store.RecordKind{Dir: Dir, Check: CheckFile}

var (
	RecordGuard  store.Guard = Records.Guard
	ValidateFile             = Records.ValidateFile
)

// CheckFile refuses a file under queues/ that is not a queue message.
func CheckFile(file string, data []byte) error {
	_, err := Decode(file, data)
	return err
}
