package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"

	"github.com/aiwg/aiwg-state/internal/errkind"
	"github.com/aiwg/aiwg-state/objects"
	"github.com/aiwg/aiwg-state/repo"
	"github.com/aiwg/aiwg-state/statedoc"
	"github.com/aiwg/aiwg-state/verbiage"
)

// The verbiage-ruled state documents of the state document specification (package statedoc). Which
// documents are ruled is declared in the manifest's own section,
//
//	"verbiage": {"documents": ["state/state.json"]}
//
// as gitattributes-style path patterns; without the section the store rules
// state/state.json. A ruled document and every shard it mounts are checked
// on every write (checkRuledDocuments) and every read through StateDoc.

// verbiageSettings is the manifest's "verbiage" section.
type verbiageSettings struct {
	Verbiage *struct {
		Documents []string `json:"documents"`
	} `json:"verbiage"`
}

// ruledPatterns reads the ruled-document patterns from manifest bytes.
func ruledPatterns(manifest []byte) ([]verbiage.Pattern, error) {
	docs := []string{statedoc.DefaultPath}
	if manifest != nil {
		var st verbiageSettings
		if err := json.Unmarshal(manifest, &st); err != nil {
			return nil, fmt.Errorf("%s: %w: %v", ManifestPath, objects.ErrInvalidJSON, err)
		}
		if st.Verbiage != nil && st.Verbiage.Documents != nil {
			docs = st.Verbiage.Documents
		}
	}
	out := make([]verbiage.Pattern, 0, len(docs))
	for _, d := range docs {
		p, err := verbiage.CompilePattern(d)
		if err != nil {
			return nil, fmt.Errorf("%s: verbiage.documents: %w", ManifestPath, err)
		}
		out = append(out, p)
	}
	return out, nil
}

func matchesAny(ps []verbiage.Pattern, file string) bool {
	for _, p := range ps {
		if p.Match(file) {
			return true
		}
	}
	return false
}

