package store

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
	"github.com/aiwg/aiwg-state/queue"
	"github.com/aiwg/aiwg-state/repo"
	"github.com/aiwg/aiwg-state/verbiage"
)

// Trailers of a queue commit.
const (
	// TrailerQueue is what the commit did: put or take.
	TrailerQueue = "Queue"
	// TrailerMessageID is the message it did it to.
	TrailerMessageID = "Message-Id"
)

// PutMessage adds payload (JSON) to the end of queue (the tiered state specification's
// queue.Put): one commit adding its file, authored by the producing agent.
func (s *Store) PutMessage(ctx context.Context, name string, payload []byte, wo WriteOptions) (*queue.Message, *Mutation, error) {
	if err := queue.CheckName(name); err != nil {
		return nil, nil, err
	}
	var msg *queue.Message
	m, err := s.Commit(ctx, wo, "queue put "+name, func(tx *repo.Tx, rec *Recorder) error {
		// Read with the branch lock held, so that enqueued_at follows
		// the queue's order.
		now := wo.Time
		if now.IsZero() {
			now = s.now()
		}
		files, err := queueFiles(tx, name)
		if err != nil {
			return err
		}
		var last uint64
		if len(files) > 0 {
			last, _ = queue.IsFile(files[len(files)-1])
		}
		if msg, err = queue.New(name, objects.NewID(verbiage.PrefixMessage), last, payload, s.Agent(wo.Agent), now); err != nil {
			return err
		}
		b, err := msg.Encode()
		if err != nil {
			return err
		}
		if err := tx.WriteFile(msg.File(), b); err != nil {
			return err
		}
		rec.Add(OpCreate, msg.File(), "")
		rec.Trailer(TrailerQueue, "put")
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
func queueFiles(tx *repo.Tx, name string) ([]string, error) {
	es, err := tx.ReadDir(queue.Dir + "/" + name)
	if errors.Is(err, repo.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []string
	for _, e := range es {
		if _, ok := queue.IsFile(e.Name); ok && !e.IsDir {
			out = append(out, e.Name)
		}
	}
	slices.Sort(out)
	return out, nil
}

// TakeOptions say how TakeMessage waits.
type TakeOptions struct {
	// Wait for a message up to this long when the queue is empty (0:
	// fail at once with ErrEmpty).
	Wait time.Duration
	// Poll is how often a waiting take reads the queue (default 50ms,
	// rising to 500ms).
	Poll time.Duration
}

// TakeMessage removes the first message of queue and returns it: one
// commit, authored by the consuming agent, so each message is taken by
// exactly one consumer however many take at once, and the history keeps
// it (git show COMMIT^:FILE).
func (s *Store) TakeMessage(ctx context.Context, name string, to TakeOptions, wo WriteOptions) (*queue.Message, *Mutation, error) {
	if err := queue.CheckName(name); err != nil {
		return nil, nil, err
	}
	if to.Wait < 0 {
		return nil, nil, fmt.Errorf("%w: a negative wait", ErrUsage)
	}
	deadline := s.now().Add(to.Wait)
	poll := to.Poll
	if poll <= 0 {
		poll = 50 * time.Millisecond
	}
	for {
		var msg *queue.Message
		m, err := s.Commit(ctx, wo, "queue take "+name, func(tx *repo.Tx, rec *Recorder) error {
			files, err := queueFiles(tx, name)
			if err != nil {
				return err
			}
			if len(files) == 0 {
				return errkind.Errorf(ErrEmpty, "queue %s is empty", name)
			}
			file := queue.Dir + "/" + name + "/" + files[0]
			data, err := tx.ReadFile(file)
			if err != nil {
				return err
			}
			if msg, err = queue.Decode(file, data); err != nil {
				return &BrokenFileError{Kind: BrokenQueueHead, File: file, Err: errkind.Errorf(ErrInvalidRecord, "%v: it stops the queue", err)}
			}
			if err := tx.Remove(file); err != nil {
				return err
			}
			rec.Add(OpDelete, file, "")
			rec.Trailer(TrailerQueue, "take")
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
			now := s.now()
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
			msgs, err := s.PeekMessages(ctx, name, 1, ReadOptions{Branch: wo.Branch})
			if err != nil {
				return nil, nil, err
			}
			if len(msgs) > 0 {
				break
			}
		}
	}
}

// PeekMessages returns the first n messages of queue (0: all) without
// taking them.
func (s *Store) PeekMessages(ctx context.Context, name string, n int, ro ReadOptions) ([]queue.Message, error) {
	if err := queue.CheckName(name); err != nil {
		return nil, err
	}
	if n < 0 {
		return nil, fmt.Errorf("%w: a negative count", ErrUsage)
	}
	root, err := s.Tree(ro)
	if err != nil {
		return nil, err
	}
	es, err := s.repo.ReadDirAt(root, queue.Dir+"/"+name)
	if errors.Is(err, repo.ErrNotFound) {
		return []queue.Message{}, nil
	}
	if err != nil {
		return nil, err
	}
	out := []queue.Message{}
	for _, e := range es {
		if _, ok := queue.IsFile(e.Name); !ok || e.IsDir {
			continue
		}
		if n > 0 && len(out) == n {
			break
		}
		file := queue.Dir + "/" + name + "/" + e.Name
		data, err := s.repo.ReadFileAt(root, file)
		if err != nil {
			return nil, err
		}
		m, err := queue.Decode(file, data)
		if err != nil {
			return nil, &BrokenFileError{Kind: BrokenQueueMessage, File: file, Err: errkind.Errorf(ErrInvalidRecord, "%v", err)}
		}
		out = append(out, *m)
	}
	return out, nil
}

// QueueInfo is a queue and how many messages it holds.
type QueueInfo struct {
	Name     string `json:"name"`
	Messages int    `json:"messages"`
}

// Queues lists the queues that hold messages, in name order.
func (s *Store) Queues(ctx context.Context, ro ReadOptions) ([]QueueInfo, error) {
	root, err := s.Tree(ro)
	if err != nil {
		return nil, err
	}
	counts := map[string]int{}
	err = s.repo.Walk(root, queue.Dir, func(path string, _ plumbing.Hash) error {
		dir, file := path[:strings.LastIndex(path, "/")], path[strings.LastIndex(path, "/")+1:]
		if _, ok := queue.IsFile(file); ok {
			counts[strings.TrimPrefix(dir, queue.Dir+"/")]++
		}
		return ctx.Err()
	})
	if err != nil && !errors.Is(err, repo.ErrNotFound) {
		return nil, err
	}
	out := []QueueInfo{}
	for name, n := range counts {
		out = append(out, QueueInfo{Name: name, Messages: n})
	}
	slices.SortFunc(out, func(a, b QueueInfo) int { return strings.Compare(a.Name, b.Name) })
	return out, nil
}
