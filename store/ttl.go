package store

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/aiwg/aiwg-state/internal/errkind"
	"github.com/aiwg/aiwg-state/objects"
	"github.com/aiwg/aiwg-state/policy"
	"github.com/aiwg/aiwg-state/repo"
	"github.com/aiwg/aiwg-state/verbiage"
)

// A document's time to live, and its keys', are kept beside it in a
// sidecar file: .aiwg/ttl/<document path>, canonical JSON
//
//	{"expires_at": "2026-11-26T10:00:00Z", "keys": {"risk.level": "2026-11-26T09:30:00Z"}}
//
// A file of the tree, so it travels with the document through clones,
// pushes and merges, and reads the same to plain git. An expired value
// reads as absent from the moment it expires (judged by the store's
// clock); RemoveExpired removes it, and its sidecar entry, in one commit.
// The access policy judges a sidecar as the document it is about, and the
// server's hook holds a pushed sidecar to CheckTTLFile, as a write is.

// TTLDir is where the sidecars live.
const TTLDir = policy.TTLDir

// TTLPath is the sidecar of a document.
func TTLPath(file string) string { return TTLDir + file }

// TTL is the time-to-live sidecar of one document.
type TTL struct {
	// ExpiresAt is when the whole document expires (nil: never).
	ExpiresAt *time.Time `json:"expires_at,omitempty"`
	// Keys are when keys of the document expire, by canonical key path.
	Keys map[string]time.Time `json:"keys,omitempty"`
}

// empty reports whether the sidecar says nothing (and is removed).
func (t *TTL) empty() bool { return t == nil || (t.ExpiresAt == nil && len(t.Keys) == 0) }

// DocumentExpired reports whether the whole document has expired at now.
func (t *TTL) DocumentExpired(now time.Time) bool {
	return t != nil && t.ExpiresAt != nil && !now.Before(*t.ExpiresAt)
}

// ExpiredKeys are the keys that have expired at now, sorted.
func (t *TTL) ExpiredKeys(now time.Time) []string {
	if t == nil {
		return nil
	}
	var out []string
	for k, at := range t.Keys {
		if !now.Before(at) {
			out = append(out, k)
		}
	}
	sort.Strings(out)
	return out
}

// forget drops the entries of key p and of every key under it (their
// values were replaced or deleted); the empty path drops everything.
func (t *TTL) forget(p verbiage.Path) {
	if t == nil {
		return
	}
	if len(p) == 0 {
		t.ExpiresAt, t.Keys = nil, nil
		return
	}
	for k := range t.Keys {
		if q, err := verbiage.ParsePath(k); err == nil && q.HasPrefix(p) {
			delete(t.Keys, k)
		}
	}
}

// EncodeTTL renders a sidecar as canonical JSON.
func EncodeTTL(t *TTL) ([]byte, error) {
	m := map[string]any{}
	if t.ExpiresAt != nil {
		m["expires_at"] = t.ExpiresAt.UTC().Format(time.RFC3339)
	}
	if len(t.Keys) > 0 {
		keys := map[string]any{}
		for k, at := range t.Keys {
			keys[k] = at.UTC().Format(time.RFC3339)
		}
		m["keys"] = keys
	}
	return objects.Encode(m)
}

// ParseTTL reads a sidecar: a JSON object with expires_at (an RFC 3339
// time) and keys (key paths, without wildcards or appends, to RFC 3339
// times), nothing else. A sidecar that says nothing is refused too: the
// store removes one rather than leave it.
func ParseTTL(data []byte) (*TTL, error) {
	v, err := objects.Decode(data)
	if err != nil {
		return nil, err
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, errkind.Errorf(ErrInvalidRecord, "a time-to-live file is a JSON object, not %s", objects.KindOf(v))
	}
	t := &TTL{}
	for k, v := range m {
		switch k {
		case "expires_at":
			at, err := ttlTime(v)
			if err != nil {
				return nil, fmt.Errorf("expires_at: %w", err)
			}
			t.ExpiresAt = &at
		case "keys":
			keys, ok := v.(map[string]any)
			if !ok {
				return nil, errkind.Errorf(ErrInvalidRecord, "keys is an object of key paths to times, not %s", objects.KindOf(v))
			}
			t.Keys = map[string]time.Time{}
			for key, v := range keys {
				p, err := verbiage.ParsePath(key)
				if err != nil || len(p) == 0 || p.String() != key || slices.ContainsFunc(p, func(s verbiage.Segment) bool { return s.Wildcard || s.Append() }) {
					return nil, errkind.Errorf(ErrInvalidRecord, "keys: %q is not a canonical key path of one key", key)
				}
				at, err := ttlTime(v)
				if err != nil {
					return nil, fmt.Errorf("keys: %s: %w", key, err)
				}
				t.Keys[key] = at
			}
		default:
			return nil, errkind.Errorf(ErrInvalidRecord, "a time-to-live file has expires_at and keys, not %q", k)
		}
	}
	if t.empty() {
		return nil, errkind.Errorf(ErrInvalidRecord, "a time-to-live file names no expiry")
	}
	return t, nil
}