// literal reports a pattern that names one file, and that file.
func literal(p verbiage.Pattern) (string, bool) {
	s := strings.TrimPrefix(p.String(), "/")
	if strings.ContainsAny(s, `*?[\`) || !strings.Contains(p.String(), "/") {
		return "", false
	}
	return s, true
}

// txFiles reads files as a transaction sees them, refusing symlinks.
type txFiles struct {
	s      *Store
	tx     *repo.Tx
	parent plumbing.Hash // the parent commit's tree (zero: none)
	staged map[string]bool
}

func (s *Store) txFiles(tx *repo.Tx) (*txFiles, error) {
	f := &txFiles{s: s, tx: tx, staged: map[string]bool{}}
	for _, p := range tx.Changed() {
		f.staged[p] = true
	}
	if !tx.Parent().IsZero() {
		c, err := s.repo.ReadCommit(tx.Parent())
		if err != nil {
			return nil, err
		}
		f.parent = c.Tree
	}
	return f, nil
}

func (f *txFiles) ReadDir(dir string) ([]repo.DirEntry, error) { return f.tx.ReadDir(dir) }

func (f *txFiles) ReadFile(path string) ([]byte, error) {
	if !f.staged[path] && !f.parent.IsZero() {
		if err := f.s.refuseSymlink(f.parent, path); err != nil {
			return nil, err
		}
	}
	return f.tx.ReadFile(path)
}

// Files reads the files of one revision of the store: a commit's tree,
// or a write's staged tree. Rules over documents read through it, so they
// judge a write in progress and a pushed commit alike.
type Files = statedoc.Files

// TreeFiles reads the files of the tree root, refusing symlinks (a
// document that is a symlink could point anywhere, outside the store
// included).
func (s *Store) TreeFiles(root plumbing.Hash) Files { return treeFiles{s: s, root: root} }

// StagedFiles reads the files of a write in progress: what tx staged, else
// its parent's, refusing symlinks the parent holds.
func (s *Store) StagedFiles(tx *repo.Tx) (Files, error) { return s.txFiles(tx) }

// treeFiles reads the files of a commit's tree, refusing symlinks.
type treeFiles struct {
	s    *Store
	root plumbing.Hash
}

func (f treeFiles) ReadDir(dir string) ([]repo.DirEntry, error) {
	return f.s.repo.ReadDirAt(f.root, dir)
}

func (f treeFiles) ReadFile(path string) ([]byte, error) {
	if err := f.s.refuseSymlink(f.root, path); err != nil {
		return nil, err
	}
	return f.s.repo.ReadFileAt(f.root, path)
}

// refuseSymlink: a shard must be a regular file, since a symlink can point
// anywhere, outside the store included.
func (s *Store) refuseSymlink(root plumbing.Hash, path string) error {
	e, err := s.repo.Lookup(root, path)
	if err == nil && e.Mode == filemode.Symlink {
		return fmt.Errorf("%w: %s is a symlink; a shard must be a regular file in the store", verbiage.ErrInvalidPath, path)
	}
	return nil
}

// invalidStored wraps an error met loading a stored ruled document: the
// store holds invalid state (exit 3), whatever the rule it breaks.
func invalidStored(file string, err error) error {
	if errors.Is(err, repo.ErrObjectMissing) {
		return err // unread, not invalid
	}
	if errors.Is(err, statedoc.ErrInvalidState) {
		return fmt.Errorf("%s: %w", file, err)
	}
	return fmt.Errorf("%w: %s: %w", statedoc.ErrInvalidState, file, err)
}

// checkRuledDocuments validates, inside every write, each ruled document
// the write touches: the document itself or any shard it mounts (see
// CheckRuledDocuments, which the server's hook applies to pushes).
func (s *Store) checkRuledDocuments(tx *repo.Tx, wo WriteOptions, changes []Change) error {
	changed := tx.Changed()
	if len(changed) == 0 {
		return nil
	}
	manifest, err := absentIsNil(tx.ReadFile(ManifestPath))
	if err != nil {
		return err // unread rules are not no rules
	}
	patterns, err := ruledPatterns(manifest)
	if err != nil {
		return err
	}
	for _, c := range changes {
		if c.Operation == OpRename && matchesAny(patterns, c.File) && !matchesAny(patterns, c.To) {
			// Its rules would stay behind, and the next state-document
			// command would start a new, empty one at the old name.
			return fmt.Errorf("%w: %s is verbiage-ruled and %s is not (declare %s in verbiage.documents first)", ErrReadOnly, c.File, c.To, c.To)
		}
	}
	files, err := s.txFiles(tx)
	if err != nil {
		return err
	}
	var before Tree
	if !files.parent.IsZero() {
		before = treeFiles{s: s, root: files.parent}
	}
	vs, err := checkRuled(patterns, files, before, changed)
	if err != nil {
		return err
	}
	return ruledError(vs)
}

// stateDocPath checks that file ("" = the default) is a ruled document.
func stateDocPath(file string, patterns []verbiage.Pattern) (string, error) {
	if file == "" {
		file = statedoc.DefaultPath
	}
	clean, err := documentPath(file)
	if err != nil {
		return "", err
	}
	if !matchesAny(patterns, clean) {
		return "", fmt.Errorf("%w: %s is not a verbiage-ruled document (declare it in %s under verbiage.documents)", ErrUsage, clean, ManifestPath)
	}
	return clean, nil
}

// StateDoc loads a ruled state document ("" = state/state.json) at a
// revision, with every shard it mounts, and validates it: a store holding
// an invalid one (written by plain git) reports statedoc.ErrInvalidState.
func (s *Store) StateDoc(ctx context.Context, file string, ro ReadOptions) (*statedoc.Doc, error) {
	root, err := s.Tree(ro)
	if err != nil {
		return nil, err
	}
	data, err := absentIsNil(s.repo.ReadFileAt(root, ManifestPath))
	if err != nil {
		return nil, err
	}
	patterns, err := ruledPatterns(data)
	if err != nil {
		return nil, err
	}
	clean, err := stateDocPath(file, patterns)
	if err != nil {
		return nil, err
	}
	files := treeFiles{s: s, root: root}
	if _, err := s.repo.ReadFileAt(root, clean); errors.Is(err, repo.ErrNotFound) {
		return nil, errkind.Errorf(ErrNotFound, "%s: no such document at %s", clean, RevName(ro))
	}
	d, err := statedoc.Load(files, clean)
	if err != nil {
		return nil, invalidStored(clean, err)
	}
	return d, nil
}

// absentIsNil reads a file that may be absent: nil data then, and any
// other error (an object a partial clone could not fetch) kept.
func absentIsNil(data []byte, err error) ([]byte, error) {
	if errors.Is(err, repo.ErrNotFound) {
		return nil, nil
	}
	return data, err
}

// GetState returns a key of a ruled state document as canonical JSON, with
// mounts resolved (the shards inlined), or as stored when noResolve or
// ro.NoResolve is set (refs shown as their strings, the key looked up in
// the shard that holds it).
func (s *Store) GetState(ctx context.Context, file, keypath string, ro ReadOptions, noResolve bool) ([]byte, error) {
	p, err := verbiage.ParsePath(keypath)
	if err != nil {
		return nil, err
	}
	return s.getState(ctx, file, p, ro, noResolve)
}

// getState is GetState of a parsed key path.
func (s *Store) getState(ctx context.Context, file string, p verbiage.Path, ro ReadOptions, noResolve bool) ([]byte, error) {
	noResolve = noResolve || ro.NoResolve
	d, err := s.StateDoc(ctx, file, ro)
	if err != nil {
		return nil, err
	}
	var v any
	if noResolve {
		v, err = d.StoredAt(p)
	} else {
		v, err = objects.Get(d.Resolved(), p)
	}
	if err != nil {
		return nil, fmt.Errorf("%s#%s: %w", d.Path(), p, err)
	}
	return objects.Encode(v)
}

// LocateState maps a key path of a ruled state document to the file that
// stores it and the key path inside that file (the shard when the key is
// in a mounted subtree): what blame and log of a mounted key follow.
func (s *Store) LocateState(ctx context.Context, file, keypath string, ro ReadOptions) (shard, key string, err error) {
	p, err := verbiage.ParsePath(keypath)
	if err != nil {
		return "", "", err
	}
	return s.locateState(ctx, file, p, ro)
}

// locateState is LocateState of a parsed key path.
func (s *Store) locateState(ctx context.Context, file string, p verbiage.Path, ro ReadOptions) (shard, key string, err error) {
	d, err := s.StateDoc(ctx, file, ro)
	if err != nil {
		return "", "", err
	}
	f, inner := d.Locate(p)
	return f, inner.String(), nil
}

// StateEdit is a verb of package statedoc: a new resolved document from the
// current one, and the key paths it changed.
type StateEdit func(doc any) (any, []verbiage.Path, error)

// EditState runs edit on the resolved state document file ("" =
// state/state.json; a missing document starts from the specification's default
// shape) and commits the result as one commit: values inside mounted
// subtrees go to their shard files, the parents keep their refs, inits
// write their shards. subject is the commit subject (WriteOptions.Message
// overrides it). An edit that changes nothing is ErrNoChange.
func (s *Store) EditState(ctx context.Context, file string, wo WriteOptions, subject string, edit StateEdit) (*Mutation, error) {
	return s.WriteState(ctx, file, wo, subject, false, func(d *statedoc.Doc, files statedoc.Files) ([]statedoc.FileWrite, *statedoc.Doc, []verbiage.Path, error) {
		nv, paths, err := edit(d.Resolved())
		if err != nil {
			return nil, nil, nil, err
		}
		writes, next, err := d.Update(files, nv)
		return writes, next, paths, err
	})
}

// ResetState puts the document back to the specification's default shape. Shards it
// mounted are unmounted, not deleted.
func (s *Store) ResetState(ctx context.Context, file string, wo WriteOptions) (*Mutation, error) {
	// Reset is how a document broken by a plain-git commit is mended, so
	// the stored one need not be valid.
	return s.WriteState(ctx, file, wo, "doc reset", true, func(d *statedoc.Doc, files statedoc.Files) ([]statedoc.FileWrite, *statedoc.Doc, []verbiage.Path, error) {
		writes, next, err := d.Replace(files, statedoc.Default())
		return writes, next, []verbiage.Path{{}}, err
	})
}

type stateWrite func(d *statedoc.Doc, files statedoc.Files) ([]statedoc.FileWrite, *statedoc.Doc, []verbiage.Path, error)

// WriteState runs write on the ruled document file in one commit. A
// stored document that is not valid is refused, unless overInvalid: then
// write starts from a new default document in its place.
func (s *Store) WriteState(ctx context.Context, file string, wo WriteOptions, subject string, overInvalid bool, write stateWrite) (*Mutation, error) {
	return s.Commit(ctx, wo, subject, func(tx *repo.Tx, rec *Recorder) error {
		manifest, err := absentIsNil(tx.ReadFile(ManifestPath))
		if err != nil {
			return err
		}
		patterns, err := ruledPatterns(manifest)
		if err != nil {
			return err
		}
		clean, err := stateDocPath(file, patterns)
		if err != nil {
			return err
		}
		files, err := s.txFiles(tx)
		if err != nil {
			return err
		}
		var d *statedoc.Doc
		if ok, _ := tx.Exists(clean); ok {
			if d, err = statedoc.Load(files, clean); err != nil {
				if !overInvalid {
					return invalidStored(clean, err)
				}
				d = nil
			}
		}
		if d == nil {
			if d, err = statedoc.New(files, clean, statedoc.Default()); err != nil {
				return err
			}
		}
		writes, next, paths, err := write(d, files)
		if err != nil {
			return err
		}
		written := map[string]bool{}
		for _, w := range writes {
			if err := tx.WriteFile(w.Path, w.Data); err != nil {
				return err
			}
			written[w.Path] = w.Create
		}
		// One Path trailer per changed key, named in the file that holds it,
		// then the files written for no named key (shards set by an init).
		recorded := map[string]bool{}
		for _, p := range paths {
			f, inner := next.Locate(p)
			create, ok := written[f]
			if !ok {
				continue
			}
			op := OpUpdate
			if _, err := objects.Get(next.Resolved(), p); err != nil {
				op = OpDelete
			} else if _, err := objects.Get(d.Resolved(), p); err != nil || create {
				op = OpCreate
			}
			rec.Add(op, f, inner.String())
			recorded[f] = true
			// At a mount point the parent holds the ref: name it too when
			// it changed (a new mount).
			for _, mt := range next.Mounts() {
				if len(inner) == 0 && mt.File == f && slices.Equal(mt.At, p) {
					if _, ok := written[mt.From]; ok && !recorded[mt.From] {
						rec.Add(OpUpdate, mt.From, mt.Inner.String())
						recorded[mt.From] = true
					}
				}
			}
		}
		for _, w := range writes {
			if !recorded[w.Path] {
				op := OpUpdate
				if w.Create {
					op = OpCreate
				}
				rec.Add(op, w.Path, "")
			}
		}
		return nil
	})
}
