// Package docschema is the store's document schemas: rules that name,
// by path pattern, the JSON Schema (2020-12 unless a schema says
// otherwise) the documents at those paths must meet, and the validation
// that names the first field that breaks one. The swarm shared state
// specification asks that a swarm's shared state be validated on update;
// the store applies these rules to every write.
//
// Where each part is:
//   - the rules and their schemas (Rules, Parse, Compile): docschema.go;
//     the validator under them is internal/jsonschema;
//   - the Go API, a handle over the core (Schemas: Add, Remove, Rules,
//     Check; aiwgstate.Store.Schemas): schemas.go;
//   - the rules over writes: Guard (every write), FastForward (what a
//     fast-forward brings), Fsck (the store's fsck) and PushCheck (a
//     server's pre-receive hook), wired in by package aiwgstate;
//   - the CLI: cmd/aiwg-state/cmd_schema.go (`aiwg-state schema`).
package docschema

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/aiwg/aiwg-state/internal/errkind"
	"github.com/aiwg/aiwg-state/internal/jsonschema"
	"github.com/aiwg/aiwg-state/objects"
	"github.com/aiwg/aiwg-state/verbiage"
)

// Path is where the store keeps its schema rules.
const Path = ".aiwg/schemas.json"

// Dir is where the schemas that `schema add` stores are kept.
const Dir = ".aiwg/schemas"

var (
	// ErrInvalid: a document breaks the schema its path is ruled by.
	ErrInvalid = jsonschema.ErrInvalid
	// ErrRules: the rules, or a schema they name, cannot be used.
	ErrRules = errors.New("invalid schema rules")
)

// Rules are the store's schema rules; the first rule whose paths match a
// file decides its schema.
type Rules struct {
	Rules []Rule `json:"rules"`

	compiled [][]verbiage.Pattern
}

// Rule assigns a schema, a file in the store's tree, to paths
// (gitattributes patterns, as the access policy's).
type Rule struct {
	Paths  []string `json:"paths"`
	Schema string   `json:"schema"`
}

// Parse reads and checks rules.
func Parse(data []byte) (*Rules, error) {
	var r Rules
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&r); err != nil {
		return nil, errkind.Errorf(ErrRules, "%s: %v", Path, err)
	}
	r.compiled = make([][]verbiage.Pattern, len(r.Rules))
	for i, rule := range r.Rules {
		if len(rule.Paths) == 0 {
			return nil, errkind.Errorf(ErrRules, "%s: rule %d has no paths", Path, i+1)
		}
		if _, err := verbiage.CleanStorePath(rule.Schema); err != nil {
			return nil, errkind.Errorf(ErrRules, "%s: rule %d: schema %q: %v", Path, i+1, rule.Schema, err)
		}
		if !strings.HasPrefix(rule.Schema, Dir+"/") {
			return nil, errkind.Errorf(ErrRules, "%s: rule %d: schema %q: schemas live in %s/", Path, i+1, rule.Schema, Dir)
		}
		for _, p := range rule.Paths {
			if strings.HasPrefix(strings.TrimPrefix(p, "/"), ".aiwg/") {
				return nil, errkind.Errorf(ErrRules, "%s: rule %d: %q: the store's own files are ruled by no schema", Path, i+1, p)
			}
			cp, err := verbiage.CompilePattern(p)
			if err != nil {
				return nil, errkind.Errorf(ErrRules, "%s: rule %d: %v", Path, i+1, err)
			}
			r.compiled[i] = append(r.compiled[i], cp)
		}
	}
	return &r, nil
}

// Encode renders the rules as the store keeps them: canonical JSON.
func (r *Rules) Encode() ([]byte, error) {
	if r.Rules == nil {
		r.Rules = []Rule{}
	}
	b, err := json.Marshal(struct {
		Rules []Rule `json:"rules"`
	}{r.Rules})
	if err != nil {
		return nil, err
	}
	return objects.Canonical(b)
}

// SchemaFor is the schema file that rules file, if any. The rules, the
// schemas and the store's own files are ruled by none.
func (r *Rules) SchemaFor(file string) (string, bool) {
	if file == Path || strings.HasPrefix(file, ".aiwg/") {
		return "", false
	}
	for i, pats := range r.compiled {
		for _, p := range pats {
			if p.Match(file) {
				return r.Rules[i].Schema, true
			}
		}
	}
	return "", false
}

// ValidationError names the first field that breaks a schema (the
// error of Schema.Validate).
type ValidationError = jsonschema.ValidationError

// Schema is a compiled schema.
type Schema struct {
	s *jsonschema.Validator
	// Files are the store files the schema was compiled from, its own
	// and those its $refs load, with their content when compiled.
	Files map[string]string
}

// Compile compiles the schema in the store file file, with format
// assertions on. read reads store files: a $ref to another schema is
// file:///<path in the store>, or a path relative to the schema's own;
// nothing outside the store is ever read.
func Compile(file string, read func(path string) ([]byte, error)) (*Schema, error) {
	ld := &storeLoader{read: read, files: map[string]string{}}
	s, err := jsonschema.NewValidator("file:///"+file, ld.Load)
	if err != nil {
		if ld.err != nil {
			err = ld.err
		}
		return nil, errkind.Errorf(ErrRules, "schema %s: %v", file, err)
	}
	return &Schema{s: s, Files: ld.files}, nil
}

// storeLoader loads schemas from the store's tree, and only from there.
type storeLoader struct {
	read  func(string) ([]byte, error)
	files map[string]string
	err   error // the first failure, whose words beat the library's
}

func (l *storeLoader) Load(url string) ([]byte, error) {
	path, ok := strings.CutPrefix(url, "file:///")
	if !ok {
		l.err = fmt.Errorf("%s: a schema may refer only to schemas in the store", url)
		return nil, l.err
	}
	clean, err := verbiage.CleanStorePath(path)
	if err != nil || clean != path {
		l.err = fmt.Errorf("%s: not a path in the store", url)
		return nil, l.err
	}
	if !strings.HasPrefix(path, Dir+"/") {
		// A schema elsewhere would be an ordinary document: writes to it
		// would change what documents must meet, unchecked.
		l.err = fmt.Errorf("%s: a schema may refer only to schemas in %s/", path, Dir)
		return nil, l.err
	}
	data, err := l.read(path)
	if err != nil {
		l.err = fmt.Errorf("%s is not in the store", path)
		return nil, l.err
	}
	if _, err := objects.Decode(data); err != nil {
		l.err = fmt.Errorf("%s: %v", path, err)
		return nil, l.err
	}
	l.files[path] = string(data)
	return data, nil
}

// Validate checks a decoded document; the error is a *ValidationError
// naming the first field, in document order, that breaks the schema.
func (s *Schema) Validate(doc any) error {
	return s.s.Validate(doc)
}
