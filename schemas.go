package aiwgstate

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/aiwg/aiwg-state/docschema"
	"github.com/aiwg/aiwg-state/internal/errkind"
	"github.com/aiwg/aiwg-state/objects"
	"github.com/aiwg/aiwg-state/repo"
	"github.com/aiwg/aiwg-state/verbiage"
)

// checkSchemas keeps every document a schema rule names valid (seed 003:
// shared state is validated on update): each file the write leaves at a
// ruled path, and, when the write changes the rules or a schema, every
// document they rule. Rules and schemas are read as the write leaves
// them, so one commit may change a schema and the documents it rules.
func (s *Store) checkSchemas(tx *repo.Tx, _ WriteOptions, changes []Change) error {
	rules, err := s.cachedRules(tx.ReadFile)
	if err != nil || rules == nil {
		return err
	}
	files := map[string]bool{}
	for _, c := range changes {
		for _, f := range []string{c.File, c.To} {
			if f != "" {
				files[f] = true
			}
		}
	}
	changed := tx.Changed()
	all := slices.Contains(changed, docschema.Path)
	for _, r := range rules.Rules {
		all = all || slices.Contains(changed, r.Schema)
	}
	if all {
		// Every ruled document, as the write leaves the tree.
		root, err := tx.ParentTree()
		if err != nil {
			return err
		}
		if !root.IsZero() {
			err := s.repo.Walk(root, "", func(path string, _ plumbing.Hash) error {
				if _, ok := rules.SchemaFor(path); ok {
					files[path] = true
				}
				return nil
			})
			if err != nil && !errors.Is(err, repo.ErrNotFound) {
				return err
			}
		}
	}
	paths := make([]string, 0, len(files))
	for f := range files {
		paths = append(paths, f)
	}
	slices.Sort(paths)
	for _, f := range paths {
		if err := s.validateRuled(rules, tx.ReadFile, f); err != nil {
			return err
		}
	}
	return nil
}

