package merge

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/aiwg/aiwg-state/docschema"
	"github.com/aiwg/aiwg-state/internal/errkind"
	"github.com/aiwg/aiwg-state/merge/jsonmerge"
	"github.com/aiwg/aiwg-state/objects"
	"github.com/aiwg/aiwg-state/repo"
	"github.com/aiwg/aiwg-state/store"
	"github.com/aiwg/aiwg-state/verbiage"
)

// A merge with conflicts is kept in progress under
// store.MergeRefPrefix+<branch> (its layout is described there) until
// every conflict is resolved and Continue commits it, or Abort drops it.

// MergeRecordPrefix is where the record of a finished merge with
// conflicts is kept, under the merge commit's id: the conflicts as found
// and each resolve, one commit each (git log refs/aiwg/merge-records/<id>).
const MergeRecordPrefix = "refs/aiwg/merge-records/"

const (
	mergeStatePath = "merge.json"
	resultDir      = "result/"
)

// mergeState is merge.json of a merge in progress.
type mergeState struct {
	Into     string   `json:"into"`
	From     string   `json:"from"`
	Ours     string   `json:"ours"`
	Theirs   string   `json:"theirs"`
	Bases    []string `json:"bases"`
	Strategy string   `json:"strategy,omitempty"`
	Message  string   `json:"message,omitempty"`
	Deleted  []string `json:"deleted,omitempty"`
	// UpstreamFirst: MergeOptions.upstreamFirst, for the commit that
	// finishes the merge.
	UpstreamFirst bool `json:"upstream_first,omitempty"`
}

// startMerge records a merge with conflicts under refs/aiwg/merge/<branch>.
func (m *Merges) startMerge(ctx context.Context, intoRef, from string, ours, theirs plumbing.Hash, bases []plumbing.Hash, mo MergeOptions, tr jsonmerge.TreeResult) error {
	st := mergeState{Into: shortBranch(intoRef), From: from, Ours: ours.String(), Theirs: theirs.String(), Bases: hashStrings(bases), Strategy: string(mo.Strategy), Message: mo.Write.Message, UpstreamFirst: mo.UpstreamFirst}
	agent := m.s.Agent(mo.Write.Agent)
	zero := plumbing.ZeroHash
	signer, err := m.s.SignerFor(agent, mo.Write)
	if err != nil {
		return err
	}
	_, err = m.s.Repo().Commit(ctx, store.MergeRef(intoRef), func(tx *repo.Tx) (*repo.CommitInfo, error) {
		for _, f := range tr.Files {
			if f.Missing {
				st.Deleted = append(st.Deleted, f.Path)
				continue
			}
			data, err := m.mergedData(f)
			if err != nil {
				return nil, err
			}
			if err := tx.WriteFile(resultDir+f.Path, data); err != nil {
				return nil, err
			}
		}
		for _, rec := range tr.Conflicts {
			data, err := rec.Encode()
			if err != nil {
				return nil, err
			}
			if err := tx.WriteFile(store.MergeConflictsDir+rec.File, data); err != nil {
				return nil, err
			}
		}
		if err := writeState(tx, st); err != nil {
			return nil, err
		}
		sig := repo.NewSignature(agent, m.s.Now())
		msg := repo.FormatMessage("merge "+from+" into "+st.Into+": conflicts", "", repo.Trailers{{Key: TrailerMerged, Value: from}})
		return &repo.CommitInfo{Author: sig, Committer: sig, Message: msg, MergeParents: []plumbing.Hash{ours, theirs}, Sign: store.SignFunc(signer)}, nil
	}, repo.CommitOptions{Expect: &zero})
	return err
}

func writeState(tx *repo.Tx, st mergeState) error {
	sort.Strings(st.Deleted)
	b, err := json.Marshal(st)
	if err != nil {
		return err
	}
	data, err := objects.Canonical(b)
	if err != nil {
		return err
	}
	return tx.WriteFile(mergeStatePath, data)
}

func readState(read func(string) ([]byte, error)) (mergeState, error) {
	var st mergeState
	data, err := read(mergeStatePath)
	if err != nil {
		return st, fmt.Errorf("merge in progress has no %s: %w", mergeStatePath, err)
	}
	if err := json.Unmarshal(data, &st); err != nil {
		return st, fmt.Errorf("%s: %w: %v", mergeStatePath, objects.ErrInvalidJSON, err)
	}
	return st, nil
}

