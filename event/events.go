package event

import (
	"bytes"
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
)

// Events is the event API of one store (aiwgstate.Store.Events): the glue
// that keeps each Event as a file, added in the commit that emits it.
type Events struct{ s *store.Store }

// Of is the event API of s.
func Of(s *store.Store) *Events { return &Events{s: s} }

// Emit records an event from the writing agent: one commit adding its
// file, with the Event, Event-Id (and Event-Target) trailers that log and
// watch filter on. The event's correlation id is also the commit's
// Correlation-Id, unless wo gives one of its own.
func (v *Events) Emit(ctx context.Context, in Input, wo store.WriteOptions) (*Event, *store.Mutation, error) {
	if in.Correlation == "" {
		in.Correlation = wo.Correlation
	} else if wo.Correlation == "" {
		wo.Correlation = in.Correlation
	}
	// Checked before the commit, so that a malformed event is a usage
	// error that writes nothing.
	if _, err := New(in, "evt-00000000", v.s.Agent(wo.Agent), time.Unix(0, 0)); err != nil {
		return nil, nil, err
	}
	var ev *Event
	m, err := v.s.Commit(ctx, wo, "event "+in.Type, func(tx *repo.Tx, rec *store.Recorder) error {
		// The time is read with the branch lock held, so that a branch's
		// events are in time order.
		now := wo.Time
		if now.IsZero() {
			now = v.s.Now()
		}
		var err error
		ev, err = Add(tx, rec, in, v.s.Agent(wo.Agent), now)
		return err
	})
	if err != nil {
		return nil, nil, err
	}
	return ev, m, nil
}

// Add records an event from source at now in the write in progress: its
// file and its trailers. A feature's commit calls it to emit an event of
// its own in the same commit (lease contention, say).
func Add(tx *repo.Tx, rec *store.Recorder, in Input, source string, now time.Time) (*Event, error) {
	ev, err := New(in, objects.NewID(PrefixEvent), source, now)
	if err != nil {
		return nil, err
	}
	return ev, write(tx, rec, ev)
}

// write stages ev's file and records its trailers.
func write(tx *repo.Tx, rec *store.Recorder, ev *Event) error {
	b, err := ev.Encode()
	if err != nil {
		return err
	}
	if err := tx.WriteFile(ev.File(), b); err != nil {
		return err
	}
	rec.Add(store.OpCreate, ev.File(), "")
	rec.Trailer(store.TrailerEvent, ev.Type)
	rec.Trailer(store.TrailerEventID, ev.ID)
	if ev.Target != "" {
		rec.Trailer(store.TrailerEventTarget, ev.Target)
	}
	return nil
}

// AddAllowed is Add for an event a feature emits on its own in a write
// of its own (a lease's): where the access policy does not let source
// write the event's file, the write goes on without it (false), its own
// trailers telling what happened.
func AddAllowed(s *store.Store, tx *repo.Tx, rec *store.Recorder, in Input, source string, now time.Time) (*Event, bool, error) {
	ev, err := New(in, objects.NewID(PrefixEvent), source, now)
	if err != nil {
		return nil, false, err
	}
	p, err := s.PolicyAt(tx.Parent())
	if err != nil {
		return nil, false, err
	}
	if p != nil && p.Check(source, ev.File()) != nil {
		return nil, false, nil
	}
	return ev, true, write(tx, rec, ev)
}

// List returns the events at ro's revision that f keeps, in time order
// (then by id).
func (v *Events) List(ctx context.Context, f Filter, ro store.ReadOptions) ([]Event, error) {
	out := []Event{}
	err := v.Replay(ctx, f, ro, func(e *Event) bool {
		out = append(out, *e)
		return true
	})
	return out, err
}

