package store

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"strings"
	"time"

	"github.com/aiwg/aiwg-state/objects"
	"github.com/aiwg/aiwg-state/repo"
	"github.com/aiwg/aiwg-state/verbiage"
)

// The storage verbs agents expect of a key-value store, over documents:
// an atomic increment, set-if-absent, several keys in one read, and a
// time to live (ttl.go). Each is one commit, or one read of one revision,
// and each is an operation of Apply too.

// ErrKeyExists: a set-if-absent found the key (or document) there. It is
// ErrStale: the caller's picture of the store was out of date.
var ErrKeyExists = fmt.Errorf("%w: the key exists", ErrStale)

// ErrNotNumber: an increment of a value that is not a number.
var ErrNotNumber = errors.New("not a number")

// KeyExistsError: a set-if-absent of a key (Key "" = the document) that
// is there. Nothing was written.
type KeyExistsError struct {
	File, Key string
}

func (e *KeyExistsError) Error() string {
	if e.Key == "" {
		return "document " + e.File + " exists; nothing written"
	}
	return e.File + "#" + e.Key + " exists; nothing written"
}

func (e *KeyExistsError) Unwrap() error { return ErrKeyExists }

// TrailerDelta records an increment: FILE#KEY and the number added.
const TrailerDelta = "Delta"

// SetOptions are what Set and Put may add: set only when absent, and a
// time to live.
type SetOptions struct {
	// IfAbsent writes only when the key (for PutWith, the document) is
	// absent or expired; otherwise a *KeyExistsError and nothing written.
	IfAbsent bool
	// TTL above 0 makes the value expire this long from the write (whole
	// seconds): it then reads as absent, and RemoveExpired removes it.
	// 0 makes the value written permanent.
	TTL time.Duration
}

// MaxTTL is the longest time to live: a longer one is most likely a unit
// mistaken.
const MaxTTL = 100 * 365 * 24 * time.Hour

// Validate refuses a negative time to live, one of a fraction of a second
// (the sidecar keeps whole seconds), and one past MaxTTL.
func (o *SetOptions) Validate() error {
	switch {
	case o.TTL < 0:
		return fmt.Errorf("%w: a time to live of %s (above 0, or 0 for none)", ErrUsage, o.TTL)
	case o.TTL%time.Second != 0:
		return fmt.Errorf("%w: a time to live of %s: whole seconds", ErrUsage, o.TTL)
	case o.TTL > MaxTTL:
		return fmt.Errorf("%w: a time to live of %s is over %s", ErrUsage, o.TTL, MaxTTL)
	}
	return nil
}

// ParseTTLDuration reads a time to live as an operation gives it ("90s",
// "15m", "24h"); "" is none.
func ParseTTLDuration(s string) (time.Duration, error) {
	if s == "" {
		return 0, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return 0, fmt.Errorf("%w: ttl %q is not a duration (90s, 15m, 24h)", ErrUsage, s)
	}
	if d == 0 {
		return 0, fmt.Errorf("%w: ttl %q: a time to live is above 0", ErrUsage, s)
	}
	o := SetOptions{TTL: d}
	return d, o.Validate()
}

// SetWith is Set with SetOptions: set-if-absent and a time to live.
// Neither is for a verbiage-ruled state document's keys.
func (s *Store) SetWith(ctx context.Context, file, keypath string, value []byte, so SetOptions, wo WriteOptions) (*Mutation, error) {
	if so == (SetOptions{}) {
		return s.Set(ctx, file, keypath, value, wo)
	}
	if err := so.Validate(); err != nil {
		return nil, err
	}
	if ruled, err := s.keyRuled(file, keypath, wo); err != nil {
		return nil, err
	} else if ruled {
		return nil, fmt.Errorf("%w: %s is a state document: its keys take no time to live or set-if-absent", ErrUsage, file)
	}
	return s.applyWith(ctx, Op{Op: "set", File: file, Path: keypath, Value: value}, so, wo)
}

// PutWith is Put with SetOptions: create only when the document is
// absent, and a time to live for the whole document.
func (s *Store) PutWith(ctx context.Context, file string, value []byte, so SetOptions, wo WriteOptions) (*Mutation, error) {
	if err := so.Validate(); err != nil {
		return nil, err
	}
	return s.applyWith(ctx, Op{Op: "put", File: file, Value: value}, so, wo)
}

