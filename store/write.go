package store

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/aiwg/aiwg-state/objects"
	"github.com/aiwg/aiwg-state/repo"
	"github.com/aiwg/aiwg-state/statedoc"
	"github.com/aiwg/aiwg-state/verbiage"
)

// Operation kinds, as recorded in the Operation trailer.
const (
	OpCreate = "create"
	OpUpdate = "update"
	OpDelete = "delete"
	OpRename = "rename"
	// OpRollback is the Operation of a rollback of RLM state to a
	// checkpoint (package rlm).
	OpRollback = "rollback"
	// OpRestore is the Operation of a restore of a snapshot (package
	// snapshot).
	OpRestore = "restore"
)

// Op is one operation of a write, and one line of `aiwg-state apply`.
type Op struct {
	// Op is "set" (a key, or the whole document when Path is empty),
	// "put" (the whole document), "del" (a key, or the file when Path is
	// empty), "mv" (the file, to To) or "incr" (add the number Value,
	// default 1, to the number at Path, absent counting as 0).
	Op    string          `json:"op"`
	File  string          `json:"file"`
	Path  string          `json:"path,omitempty"`
	Value json.RawMessage `json:"value,omitempty"`
	To    string          `json:"to,omitempty"`
	// IfAbsent, for set and put, writes only when the key (the document)
	// is absent or expired: otherwise the write fails with a
	// *KeyExistsError and nothing is written.
	IfAbsent bool `json:"if_absent,omitempty"`
	// TTL, for set and put, makes the value expire that long from the
	// write ("90s", "15m", "24h"; whole seconds): from then it reads as
	// absent, and RemoveExpired removes it. A set or put without one
	// makes the value it writes permanent.
	TTL string `json:"ttl,omitempty"`
}

// Change is one path a mutation touched.
type Change struct {
	Operation string `json:"operation"`
	File      string `json:"file"`
	Key       string `json:"key,omitempty"`
	// To is where a renamed file went.
	To string `json:"to,omitempty"`
}

// Path renders the change as the Path trailer does: FILE or FILE#KEY.
func (c Change) Path() string {
	if c.Key == "" {
		return c.File
	}
	return c.File + "#" + c.Key
}

// Recorder collects the changes of a transaction for its message, and the
// trailers only the transaction can know (a number chosen under the lock).
type Recorder struct {
	Changes  []Change
	trailers repo.Trailers
	// Subject, when set, is the commit's Subject: for writes whose
	// description is known only once the transaction has read the tree.
	Subject string
}

// Trailer adds a Trailer to the commit being built.
func (r *Recorder) Trailer(key, value string) {
	r.trailers = append(r.trailers, repo.Trailer{Key: key, Value: value})
}

// Add records a change (op is one of the Op constants; key is "" for the
// whole file) for the commit's message and trailers.
func (r *Recorder) Add(op, file, key string) {
	r.Changes = append(r.Changes, Change{Operation: op, File: file, Key: key})
}

// Set writes value (JSON) at key path keypath of file; an empty keypath
// replaces the document. A missing file is created. In a verbiage-ruled
// state document the key path goes through its shards: a key inside a
// mounted subtree is written to the shard file, the parent keeps its ref,
// in one commit (the state document specification).
func (s *Store) Set(ctx context.Context, file, keypath string, value []byte, wo WriteOptions) (*Mutation, error) {
	ruled, err := s.keyRuled(file, keypath, wo)
	if err != nil {
		return nil, err
	}
	if ruled {
		p, err := verbiage.ParsePath(keypath)
		if err != nil {
			return nil, err
		}
		v, err := objects.Decode(value)
		if err != nil {
			return nil, fmt.Errorf("value: %w", err)
		}
		return s.EditState(ctx, file, wo, "", func(doc any) (any, []verbiage.Path, error) {
			return statedoc.SetPath(doc, p, v)
		})
	}
	return s.Apply(ctx, []Op{{Op: "set", File: file, Path: keypath, Value: value}}, wo)
}