// inProgress returns the merge-in-progress commit of a branch.
func (m *Merges) inProgress(branch string) (plumbing.Hash, *repo.Commit, error) {
	ref := m.s.Ref(branch)
	h, err := m.s.Repo().Ref(store.MergeRef(ref))
	if errors.Is(err, repo.ErrNotFound) {
		return h, nil, &NoMergeError{Branch: shortBranch(ref)}
	}
	if err != nil {
		return h, nil, err
	}
	c, err := m.s.Repo().ReadCommit(h)
	return h, c, err
}

// Conflicts lists what is left to resolve in the merge in progress on
// ro.Branch ("" = the default branch), file by file, key by key. A merge
// in progress is read as it is now: ro.At is refused.
func (m *Merges) Conflicts(ctx context.Context, ro store.ReadOptions) ([]ConflictEntry, error) {
	if ro.At != "" {
		return nil, fmt.Errorf("%w: the conflicts of a merge in progress are read as they are now, not at a revision", store.ErrUsage)
	}
	_, c, err := m.inProgress(ro.Branch)
	if err != nil {
		return nil, err
	}
	recs, err := m.records(c.Tree)
	if err != nil {
		return nil, err
	}
	return conflictEntries(recs), nil
}

func (m *Merges) records(stateTree plumbing.Hash) ([]jsonmerge.Record, error) {
	var out []jsonmerge.Record
	err := m.s.Repo().Walk(stateTree, strings.TrimSuffix(store.MergeConflictsDir, "/"), func(p string, h plumbing.Hash) error {
		data, err := m.s.Repo().ReadBlob(h)
		if err != nil {
			return err
		}
		rec, err := jsonmerge.DecodeRecord(data)
		if err != nil {
			return fmt.Errorf("%s: %w", p, err)
		}
		out = append(out, rec)
		return nil
	})
	if errors.Is(err, repo.ErrNotFound) {
		return nil, nil
	}
	return out, err
}

func conflictEntries(recs []jsonmerge.Record) []ConflictEntry {
	var out []ConflictEntry
	raw := func(v any, missing bool) json.RawMessage {
		if missing {
			return nil
		}
		b, err := objects.Encode(v)
		if err != nil {
			return nil
		}
		c, err := jsonCompact(b)
		if err != nil {
			return nil
		}
		return c
	}
	for _, r := range recs {
		if r.Reason != "" {
			out = append(out, ConflictEntry{File: r.File, Reason: r.Reason, Strategy: string(r.Strategy),
				BaseMissing: r.BaseID == "", OursMissing: r.OursID == "", TheirsMissing: r.TheirsID == ""})
			continue
		}
		for _, k := range r.Keys {
			out = append(out, ConflictEntry{
				File: r.File, Key: k.Path.String(), Reason: k.Reason, Strategy: string(r.Strategy),
				Base: raw(k.Base, k.BaseMissing), Ours: raw(k.Ours, k.OursMissing), Theirs: raw(k.Theirs, k.TheirsMissing),
				BaseMissing: k.BaseMissing, OursMissing: k.OursMissing, TheirsMissing: k.TheirsMissing,
			})
		}
	}
	return out
}

