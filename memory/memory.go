package memory

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/aiwg/aiwg-state/internal/errkind"
	"github.com/aiwg/aiwg-state/objects"
	"github.com/aiwg/aiwg-state/verbiage"
)

// Dir is the directory of memory records in the store's tree.
const Dir = "memory"

var (
	// ErrInvalid: a malformed key, payload or record.
	ErrInvalid = errors.New("invalid memory record")
	// ErrNotList: append to a record whose payload is not a list.
	ErrNotList = errors.New("not a list")
)

// Key names a record. The tiered state specification's namespaces are session, long_term,
// daily_log and workflow; any identifier is allowed.
type Key struct {
	Namespace string `json:"namespace"`
	Kind      string `json:"record_kind"`
	ID        string `json:"record_id"`
}

func (k Key) String() string { return k.Namespace + "/" + k.Kind + "/" + k.ID }

// Check refuses a key whose parts could not name one file: the namespace
// and kind are identifiers; the id is one path segment the store accepts
// (no slash), so ids such as "2026-11-24" or "user:42" work. Two ids of
// one kind may not differ only in letter case (the store refuses such
// paths, which checkouts on macOS and Windows would merge).
func (k Key) Check() error {
	for _, p := range []struct{ what, v string }{{"namespace", k.Namespace}, {"record kind", k.Kind}} {
		if err := verbiage.ValidIdentifier(p.v); err != nil {
			return errkind.Errorf(ErrInvalid, "memory %s: %v", p.what, err)
		}
	}
	if k.ID == "" || strings.Contains(k.ID, "/") {
		return errkind.Errorf(ErrInvalid, "memory record id %q: want one non-empty name without a slash", k.ID)
	}
	clean, err := verbiage.CleanStorePath(k.ID + ".json")
	if err != nil || clean != k.ID+".json" {
		return errkind.Errorf(ErrInvalid, "memory record id %q: not a name the store can keep as a file", k.ID)
	}
	return nil
}

// File is the record's file in the store.
func (k Key) File() string { return Dir + "/" + k.Namespace + "/" + k.Kind + "/" + k.ID + ".json" }

// KeyOf reads a record's key back from its file name; ok is false for a
// file that is not a record's.
func KeyOf(file string) (Key, bool) {
	rest, ok := strings.CutPrefix(file, Dir+"/")
	if !ok || !strings.HasSuffix(rest, ".json") {
		return Key{}, false
	}
	parts := strings.Split(strings.TrimSuffix(rest, ".json"), "/")
	if len(parts) != 3 {
		return Key{}, false
	}
	k := Key{parts[0], parts[1], parts[2]}
	return k, k.Check() == nil
}

// Record is one memory record, as the tiered state specification's memory adapter keeps it.
type Record struct {
	Key
	Payload   json.RawMessage `json:"payload"`
	CreatedAt time.Time       `json:"created_at"`
	UpdatedAt time.Time       `json:"updated_at"`
	// TTLSeconds and ExpiresAt are set for a record with a time to live;
	// it is gone for readers from ExpiresAt, and prune removes it.
	TTLSeconds int64      `json:"ttl_seconds,omitempty"`
	ExpiresAt  *time.Time `json:"expires_at,omitempty"`
}

// Expired reports whether the record has run out at now.
func (r *Record) Expired(now time.Time) bool { return r.ExpiresAt != nil && !now.Before(*r.ExpiresAt) }

// Put makes the record key holds after a put of payload at now: created
// now, or updated (keeping its creation time) when old is a live record.
// A ttl of 0 means no expiry.
func Put(old *Record, key Key, payload []byte, ttl time.Duration, now time.Time) (*Record, error) {
	if err := key.Check(); err != nil {
		return nil, err
	}
	if ttl < 0 || ttl%time.Second != 0 {
		return nil, errkind.Errorf(ErrInvalid, "memory record %s: a time to live of %s: it is whole seconds (ttl_seconds)", key, ttl)
	}
	p, err := objects.Canonical(payload)
	if err != nil {
		return nil, fmt.Errorf("memory record %s: payload: %w", key, err)
	}
	r := &Record{Key: key, Payload: compact(p), CreatedAt: now.UTC(), UpdatedAt: now.UTC()}
	if old != nil && !old.Expired(now) {
		r.CreatedAt = old.CreatedAt
	}
	if ttl > 0 {
		exp := now.Add(ttl).UTC()
		r.TTLSeconds, r.ExpiresAt = int64(ttl/time.Second), &exp
	}
	return r, nil
}

