package store

import (
	"bytes"
	"errors"
	"fmt"
	"iter"
	"slices"
	"strings"

	"github.com/aiwg/aiwg-state/objects"
	"github.com/aiwg/aiwg-state/policy"
	"github.com/aiwg/aiwg-state/repo"
	"github.com/aiwg/aiwg-state/statedoc"
	"github.com/aiwg/aiwg-state/verbiage"
)

// The rules over the files of one revision. The store's own writes judge
// their staged tree with them, and the server's pre-receive hook (package
// hooks) each pushed commit, so a local write and a push are judged by the
// same code: what one accepts the other does.

// A Tree is the files of one revision and its directories: a commit's tree,
// a write in progress, or a pushed commit the server has not yet accepted.
type Tree interface {
	Files
	// ReadDir lists a directory ("" is the root); an absent one is an
	// error wrapping repo.ErrNotFound.
	ReadDir(dir string) ([]repo.DirEntry, error)
}

// IsNotFound reports a file a revision does not hold, however the reader
// says it (the object store's error, or a document reader's).
func IsNotFound(err error) bool {
	return errors.Is(err, repo.ErrNotFound) || errors.Is(err, objects.ErrNotFound)
}

// ReadManifest reads the store's manifest as files hold it, the defaults
// standing for what it leaves out (and for a store made with plain git,
// which has none). A manifest that cannot be read is an error, never the
// defaults.
func ReadManifest(files Files) (Manifest, error) {
	data, err := files.ReadFile(ManifestPath)
	if IsNotFound(err) {
		data, err = nil, nil
	}
	if err != nil {
		return Manifest{}, err
	}
	return parseManifest(data)
}

// DefaultManifest is the settings of a store whose manifest says nothing.
func DefaultManifest() Manifest {
	m, _ := parseManifest(nil)
	return m
}

// LimitFor is the most bytes a file at path may hold: the store's limit
// (limits.max_document_bytes), whatever the file's name, but for the
// store's own settings (.aiwg/, .gitattributes), which are held to the
// default limit or the store's when larger, so that a small limit never
// locks the limit itself out, and no check reads an unbounded file.
func (m Manifest) LimitFor(path string) int64 {
	limit := m.Limits.MaxDocumentBytes
	if limit <= 0 {
		limit = defaultLimits.MaxDocumentBytes
	}
	if strings.HasPrefix(path, ".aiwg/") || path == AttributesPath {
		return max(limit, defaultLimits.MaxDocumentBytes)
	}
	return limit
}

// RuledPatterns reads, from files, the patterns of the verbiage-ruled
// state documents (the manifest's verbiage.documents; state/state.json
// when the manifest says nothing).
func RuledPatterns(files Files) ([]verbiage.Pattern, error) {
	data, err := files.ReadFile(ManifestPath)
	if IsNotFound(err) {
		data, err = nil, nil
	}
	if err != nil {
		return nil, err // unread rules are not no rules
	}
	return ruledPatterns(data)
}

// maxPolicyHistory bounds LastValidPolicy's walk: a history broken further
// back than this gets a policy that allows no one, rather than a walk
// without end.
const maxPolicyHistory = 10000

// LastValidPolicy is the policy in force while the newest one is broken:
// that of the newest revision of history (a first-parent walk, newest
// first) whose policy parses; nil, every write allowed, when that revision
// has none, as the store was open then. A broken policy must neither
// refuse every write, its repair included, nor let everything through.
func LastValidPolicy(history iter.Seq2[Files, error]) (*policy.Policy, error) {
	n := 0
	for files, err := range history {
		if err != nil {
			return nil, err
		}
		if n++; n > maxPolicyHistory {
			break
		}
		data, err := files.ReadFile(policy.Path)
		if IsNotFound(err) {
			return nil, nil
		}
		if err != nil {
			return nil, err
		}
		if p, err := policy.Parse(data); err == nil {
			return p, nil
		}
	}
	if n <= maxPolicyHistory {
		return nil, nil // the start of history: no policy before it
	}
	return policy.Parse([]byte(`{"rules": []}`))
}

