package repo

import (
	"bufio"
	"bytes"
	"fmt"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
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
}

// WriteTag writes an annotated tag object pointing at t.Target (a commit
// unless TargetType says otherwise) and returns its hash. It writes the
// object only: publishing it is a ref update (UpdateRef with a zero old
// value creates refs/tags/<name> only if it does not exist yet).
func (r *Repo) WriteTag(t *Tag) (plumbing.Hash, error) {
	if t.TargetType == plumbing.InvalidObject {
		t.TargetType = plumbing.CommitObject
	}
	ot := object.Tag{Name: t.Name, Tagger: t.Tagger, Message: t.Message, TargetType: t.TargetType, Target: t.Target}
	mo := &plumbing.MemoryObject{}
	if err := ot.Encode(mo); err != nil {
		return plumbing.ZeroHash, fmt.Errorf("tag %s: %w", t.Name, err)
	}
	rd, _ := mo.Reader()
	var buf bytes.Buffer
	if _, err := buf.ReadFrom(bufio.NewReader(rd)); err != nil {
		return plumbing.ZeroHash, err
	}
	body := buf.Bytes()
	h := hashObject(plumbing.TagObject, body)
	objs := []rawObject{{typ: plumbing.TagObject, hash: h, body: body}}
	if err := r.writeObjects(objs); err != nil {
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
	mo := &plumbing.MemoryObject{}
	mo.SetType(plumbing.TagObject)
	mo.Write(body)
	var ot object.Tag
	if err := ot.Decode(mo); err != nil {
		return nil, fmt.Errorf("tag %s: %w", h, err)
	}
	return &Tag{Hash: h, Name: ot.Name, Target: ot.Target, TargetType: ot.TargetType, Tagger: ot.Tagger, Message: ot.Message}, nil
}
