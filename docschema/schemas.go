package docschema

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/aiwg/aiwg-state/internal/errkind"
	"github.com/aiwg/aiwg-state/objects"
	"github.com/aiwg/aiwg-state/repo"
	"github.com/aiwg/aiwg-state/store"
	"github.com/aiwg/aiwg-state/verbiage"
)

// Guard (a store.Guard) keeps every document a schema rule names valid (the swarm shared state specification:
// shared state is validated on update): each file the transaction
// leaves at a ruled path (every staged path, not only those the change
// list names: a rollback records a directory), and, when the write
// changes the rules or a schema, the documents whose schema that changes.
// Rules and schemas are read as the write leaves them.
func Guard(s *store.Store, tx *repo.Tx, _ store.WriteOptions, _ []store.Change) error {
	rules, err := cachedRules(s, tx.ReadFile)
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
		rulesChanged = rulesChanged || f == Path
		schemasChanged = schemasChanged || strings.HasPrefix(f, Dir+"/")
	}
	if rulesChanged || schemasChanged {
		more, err := revalidate(s, tx, rules, files)
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
		if err := validateRuled(s, rules, tx.ReadFile, f); err != nil {
			return err
		}
	}
	return nil
}

// revalidate lists the documents a change of the rules or of schemas
// puts to the test (see schemaAffected), in the tree the write builds on.
func revalidate(s *store.Store, tx *repo.Tx, rules *Rules, staged map[string]bool) ([]string, error) {
	root, err := tx.ParentTree()
	if err != nil || root.IsZero() {
		return nil, err
	}
	before, err := rulesIn(treeReader(s, root))
	if err != nil {
		before = nil // broken before: every ruled document is tested
	}
	return schemaAffected(s, root, before, rules, staged, tx.ReadFile)
}