// Replay calls fn with each event at ro's revision that f keeps, in time
// order (then by id), until fn returns false: the events a revision
// holds, from any branch, tag or commit, by type, agent, correlation id
// and time. It reads only the directories of the agents and days f can
// match.
func (v *Events) Replay(ctx context.Context, f Filter, ro store.ReadOptions, fn func(*Event) bool) error {
	if err := f.Validate(); err != nil {
		return err
	}
	root, err := v.s.Tree(ro)
	if err != nil {
		return err
	}
	r := v.s.Repo()
	agents, err := r.ReadDirAt(root, Dir)
	if errors.Is(err, repo.ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	var all []*Event
	for _, a := range agents {
		if !a.IsDir || (f.Source != "" && a.Name != AgentDir(f.Source)) {
			continue
		}
		days, err := r.ReadDirAt(root, Dir+"/"+a.Name)
		if err != nil {
			return err
		}
		for _, d := range days {
			if !d.IsDir || !dayInRange(d.Name, f) {
				continue
			}
			dir := Dir + "/" + a.Name + "/" + d.Name
			files, err := r.ReadDirAt(root, dir)
			if err != nil {
				return err
			}
			for _, file := range files {
				if err := ctx.Err(); err != nil {
					return err
				}
				if file.IsDir || !strings.HasSuffix(file.Name, ".json") {
					continue
				}
				path := dir + "/" + file.Name
				data, err := r.ReadFileAt(root, path)
				if err != nil {
					return err
				}
				e, err := Decode(path, data)
				if err != nil {
					return &store.BrokenFileError{Kind: store.BrokenEvent, File: path, Err: errkind.Errorf(store.ErrInvalidRecord, "%v", err)}
				}
				if f.Match(e) {
					all = append(all, e)
				}
			}
		}
	}
	slices.SortFunc(all, Less)
	for i, e := range all {
		if f.Limit > 0 && i == f.Limit {
			break
		}
		if !fn(e) {
			break
		}
	}
	return nil
}

// dayInRange: the day directory named day can hold events f keeps.
func dayInRange(day string, f Filter) bool {
	d, err := time.Parse(time.DateOnly, day)
	if err != nil {
		return true // not a day: Decode says what is wrong with its files
	}
	if !f.Since.IsZero() && !d.Add(24*time.Hour).After(f.Since.UTC()) {
		return false
	}
	if !f.Until.IsZero() && !d.Before(f.Until.UTC()) {
		return false
	}
	return true
}

// RecordGuard keeps the files of events/ events, as they were emitted: a
// write of any kind (put, set, mv, apply, a merge) is refused if it
// leaves a file there that does not decode as an event, changes an event
// already written, or adds one whose source is not the writing agent (a
// merge may add those its other parents hold, as they hold them). Removing
// one is allowed (a rollback of events/, retention): the history keeps
// it. It is a store.Guard.
func RecordGuard(s *store.Store, tx *repo.Tx, wo store.WriteOptions, _ []store.Change) error {
	var changed []string
	for _, f := range tx.Changed() {
		if strings.HasPrefix(f, Dir+"/") {
			changed = append(changed, f)
		}
	}
	if len(changed) == 0 {
		return nil
	}
	files := func(h plumbing.Hash) (store.Files, error) {
		c, err := s.Repo().ReadCommit(h)
		if err != nil {
			return nil, err
		}
		return s.TreeFiles(c.Tree), nil
	}
	var parent store.Files
	if !tx.Parent().IsZero() {
		var err error
		if parent, err = files(tx.Parent()); err != nil {
			return err
		}
	}
	var others []store.Files
	for _, h := range wo.MergeParents() {
		f, err := files(h)
		if err != nil {
			return err
		}
		others = append(others, f)
	}
	agent := s.Agent(wo.Agent)
	for _, f := range changed {
		data, err := tx.ReadFile(f)
		if errors.Is(err, repo.ErrNotFound) {
			continue // removed
		}
		if err != nil {
			return err
		}
		if err := CheckWrite(f, data, agent, parent, others); err != nil {
			if errors.Is(err, repo.ErrObjectMissing) {
				return err
			}
			return &store.InvalidRecordError{Dir: Dir, Err: errkind.Errorf(store.ErrInvalidRecord, "%v", err)}
		}
	}
	return nil
}

// CheckWrite is the rule over an event file a commit leaves (data) that
// RecordGuard holds writes to and the server's hook pushes to: it is an
// event stored where its fields say; an event the first parent holds
// (parent; nil: none) stays as it was; and a new one's source is the
// commit's author, unless another parent (others, a merge's) holds it as
// it is.
func CheckWrite(file string, data []byte, author string, parent store.Files, others []store.Files) error {
	e, err := Decode(file, data)
	if err != nil {
		return err
	}
	if parent != nil {
		old, err := parent.ReadFile(file)
		if err == nil {
			if !bytes.Equal(old, data) {
				return fmt.Errorf("%s: event %s was emitted already: an event is never rewritten", file, e.ID)
			}
			return nil
		} else if !store.IsNotFound(err) {
			return err
		}
	}
	if e.Source == author {
		return nil
	}
	for _, o := range others {
		if old, err := o.ReadFile(file); err == nil && bytes.Equal(old, data) {
			return nil // brought by the merge, as emitted
		}
	}
	return fmt.Errorf("%s: agent %q cannot emit an event as %q", file, author, e.Source)
}

// CheckFile refuses a file under events/ that is not an event stored
// where its fields say (CheckWrite holds a write to the rest of the rule).
func CheckFile(file string, data []byte) error {
	_, err := Decode(file, data)
	return err
}

// ValidateFile is CheckFile in the server's hook: the rule a pushed file
// breaks ("" for a file it has nothing to say on) and why.
var ValidateFile = store.RecordKind{Dir: Dir, Check: CheckFile}.ValidateFile

// ErrNoCursor: a subscriber that has no cursor yet.
var ErrNoCursor = fmt.Errorf("%w: no such subscriber", store.ErrNotFound)