// A DocumentViolation is a verbiage-ruled document a revision leaves
// invalid, and why.
type DocumentViolation struct {
	Path string
	Err  error
}

// CheckRuledDocuments validates each verbiage-ruled document that the
// changed paths of after touch: the document itself, or any shard it
// mounts (a shard lives beside or below its document). before is the
// revision after replaces (nil: none). A document that after does not
// change, and that was invalid already in before (written with plain
// git), is not after's doing and is left alone; one that new rules rule
// for the first time is checked as if written.
func CheckRuledDocuments(after, before Tree, changed []string) ([]DocumentViolation, error) {
	if len(changed) == 0 {
		return nil, nil
	}
	patterns, err := RuledPatterns(after)
	if err != nil {
		return nil, err
	}
	return checkRuled(patterns, after, before, changed)
}

// checkRuled is CheckRuledDocuments with after's rules already read.
func checkRuled(patterns []verbiage.Pattern, after, before Tree, changed []string) ([]DocumentViolation, error) {
	newRules := slices.Contains(changed, ManifestPath)
	var oldRules []verbiage.Pattern
	if newRules && before != nil {
		// Rules that do not read leave every document newly ruled.
		oldRules, _ = RuledPatterns(before)
	}
	var out []DocumentViolation
	for _, doc := range ruledDocuments(after, patterns, changed, newRules) {
		data, err := after.ReadFile(doc)
		if IsNotFound(err) {
			continue // deleted, or never there
		}
		if err != nil {
			return nil, err
		}
		touched := slices.Contains(changed, doc) || (newRules && !matchesAny(oldRules, doc))
		if !touched && !bytes.Contains(data, []byte(statedoc.RefPrefix)) {
			continue // no shards, so nothing changed is in it
		}
		_, err = statedoc.Load(after, doc)
		if err == nil {
			continue
		}
		if errors.Is(err, repo.ErrObjectMissing) {
			return nil, err // unread, not invalid
		}
		if !touched && before != nil {
			if _, was := statedoc.Load(before, doc); was != nil {
				continue
			}
		}
		out = append(out, DocumentViolation{Path: doc, Err: err})
	}
	return out, nil
}

// ruledDocuments lists the ruled documents a change may touch: literal
// patterns are looked up, others matched against the changed files and,
// when a changed JSON file could be a shard or all is set (the rules
// changed), against every JSON file of the directories above it (or of
// the whole tree).
func ruledDocuments(t Tree, patterns []verbiage.Pattern, changed []string, all bool) []string {
	seen := map[string]bool{}
	var out []string
	add := func(f string) {
		if !seen[f] {
			seen[f] = true
			out = append(out, f)
		}
	}
	walk := all
	for _, p := range patterns {
		if f, ok := literal(p); ok {
			if _, err := t.ReadFile(f); err == nil {
				add(f)
			}
			continue
		}
		walk = true
	}
	for _, f := range changed {
		if matchesAny(patterns, f) {
			add(f)
		}
	}
	if walk {
		var visit func(dir string)
		visit = func(dir string) {
			es, err := t.ReadDir(dir)
			if err != nil {
				return
			}
			for _, e := range es {
				p := e.Name
				if dir != "" {
					p = dir + "/" + e.Name
				}
				if e.IsDir {
					visit(p)
				} else if strings.HasSuffix(p, ".json") && matchesAny(patterns, p) {
					add(p)
				}
			}
		}
		visit("")
	}
	slices.Sort(out)
	return out
}

// ruledError is the error of the first violation, as a write reports it.
func ruledError(vs []DocumentViolation) error {
	if len(vs) == 0 {
		return nil
	}
	return fmt.Errorf("%s would be invalid: %w", vs[0].Path, vs[0].Err)
}
