package store

import (
	"context"
	"errors"

	"github.com/aiwg/aiwg-state/objects"
	"github.com/aiwg/aiwg-state/statedoc"
	"github.com/aiwg/aiwg-state/verbiage"
)

// StateDocument is the state document's verbs on one ruled document of a
// store (Store.StateDocument): goals and sub-goals, events, requests,
// items, the active project, apply and reset, and key access through its
// shards. Each write is one commit, run through EditState: the verb's edit
// of the resolved document is package statedoc's, and values inside
// mounted subtrees go to their shard files. Commit subjects are those of
// the CLI's verbs (`goal create ship it`). Key and item paths are parsed
// by the caller (verbiage.ParsePath, statedoc.ItemPath), so that a Go
// program names them as it likes.
type StateDocument struct {
	s    *Store
	file string
}

// StateDocument is the API of the ruled state document file ("" =
// state/state.json). A missing document is written from the state
// document specification's default shape by the first verb that writes.
func (s *Store) StateDocument(file string) *StateDocument {
	return &StateDocument{s: s, file: file}
}

// Path is the document's path in the store, as reads and writes name it
// (the default when none was given).
func (d *StateDocument) Path() string {
	file := d.file
	if file == "" {
		file = statedoc.DefaultPath
	}
	if clean, err := documentPath(file); err == nil {
		return clean
	}
	return file
}

func (d *StateDocument) edit(ctx context.Context, wo WriteOptions, subject string, edit StateEdit) (*Mutation, error) {
	return d.s.EditState(ctx, d.file, wo, subject, edit)
}

// CreateGoal adds the goal titled title, its key the title normalized as
// a verbiage key ("ship it" is SHIP-IT); a goal of that key is
// statedoc.ErrExists.
func (d *StateDocument) CreateGoal(ctx context.Context, title, summary string, wo WriteOptions) (*Mutation, error) {
	return d.edit(ctx, wo, "goal create "+title, func(doc any) (any, []verbiage.Path, error) {
		return statedoc.CreateGoal(doc, title, summary)
	})
}

// CreateSubGoal adds the sub-goal titled title under goal (a missing goal
// is objects.ErrNotFound).
func (d *StateDocument) CreateSubGoal(ctx context.Context, goal, title, summary string, wo WriteOptions) (*Mutation, error) {
	return d.edit(ctx, wo, "goal sub create "+goal+" "+title, func(doc any) (any, []verbiage.Path, error) {
		return statedoc.CreateSubGoal(doc, goal, title, summary)
	})
}

// SetStatus sets the STATUS of goal, or of its sub-goal sub when sub is
// not "".
func (d *StateDocument) SetStatus(ctx context.Context, goal, sub, status string, wo WriteOptions) (*Mutation, error) {
	return d.edit(ctx, wo, "goal status "+goal+" "+status, func(doc any) (any, []verbiage.Path, error) {
		return statedoc.SetStatus(doc, goal, sub, status)
	})
}

// AddNote appends note to the NOTES of goal, or of its sub-goal sub.
func (d *StateDocument) AddNote(ctx context.Context, goal, sub, note string, wo WriteOptions) (*Mutation, error) {
	return d.edit(ctx, wo, "goal note "+goal, func(doc any) (any, []verbiage.Path, error) {
		return statedoc.AddNote(doc, goal, sub, note)
	})
}

// AddEvent appends an unseen event to the EVENTS of goal's sub-goal sub.
// An event without an ID gets a new one (evt-XXXXXXXX); one without a
// time is created now.
func (d *StateDocument) AddEvent(ctx context.Context, goal, sub string, ev statedoc.Event, wo WriteOptions) (*Mutation, error) {
	if ev.CreatedAt.IsZero() {
		ev.CreatedAt = d.s.now()
	}
	if ev.ID == "" {
		ev.ID = objects.NewID("evt")
	}
	return d.edit(ctx, wo, "event add "+goal+"/"+sub, func(doc any) (any, []verbiage.Path, error) {
		return statedoc.AddEvent(doc, goal, sub, ev)
	})
}

// Latest marks the first unseen event SEEN (one commit) and returns the
// briefing on it; when no event is unseen it writes nothing (the
// mutation is nil) and the briefing is the roll-up of sub-goals thinking
// and ready.
func (d *StateDocument) Latest(ctx context.Context, wo WriteOptions) (*statedoc.Briefing, *Mutation, error) {
	var b *statedoc.Briefing
	m, err := d.edit(ctx, wo, "latest", func(doc any) (any, []verbiage.Path, error) {
		out, paths, br, err := statedoc.Latest(doc)
		b = br
		return out, paths, err
	})
	if errors.Is(err, ErrNoChange) {
		return b, nil, nil
	}
	return b, m, err
}

// Request sends text to goal's sub-goal sub: IN-FLIGHT and LAST-REQUEST.
// One request is in flight at a time (statedoc.ErrInFlight).
func (d *StateDocument) Request(ctx context.Context, goal, sub, text string, wo WriteOptions) (*Mutation, error) {
	return d.edit(ctx, wo, "request "+goal+"/"+sub, func(doc any) (any, []verbiage.Path, error) {
		return statedoc.Request(doc, goal, sub, text)
	})
}

