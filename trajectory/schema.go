package trajectory

import (
	"errors"
	"fmt"

	"github.com/aiwg/aiwg-state/internal/jsonschema"
	"github.com/aiwg/aiwg-state/objects"
)

// ErrInvalid is wrapped by every error for a document that breaks the
// schema or the specification's rules; the CLI maps it to the domain exit code.
var ErrInvalid = errors.New("invalid trajectory")

// SchemaID is the $id of the specification's schema.
const SchemaID = "https://aiwg.io/schemas/rlm-trajectory/v1"

// Schema validates trajectories and single iterations.
type Schema struct {
	trajectory *jsonschema.Validator
	iteration  *jsonschema.Validator
}

// CompileSchema compiles the JSON Schema (2020-12) of the RLM trajectories specification, with format
// assertions on, so a malformed date-time is refused as the specification intends.
func CompileSchema(data []byte) (*Schema, error) {
	if _, err := objects.Decode(data); err != nil {
		return nil, fmt.Errorf("trajectory schema: %w", err)
	}
	load := func(uri string) ([]byte, error) {
		if uri != SchemaID {
			return nil, fmt.Errorf("%s: the trajectory schema refers to no other schema", uri)
		}
		return data, nil
	}
	s := &Schema{}
	var err error
	if s.trajectory, err = jsonschema.NewValidator(SchemaID, load); err != nil {
		return nil, fmt.Errorf("trajectory schema: %w", err)
	}
	if s.iteration, err = jsonschema.NewValidator(SchemaID+"#/$defs/TAOIteration", load); err != nil {
		return nil, fmt.Errorf("trajectory schema: %w", err)
	}
	return s, nil
}

// ValidateTrajectory checks a whole document (or a header without its
// iterations, which the schema allows).
func (s *Schema) ValidateTrajectory(doc any) error {
	return check(s.trajectory, doc, "")
}

// ValidateIteration checks one iteration; the error names the field from
// the iteration's root (observation.status).
func (s *Schema) ValidateIteration(it any) error {
	return check(s.iteration, it, "")
}

// ValidationError names the first field that breaks the schema.
type ValidationError struct {
	// Field is a key path in the store's dot form (iterations.0.thought.type);
	// empty for the document itself.
	Field string
	// Reason is the validator's message for that field.
	Reason string
}

func (e *ValidationError) Error() string {
	if e.Field == "" {
		return fmt.Sprintf("%s: %s", ErrInvalid, e.Reason)
	}
	return fmt.Sprintf("%s: field %s: %s", ErrInvalid, e.Field, e.Reason)
}

func (e *ValidationError) Unwrap() error { return ErrInvalid }

func check(sch *jsonschema.Validator, v any, prefix string) error {
	err := sch.Validate(v)
	if err == nil {
		return nil
	}
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		return fmt.Errorf("%w: %v", ErrInvalid, err)
	}
	loc, reason := jsonschema.FirstViolation(err)
	field := jsonschema.JoinField(loc)
	switch {
	case prefix != "" && field == "":
		field = prefix
	case prefix != "":
		field = prefix + "." + field
	}
	return &ValidationError{Field: field, Reason: reason}
}