// rulesIn reads the schema rules through read; nil when there are none.
func rulesIn(read func(string) ([]byte, error)) (*docschema.Rules, error) {
	data, err := read(docschema.Path)
	if errors.Is(err, repo.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return docschema.Parse(data)
}

// cachedRules is rulesIn, parsed once per content: every write reads the
// rules.
func (s *Store) cachedRules(read func(string) ([]byte, error)) (*docschema.Rules, error) {
	data, err := read(docschema.Path)
	if errors.Is(err, repo.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	key := docschema.Path + "\x00" + fmt.Sprintf("%x", sha256.Sum256(data))
	if v, ok := s.schemas.Load(key); ok {
		return v.(*docschema.Rules), nil
	}
	r, err := docschema.Parse(data)
	if err != nil {
		return nil, err
	}
	s.schemas.Store(key, r)
	return r, nil
}

// validateRuled checks file against the schema its path is ruled by; a
// file that is not there, or not ruled, passes.
func (s *Store) validateRuled(rules *docschema.Rules, read func(string) ([]byte, error), file string) error {
	schemaFile, ok := rules.SchemaFor(file)
	if !ok {
		return nil
	}
	data, err := read(file)
	if errors.Is(err, repo.ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	sch, err := s.schema(read, schemaFile)
	if err != nil {
		return err
	}
	doc, err := objects.Decode(data)
	if err != nil {
		return errkind.Errorf(docschema.ErrInvalid, "%s is ruled by the schema %s, and is not JSON", file, schemaFile)
	}
	if err := sch.Validate(doc); err != nil {
		return errkind.Errorf(docschema.ErrInvalid, "%s breaks its schema %s: %v", file, schemaFile, err)
	}
	return nil
}

// schema compiles the schema in file, once per content.
func (s *Store) schema(read func(string) ([]byte, error), file string) (*docschema.Schema, error) {
	data, err := read(file)
	if errors.Is(err, repo.ErrNotFound) {
		return nil, errkind.Errorf(docschema.ErrRules, "%s names the schema %s, which is not in the store", docschema.Path, file)
	}
	if err != nil {
		return nil, err
	}
	key := file + "\x00" + fmt.Sprintf("%x", sha256.Sum256(data))
	if v, ok := s.schemas.Load(key); ok {
		return v.(*docschema.Schema), nil
	}
	sch, err := docschema.Compile(file, data)
	if err != nil {
		return nil, err
	}
	s.schemas.Store(key, sch)
	return sch, nil
}

// SchemaRules reads the schema rules at a revision; empty when there are
// none.
func (s *Store) SchemaRules(ctx context.Context, ro ReadOptions) (*docschema.Rules, error) {
	root, err := s.tree(ro)
	if err != nil {
		return nil, err
	}
	r, err := rulesIn(treeReader(s.repo, root))
	if r == nil && err == nil {
		r = &docschema.Rules{}
	}
	return r, err
}

// AddSchema rules the documents at paths (gitattributes patterns) by the
// JSON Schema schema, kept as .aiwg/schemas/<name>.schema.json: one
// commit, refused (docschema.ErrInvalid) if a document already there
// breaks it. A schema of that name is replaced; its rule's paths become
// paths.
func (s *Store) AddSchema(ctx context.Context, name string, paths []string, schema []byte, wo WriteOptions) (*Mutation, error) {
	if err := verbiage.ValidIdentifier(name); err != nil {
		return nil, fmt.Errorf("schema name: %w", err)
	}
	if len(paths) == 0 {
		return nil, fmt.Errorf("%w: a schema rules at least one path pattern", ErrUsage)
	}
	file := docschema.Dir + "/" + name + ".schema.json"
	if _, err := docschema.Compile(file, schema); err != nil {
		return nil, err
	}
	canon, err := objects.Canonical(schema)
	if err != nil {
		return nil, err
	}
	return s.commit(ctx, wo, "schema "+name+" rules "+strings.Join(paths, " "), func(tx *repo.Tx, rec *recorder) error {
		rules, err := rulesIn(tx.ReadFile)
		if err != nil {
			return err
		}
		if rules == nil {
			rules = &docschema.Rules{}
		}
		rules.Rules = slices.DeleteFunc(rules.Rules, func(r docschema.Rule) bool { return r.Schema == file })
		rules.Rules = append(rules.Rules, docschema.Rule{Paths: paths, Schema: file})
		return s.writeRules(tx, rec, rules, func() error {
			old, _ := tx.Exists(file)
			if err := tx.WriteFile(file, canon); err != nil {
				return err
			}
			rec.add(map[bool]string{true: OpUpdate, false: OpCreate}[old], file, "")
			return nil
		})
	})
}

// RemoveSchema drops the schema name and its rule: one commit.
func (s *Store) RemoveSchema(ctx context.Context, name string, wo WriteOptions) (*Mutation, error) {
	file := docschema.Dir + "/" + name + ".schema.json"
	return s.commit(ctx, wo, "schema "+name+" removed", func(tx *repo.Tx, rec *recorder) error {
		rules, err := rulesIn(tx.ReadFile)
		if err != nil {
			return err
		}
		n := 0
		if rules != nil {
			n = len(rules.Rules)
			rules.Rules = slices.DeleteFunc(rules.Rules, func(r docschema.Rule) bool { return r.Schema == file })
		}
		if rules == nil || len(rules.Rules) == n {
			return errkind.Errorf(ErrNotFound, "no schema %s (aiwg-state schema ls lists them)", name)
		}
		return s.writeRules(tx, rec, rules, func() error {
			if ok, _ := tx.Exists(file); ok {
				if err := tx.Remove(file); err != nil {
					return err
				}
				rec.add(OpDelete, file, "")
			}
			return nil
		})
	})
}

// writeRules stages the rules (parsed again, so that what is written is
// what Parse accepts) and whatever else the write does.
func (s *Store) writeRules(tx *repo.Tx, rec *recorder, rules *docschema.Rules, also func() error) error {
	b, err := rules.Encode()
	if err != nil {
		return err
	}
	if _, err := docschema.Parse(b); err != nil {
		return err
	}
	old, _ := tx.Exists(docschema.Path)
	if err := tx.WriteFile(docschema.Path, b); err != nil {
		return err
	}
	rec.add(map[bool]string{true: OpUpdate, false: OpCreate}[old], docschema.Path, "")
	return also()
}

// SchemaViolation is a document that breaks its schema.
type SchemaViolation struct {
	File   string `json:"file"`
	Schema string `json:"schema"`
	Error  string `json:"error"`
}

// CheckSchemas validates every ruled document at a revision (what a
// merge or a plain git commit may have left) and lists those that break
// their schema.
func (s *Store) CheckSchemas(ctx context.Context, ro ReadOptions) ([]SchemaViolation, error) {
	root, err := s.tree(ro)
	if err != nil {
		return nil, err
	}
	read := treeReader(s.repo, root)
	rules, err := rulesIn(read)
	if err != nil || rules == nil {
		return []SchemaViolation{}, err
	}
	out := []SchemaViolation{}
	err = s.repo.Walk(root, "", func(path string, _ plumbing.Hash) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		schemaFile, ok := rules.SchemaFor(path)
		if !ok {
			return nil
		}
		if err := s.validateRuled(rules, read, path); err != nil {
			if !errors.Is(err, docschema.ErrInvalid) {
				return err
			}
			out = append(out, SchemaViolation{File: path, Schema: schemaFile, Error: err.Error()})
		}
		return nil
	})
	return out, err
}
