package repo

import (
	"context"
	"fmt"

	"github.com/go-git/go-git/v5/plumbing"
)

// Tag is a decoded annotated tag object.
type Tag struct {
	Hash plumbing.Hash
	// Name is the tag's name as recorded in the object (the ref name
	// without refs/tags/); git fsck checks that it is a valid ref name.
	Name       string
	Target     plumbing.Hash
	TargetType plumbing.ObjectType
	Tagger     Signature
	Message    string
	// PGPSignature is the armored signature `git tag -s` appends to the
	// message, split off; empty for an unsigned tag.
	PGPSignature string
	// Sign, when set, signs the tag as git tag -s does: the armored
	// signature of the unsigned body is appended to it.
	Sign func(payload []byte) ([]byte, error)
}

// WriteTag writes an annotated tag object pointing at t.Target (a commit
// unless TargetType says otherwise) and returns its hash. It writes the
// object only: CreateTag also publishes it, safely beside a git repack.
func (r *Repo) WriteTag(t *Tag) (plumbing.Hash, error) {
	return r.writeTag(t, nil)
}

// CreateTag writes the annotated tag t and creates ref (refs/tags/...)
// naming it, only if ref does not exist yet (a *StaleError otherwise). The
// ref is created while the tag's pack is still kept, so a repack running
// beside it never drops the tag as unreachable first.
func (r *Repo) CreateTag(ctx context.Context, ref string, t *Tag) (plumbing.Hash, error) {
	return r.writeTag(t, func(h plumbing.Hash) error {
		return r.UpdateRef(ctx, ref, plumbing.ZeroHash, h)
	})
}

func (r *Repo) writeTag(t *Tag, publish func(plumbing.Hash) error) (plumbing.Hash, error) {
	if t.TargetType == plumbing.InvalidObject {
		t.TargetType = plumbing.CommitObject
	}
	body, err := encodeTag(t)
	if err != nil {
		return plumbing.ZeroHash, fmt.Errorf("tag %s: %w", t.Name, err)
	}
	if t.Sign != nil {
		if len(body) > 0 && body[len(body)-1] != '\n' {
			body = append(body, '\n') // the signature starts a line
		}
		sig, err := t.Sign(body)
		if err != nil {
			return plumbing.ZeroHash, fmt.Errorf("tag %s: %w", t.Name, err)
		}
		body = append(body, sig...)
		t.PGPSignature = string(sig)
	}
	h := hashObject(plumbing.TagObject, body)
	objs := []rawObject{{typ: plumbing.TagObject, hash: h, body: body}}
	var then func() error
	if publish != nil {
		then = func() error { return publish(h) }
	}
	if err := r.writeObjectsThen(objs, then); err != nil {
		return plumbing.ZeroHash, err
	}
	r.remember(objs, nil)
	t.Hash = h
	return h, nil
}

// ReadTag decodes the annotated tag object h; a commit or other object is
// ErrNotFound (a lightweight tag has no tag object).
func (r *Repo) ReadTag(h plumbing.Hash) (*Tag, error) {
	typ, body, err := r.ReadObject(h)
	if err != nil {
		return nil, err
	}
	if typ != plumbing.TagObject {
		return nil, fmt.Errorf("object %s is a %s, not an annotated tag: %w", h, typ, ErrNotFound)
	}
	return ParseTag(h, body)
}