func (s *Store) applyWith(ctx context.Context, op Op, so SetOptions, wo WriteOptions) (*Mutation, error) {
	p, err := parseOp(op)
	if err != nil {
		return nil, err
	}
	p.ifAbsent, p.ttl = so.IfAbsent, so.TTL
	return s.applyParsed(ctx, []parsedOp{p}, wo)
}

// Incr adds by (a JSON number; empty is 1) to the number at keypath of
// file, an absent key or document counting as 0, in one commit whose
// Delta trailer records what was added: two branches that both
// incremented merge to the sum of their increments under the sum
// strategy. It returns the new value. A key's time to live stays.
func (s *Store) Incr(ctx context.Context, file, keypath string, by []byte, wo WriteOptions) ([]byte, *Mutation, error) {
	if ruled, err := s.keyRuled(file, keypath, wo); err != nil {
		return nil, nil, err
	} else if ruled {
		return nil, nil, fmt.Errorf("%w: %s is a state document: set its keys", ErrUsage, file)
	}
	p, err := parseOp(Op{Op: "incr", File: file, Path: keypath, Value: by})
	if err != nil {
		return nil, nil, err
	}
	var out []byte
	now := s.Now()
	m, err := s.Commit(ctx, wo, "", func(tx *repo.Tx, rec *Recorder) error {
		d := docs{tx: tx, cache: map[string]any{}, now: now}
		if err := p.apply(&d, rec); err != nil {
			return err
		}
		v, err := objects.Get(d.cache[p.file], p.path)
		if err != nil {
			return err
		}
		if out, err = objects.Encode(v); err != nil {
			return err
		}
		out = bytes.TrimSpace(out)
		return d.flush(rec)
	})
	if err != nil {
		return nil, nil, err
	}
	return out, m, nil
}

// incr applies an increment to doc (exists: the document is there).
func (p parsedOp) incr(d *docs, rec *Recorder, doc any, exists bool) error {
	op := OpUpdate
	if !exists {
		op, doc = OpCreate, map[string]any{}
	}
	old, err := objects.Get(doc, p.path)
	switch {
	case errors.Is(err, objects.ErrNotFound):
		op, old = OpCreate, json.Number("0")
	case err != nil:
		return fmt.Errorf("%s: %w", p.file, err)
	}
	n, ok := old.(json.Number)
	if !ok {
		return fmt.Errorf("%w: %s#%s holds %s, which cannot be incremented", ErrNotNumber, p.file, p.key, objects.KindOf(old))
	}
	delta := p.value.(json.Number)
	sum, err := addNumbers(n, delta)
	if err != nil {
		return fmt.Errorf("%s#%s: %w", p.file, p.key, err)
	}
	nd, err := objects.Set(doc, p.path, sum)
	if err != nil {
		return fmt.Errorf("%s: %w", p.file, err)
	}
	d.store(p.file, nd)
	rec.Add(op, p.file, p.key)
	rec.Trailer(TrailerDelta, p.file+"#"+p.key+" "+string(delta))
	return nil
}

// parseDelta reads an increment: a JSON number, 1 when none is given.
func parseDelta(raw json.RawMessage) (json.Number, error) {
	if len(raw) == 0 {
		return "1", nil
	}
	v, err := objects.Decode(raw)
	if err != nil {
		return "", fmt.Errorf("increment: %w", err)
	}
	n, ok := v.(json.Number)
	if !ok {
		return "", fmt.Errorf("%w: an increment is a number, not %s", objects.ErrInvalidJSON, objects.KindOf(v))
	}
	if exponentOf(string(n)) > maxExponent {
		return "", fmt.Errorf("%w: %s: an exponent over %d", ErrLimit, n, maxExponent)
	}
	return n, nil
}

// maxExponent bounds the numbers added exactly: 1e999999 written out is
// a million digits (the sum strategy of merges has the same bound).
const maxExponent = 1000

