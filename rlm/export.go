package rlm

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"sort"

	"github.com/aiwg/aiwg-state/internal/jsonschema"
	"github.com/aiwg/aiwg-state/objects"
)

// ErrInvalidDocument is wrapped by errors for a document that breaks the
// schema.
var ErrInvalidDocument = errors.New("invalid state document")

// Document is a state as the specification's schema describes it: what `state
// export` prints and `state import` reads. Everything in it is derived from
// the store (history from commits, checkpoints from tags, metadata counted).
type Document struct {
	Version       string               `json:"version"`
	StateID       string               `json:"state_id"`
	SessionID     string               `json:"session_id,omitempty"`
	TreeID        *string              `json:"tree_id,omitempty"`
	ParentStateID string               `json:"parent_state_id,omitempty"`
	Variables     map[string]*Variable `json:"variables"`
	History       *History             `json:"history,omitempty"`
	Metadata      *Metadata            `json:"metadata,omitempty"`
}

// History is the state's mutations and checkpoints. A state keeps all its
// history in git; an export carries at most MaxHistory mutations, the page
// Page of Pages (page 1 is the newest), oldest first within the page.
type History struct {
	Mutations   []Mutation   `json:"mutations"`
	Checkpoints []Checkpoint `json:"checkpoints"`
	Page        int          `json:"page,omitempty"`
	Pages       int          `json:"pages,omitempty"`
}

// Mutation is one change of one variable. OldValue and NewValue are raw
// JSON so that a null value and an absent one stay apart.
type Mutation struct {
	MutationID   string          `json:"mutation_id"`
	Operation    string          `json:"operation"`
	VariableName string          `json:"variable_name"`
	OldValue     json.RawMessage `json:"old_value,omitempty"`
	NewValue     json.RawMessage `json:"new_value,omitempty"`
	Source       string          `json:"source,omitempty"`
	Timestamp    string          `json:"timestamp"`
	Metadata     map[string]any  `json:"metadata,omitempty"`
}

// Checkpoint is a checkpoint as exported.
type Checkpoint struct {
	CheckpointID string `json:"checkpoint_id"`
	Name         string `json:"name"`
	Timestamp    string `json:"timestamp"`
	SnapshotPath string `json:"snapshot_path,omitempty"`
	Description  string `json:"description,omitempty"`
}

// Metadata is counted from the store, never stored.
type Metadata struct {
	CreatedAt        string         `json:"created_at,omitempty"`
	LastUpdatedAt    string         `json:"last_updated_at,omitempty"`
	VariableCount    int            `json:"variable_count"`
	MutationCount    int            `json:"mutation_count"`
	CheckpointCount  int            `json:"checkpoint_count"`
	TotalSizeBytes   int64          `json:"total_size_bytes"`
	ExecutionConfig  map[string]any `json:"execution_config,omitempty"`
	CompletionStatus string         `json:"completion_status,omitempty"`
}

// Completion statuses.
const (
	StatusIncomplete = "incomplete"
	StatusComplete   = "complete"
	// StatusError and StatusCancelled end a state without a Final.
	StatusError     = "error"
	StatusCancelled = "cancelled"
)

// Encode renders the document as canonical JSON.
func (d *Document) Encode() ([]byte, error) {
	raw, err := json.Marshal(d)
	if err != nil {
		return nil, err
	}
	return objects.Canonical(raw)
}

// DecodeDocument reads a state document (numbers kept as written). It
// accepts the specification's shorthand `"Final": null` for a state not yet
// complete.
func DecodeDocument(data []byte) (*Document, error) {
	var raw struct {
		Document
		Variables map[string]json.RawMessage `json:"variables"`
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if err := dec.Decode(&raw); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrInvalidDocument, err)
	}
	d := raw.Document
	d.Variables = map[string]*Variable{}
	names := make([]string, 0, len(raw.Variables))
	for n := range raw.Variables {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		r := bytes.TrimSpace(raw.Variables[n])
		if string(r) == "null" {
			d.Variables[n] = &Variable{Name: n, Value: nil, Type: TypeNull}
			continue
		}
		v, err := DecodeVariable(r)
		if err != nil {
			return nil, fmt.Errorf("%w: variable %s: %v", ErrInvalidDocument, n, err)
		}
		if v.Name == "" {
			v.Name = n
		}
		d.Variables[n] = v
	}
	return &d, nil
}

// Schema validates documents against the JSON Schema converted from the
// specification (rlm/state.schema.json).
type Schema struct{ s *jsonschema.Validator }

// SchemaID is the $id of the specification's schema.
const SchemaID = "https://aiwg.io/schemas/rlm-state/v1"

// CompileSchema compiles the schema with format assertions on, so a
// timestamp that is not an RFC 3339 date-time is refused.
func CompileSchema(data []byte) (*Schema, error) {
	if _, err := objects.Decode(data); err != nil {
		return nil, fmt.Errorf("rlm schema: %w", err)
	}
	s, err := jsonschema.NewValidator(SchemaID, func(uri string) ([]byte, error) {
		if uri != SchemaID {
			return nil, fmt.Errorf("%s: the state schema refers to no other schema", uri)
		}
		return data, nil
	})
	if err != nil {
		return nil, fmt.Errorf("rlm schema: %w", err)
	}
	return &Schema{s: s}, nil
}

// Validate checks a document given as JSON.
func (s *Schema) Validate(data []byte) error {
	v, err := objects.Decode(data)
	if err != nil {
		return fmt.Errorf("%w: %v", ErrInvalidDocument, err)
	}
	if err := s.s.Validate(v); err != nil {
		return fmt.Errorf("%w: %v", ErrInvalidDocument, err)
	}
	return nil
}