// schemaAffected lists the files of tree root whose schema a change from
// the rules before to those after puts to the test: those whose schema
// is another than before, or one compiled from a file in changed (read
// through read, as the change leaves it). Every rule's schema must
// compile, documents or not. Documents whose schema is untouched are left
// alone: one left invalid by plain git does not block unrelated schema
// changes.
func schemaAffected(s *store.Store, root plumbing.Hash, before, after *Rules, changed map[string]bool, read func(string) ([]byte, error)) ([]string, error) {
	touched := map[string]bool{}
	for _, r := range after.Rules {
		sch, err := schema(s, read, r.Schema)
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
	err := s.Repo().Walk(root, "", func(path string, _ plumbing.Hash) error {
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
func rulesIn(read func(string) ([]byte, error)) (*Rules, error) {
	data, err := read(Path)
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
func parseStoredRules(data []byte) (*Rules, error) {
	r, err := Parse(data)
	if err != nil {
		return nil, &store.BrokenFileError{Kind: store.BrokenSchemaRules, File: Path, Err: errkind.Errorf(store.ErrInvalidRecord, "the store's schema rules are broken: %v", err)}
	}
	return r, nil
}

// cachedRules is rulesIn, parsed once per content: every write reads the
// rules.
func cachedRules(s *store.Store, read func(string) ([]byte, error)) (*Rules, error) {
	data, err := read(Path)
	if errors.Is(err, repo.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	key := "docschema\x00rules\x00" + contentKey(data)
	if v, ok := s.Cache().Load(key); ok {
		return v.(*Rules), nil
	}
	r, err := parseStoredRules(data)
	if err != nil {
		return nil, err
	}
	s.Cache().Store(key, r)
	return r, nil
}

func contentKey(data []byte) string { return fmt.Sprintf("%x", sha256.Sum256(data)) }

// validateRuled checks file against the schema its path is ruled by; a
// file that is not there, or not ruled, passes.
func validateRuled(s *store.Store, rules *Rules, read func(string) ([]byte, error), file string) error {
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
	sch, err := schema(s, read, schemaFile)
	if err != nil {
		return err
	}
	doc, err := objects.Decode(data)
	if err != nil {
		return errkind.Errorf(ErrInvalid, "%s is ruled by the schema %s, and is not JSON", file, schemaFile)
	}
	if err := sch.Validate(doc); err != nil {
		return &Violation{File: file, Schema: schemaFile, cause: err}
	}
	return nil
}

// schema compiles the schema in file, once for the content of every file
// it is compiled from (its own, and those its $refs load).
func schema(s *store.Store, read func(string) ([]byte, error), file string) (*Schema, error) {
	data, err := read(file)
	if errors.Is(err, repo.ErrNotFound) {
		return nil, &store.BrokenFileError{Kind: store.BrokenSchemaMissing, File: Path, Err: errkind.Errorf(store.ErrInvalidRecord, "%s names the schema %s, which is not in the store", Path, file)}
	}
	if err != nil {
		return nil, err
	}
	key := "docschema\x00schema\x00" + file + "\x00" + contentKey(data)
	if v, ok := s.Cache().Load(key); ok {
		sch := v.(*Schema)
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
	sch, err := Compile(file, read)
	if err != nil {
		// A schema the store holds (schema add compiles its own first).
		name := strings.TrimSuffix(strings.TrimPrefix(file, Dir+"/"), ".schema.json")
		return nil, &store.BrokenFileError{Kind: store.BrokenSchema, File: file, Name: name, Err: errkind.Errorf(store.ErrInvalidRecord, "%v: the store's schema is broken", err)}
	}
	s.Cache().Store(key, sch)
	return sch, nil
}

// Schemas is the document schema API of one store
// (aiwgstate.Store.Schemas): the rules, and the check of what they rule.
type Schemas struct{ s *store.Store }

// New is the document schema API of s.
func New(s *store.Store) *Schemas { return &Schemas{s: s} }

// Rules reads the schema rules at a revision; empty when there are
// none.
func (x *Schemas) Rules(ctx context.Context, ro store.ReadOptions) (*Rules, error) {
	s := x.s
	root, err := s.Tree(ro)
	if err != nil {
		return nil, err
	}
	r, err := rulesIn(treeReader(s, root))
	if r == nil && err == nil {
		r = &Rules{Rules: []Rule{}}
	}
	return r, err
}

// Add rules the documents at paths (gitattributes patterns) by the
// JSON Schema schema, kept as .aiwg/schemas/<name>.schema.json: one
// commit, refused (ErrInvalid) if a document already there
// breaks it. A schema of that name is replaced; its rule's paths become
// paths.
func (x *Schemas) Add(ctx context.Context, name string, paths []string, schema []byte, wo store.WriteOptions) (*store.Mutation, error) {
	s := x.s
	if err := verbiage.ValidIdentifier(name); err != nil {
		return nil, fmt.Errorf("schema name: %w", err)
	}
	if len(paths) == 0 {
		return nil, fmt.Errorf("%w: a schema rules at least one path pattern", store.ErrUsage)
	}
	file := Dir + "/" + name + ".schema.json"
	canon, err := objects.Canonical(schema)
	if err != nil {
		return nil, fmt.Errorf("schema %s: %w", name, err)
	}
	return s.Commit(ctx, wo, "schema "+name+" rules "+strings.Join(paths, " "), func(tx *repo.Tx, rec *store.Recorder) error {
		rules, err := rulesIn(tx.ReadFile)
		if err != nil {
			return err
		}
		if rules == nil {
			rules = &Rules{}
		}
		// A replaced schema keeps its rule's place: the first match
		// decides.
		if i := slices.IndexFunc(rules.Rules, func(r Rule) bool { return r.Schema == file }); i >= 0 {
			rules.Rules[i].Paths = paths
		} else {
			rules.Rules = append(rules.Rules, Rule{Paths: paths, Schema: file})
		}
		return writeRules(tx, rec, rules, func() error {
			old, _ := tx.Exists(file)
			if err := tx.WriteFile(file, canon); err != nil {
				return err
			}
			rec.Add(map[bool]string{true: store.OpUpdate, false: store.OpCreate}[old], file, "")
			_, err := Compile(file, tx.ReadFile)
			return err
		})
	})
}

// Remove drops the schema name and its rule: one commit. An empty
// name drops every rule and schema, whatever state the rules are in: the
// way out of rules broken by plain git or a merge.
func (x *Schemas) Remove(ctx context.Context, name string, wo store.WriteOptions) (*store.Mutation, error) {
	s := x.s
	if name == "" {
		return s.Commit(ctx, wo, "schema: every rule removed", func(tx *repo.Tx, rec *store.Recorder) error {
			var gone []string
			if ok, _ := tx.Exists(Path); ok {
				gone = append(gone, Path)
			}
			root, err := tx.ParentTree()
			if err != nil {
				return err
			}
			err = s.Repo().Walk(root, Dir, func(p string, _ plumbing.Hash) error {
				gone = append(gone, p)
				return nil
			})
			if err != nil && !errors.Is(err, repo.ErrNotFound) {
				return err
			}
			if len(gone) == 0 {
				return store.ErrNoChange
			}
			for _, f := range gone {
				if err := tx.Remove(f); err != nil {
					return err
				}
				rec.Add(store.OpDelete, f, "")
			}
			return nil
		})
	}
	file := Dir + "/" + name + ".schema.json"
	return s.Commit(ctx, wo, "schema "+name+" removed", func(tx *repo.Tx, rec *store.Recorder) error {
		rules, err := rulesIn(tx.ReadFile)
		if err != nil {
			return err
		}
		n := 0
		if rules != nil {
			n = len(rules.Rules)
			rules.Rules = slices.DeleteFunc(rules.Rules, func(r Rule) bool { return r.Schema == file })
		}
		if rules == nil || len(rules.Rules) == n {
			return &store.MissingError{Kind: store.MissingSchema, Name: name}
		}
		return writeRules(tx, rec, rules, func() error {
			if ok, _ := tx.Exists(file); ok {
				if err := tx.Remove(file); err != nil {
					return err
				}
				rec.Add(store.OpDelete, file, "")
			}
			return nil
		})
	})
}

// FastForward is the schema check of a fast-forward (a
// store.FastForwardGuard), which writes no
// commit for the write checks to judge: the documents the branch brings
// that its rules rule, and, when it brings other rules or schemas, the
// documents whose schema that changes, must meet their schema as the
// branch has them.
func FastForward(s *store.Store, ours, theirs plumbing.Hash) error {
	from, to := s.TreeOf(ours), s.TreeOf(theirs)
	read := treeReader(s, to)
	rules, err := rulesIn(read)
	if err != nil || rules == nil {
		return err
	}
	files, err := s.Repo().DiffTrees(from, to)
	if err != nil {
		return err
	}
	changed := map[string]bool{}
	var paths []string
	schemasChanged := false
	for _, f := range files {
		changed[f.Path] = true
		schemasChanged = schemasChanged || f.Path == Path || strings.HasPrefix(f.Path, Dir+"/")
		if !f.New.IsZero() {
			paths = append(paths, f.Path)
		}
	}
	if schemasChanged {
		before, err := rulesIn(treeReader(s, from))
		if err != nil {
			before = nil
		}
		more, err := schemaAffected(s, to, before, rules, changed, read)
		if err != nil {
			return err
		}
		paths = append(paths, more...)
	}
	for _, p := range paths {
		if err := validateRuled(s, rules, read, p); err != nil {
			return fmt.Errorf("%w (the fast-forward would bring it; fix it on the branch first)", err)
		}
	}
	return nil
}

// writeRules stages the rules (parsed again, so that what is written is
// what Parse accepts) and whatever else the write does.
func writeRules(tx *repo.Tx, rec *store.Recorder, rules *Rules, also func() error) error {
	b, err := rules.Encode()
	if err != nil {
		return err
	}
	if _, err := Parse(b); err != nil {
		return err
	}
	old, _ := tx.Exists(Path)
	if err := tx.WriteFile(Path, b); err != nil {
		return err
	}
	rec.Add(map[bool]string{true: store.OpUpdate, false: store.OpCreate}[old], Path, "")
	return also()
}

// Violation is a document that breaks its schema: the error of a
// refused write (errors.Is ErrInvalid; errors.As a *ValidationError for
// the field), and what Check lists.
type Violation struct {
	File   string `json:"file"`
	Schema string `json:"schema"`
	Field  string `json:"field"`
	Reason string `json:"reason"`
	cause  error
}

func (v *Violation) Error() string {
	if v.cause == nil {
		return fmt.Sprintf("%s breaks its schema %s: %s", v.File, v.Schema, v.Reason)
	}
	return fmt.Sprintf("%s breaks its schema %s: %v", v.File, v.Schema, v.cause)
}

func (v *Violation) Unwrap() []error {
	if v.cause == nil {
		return []error{ErrInvalid}
	}
	return []error{ErrInvalid, v.cause}
}

// Check validates every ruled document at a revision (what a
// merge or a plain git commit may have left) and lists those that break
// their schema.
func (x *Schemas) Check(ctx context.Context, ro store.ReadOptions) ([]Violation, error) {
	s := x.s
	root, err := s.Tree(ro)
	if err != nil {
		return nil, err
	}
	read := treeReader(s, root)
	rules, err := rulesIn(read)
	if err != nil || rules == nil {
		return []Violation{}, err
	}
	out := []Violation{}
	err = s.Repo().Walk(root, "", func(path string, _ plumbing.Hash) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		schemaFile, ok := rules.SchemaFor(path)
		if !ok {
			return nil
		}
		err := validateRuled(s, rules, read, path)
		var v *Violation
		switch {
		case errors.As(err, &v):
			var ve *ValidationError
			if errors.As(v.cause, &ve) {
				v.Field, v.Reason = ve.Field, ve.Reason
			}
			out = append(out, *v)
		case errors.Is(err, ErrInvalid):
			out = append(out, Violation{File: path, Schema: schemaFile, Reason: "not JSON"})
		case err != nil:
			return err
		}
		return nil
	})
	return out, err
}

// PushCheck is the schema check of pushed files, for a server's
// pre-receive hook (hooks.Options.Schemas): read reads the files of the
// revision whose rules are in force (the server's branch before the
// push, as for the access policy). The check returns rule "schema" and
// why for a file that breaks its schema; nil when there are no rules.
func PushCheck(read func(path string) ([]byte, error)) (func(path string, body []byte) (rule, detail string), error) {
	rules, err := rulesIn(read)
	if err != nil || rules == nil {
		return nil, err
	}
	compiled := map[string]*Schema{}
	return func(path string, body []byte) (string, string) {
		file, ok := rules.SchemaFor(path)
		if !ok {
			return "", ""
		}
		sch, ok := compiled[file]
		if !ok {
			var err error
			if sch, err = Compile(file, read); err != nil {
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

// treeReader reads the files of the tree root as they are (the rules and
// schemas are read as git has them).
func treeReader(s *store.Store, root plumbing.Hash) func(string) ([]byte, error) {
	r := s.Repo()
	return func(p string) ([]byte, error) { return r.ReadFileAt(root, p) }
}