func jsonCompact(b []byte) (json.RawMessage, error) {
	var buf bytes.Buffer
	if err := json.Compact(&buf, b); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// Resolution is how `resolve` settles a conflict.
type Resolution struct {
	// Take is "ours", "theirs" or "base"; empty when Value is set.
	Take string
	// Value is the JSON to put at the key (or the whole document).
	Value []byte
}

// Resolve settles a conflict of the merge in progress on wo.Branch: the
// one at keypath in file, or every conflict of file when keypath is empty
// (with a Value, the whole document). A side on which the key does not exist
// deletes it. When the last conflict is resolved, `merge --continue`
// (Continue) commits the merge.
func (m *Merges) Resolve(ctx context.Context, file, keypath string, how Resolution, wo store.WriteOptions) (remaining int, err error) {
	branch := wo.Branch
	if wo.UnchangedSince != nil {
		return 0, fmt.Errorf("%w: UnchangedSince is for writes of files; a resolution writes the merge in progress", store.ErrUsage)
	}
	clean, err := verbiage.CleanStorePath(file)
	if err != nil {
		return 0, err
	}
	key, err := verbiage.ParsePath(keypath)
	if err != nil {
		return 0, err
	}
	var value any
	switch {
	case how.Value != nil && how.Take != "":
		return 0, fmt.Errorf("%w: a resolution takes ours, theirs or base (Resolution.Take) or a Value, not both", store.ErrUsage)
	case how.Value != nil:
		if value, err = objects.Decode(how.Value); err != nil {
			return 0, fmt.Errorf("value: %w", err)
		}
	case how.Take != "ours" && how.Take != "theirs" && how.Take != "base":
		return 0, fmt.Errorf("%w: a resolution takes ours, theirs or base (Resolution.Take) or a Value", store.ErrUsage)
	}
	ref := m.s.Ref(branch)
	stateHash, _, err := m.inProgress(branch)
	if err != nil {
		return 0, err
	}
	signer, err := m.s.SignerFor(m.s.Agent(wo.Agent), wo)
	if err != nil {
		return 0, err
	}
	_, err = m.s.Repo().Commit(ctx, store.MergeRef(ref), func(tx *repo.Tx) (*repo.CommitInfo, error) {
		st, err := readState(tx.ReadFile)
		if err != nil {
			return nil, err
		}
		recData, err := tx.ReadFile(store.MergeConflictsDir + clean)
		if errors.Is(err, repo.ErrNotFound) {
			return nil, errkind.Errorf(store.ErrNotFound, "%s has no conflict to resolve", clean)
		}
		if err != nil {
			return nil, err
		}
		rec, err := jsonmerge.DecodeRecord(recData)
		if err != nil {
			return nil, err
		}
		doc, present, err := m.stagedDoc(tx, st, clean)
		if err != nil {
			return nil, err
		}
		var data []byte
		switch {
		case rec.Reason != "":
			if len(key) > 0 {
				return nil, fmt.Errorf("%w: %s conflicts as a whole file (%s); resolve it without a key path", store.ErrUsage, clean, rec.Reason)
			}
			if how.Value != nil {
				if data, err = objects.Encode(value); err != nil {
					return nil, err
				}
				present = true
			} else {
				id := map[string]string{"ours": rec.OursID, "theirs": rec.TheirsID, "base": rec.BaseID}[how.Take]
				present = id != ""
				if present {
					if data, err = m.s.Repo().ReadBlob(plumbing.NewHash(id)); err != nil {
						return nil, err
					}
				}
			}
			rec.Keys, rec.Reason = nil, ""
		default:
			keys := rec.Keys
			if len(key) > 0 {
				i := -1
				for j, k := range keys {
					if k.Path.String() == key.String() {
						i = j
					}
				}
				if i < 0 {
					return nil, errkind.Errorf(store.ErrNotFound, "%s has no conflict at %s", clean, key)
				}
				doc, present = settle(doc, present, keys[i], how, value)
				rec.Keys = shiftAfterDelete(append(keys[:i:i], keys[i+1:]...), keys[i], how, value)
			} else if how.Value != nil {
				doc, present = value, true
				rec.Keys = nil
			} else {
				for i := len(keys) - 1; i >= 0; i-- {
					doc, present = settle(doc, present, keys[i], how, nil)
				}
				rec.Keys = nil
			}
			if present {
				if data, err = objects.Encode(doc); err != nil {
					return nil, err
				}
			}
		}
		if err := m.stage(tx, &st, clean, data, present); err != nil {
			return nil, err
		}
		if len(rec.Keys) == 0 && rec.Reason == "" {
			if err := tx.Remove(store.MergeConflictsDir + clean); err != nil {
				return nil, err
			}
		} else {
			b, err := rec.Encode()
			if err != nil {
				return nil, err
			}
			if err := tx.WriteFile(store.MergeConflictsDir+clean, b); err != nil {
				return nil, err
			}
		}
		if err := writeState(tx, st); err != nil {
			return nil, err
		}
		ents, err := tx.ReadDir(strings.TrimSuffix(store.MergeConflictsDir, "/"))
		if err == nil {
			remaining = countFiles(tx, strings.TrimSuffix(store.MergeConflictsDir, "/"), ents)
		}
		verb := how.Take
		if verb == "" {
			verb = "value"
		}
		target := clean
		if len(key) > 0 {
			target += "#" + key.String()
		}
		sig := repo.NewSignature(m.s.Agent(wo.Agent), m.s.Now())
		msg := repo.FormatMessage("resolve "+target+" with "+verb, "", repo.Trailers{{Key: store.TrailerPath, Value: target}})
		return &repo.CommitInfo{Author: sig, Committer: sig, Message: msg, AllowEmpty: true, Sign: store.SignFunc(signer)}, nil
	}, repo.CommitOptions{Expect: &stateHash})
	return remaining, err
}

func countFiles(tx *repo.Tx, dir string, ents []repo.DirEntry) int {
	n := 0
	for _, e := range ents {
		if !e.IsDir {
			n++
			continue
		}
		sub, err := tx.ReadDir(dir + "/" + e.Name)
		if err == nil {
			n += countFiles(tx, dir+"/"+e.Name, sub)
		}
	}
	return n
}

// settle applies one resolution to a key conflict.
func settle(doc any, present bool, c jsonmerge.Conflict, how Resolution, value any) (any, bool) {
	v, missing := value, false
	if how.Value == nil {
		switch how.Take {
		case "ours":
			v, missing = c.Ours, c.OursMissing
		case "theirs":
			v, missing = c.Theirs, c.TheirsMissing
		case "base":
			v, missing = c.Base, c.BaseMissing
		}
	}
	if len(c.Path) == 0 {
		return v, !missing
	}
	if !present {
		doc = map[string]any{}
	}
	return applyChoice(doc, c.Path, v, missing), true
}

// shiftAfterDelete renumbers the conflicts after an array element the
// resolution removed, so their paths still address the merged document.
func shiftAfterDelete(keys []jsonmerge.Conflict, done jsonmerge.Conflict, how Resolution, value any) []jsonmerge.Conflict {
	missing := false
	switch {
	case how.Value != nil:
	case how.Take == "ours":
		missing = done.OursMissing
	case how.Take == "theirs":
		missing = done.TheirsMissing
	case how.Take == "base":
		missing = done.BaseMissing
	}
	if !missing || len(done.Path) == 0 {
		return keys
	}
	at := len(done.Path) - 1
	idx, ok := done.Path[at].Index()
	if !ok {
		return keys
	}
	prefix := done.Path[:at]
	for i, k := range keys {
		if len(k.Path) <= at || !k.Path.HasPrefix(prefix) {
			continue
		}
		if j, ok := k.Path[at].Index(); ok && j > idx {
			p := append(verbiage.Path(nil), k.Path...)
			p[at] = verbiage.Segment{Key: fmt.Sprint(j - 1)}
			keys[i].Path = p
		}
	}
	return keys
}

// stagedDoc is a file's merged document as the merge in progress holds it.
func (m *Merges) stagedDoc(tx *repo.Tx, st mergeState, file string) (any, bool, error) {
	for _, d := range st.Deleted {
		if d == file {
			return nil, false, nil
		}
	}
	data, err := tx.ReadFile(resultDir + file)
	if errors.Is(err, repo.ErrNotFound) {
		data, err = m.s.Repo().ReadFileAt(m.s.TreeOf(plumbing.NewHash(st.Ours)), file)
		if errors.Is(err, repo.ErrNotFound) {
			return nil, false, nil
		}
	}
	if err != nil {
		return nil, false, err
	}
	v, err := objects.Decode(data)
	if err != nil {
		// A whole-file conflict on a file that is not JSON: there is no
		// document to edit key by key, and resolve replaces it whole.
		return nil, true, nil
	}
	return v, true, nil
}

// stage records a file's merged content in the merge in progress, as a
// difference from ours.
func (m *Merges) stage(tx *repo.Tx, st *mergeState, file string, data []byte, present bool) error {
	kept := st.Deleted[:0]
	for _, d := range st.Deleted {
		if d != file {
			kept = append(kept, d)
		}
	}
	st.Deleted = kept
	oursData, err := m.s.Repo().ReadFileAt(m.s.TreeOf(plumbing.NewHash(st.Ours)), file)
	oursHas := err == nil
	if ok, _ := tx.Exists(resultDir + file); ok {
		if err := tx.Remove(resultDir + file); err != nil {
			return err
		}
	}
	switch {
	case !present && oursHas:
		st.Deleted = append(st.Deleted, file)
	case present && !(oursHas && string(oursData) == string(data)):
		return tx.WriteFile(resultDir+file, data)
	}
	return nil
}

// Continue commits the merge in progress on wo.Branch once nothing is left to
// resolve: a two-parent merge commit through the store's commit path, then
// the merge-in-progress ref is removed.
func (m *Merges) Continue(ctx context.Context, wo store.WriteOptions) (*MergeResult, error) {
	branch := wo.Branch
	stateHash, c, err := m.inProgress(branch)
	if err != nil {
		return nil, err
	}
	st, err := readState(func(p string) ([]byte, error) { return m.s.Repo().ReadFileAt(c.Tree, p) })
	if err != nil {
		return nil, err
	}
	recs, err := m.records(c.Tree)
	if err != nil {
		return nil, err
	}
	res := &MergeResult{Into: st.Into, From: st.From, Ours: st.Ours, Theirs: st.Theirs, Bases: st.Bases, Files: []MergedPath{}, Conflicts: conflictEntries(recs)}
	if len(recs) > 0 {
		res.Status = MergeConflicts
		return res, &ConflictsError{Conflicts: len(res.Conflicts), Files: len(recs), Left: true}
	}
	ref := m.s.Ref(branch)
	ours, theirs := plumbing.NewHash(st.Ours), plumbing.NewHash(st.Theirs)
	// A --continue that committed but died before removing the ref left
	// the merge commit on the branch: finish the cleanup only.
	if head, err := m.s.Repo().Ref(ref); err == nil && head != ours {
		if hc, err := m.s.Repo().ReadCommit(head); err == nil && hc.Trailers().Get(store.TrailerMergeRecord) == stateHash.String() {
			res.Status, res.Commit = MergeCommitted, store.MutationOf(hc, ref)
			return res, m.keepMergeRecord(ctx, ref, head, stateHash)
		}
	}
	var files []stagedFile
	err = m.s.Repo().Walk(c.Tree, strings.TrimSuffix(resultDir, "/"), func(p string, h plumbing.Hash) error {
		files = append(files, stagedFile{path: strings.TrimPrefix(p, resultDir), id: h.String()})
		return nil
	})
	if err != nil && !errors.Is(err, repo.ErrNotFound) {
		return nil, err
	}
	for _, d := range st.Deleted {
		files = append(files, stagedFile{path: d, missing: true})
	}
	sort.Slice(files, func(i, j int) bool { return files[i].path < files[j].path })
	for _, f := range files {
		res.Files = append(res.Files, MergedPath{Path: f.path, From: "merged", Deleted: f.missing})
	}
	if wo.Message == "" {
		wo.Message = st.Message
	}
	mc := store.MergeCommit{Ours: ours, Theirs: theirs, UpstreamFirst: st.UpstreamFirst}
	mut, err := m.commitMerge(ctx, ref, mc, st.From, files, wo, repo.Trailers{{Key: store.TrailerMergeRecord, Value: stateHash.String()}})
	if errors.Is(err, docschema.ErrInvalid) {
		// The resolutions are settled and cannot be resolved again.
		return nil, &ResolvedMergeInvalidError{Err: err}
	}
	if err != nil {
		return nil, err
	}
	res.Status, res.Commit = MergeCommitted, mut
	return res, m.keepMergeRecord(ctx, ref, plumbing.NewHash(mut.Commit), stateHash)
}

// keepMergeRecord ends the merge in progress on ref, which merge commit
// finished: its record (the conflicts and every resolve, a chain of
// commits) moves to MergeRecordPrefix+<merge commit>, so the commit the
// merge's Merge-Record trailer names stays reachable, and survives gc,
// for whoever audits how the conflicts were settled. Run again after a
// crash, it finishes what is left.
func (m *Merges) keepMergeRecord(ctx context.Context, ref string, commit, record plumbing.Hash) error {
	keep := MergeRecordPrefix + commit.String()
	if err := m.s.Repo().UpdateRef(ctx, keep, plumbing.ZeroHash, record); err != nil {
		var stale *repo.StaleError
		if !errors.As(err, &stale) || stale.Current != record {
			return err
		}
	}
	return m.s.Repo().UpdateRef(ctx, store.MergeRef(ref), record, plumbing.ZeroHash)
}

// Abort drops the merge in progress on wo.Branch. The branch was never
// changed by it, so this only removes the merge-in-progress ref.
func (m *Merges) Abort(ctx context.Context, wo store.WriteOptions) error {
	branch := wo.Branch
	h, _, err := m.inProgress(branch)
	if err != nil {
		return err
	}
	return m.s.Repo().UpdateRef(ctx, store.MergeRef(m.s.Ref(branch)), h, plumbing.ZeroHash)
}