func ttlTime(v any) (time.Time, error) {
	s, ok := v.(string)
	if !ok {
		return time.Time{}, errkind.Errorf(ErrInvalidRecord, "a time is an RFC 3339 string, not %s", objects.KindOf(v))
	}
	at, err := time.Parse(time.RFC3339, s)
	if err != nil {
		return time.Time{}, errkind.Errorf(ErrInvalidRecord, "%q is not an RFC 3339 time", s)
	}
	return at, nil
}

// CheckTTLFile checks a file under TTLDir as the store writes one: the
// sidecar of a document path (a .json file outside .aiwg/), in canonical
// JSON, that ParseTTL reads. The write guard and the server's hook both
// judge by it.
func CheckTTLFile(path string, body []byte) error {
	doc, ok := strings.CutPrefix(path, TTLDir)
	if !ok {
		return nil
	}
	if _, err := documentPath(doc); err != nil {
		return errkind.Errorf(ErrInvalidRecord, "%s: not the time-to-live file of a document: %v", path, err)
	}
	canon, err := objects.Canonical(body)
	if err != nil {
		return errkind.Errorf(ErrInvalidRecord, "%s: %v", path, err)
	}
	if string(canon) != string(body) {
		return errkind.Errorf(ErrInvalidRecord, "%s is not canonical JSON", path)
	}
	if _, err := ParseTTL(body); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}

// checkTTLFiles is the write guard: every sidecar the write changes reads
// as one.
func checkTTLFiles(tx *repo.Tx, _ WriteOptions, _ []Change) error {
	for _, path := range tx.Changed() {
		if !strings.HasPrefix(path, TTLDir) {
			continue
		}
		data, err := tx.ReadFile(path)
		if errors.Is(err, repo.ErrNotFound) {
			continue
		}
		if err != nil {
			return err
		}
		if err := CheckTTLFile(path, data); err != nil {
			return err
		}
	}
	return nil
}

// ttlAt reads the sidecar of file in the tree root: nil when there is
// none, or when it does not read (a damaged sidecar expires nothing;
// fsck and the hook name it).
func (s *Store) ttlAt(root plumbing.Hash, file string) *TTL {
	if root.IsZero() {
		return nil
	}
	data, err := s.repo.ReadFileAt(root, TTLPath(file))
	if err != nil {
		return nil
	}
	t, err := ParseTTL(data)
	if err != nil {
		return nil
	}
	return t
}

// expire applies file's sidecar in root to its bytes data as read: an
// expired document is not found; expired keys are left out.
func (s *Store) expire(root plumbing.Hash, file string, data []byte) ([]byte, error) {
	t := s.ttlAt(root, file)
	if t == nil {
		return data, nil
	}
	now := s.Now()
	if t.DocumentExpired(now) {
		return nil, errkind.Errorf(ErrNotFound, "%s: expired at %s", file, t.ExpiresAt.UTC().Format(time.RFC3339))
	}
	keys := t.ExpiredKeys(now)
	if len(keys) == 0 {
		return data, nil
	}
	doc, err := objects.Decode(data)
	if err != nil {
		return data, nil // Cat names the damage
	}
	doc = dropKeys(doc, keys)
	return objects.Encode(doc)
}

// dropKeys deletes keys (canonical key paths) from doc, those absent
// already ignored.
func dropKeys(doc any, keys []string) any {
	for _, k := range keys {
		p, err := verbiage.ParsePath(k)
		if err != nil {
			continue
		}
		if nd, err := objects.Delete(doc, p); err == nil {
			doc = nd
		}
	}
	return doc
}

// Expired is what RemoveExpired removed: whole documents and keys, as
// FILE or FILE#KEY.
type Expired struct {
	Paths []string `json:"paths"`
}