// keyRuled reports whether a write to a key of file goes through the
// shards of a ruled state document.
func (s *Store) keyRuled(file, keypath string, wo WriteOptions) (bool, error) {
	if keypath == "" {
		return false, nil
	}
	return s.isRuled(file, ReadOptions{Branch: wo.Branch})
}

// Put replaces (or creates) a whole document.
func (s *Store) Put(ctx context.Context, file string, value []byte, wo WriteOptions) (*Mutation, error) {
	return s.Apply(ctx, []Op{{Op: "put", File: file, Value: value}}, wo)
}

// Delete removes a key, or the whole file when keypath is empty; in a
// verbiage-ruled state document, through its shards as Set does.
func (s *Store) Delete(ctx context.Context, file, keypath string, wo WriteOptions) (*Mutation, error) {
	ruled, err := s.keyRuled(file, keypath, wo)
	if err != nil {
		return nil, err
	}
	if ruled {
		p, err := verbiage.ParsePath(keypath)
		if err != nil {
			return nil, err
		}
		return s.EditState(ctx, file, wo, "", func(doc any) (any, []verbiage.Path, error) {
			return statedoc.DeletePath(doc, p)
		})
	}
	return s.Apply(ctx, []Op{{Op: "del", File: file, Path: keypath}}, wo)
}

// Move renames a document.
func (s *Store) Move(ctx context.Context, file, to string, wo WriteOptions) (*Mutation, error) {
	return s.Apply(ctx, []Op{{Op: "mv", File: file, To: to}}, wo)
}

// Apply runs ops as one transaction and one commit: all land or none. Each
// op sees the effect of the ones before it. When nothing changes the result
// is ErrNoChange and no commit is written.
func (s *Store) Apply(ctx context.Context, ops []Op, wo WriteOptions) (*Mutation, error) {
	if len(ops) == 0 {
		return nil, fmt.Errorf("%w: no operations", ErrUsage)
	}
	// Parse everything before taking the branch lock: bad input fails fast
	// and never holds up other writers.
	parsed := make([]parsedOp, len(ops))
	for i, op := range ops {
		p, err := parseOp(op)
		if err != nil {
			if len(ops) > 1 {
				return nil, fmt.Errorf("operation %d: %w", i+1, err)
			}
			return nil, err
		}
		parsed[i] = p
	}
	return s.applyParsed(ctx, parsed, wo)
}

// applyParsed applies parsed operations as one commit (see Apply).
func (s *Store) applyParsed(ctx context.Context, parsed []parsedOp, wo WriteOptions) (*Mutation, error) {
	now := s.Now()
	return s.Commit(ctx, wo, "", func(tx *repo.Tx, rec *Recorder) error {
		d := docs{tx: tx, cache: map[string]any{}, now: now, stamp: wo.Time}
		for i, p := range parsed {
			if err := p.apply(&d, rec); err != nil {
				if len(parsed) > 1 {
					return fmt.Errorf("operation %d: %w", i+1, err)
				}
				return err
			}
		}
		return d.flush(rec)
	})
}

type parsedOp struct {
	kind     string
	file     string
	path     verbiage.Path
	key      string // the path as given, canonicalized, for messages
	value    any
	to       string
	ifAbsent bool
	ttl      time.Duration
}