// FinishRequest clears IN-FLIGHT once the answer is in, appending note
// (when not "") to REQUEST-NOTES; with nothing in flight it is
// ErrNoChange.
func (d *StateDocument) FinishRequest(ctx context.Context, goal, sub, note string, wo WriteOptions) (*Mutation, error) {
	return d.edit(ctx, wo, "request done "+goal+"/"+sub, func(doc any) (any, []verbiage.Path, error) {
		return statedoc.FinishRequest(doc, goal, sub, note)
	})
}

// SetItem sets the item at p (statedoc.ItemPath) in scope sc, creating
// what is missing on the way.
func (d *StateDocument) SetItem(ctx context.Context, sc statedoc.Scope, p verbiage.Path, value any, wo WriteOptions) (*Mutation, error) {
	return d.edit(ctx, wo, "item set "+p.String(), func(doc any) (any, []verbiage.Path, error) {
		return statedoc.SetItem(doc, sc, p, value)
	})
}

// Item reads the item at p in scope sc, as canonical JSON.
func (d *StateDocument) Item(ctx context.Context, sc statedoc.Scope, p verbiage.Path, ro ReadOptions) ([]byte, error) {
	doc, err := d.Load(ctx, ro)
	if err != nil {
		return nil, err
	}
	v, err := statedoc.GetItem(doc.Resolved(), sc, p)
	if err != nil {
		return nil, err
	}
	return objects.Encode(v)
}

// DeleteItem deletes the item at p in scope sc.
func (d *StateDocument) DeleteItem(ctx context.Context, sc statedoc.Scope, p verbiage.Path, wo WriteOptions) (*Mutation, error) {
	return d.edit(ctx, wo, "item del "+p.String(), func(doc any) (any, []verbiage.Path, error) {
		return statedoc.DeleteItem(doc, sc, p)
	})
}

// SelectProject makes the project id the ACTIVE-PROJECT, with its title.
func (d *StateDocument) SelectProject(ctx context.Context, id, title string, wo WriteOptions) (*Mutation, error) {
	return d.edit(ctx, wo, "project select "+id, func(doc any) (any, []verbiage.Path, error) {
		return statedoc.SelectProject(doc, id, title)
	})
}

// Apply applies input, a JSON Patch (RFC 6902) over the resolved
// document or a replacement document, validated before it lands (see
// statedoc.ApplyDocument).
func (d *StateDocument) Apply(ctx context.Context, input []byte, wo WriteOptions) (*Mutation, error) {
	return d.edit(ctx, wo, "doc apply", func(doc any) (any, []verbiage.Path, error) {
		out, err := statedoc.ApplyDocument(doc, input)
		return out, []verbiage.Path{{}}, err
	})
}

// Reset puts the document back to the default shape, mending one broken
// by plain git; the shards it mounted are unmounted, not deleted.
func (d *StateDocument) Reset(ctx context.Context, wo WriteOptions) (*Mutation, error) {
	return d.s.ResetState(ctx, d.file, wo)
}

// Get reads the key at p (the whole document when empty) as canonical
// JSON, shards inlined, or as stored when noResolve or ro.NoResolve is
// set (refs as their strings, the key read in the shard that holds it).
func (d *StateDocument) Get(ctx context.Context, p verbiage.Path, ro ReadOptions, noResolve bool) ([]byte, error) {
	return d.s.getState(ctx, d.file, p, ro, noResolve)
}

// Set sets the key at p (keys normalized, as are the value's object
// keys); a "ref file://PATH" value mounts a shard (see statedoc.SetPath).
func (d *StateDocument) Set(ctx context.Context, p verbiage.Path, value any, wo WriteOptions) (*Mutation, error) {
	return d.edit(ctx, wo, "state-doc set "+p.String(), func(doc any) (any, []verbiage.Path, error) {
		return statedoc.SetPath(doc, p, value)
	})
}

// Delete deletes the key at p.
func (d *StateDocument) Delete(ctx context.Context, p verbiage.Path, wo WriteOptions) (*Mutation, error) {
	return d.edit(ctx, wo, "state-doc del "+p.String(), func(doc any) (any, []verbiage.Path, error) {
		return statedoc.DeletePath(doc, p)
	})
}

// Locate names the file that stores the key at p and the key path inside
// it (the shard when the key is in a mounted subtree): what blame and
// log of a mounted key follow.
func (d *StateDocument) Locate(ctx context.Context, p verbiage.Path, ro ReadOptions) (file, key string, err error) {
	return d.s.locateState(ctx, d.file, p, ro)
}

// Load reads the document at a revision with every shard it mounts, and
// validates it (the state-doc check): statedoc.ErrInvalidState when the
// store holds an invalid one.
func (d *StateDocument) Load(ctx context.Context, ro ReadOptions) (*statedoc.Doc, error) {
	return d.s.StateDoc(ctx, d.file, ro)
}