// RemoveExpired removes, in one commit, every document and key whose
// time to live has run out, with their sidecar entries (history keeps
// them). Nothing expired is ErrNoChange.
func (s *Store) RemoveExpired(ctx context.Context, wo WriteOptions) (*Expired, *Mutation, error) {
	out := &Expired{}
	m, err := s.Commit(ctx, wo, "", func(tx *repo.Tx, rec *Recorder) error {
		out.Paths = nil
		var sidecars []string
		err := walkFiles(tx, strings.TrimSuffix(TTLDir, "/"), func(p string) { sidecars = append(sidecars, p) })
		if err != nil {
			return err
		}
		now := s.Now()
		// load drops what expired (a document, or its keys) and records
		// it; flush writes the documents and their sidecars without it.
		d := docs{tx: tx, cache: map[string]any{}, now: now}
		for _, path := range sidecars {
			file := strings.TrimPrefix(path, TTLDir)
			if ok, err := tx.Exists(file); err != nil {
				return err
			} else if !ok {
				continue // a sidecar without its document: fsck names it
			}
			if _, err := d.ttl(file); err != nil {
				continue // not ours to judge here: fsck and the hook name it
			}
			if _, _, err := d.load(file); err != nil {
				return err
			}
		}
		for _, c := range d.expired {
			out.Paths = append(out.Paths, c.Path())
		}
		if len(out.Paths) > 0 {
			rec.Subject = fmt.Sprintf("expire %d values past their time to live", len(out.Paths))
		}
		return d.flush(rec)
	})
	if err != nil {
		return nil, nil, err
	}
	return out, m, nil
}

// TrailerExpired counts the values a RemoveExpired commit removed.
const TrailerExpired = "Expired"

// walkFiles calls fn with the path of every file under dir in tx's
// tree (none when dir is absent).
func walkFiles(tx *repo.Tx, dir string, fn func(string)) error {
	es, err := tx.ReadDir(dir)
	if errors.Is(err, repo.ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	for _, e := range es {
		p := dir + "/" + e.Name
		if e.IsDir {
			if err := walkFiles(tx, p, fn); err != nil {
				return err
			}
			continue
		}
		fn(p)
	}
	return nil
}

// fsckTTL checks the time-to-live files of the tree root: each reads as
// one (CheckTTLFile), and its document is there.
func (s *Store) fsckTTL(root plumbing.Hash, read func(string) ([]byte, error), add func(FsckProblem)) error {
	var walk func(dir string) error
	walk = func(dir string) error {
		es, err := s.repo.ReadDirAt(root, dir)
		if errors.Is(err, repo.ErrNotFound) {
			return nil
		}
		if err != nil {
			return err
		}
		for _, e := range es {
			p := dir + "/" + e.Name
			if e.IsDir {
				if err := walk(p); err != nil {
					return err
				}
				continue
			}
			data, err := read(p)
			if errors.Is(err, repo.ErrNotFound) {
				continue // reported by read
			}
			if err != nil {
				return err
			}
			if err := CheckTTLFile(p, data); err != nil {
				add(FsckProblem{Check: "ttl", File: p, Problem: err.Error(),
					Repair: "remove it with git (git rm), then give the document its time to live again (set --ttl, put --ttl)"})
				continue
			}
			doc := strings.TrimPrefix(p, TTLDir)
			if _, err := s.repo.Lookup(root, doc); err != nil {
				add(FsckProblem{Check: "ttl", File: p, Problem: "the time to live of " + doc + ", which is not there",
					Repair: "remove it with git (git rm " + p + ")"})
			}
		}
		return nil
	}
	return walk(strings.TrimSuffix(TTLDir, "/"))
}

// expiredIn are the names of the documents of directory dir (clean, ""
// the root) in the tree root that have expired: one lookup when none has
// a time to live.
func (s *Store) expiredIn(root plumbing.Hash, dir string) map[string]bool {
	ttlDir := strings.TrimSuffix(TTLDir, "/")
	if dir != "" {
		ttlDir = TTLDir + dir
	}
	es, err := s.repo.ReadDirAt(root, ttlDir)
	if err != nil {
		return nil
	}
	now := s.Now()
	out := map[string]bool{}
	for _, e := range es {
		if e.IsDir {
			continue
		}
		data, err := s.repo.ReadBlob(e.Hash)
		if err != nil {
			continue
		}
		if t, err := ParseTTL(data); err == nil && t.DocumentExpired(now) {
			out[e.Name] = true
		}
	}
	return out
}