func parseOp(op Op) (parsedOp, error) {
	p := parsedOp{kind: op.Op}
	var err error
	if p.file, err = documentPath(op.File); err != nil {
		return p, err
	}
	if p.path, err = verbiage.ParsePath(op.Path); err != nil {
		return p, err
	}
	for _, seg := range p.path {
		if seg.Wildcard {
			return p, fmt.Errorf("%w: wildcards are for reads, not writes: %s", verbiage.ErrInvalidPath, op.Path)
		}
	}
	p.key = p.path.String()
	if op.IfAbsent || op.TTL != "" {
		if op.Op != "set" && op.Op != "put" {
			return p, fmt.Errorf("%w: if_absent and ttl are for set and put, not %s", ErrUsage, op.Op)
		}
		p.ifAbsent = op.IfAbsent
		if p.ttl, err = ParseTTLDuration(op.TTL); err != nil {
			return p, err
		}
	}
	switch op.Op {
	case "incr":
		if p.value, err = parseDelta(op.Value); err != nil {
			return p, err
		}
		if len(p.path) == 0 {
			return p, fmt.Errorf("%w: incr adds to a key: name its path", ErrUsage)
		}
		if slices.ContainsFunc(p.path, verbiage.Segment.Append) {
			return p, fmt.Errorf("%w: incr adds to a key that holds a number, not to an array's end (-)", ErrUsage)
		}
	case "set", "put":
		if op.Op == "put" && len(p.path) > 0 {
			return p, fmt.Errorf("%w: put replaces a whole document; use set for a key", ErrUsage)
		}
		if len(op.Value) == 0 {
			return p, fmt.Errorf("%w: %s needs a value", ErrUsage, op.Op)
		}
		if p.value, err = objects.Decode(op.Value); err != nil {
			return p, fmt.Errorf("value: %w", err)
		}
	case "del":
	case "mv":
		if len(p.path) > 0 {
			return p, fmt.Errorf("%w: mv moves whole documents", ErrUsage)
		}
		if p.to, err = documentPath(op.To); err != nil {
			return p, err
		}
	default:
		return p, fmt.Errorf("%w: unknown operation %q (want set, put, del, mv or incr)", ErrUsage, op.Op)
	}
	return p, nil
}

// documentPath checks a document's path: inside the store, a .json file,
// and not one of the store's own files.
func documentPath(file string) (string, error) {
	clean, err := verbiage.CleanStorePath(file)
	if err != nil {
		return "", err
	}
	if clean == AttributesPath {
		return "", &StrategiesFileError{Path: clean}
	}
	if !strings.HasSuffix(clean, ".json") {
		return "", fmt.Errorf("%w: %s: documents are .json files", verbiage.ErrInvalidPath, file)
	}
	if strings.Contains(clean, "#") {
		// FILE#KEY names a key in trailers and on the command line.
		return "", fmt.Errorf("%w: %s: '#' separates a document from a key path and cannot be part of a name", verbiage.ErrInvalidPath, file)
	}
	if strings.HasPrefix(clean, ".aiwg/") {
		return "", fmt.Errorf("%w: %s belongs to the store itself", ErrReadOnly, clean)
	}
	return clean, nil
}

// docs caches decoded documents for the span of one transaction, so a
// batch touching one document many times decodes and encodes it once.
type docs struct {
	tx    *repo.Tx
	cache map[string]any // nil value: deleted in this transaction
	order []string
	// ttls are the time-to-live sidecars read or changed, by document
	// (nil: none); now is the time expiry is judged at (see ttl.go).
	ttls map[string]*TTL
	had  map[string]bool // the sidecar is in the parent's tree
	// expired are the values the transaction found expired and drops,
	// recorded as deletions in the commit (see flush).
	expired []Change
	now     time.Time
	// stamp is the time a new time to live counts from: the write's
	// (WriteOptions.Time, as an importer keeps it), else now.
	stamp time.Time
}

var deleted = &struct{}{}

func (d *docs) load(file string) (any, bool, error) {
	if v, ok := d.cache[file]; ok && v != keep {
		if v == deleted {
			return nil, false, nil
		}
		return v, true, nil
	}
	data, err := d.tx.ReadFile(file)
	if errors.Is(err, repo.ErrNotFound) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	v, err := objects.Decode(data)
	if err != nil {
		return nil, false, fmt.Errorf("%s holds %w", file, err)
	}
	// What has expired is absent to the write as to a read, and goes
	// with it: an expired document is replaced, expired keys dropped.
	t, err := d.ttl(file)
	if err != nil || t == nil {
		return v, true, err
	}
	if t.DocumentExpired(d.now) {
		d.store(file, deleted)
		d.ttls[file] = nil
		d.expired = append(d.expired, Change{Operation: OpDelete, File: file})
		return nil, false, nil
	}
	if keys := t.ExpiredKeys(d.now); len(keys) > 0 {
		v = dropKeys(v, keys)
		for _, k := range keys {
			delete(t.Keys, k)
			d.expired = append(d.expired, Change{Operation: OpDelete, File: file, Key: k})
		}
		d.store(file, v)
		d.touchTTL(file)
	}
	return v, true, nil
}

