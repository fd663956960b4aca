package statedoc

import (
	"bytes"
	"fmt"

	jsonpatch "github.com/evanphx/json-patch/v5"

	"github.com/aiwg/aiwg-state/objects"
	"github.com/aiwg/aiwg-state/verbiage"
)

// ApplyDocument applies input to a resolved document: a JSON array is an
// RFC 6902 JSON Patch whose paths address the resolved document (so they
// reach into shards); any other JSON value replaces the document. The
// result must keep verbiage keys everywhere (checked strictly, not
// normalized: verbiage.ErrInvalidKey) and the specification's shape
// (ErrInvalidState); a patch that does not apply (a failed test, a missing
// path) is ErrInvalidState, malformed input objects.ErrInvalidJSON.
func ApplyDocument(doc any, input []byte) (any, error) {
	in, err := objects.Decode(input)
	if err != nil {
		return nil, err
	}
	next := in
	if _, isPatch := in.([]any); isPatch {
		patch, err := jsonpatch.DecodePatch(input)
		if err != nil {
			return nil, fmt.Errorf("%w: JSON Patch: %v", objects.ErrInvalidJSON, err)
		}
		cur, err := objects.Encode(doc)
		if err != nil {
			return nil, err
		}
		opts := jsonpatch.NewApplyOptions()
		opts.EnsurePathExistsOnAdd = false
		res, err := patch.ApplyIndentWithOptions(cur, "", opts)
		if err != nil {
			return nil, fmt.Errorf("%w: JSON Patch does not apply: %v", ErrInvalidState, err)
		}
		if next, err = objects.Decode(bytes.TrimSpace(res)); err != nil {
			return nil, err
		}
	}
	if err := verbiage.ValidateKeys(next); err != nil {
		return nil, err
	}
	if err := Validate(next); err != nil {
		return nil, err
	}
	return next, nil
}

// SetPath sets value at key path p (keys normalized, like the value's
// object keys): the generic write of `state-doc set`.
func SetPath(doc any, p verbiage.Path, value any) (any, []verbiage.Path, error) {
	np, err := verbiage.NormalizePath(p)
	if err != nil {
		return nil, nil, err
	}
	v, err := verbiage.NormalizeKeys(value)
	if err != nil {
		return nil, nil, err
	}
	out, err := objects.Set(doc, np, v)
	if err != nil {
		return nil, nil, err
	}
	return out, []verbiage.Path{np}, nil
}

// DeletePath removes the value at key path p (keys normalized).
func DeletePath(doc any, p verbiage.Path) (any, []verbiage.Path, error) {
	np, err := verbiage.NormalizePath(p)
	if err != nil {
		return nil, nil, err
	}
	out, err := objects.Delete(doc, np)
	if err != nil {
		return nil, nil, err
	}
	return out, []verbiage.Path{np}, nil
}
