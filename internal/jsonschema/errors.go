package jsonschema

import (
	"errors"
	"fmt"
	"strings"
)

// ErrInvalid: a document breaks a schema. Package docschema's ErrInvalid
// is this error, so that the core tells a refused write by it without
// importing the feature.
var ErrInvalid = errors.New("breaks its schema")

// ValidationError names the first field that breaks a schema.
type ValidationError struct {
	// Loc is the field's key path, one key or array index a segment.
	Loc []string
	// Field is a key path in the store's dot form (agents.pulse.status);
	// empty for the document itself.
	Field string
	// Reason is the validator's message for that field.
	Reason string
}

func (e *ValidationError) Error() string {
	if e.Field == "" {
		return e.Reason
	}
	return fmt.Sprintf("field %s: %s", e.Field, e.Reason)
}

// FirstViolation reads a validator's error: the location (key path
// segments) of the first field, in document order, that breaks the
// schema, and why. A missing required field is located at itself.
func FirstViolation(err error) (loc []string, reason string) {
	var ve *ValidationError
	if !errors.As(err, &ve) {
		return nil, err.Error()
	}
	return ve.Loc, ve.Reason
}

// JoinField renders location segments as a key path in the store's dot
// form, dots inside a key escaped.
func JoinField(loc []string) string {
	parts := make([]string, len(loc))
	for i, l := range loc {
		parts[i] = strings.ReplaceAll(l, ".", `\.`)
	}
	return strings.Join(parts, ".")
}