func exponentOf(n string) int {
	_, exp, ok := strings.Cut(strings.ToLower(n), "e")
	if !ok {
		return 0
	}
	var e int
	fmt.Sscan(strings.TrimLeft(exp, "+-"), &e)
	if len(exp) > 6 {
		return maxExponent + 1
	}
	return e
}

// addNumbers adds two JSON numbers exactly on their decimal text, as the
// sum merge strategy does: 0.1 + 0.2 is 0.3, and integers stay integers
// however large.
func addNumbers(a, b json.Number) (json.Number, error) {
	if exponentOf(string(a)) > maxExponent {
		return "", fmt.Errorf("%w: %s: an exponent over %d", ErrLimit, a, maxExponent)
	}
	var x, y big.Rat
	if _, ok := x.SetString(string(a)); !ok {
		return "", fmt.Errorf("%w: %s", ErrNotNumber, a)
	}
	if _, ok := y.SetString(string(b)); !ok {
		return "", fmt.Errorf("%w: %s", ErrNotNumber, b)
	}
	x.Add(&x, &y)
	if x.IsInt() {
		return json.Number(x.Num().String()), nil
	}
	digits := max(fractionDigits(string(a)), fractionDigits(string(b)))
	text := strings.TrimRight(x.FloatString(digits), "0")
	return json.Number(strings.TrimSuffix(text, ".")), nil
}

// fractionDigits is how many decimal places a number's text needs to be
// written exactly (its fraction, less its exponent).
func fractionDigits(n string) int {
	n = strings.ToLower(n)
	mant, exp, _ := strings.Cut(n, "e")
	d := 0
	if _, frac, ok := strings.Cut(mant, "."); ok {
		d = len(frac)
	}
	var e int
	fmt.Sscan(exp, &e)
	return max(d-e, 0)
}

// GetKeys reads several keys of one document at one revision, as one
// JSON object from each key path (canonical) to its value. A missing key
// fails the read, naming it; a key path with wildcards adds the keys it
// matches.
func (s *Store) GetKeys(ctx context.Context, file string, keys []string, ro ReadOptions) ([]byte, error) {
	if len(keys) == 0 {
		return nil, fmt.Errorf("%w: no keys to read", ErrUsage)
	}
	paths := make([]verbiage.Path, len(keys))
	for i, k := range keys {
		p, err := verbiage.ParsePath(k)
		if err != nil {
			return nil, err
		}
		if len(p) == 0 {
			return nil, fmt.Errorf("%w: an empty key path reads the whole document: read it alone", ErrUsage)
		}
		paths[i] = p
	}
	if ro.At == "" {
		h, err := s.Resolve("HEAD", ro.Branch)
		if err != nil {
			return nil, err
		}
		ro.At, ro.named = h.String(), "HEAD"
	}
	out := map[string]any{}
	ruled := false
	if !ro.NoResolve {
		var err error
		if ruled, err = s.isRuled(file, ro); err != nil {
			return nil, err
		}
	}
	var doc any
	if !ruled {
		data, err := s.Cat(ctx, file, ro)
		if err != nil {
			return nil, err
		}
		if doc, err = objects.Decode(data); err != nil {
			return nil, fmt.Errorf("%s: %w", file, err)
		}
	}
	for i, p := range paths {
		if ruled {
			raw, err := s.Get(ctx, file, keys[i], ro)
			if err != nil {
				return nil, err
			}
			v, err := objects.Decode(raw)
			if err != nil {
				return nil, err
			}
			if wildcard(p) {
				for k, x := range v.(map[string]any) {
					out[k] = x
				}
			} else {
				out[p.String()] = v
			}
			continue
		}
		if wildcard(p) {
			ms, err := objects.Select(doc, p)
			if err != nil {
				return nil, fmt.Errorf("%s#%s: %w", file, p, err)
			}
			for _, m := range ms {
				out[m.Path.String()] = m.Value
			}
			continue
		}
		v, err := objects.Get(doc, p)
		if err != nil {
			return nil, fmt.Errorf("%s#%s: %w", file, p, err)
		}
		out[p.String()] = v
	}
	return objects.Encode(out)
}

func wildcard(p verbiage.Path) bool {
	for _, seg := range p {
		if seg.Wildcard {
			return true
		}
	}
	return false
}
