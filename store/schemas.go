package store

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

// checkSchemas keeps every document a schema rule names valid (the swarm shared state specification:
// shared state is validated on update): each file the transaction
// leaves at a ruled path (every staged path, not only those the change
// list names: a rollback records a directory), and, when the write
// changes the rules or a schema, the documents whose schema that changes.
// Rules and schemas are read as the write leaves them.
func (s *Store) checkSchemas(tx *repo.Tx, _ WriteOptions, _ []Change) error {
	rules, err := s.cachedRules(tx.ReadFile)
	if err != nil || rules == nil {
		return err
	}
	changed := tx.Changed()
	files := map[string]bool{}
	for _, f := range changed {
		files[f] = true
	}
	rulesChanged, schemasChanged := false, false
	for _, f := range changed {
		rulesChanged = rulesChanged || f == docschema.Path
		schemasChanged = schemasChanged || strings.HasPrefix(f, docschema.Dir+"/")
	}
	if rulesChanged || schemasChanged {
		more, err := s.revalidate(tx, rules, files)
		if err != nil {
			return err
		}
		for _, f := range more {
			files[f] = true
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

// revalidate lists the documents a change of the rules or of schemas
// puts to the test (see schemaAffected), in the tree the write builds on.
func (s *Store) revalidate(tx *repo.Tx, rules *docschema.Rules, staged map[string]bool) ([]string, error) {
	root, err := tx.ParentTree()
	if err != nil || root.IsZero() {
		return nil, err
	}
	before, err := rulesIn(treeReader(s.repo, root))
	if err != nil {
		before = nil // broken before: every ruled document is tested
	}
	return s.schemaAffected(root, before, rules, staged, tx.ReadFile)
}

// schemaAffected lists the files of tree root whose schema a change from
// the rules before to those after puts to the test: those whose schema
// is another than before, or one compiled from a file in changed (read
// through read, as the change leaves it). Every rule's schema must
// compile, documents or not. Documents whose schema is untouched are left
// alone: one left invalid by plain git does not block unrelated schema
// changes.
func (s *Store) schemaAffected(root plumbing.Hash, before, after *docschema.Rules, changed map[string]bool, read func(string) ([]byte, error)) ([]string, error) {
	touched := map[string]bool{}
	for _, r := range after.Rules {
		sch, err := s.schema(read, r.Schema)
		if err != nil {
			return nil, err
		}
		for f := range sch.Files {
			if changed[f] {
				touched[r.Schema] = true
			}
		}
	}
	var out []string
	err := s.repo.Walk(root, "", func(path string, _ plumbing.Hash) error {
		now, ok := after.SchemaFor(path)
		if !ok {
			return nil
		}
		was := ""
		if before != nil {
			was, _ = before.SchemaFor(path)
		}
		if was != now || touched[now] {
			out = append(out, path)
		}
		return nil
	})
	if err != nil && !errors.Is(err, repo.ErrNotFound) {
		return nil, err
	}
	return out, nil
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
	return parseStoredRules(data)
}

// parseStoredRules parses the rules the store holds: broken ones (plain
// git, a merge) are the store's state, not the caller's request.
func parseStoredRules(data []byte) (*docschema.Rules, error) {
	r, err := docschema.Parse(data)
	if err != nil {
		return nil, &BrokenFileError{Kind: BrokenSchemaRules, File: docschema.Path, Err: errkind.Errorf(ErrInvalidRecord, "the store's schema rules are broken: %v", err)}
	}
	return r, nil
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
	key := "rules\x00" + contentKey(data)
	if v, ok := s.schemas.Load(key); ok {
		return v.(*docschema.Rules), nil
	}
	r, err := parseStoredRules(data)
	if err != nil {
		return nil, err
	}
	s.schemas.Store(key, r)
	return r, nil
}

func contentKey(data []byte) string { return fmt.Sprintf("%x", sha256.Sum256(data)) }

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
		return &SchemaViolation{File: file, Schema: schemaFile, cause: err}
	}
	return nil
}

// schema compiles the schema in file, once for the content of every file
// it is compiled from (its own, and those its $refs load).
func (s *Store) schema(read func(string) ([]byte, error), file string) (*docschema.Schema, error) {
	data, err := read(file)
	if errors.Is(err, repo.ErrNotFound) {
		return nil, &BrokenFileError{Kind: BrokenSchemaMissing, File: docschema.Path, Err: errkind.Errorf(ErrInvalidRecord, "%s names the schema %s, which is not in the store", docschema.Path, file)}
	}
	if err != nil {
		return nil, err
	}
	key := "schema\x00" + file + "\x00" + contentKey(data)
	if v, ok := s.schemas.Load(key); ok {
		sch := v.(*docschema.Schema)
		fresh := true
		for f, was := range sch.Files {
			if now, err := read(f); err != nil || string(now) != was {
				fresh = false
				break
			}
		}
		if fresh {
			return sch, nil
		}
	}
	sch, err := docschema.Compile(file, read)
	if err != nil {
		// A schema the store holds (schema add compiles its own first).
		name := strings.TrimSuffix(strings.TrimPrefix(file, docschema.Dir+"/"), ".schema.json")
		return nil, &BrokenFileError{Kind: BrokenSchema, File: file, Name: name, Err: errkind.Errorf(ErrInvalidRecord, "%v: the store's schema is broken", err)}
	}
	s.schemas.Store(key, sch)
	return sch, nil
}

// SchemaRules reads the schema rules at a revision; empty when there are
// none.
func (s *Store) SchemaRules(ctx context.Context, ro ReadOptions) (*docschema.Rules, error) {
	root, err := s.Tree(ro)
	if err != nil {
		return nil, err
	}
	r, err := rulesIn(treeReader(s.repo, root))
	if r == nil && err == nil {
		r = &docschema.Rules{Rules: []docschema.Rule{}}
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
	canon, err := objects.Canonical(schema)
	if err != nil {
		return nil, fmt.Errorf("schema %s: %w", name, err)
	}
	return s.Commit(ctx, wo, "schema "+name+" rules "+strings.Join(paths, " "), func(tx *repo.Tx, rec *Recorder) error {
		rules, err := rulesIn(tx.ReadFile)
		if err != nil {
			return err
		}
		if rules == nil {
			rules = &docschema.Rules{}
		}
		// A replaced schema keeps its rule's place: the first match
		// decides.
		if i := slices.IndexFunc(rules.Rules, func(r docschema.Rule) bool { return r.Schema == file }); i >= 0 {
			rules.Rules[i].Paths = paths
		} else {
			rules.Rules = append(rules.Rules, docschema.Rule{Paths: paths, Schema: file})
		}
		return s.writeRules(tx, rec, rules, func() error {
			old, _ := tx.Exists(file)
			if err := tx.WriteFile(file, canon); err != nil {
				return err
			}
			rec.Add(map[bool]string{true: OpUpdate, false: OpCreate}[old], file, "")
			_, err := docschema.Compile(file, tx.ReadFile)
			return err
		})
	})
}

// RemoveSchema drops the schema name and its rule: one commit. An empty
// name drops every rule and schema, whatever state the rules are in: the
// way out of rules broken by plain git or a merge.
func (s *Store) RemoveSchema(ctx context.Context, name string, wo WriteOptions) (*Mutation, error) {
	if name == "" {
		return s.Commit(ctx, wo, "schema: every rule removed", func(tx *repo.Tx, rec *Recorder) error {
			var gone []string
			if ok, _ := tx.Exists(docschema.Path); ok {
				gone = append(gone, docschema.Path)
			}
			root, err := tx.ParentTree()
			if err != nil {
				return err
			}
			err = s.repo.Walk(root, docschema.Dir, func(p string, _ plumbing.Hash) error {
				gone = append(gone, p)
				return nil
			})
			if err != nil && !errors.Is(err, repo.ErrNotFound) {
				return err
			}
			if len(gone) == 0 {
				return ErrNoChange
			}
			for _, f := range gone {
				if err := tx.Remove(f); err != nil {
					return err
				}
				rec.Add(OpDelete, f, "")
			}
			return nil
		})
	}
	file := docschema.Dir + "/" + name + ".schema.json"
	return s.Commit(ctx, wo, "schema "+name+" removed", func(tx *repo.Tx, rec *Recorder) error {
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
			return &MissingError{Kind: MissingSchema, Name: name}
		}
		return s.writeRules(tx, rec, rules, func() error {
			if ok, _ := tx.Exists(file); ok {
				if err := tx.Remove(file); err != nil {
					return err
				}
				rec.Add(OpDelete, file, "")
			}
			return nil
		})
	})
}

// checkFastForward is the schema check of a fast-forward, which writes no
// commit for the write checks to judge: the documents the branch brings
// that its rules rule, and, when it brings other rules or schemas, the
// documents whose schema that changes, must meet their schema as the
// branch has them.
func (s *Store) checkFastForward(ours, theirs plumbing.Hash) error {
	from, to := s.TreeOf(ours), s.TreeOf(theirs)
	read := treeReader(s.repo, to)
	rules, err := rulesIn(read)
	if err != nil || rules == nil {
		return err
	}
	files, err := s.repo.DiffTrees(from, to)
	if err != nil {
		return err
	}
	changed := map[string]bool{}
	var paths []string
	schemasChanged := false
	for _, f := range files {
		changed[f.Path] = true
		schemasChanged = schemasChanged || f.Path == docschema.Path || strings.HasPrefix(f.Path, docschema.Dir+"/")
		if !f.New.IsZero() {
			paths = append(paths, f.Path)
		}
	}
	if schemasChanged {
		before, err := rulesIn(treeReader(s.repo, from))
		if err != nil {
			before = nil
		}
		more, err := s.schemaAffected(to, before, rules, changed, read)
		if err != nil {
			return err
		}
		paths = append(paths, more...)
	}
	for _, p := range paths {
		if err := s.validateRuled(rules, read, p); err != nil {
			return fmt.Errorf("%w (the fast-forward would bring it; fix it on the branch first)", err)
		}
	}
	return nil
}

// writeRules stages the rules (parsed again, so that what is written is
// what Parse accepts) and whatever else the write does.
func (s *Store) writeRules(tx *repo.Tx, rec *Recorder, rules *docschema.Rules, also func() error) error {
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
	rec.Add(map[bool]string{true: OpUpdate, false: OpCreate}[old], docschema.Path, "")
	return also()
}

// SchemaViolation is a document that breaks its schema: the error of a
// refused write (errors.Is docschema.ErrInvalid; errors.As a
// *docschema.ValidationError for the field), and what CheckSchemas lists.
type SchemaViolation struct {
	File   string `json:"file"`
	Schema string `json:"schema"`
	Field  string `json:"field"`
	Reason string `json:"reason"`
	cause  error
}

func (v *SchemaViolation) Error() string {
	if v.cause == nil {
		return fmt.Sprintf("%s breaks its schema %s: %s", v.File, v.Schema, v.Reason)
	}
	return fmt.Sprintf("%s breaks its schema %s: %v", v.File, v.Schema, v.cause)
}

func (v *SchemaViolation) Unwrap() []error {
	if v.cause == nil {
		return []error{docschema.ErrInvalid}
	}
	return []error{docschema.ErrInvalid, v.cause}
}

// CheckSchemas validates every ruled document at a revision (what a
// merge or a plain git commit may have left) and lists those that break
// their schema.
func (s *Store) CheckSchemas(ctx context.Context, ro ReadOptions) ([]SchemaViolation, error) {
	root, err := s.Tree(ro)
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
		err := s.validateRuled(rules, read, path)
		var v *SchemaViolation
		switch {
		case errors.As(err, &v):
			var ve *docschema.ValidationError
			if errors.As(v.cause, &ve) {
				v.Field, v.Reason = ve.Field, ve.Reason
			}
			out = append(out, *v)
		case errors.Is(err, docschema.ErrInvalid):
			out = append(out, SchemaViolation{File: path, Schema: schemaFile, Reason: "not JSON"})
		case err != nil:
			return err
		}
		return nil
	})
	return out, err
}

// SchemaValidator is the schema check of pushed files, for a server's
// pre-receive hook (hooks.Options.Schemas): read reads the files of the
// revision whose rules are in force (the server's branch before the
// push, as for the access policy). The check returns rule "schema" and
// why for a file that breaks its schema; nil when there are no rules.
func SchemaValidator(read func(path string) ([]byte, error)) (func(path string, body []byte) (rule, detail string), error) {
	rules, err := rulesIn(read)
	if err != nil || rules == nil {
		return nil, err
	}
	compiled := map[string]*docschema.Schema{}
	return func(path string, body []byte) (string, string) {
		file, ok := rules.SchemaFor(path)
		if !ok {
			return "", ""
		}
		sch, ok := compiled[file]
		if !ok {
			var err error
			if sch, err = docschema.Compile(file, read); err != nil {
				return "schema", err.Error()
			}
			compiled[file] = sch
		}
		doc, err := objects.Decode(body)
		if err != nil {
			return "schema", fmt.Sprintf("ruled by the schema %s, and not JSON", file)
		}
		if err := sch.Validate(doc); err != nil {
			return "schema", fmt.Sprintf("breaks its schema %s: %v", file, err)
		}
		return "", ""
	}, nil
}