// ttl is file's sidecar as this transaction has it (nil: none). A
// sidecar that does not read fails the write that would rewrite it.
func (d *docs) ttl(file string) (*TTL, error) {
	if t, ok := d.ttls[file]; ok {
		return t, nil
	}
	if d.ttls == nil {
		d.ttls = map[string]*TTL{}
	}
	data, err := d.tx.ReadFile(TTLPath(file))
	if errors.Is(err, repo.ErrNotFound) {
		d.ttls[file] = nil
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if d.had == nil {
		d.had = map[string]bool{}
	}
	d.had[file] = true
	t, err := ParseTTL(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", TTLPath(file), err)
	}
	d.ttls[file] = t
	return t, nil
}

// hasTTL reports whether key p of file (the document, when p is empty)
// or a key under it has a time to live.
func (d *docs) hasTTL(file string, p verbiage.Path) bool {
	t := d.ttls[file]
	if t.empty() {
		return false
	}
	if len(p) == 0 {
		return true
	}
	for k := range t.Keys {
		if q, err := verbiage.ParsePath(k); err == nil && q.HasPrefix(p) {
			return true
		}
	}
	return false
}

// throughArray reports whether key path p of doc goes through an array.
func throughArray(doc any, p verbiage.Path) bool {
	node := doc
	for _, seg := range p {
		switch x := node.(type) {
		case []any:
			return true
		case map[string]any:
			node = x[seg.Key]
		default:
			return false
		}
	}
	return false
}

// touchTTL marks file's sidecar for flush, changed or not.
func (d *docs) touchTTL(file string) {
	if _, ok := d.cache[file]; !ok {
		d.order = append(d.order, file)
		d.cache[file] = keep
	}
}

// keep marks a document whose sidecar alone is written.
var keep = &struct{ keep bool }{}

// setTTL records a write of key p of file: a ttl above 0 makes it expire
// that long from now, none makes it permanent; either way what was under
// it is forgotten (its values were replaced).
func (d *docs) setTTL(file string, p verbiage.Path, ttl time.Duration) error {
	t, err := d.ttl(file)
	if err != nil {
		return err
	}
	if t == nil && ttl <= 0 {
		return nil
	}
	if t == nil {
		t = &TTL{}
		d.ttls[file] = t
	}
	t.forget(p)
	if ttl > 0 {
		at := cmp.Or(d.stamp, d.now).Add(ttl).UTC().Truncate(time.Second)
		if len(p) == 0 {
			t.ExpiresAt = &at
		} else {
			if t.Keys == nil {
				t.Keys = map[string]time.Time{}
			}
			t.Keys[p.String()] = at
		}
	}
	d.touchTTL(file)
	return nil
}

func (d *docs) store(file string, v any) {
	if _, ok := d.cache[file]; !ok {
		d.order = append(d.order, file)
	}
	d.cache[file] = v
}

// flush encodes every touched document once and stages it, with its
// time-to-live sidecar; the expired values it drops are recorded in rec,
// as deletions, with an Expired trailer counting them: a write that
// found them there says it removed them.
func (d *docs) flush(rec *Recorder) error {
	if len(d.expired) > 0 {
		// Before the operations' own: the values were gone before they ran.
		rec.Changes = append(slices.Clip(d.expired), rec.Changes...)
		rec.Trailer(TrailerExpired, strconv.Itoa(len(d.expired)))
	}
	for _, file := range d.order {
		if t, ok := d.ttls[file]; ok && (t != nil || d.had[file]) {
			if err := d.flushTTL(file, t); err != nil {
				return err
			}
		}
		v := d.cache[file]
		if v == keep {
			continue
		}
		if v == deleted {
			ok, err := d.tx.Exists(file)
			if err != nil {
				return err
			}
			if ok {
				if err := d.tx.Remove(file); err != nil {
					return err
				}
			}
			continue
		}
		data, err := objects.Encode(v)
		if err != nil {
			return err
		}
		if err := d.tx.WriteFile(file, data); err != nil {
			return err
		}
	}
	return nil
}

// flushTTL stages file's sidecar t, or removes it when it says nothing or
// the document is gone.
func (d *docs) flushTTL(file string, t *TTL) error {
	path := TTLPath(file)
	if t.empty() || d.cache[file] == deleted {
		if !d.had[file] {
			return nil
		}
		d.had[file] = false
		return d.tx.Remove(path)
	}
	data, err := EncodeTTL(t)
	if err != nil {
		return err
	}
	return d.tx.WriteFile(path, data)
}

func (p parsedOp) apply(d *docs, rec *Recorder) error {
	doc, exists, err := d.load(p.file)
	if err != nil {
		return err
	}
	switch p.kind {
	case "incr":
		return p.incr(d, rec, doc, exists)
	case "set", "put":
		op := OpUpdate
		if !exists {
			op = OpCreate
			if len(p.path) > 0 {
				doc = map[string]any{}
			}
		} else if len(p.path) > 0 {
			if old, err := objects.Get(doc, p.path); errors.Is(err, objects.ErrNotFound) {
				op = OpCreate
			} else if err == nil && p.ifAbsent {
				return &KeyExistsError{File: p.file, Key: p.key}
			} else if err == nil && objects.Equal(old, p.value) && p.ttl == 0 && !d.hasTTL(p.file, p.path) {
				return nil
			}
		} else if p.ifAbsent {
			return &KeyExistsError{File: p.file}
		} else if objects.Equal(doc, p.value) && p.ttl == 0 && !d.hasTTL(p.file, p.path) {
			return nil
		}
		key := appendedAt(doc, p.path, p.key)
		if p.ttl > 0 && len(p.path) > 0 && throughArray(doc, p.path) {
			return fmt.Errorf("%w: %s#%s: a time to live is for a document or an object's key, not an array's element (its index moves)", ErrUsage, p.file, key)
		}
		nd, err := objects.Set(doc, p.path, p.value)
		if err != nil {
			return fmt.Errorf("%s: %w", p.file, err)
		}
		d.store(p.file, nd)
		if err := d.setTTL(p.file, verbiage.MustParsePath(key), p.ttl); err != nil {
			return err
		}
		rec.Add(op, p.file, key)
	case "del":
		if !exists {
			return fmt.Errorf("%s: %w", p.file, ErrNotFound)
		}
		if len(p.path) == 0 {
			d.store(p.file, deleted)
			if _, err := d.ttl(p.file); err != nil { // removed with it
				return err
			}
			rec.Add(OpDelete, p.file, "")
			return nil
		}
		nd, err := objects.Delete(doc, p.path)
		if err != nil {
			return fmt.Errorf("%s: %w", p.file, err)
		}
		d.store(p.file, nd)
		if err := d.setTTL(p.file, p.path, 0); err != nil {
			return err
		}
		rec.Add(OpDelete, p.file, p.key)
	case "mv":
		if !exists {
			return fmt.Errorf("%s: %w", p.file, ErrNotFound)
		}
		if p.to == p.file {
			return nil
		}
		if _, there, err := d.load(p.to); err != nil {
			return err
		} else if there {
			return fmt.Errorf("%w: %s (move refuses to overwrite)", ErrExists, p.to)
		}
		d.store(p.to, doc)
		d.store(p.file, deleted)
		// The time to live goes with the document.
		t, err := d.ttl(p.file)
		if err != nil {
			return err
		}
		if _, err := d.ttl(p.to); err != nil {
			return err
		}
		d.ttls[p.to], d.ttls[p.file] = t, nil
		rec.Changes = append(rec.Changes, Change{Operation: OpRename, File: p.file, To: p.to})
	}
	return nil
}

// appendedAt is key, the key path p as given, with each "-" (append)
// replaced by the index the element gets in doc: the Path trailer and the
// subject then name the element written (notes.3), which an auditor
// reading the history with git alone could not tell from notes.-.
func appendedAt(doc any, p verbiage.Path, key string) string {
	if !slices.ContainsFunc(p, verbiage.Segment.Append) {
		return key
	}
	out := slices.Clone(p)
	node := doc
	for i, seg := range p {
		switch x := node.(type) {
		case map[string]any:
			node = x[seg.Key]
		case []any:
			if seg.Append() {
				out[i] = verbiage.Segment{Key: strconv.Itoa(len(x))}
				node = nil
			} else if n, ok := seg.Index(); ok && n < len(x) {
				node = x[n]
			} else {
				node = nil
			}
		default:
			// Missing: Set creates it, an array where "-" follows, so
			// the element is its first.
			if seg.Append() {
				out[i] = verbiage.Segment{Key: "0"}
			}
			node = nil
		}
	}
	return out.String()
}

// checkUnchangedSince fails when a file the write changes differs
// between the revision since (named rev) and the branch head the write
// applies to (WriteOptions.UnchangedSince).
func (s *Store) checkUnchangedSince(tx *repo.Tx, since *repo.Commit, rev string, changes []Change) error {
	head, err := tx.ParentTree()
	if err != nil {
		return err
	}
	blob := func(root plumbing.Hash, path string) plumbing.Hash {
		if root.IsZero() {
			return plumbing.ZeroHash
		}
		e, err := s.repo.Lookup(root, path)
		if err != nil {
			return plumbing.ZeroHash // absent
		}
		return e.Hash
	}
	for _, c := range changes {
		for _, f := range []string{c.File, c.To} {
			if f != "" && blob(since.Tree, f) != blob(head, f) {
				return fmt.Errorf("%w: %s changed since %s (read it again, then write)", ErrStale, f, rev)
			}
		}
	}
	return nil
}

// Commit runs build in a transaction on the options' branch and records it
// as one Commit whose message and trailers describe the recorded changes.
func (s *Store) Commit(ctx context.Context, wo WriteOptions, subject string, build func(*repo.Tx, *Recorder) error) (*Mutation, error) {
	ref, err := s.WriteRef(wo.Branch)
	if err != nil {
		return nil, err
	}
	if err := wo.Validate(); err != nil {
		return nil, err
	}
	copts := repo.CommitOptions{Expect: wo.expectHead}
	if wo.Expect != nil {
		h, err := s.Resolve(*wo.Expect, wo.Branch)
		if err != nil {
			return nil, err
		}
		copts.Expect = &h
	}
	var since *repo.Commit
	if wo.UnchangedSince != nil {
		h, err := s.Resolve(*wo.UnchangedSince, wo.Branch)
		if err != nil {
			return nil, err
		}
		if since, err = s.repo.ReadCommit(h); err != nil {
			return nil, err
		}
	}
	agent := s.Agent(wo.Agent)
	if repo.IdentityName(agent) != agent {
		// git identities cannot hold them; rewriting the name would
		// attribute the write to an agent nobody named.
		return nil, fmt.Errorf("%w: agent %q: an agent id cannot hold <, > or a line break", ErrUsage, agent)
	}
	when := wo.Time
	if when.IsZero() {
		when = s.now()
	}
	signer, err := s.SignerFor(agent, wo)
	if err != nil {
		return nil, err
	}
	mutID := objects.NewID("mut")
	var rec Recorder
	c, err := s.repo.Commit(ctx, ref, func(tx *repo.Tx) (*repo.CommitInfo, error) {
		if tx.Parent().IsZero() {
			// A write to a branch that does not exist would start an
			// unrelated history, without the store's manifest: most
			// likely a mistyped name. Only HEAD's branch is written
			// unborn (the store's first commit).
			if head, err := s.repo.Head(); err != nil || s.RefTarget(head) != ref {
				name := strings.TrimPrefix(ref, "refs/heads/")
				if other := s.otherRefNamed(name); other != "" {
					return nil, &NotABranchError{Name: name, Is: other}
				}
				return nil, &BranchMissingError{Name: name}
			}
		}
		rec = Recorder{}
		if err := build(tx, &rec); err != nil {
			return nil, err
		}
		for _, check := range s.writeChecks() {
			if err := check(tx, wo, rec.Changes); err != nil {
				return nil, err
			}
		}
		if since != nil {
			if err := s.checkUnchangedSince(tx, since, *wo.UnchangedSince, rec.Changes); err != nil {
				return nil, err
			}
		}
		sig := repo.NewSignature(agent, when)
		trailers := append(trailersFor(mutID, wo, rec.Changes), rec.trailers...)
		// The hybrid logical clock orders this write for last-write-wins
		// merges: past the parent's (and a merged branch's) clock.
		var merged plumbing.Hash
		if len(wo.mergeParents) > 0 {
			merged = wo.mergeParents[0]
		}
		trailers = append(trailers, repo.Trailer{Key: TrailerClock, Value: s.nextClock(tx.Parent(), merged, agent, when).String()})
		msg := repo.FormatMessage(subjectFor(cmp.Or(rec.Subject, subject), wo.Message, rec.Changes), "", trailers)
		return &repo.CommitInfo{Author: sig, Committer: sig, Message: msg, MergeParents: wo.mergeParents, UpstreamFirst: wo.upstreamFirst, AllowEmpty: len(wo.mergeParents) > 0, Sign: SignFunc(signer)}, nil
	}, copts)
	if err != nil {
		return nil, err
	}
	s.maybeMaintain()
	m := MutationOf(c, ref)
	for _, after := range s.afterCommits() {
		if err := after(m, wo, rec.Changes); err != nil {
			return m, err
		}
	}
	return m, nil
}

// AgentName is the agent a write is attributed to when none is given:
// $AIWG_AGENT, then the login name ($USER), else "anonymous".
func AgentName(agent string) string { return AgentNameFrom(agent, os.Getenv) }

// AgentNameFrom is AgentName with the environment read through getenv
// (a server's client's, say).
func AgentNameFrom(agent string, getenv func(string) string) string {
	for _, a := range []string{agent, getenv("AIWG_AGENT"), getenv("USER")} {
		if a = strings.TrimSpace(a); a != "" {
			return a
		}
	}
	return "anonymous"
}

func subjectFor(subject, message string, changes []Change) string {
	switch {
	case message != "":
		return message
	case subject != "":
		return subject
	case len(changes) == 1 && changes[0].To != "":
		return changes[0].Operation + " " + changes[0].File + " to " + changes[0].To
	case len(changes) == 1:
		return changes[0].Operation + " " + changes[0].Path()
	}
	var b strings.Builder
	fmt.Fprintf(&b, "apply %d operations:", len(changes))
	for i, c := range changes {
		if i == 3 {
			fmt.Fprintf(&b, " …")
			break
		}
		if i > 0 {
			b.WriteString(",")
		}
		b.WriteString(" " + c.Operation + " " + c.Path())
	}
	return b.String()
}

// Trailer keys written on every mutation.
const (
	TrailerMutationID  = "Mutation-Id"
	TrailerOperation   = "Operation"
	TrailerPath        = "Path"
	TrailerSource      = "Source"
	TrailerCorrelation = "Correlation-Id"
	TrailerRenamedTo   = "Renamed-To"
)

func trailersFor(mutID string, wo WriteOptions, changes []Change) repo.Trailers {
	t := repo.Trailers{{Key: TrailerMutationID, Value: mutID}}
	for _, c := range changes {
		t = append(t, repo.Trailer{Key: TrailerOperation, Value: c.Operation}, repo.Trailer{Key: TrailerPath, Value: c.Path()})
		if c.To != "" {
			t = append(t, repo.Trailer{Key: TrailerRenamedTo, Value: c.To})
		}
	}
	if wo.Source != "" {
		t = append(t, repo.Trailer{Key: TrailerSource, Value: wo.Source})
	}
	if wo.Correlation != "" {
		t = append(t, repo.Trailer{Key: TrailerCorrelation, Value: wo.Correlation})
	}
	return append(t, wo.Trailers...)
}
