package jsonmerge

import (
	"errors"
	"fmt"

	"github.com/aiwg/aiwg-state/objects"
	"github.com/aiwg/aiwg-state/verbiage"
)

// ErrInvalidRecord is wrapped by DecodeRecord's errors.
var ErrInvalidRecord = errors.New("invalid conflict record")

// Record is what is left to resolve in one file after a merge, stored as
// data: never as markers inside the JSON. Keys holds the key-level
// conflicts, each with its base, ours and theirs values; Reason is set
// instead when the file could not be merged key by key (then the three
// copies are named by BaseID, OursID and TheirsID, git blob ids, "" when
// absent on that side).
//
// Encoded, a record is canonical JSON:
//
//	{"file": "plan.json", "strategy": "merge-objects",
//	 "keys": [{"path": "risk.level", "reason": "both sides changed the string differently",
//	           "base": "low", "ours": "high", "theirs": "medium"}]}
//
// A side's value is absent from a key entry when the key does not exist on
// that side ("ours_missing": true says so explicitly).
type Record struct {
	File     string
	Strategy Strategy
	Reason   string
	Keys     []Conflict

	BaseID, OursID, TheirsID string
}

// Encode renders the record as canonical JSON.
func (r Record) Encode() ([]byte, error) {
	m := map[string]any{"file": r.File}
	if r.Strategy != "" {
		m["strategy"] = string(r.Strategy)
	}
	if r.Reason != "" {
		m["reason"] = r.Reason
	}
	for k, id := range map[string]string{"base_id": r.BaseID, "ours_id": r.OursID, "theirs_id": r.TheirsID} {
		if id != "" {
			m[k] = id
		}
	}
	if len(r.Keys) > 0 {
		keys := make([]any, len(r.Keys))
		for i, c := range r.Keys {
			e := map[string]any{"path": c.Path.String()}
			if c.Reason != "" {
				e["reason"] = c.Reason
			}
			for _, s := range [...]struct {
				name    string
				v       any
				missing bool
			}{{"base", c.Base, c.BaseMissing}, {"ours", c.Ours, c.OursMissing}, {"theirs", c.Theirs, c.TheirsMissing}} {
				if s.missing {
					e[s.name+"_missing"] = true
				} else {
					e[s.name] = s.v
				}
			}
			keys[i] = e
		}
		m["keys"] = keys
	}
	return objects.Encode(m)
}

// DecodeRecord reads what Encode writes.
func DecodeRecord(data []byte) (Record, error) {
	v, err := objects.Decode(data)
	if err != nil {
		return Record{}, fmt.Errorf("%w: %v", ErrInvalidRecord, err)
	}
	m, ok := v.(map[string]any)
	if !ok {
		return Record{}, fmt.Errorf("%w: not an object", ErrInvalidRecord)
	}
	str := func(k string) (string, error) {
		x, ok := m[k]
		if !ok {
			return "", nil
		}
		s, ok := x.(string)
		if !ok {
			return "", fmt.Errorf("%w: %s is not a string", ErrInvalidRecord, k)
		}
		return s, nil
	}
	var r Record
	var strategy string
	for _, f := range [...]struct {
		k string
		p *string
	}{{"file", &r.File}, {"strategy", &strategy}, {"reason", &r.Reason}, {"base_id", &r.BaseID}, {"ours_id", &r.OursID}, {"theirs_id", &r.TheirsID}} {
		if *f.p, err = str(f.k); err != nil {
			return Record{}, err
		}
	}
	if r.File == "" {
		return Record{}, fmt.Errorf("%w: no file", ErrInvalidRecord)
	}
	if strategy != "" {
		if r.Strategy, err = ParseStrategy(strategy); err != nil {
			return Record{}, fmt.Errorf("%w: %v", ErrInvalidRecord, err)
		}
	}
	keys, ok := m["keys"]
	if !ok {
		return r, nil
	}
	list, ok := keys.([]any)
	if !ok {
		return Record{}, fmt.Errorf("%w: keys is not an array", ErrInvalidRecord)
	}
	for i, k := range list {
		e, ok := k.(map[string]any)
		if !ok {
			return Record{}, fmt.Errorf("%w: keys.%d is not an object", ErrInvalidRecord, i)
		}
		ps, _ := e["path"].(string)
		p, err := verbiage.ParsePath(ps)
		if err != nil {
			return Record{}, fmt.Errorf("%w: keys.%d.path: %v", ErrInvalidRecord, i, err)
		}
		c := Conflict{Path: p}
		c.Reason, _ = e["reason"].(string)
		for _, s := range [...]struct {
			name    string
			v       *any
			missing *bool
		}{{"base", &c.Base, &c.BaseMissing}, {"ours", &c.Ours, &c.OursMissing}, {"theirs", &c.Theirs, &c.TheirsMissing}} {
			v, present := e[s.name]
			gone, _ := e[s.name+"_missing"].(bool)
			if present == gone {
				return Record{}, fmt.Errorf("%w: keys.%d: %s must be either a value or %s_missing", ErrInvalidRecord, i, s.name, s.name)
			}
			*s.v, *s.missing = v, gone
		}
		r.Keys = append(r.Keys, c)
	}
	return r, nil
}

// Driver is the merge git runs as a merge driver (`aiwg-state merge-file`,
// git's %O %A %B): three copies of one file as bytes. An empty base is an
// absent one: git passes an empty file when both sides added the path.
// A path that is not a .json file is merged as JSON all the same when it is
// empty (git gave no %P): the caller asked for a JSON driver. The result, written into ours by the caller, is exactly what the store's
// own merge writes for the same path and clocks, so a clone's `git merge`
// and `aiwg-state merge` agree byte for byte.
func Driver(path string, base, ours, theirs []byte, clocks [2]Clock, opts Options) (FileResult, *Record) {
	b := File{Data: base, Missing: len(base) == 0}
	o := File{Data: ours, Clock: clocks[0]}
	t := File{Data: theirs, Clock: clocks[1]}
	r := mergeFile(path == "" || IsJSONPath(path), b, o, t, opts)
	if r.Clean() {
		return r, nil
	}
	return r, &Record{File: path, Strategy: opts.Strategy, Reason: r.Reason, Keys: r.Conflicts}
}