// Append adds item to the list payload of old (a new list when old is
// absent or expired). The record keeps its time to live unless ttl is
// given, counted from now: each append moves the expiry to now + TTL.
func Append(old *Record, key Key, item []byte, ttl time.Duration, now time.Time) (*Record, error) {
	var list []json.RawMessage
	keepTTL := time.Duration(0)
	if old != nil && !old.Expired(now) {
		if err := json.Unmarshal(old.Payload, &list); err != nil || list == nil && string(old.Payload) != "[]" {
			return nil, errkind.Errorf(ErrNotList, "memory record %s holds %s, not a list to append to", key, kindOf(old.Payload))
		}
		if old.ExpiresAt != nil {
			keepTTL = time.Duration(old.TTLSeconds) * time.Second
		}
	}
	if _, err := objects.Canonical(item); err != nil {
		return nil, fmt.Errorf("memory record %s: item: %w", key, err)
	}
	list = append(list, json.RawMessage(item))
	b, err := json.Marshal(list)
	if err != nil {
		return nil, err
	}
	if ttl == 0 {
		ttl = keepTTL
	}
	return Put(old, key, b, ttl, now)
}

func kindOf(b json.RawMessage) string {
	switch s := strings.TrimSpace(string(b)); {
	case s == "" || s == "null":
		return "null"
	case s[0] == '{':
		return "an object"
	case s[0] == '"':
		return "a string"
	case s == "true" || s == "false":
		return "a boolean"
	}
	return "a number"
}

// compact turns canonical (indented) JSON into one line, as a record's
// payload is shown in a list or an export.
func compact(b []byte) json.RawMessage {
	var out strings.Builder
	dec := json.NewDecoder(strings.NewReader(string(b)))
	dec.UseNumber()
	var v any
	if dec.Decode(&v) != nil {
		return b
	}
	enc := json.NewEncoder(&out)
	enc.SetEscapeHTML(false)
	if enc.Encode(v) != nil {
		return b
	}
	return json.RawMessage(strings.TrimSuffix(out.String(), "\n"))
}

// Decode reads the record at file; its key must be the one its file name
// says.
func Decode(file string, data []byte) (*Record, error) {
	want, ok := KeyOf(file)
	if !ok {
		return nil, errkind.Errorf(ErrInvalid, "%s is not a memory record's file (memory/<namespace>/<kind>/<id>.json)", file)
	}
	var r Record
	dec := json.NewDecoder(strings.NewReader(string(data)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&r); err != nil {
		return nil, errkind.Errorf(ErrInvalid, "%s is not a memory record: %v", file, err)
	}
	if r.Key == (Key{}) {
		return nil, errkind.Errorf(ErrInvalid, "%s is not a memory record: it has no namespace, record_kind or record_id", file)
	}
	if r.Key != want {
		return nil, errkind.Errorf(ErrInvalid, "%s holds record %s", file, r.Key)
	}
	if r.Payload == nil {
		r.Payload = json.RawMessage("null")
	}
	r.Payload = compact(r.Payload)
	return &r, nil
}

// Check validates a record read from outside (an import): its key, its
// payload, and times that agree with each other.
func (r *Record) Check() error {
	if err := r.Key.Check(); err != nil {
		return err
	}
	if r.Payload == nil {
		return errkind.Errorf(ErrInvalid, "memory record %s has no payload", r.Key)
	}
	if _, err := objects.Canonical(r.Payload); err != nil {
		return fmt.Errorf("memory record %s: payload: %w", r.Key, err)
	}
	if r.CreatedAt.IsZero() || r.UpdatedAt.Before(r.CreatedAt) {
		return errkind.Errorf(ErrInvalid, "memory record %s: created_at and updated_at are missing or out of order", r.Key)
	}
	if (r.ExpiresAt == nil) != (r.TTLSeconds == 0) {
		return errkind.Errorf(ErrInvalid, "memory record %s: ttl_seconds and expires_at go together", r.Key)
	}
	return nil
}
