package rlm

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/aiwg/aiwg-state/checkpoint"
	"github.com/aiwg/aiwg-state/objects"
	"github.com/aiwg/aiwg-state/repo"
	"github.com/aiwg/aiwg-state/store"
	"github.com/aiwg/aiwg-state/verbiage"
)

// ErrInvalidState: a state document that breaks the schema, or a state
// whose files do not make a valid state.
var ErrInvalidState = errors.New("invalid state")

// ErrHandler: a completion handler failed. The state is complete (the
// commit is published); only the handler's run failed.
var ErrHandler = errors.New("completion handler failed")

// RLMSchema returns the JSON Schema (2020-12) of the RLM state specification that exports
// validate against.
func RLMSchema() []byte { return StateSchema() }

func encodeJSON(v any) ([]byte, error) {
	raw, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return objects.Canonical(raw)
}

func decodeJSON(data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("%w: %v", objects.ErrInvalidJSON, err)
	}
	return nil
}

// CompletionHandler is a command run once when a state's Final turns
// non-null, kept in the store manifest's "rlm" section (see
// store.CompletionHandler).
type CompletionHandler = store.CompletionHandler

func (s *States) rlmSettingsAt(root plumbing.Hash) (store.RLMSettings, error) {
	var m struct {
		RLM store.RLMSettings `json:"rlm"`
	}
	data, err := s.store.Repo().ReadFileAt(root, store.ManifestPath)
	if errors.Is(err, repo.ErrNotFound) {
		return m.RLM, nil
	}
	if err != nil {
		return m.RLM, err // unread settings are not the defaults
	}
	if err := json.Unmarshal(data, &m); err != nil {
		return m.RLM, fmt.Errorf("%s: rlm section: %w", store.ManifestPath, objects.ErrInvalidJSON)
	}
	return m.RLM, nil
}

// CompletionHandlers lists the handlers the manifest registers.
func (s *States) CompletionHandlers(ctx context.Context, ro store.ReadOptions) ([]CompletionHandler, error) {
	root, err := s.store.Tree(ro)
	if err != nil {
		return nil, err
	}
	st, err := s.rlmSettingsAt(root)
	return st.OnComplete, err
}

// SetCompletionHandlers replaces the manifest's completion handlers in one
// commit (the rest of the manifest is kept), and trusts them on this
// machine (see Trust): whoever sets a handler here consents to run it
// here. Other clones of the store run it once trusted there.
func (s *States) SetCompletionHandlers(ctx context.Context, hs []CompletionHandler, wo store.WriteOptions) (*store.Mutation, error) {
	for _, h := range hs {
		if len(h.Command) == 0 || h.Command[0] == "" {
			return nil, fmt.Errorf("%w: completion handler %q has no command", store.ErrUsage, h.Name)
		}
	}
	m, err := s.setCompletionHandlers(ctx, hs, wo)
	if err == nil && len(hs) > 0 {
		_, err = s.trust(hs)
	}
	return m, err
}

func (s *States) setCompletionHandlers(ctx context.Context, hs []CompletionHandler, wo store.WriteOptions) (*store.Mutation, error) {
	return s.store.Commit(ctx, wo, "", func(tx *repo.Tx, rec *store.Recorder) error {
		doc := map[string]any{}
		data, err := tx.ReadFile(store.ManifestPath)
		if err != nil && !errors.Is(err, repo.ErrNotFound) {
			return err // rewritten from nothing, the manifest would lose the rest
		}
		if err == nil {
			v, err := objects.Decode(data)
			if err != nil {
				return fmt.Errorf("%s: %w", store.ManifestPath, err)
			}
			if m, ok := v.(map[string]any); ok {
				doc = m
			}
		}
		sec, _ := doc["rlm"].(map[string]any)
		if sec == nil {
			sec = map[string]any{}
		}
		list := make([]any, 0, len(hs))
		for _, h := range hs {
			cmd := make([]any, len(h.Command))
			for i, c := range h.Command {
				cmd[i] = c
			}
			list = append(list, map[string]any{"name": h.Name, "command": cmd})
		}
		if len(list) == 0 {
			delete(sec, "on_complete")
		} else {
			sec["on_complete"] = list
		}
		doc["rlm"] = sec
		data, err = objects.Encode(doc)
		if err != nil {
			return err
		}
		if err := tx.WriteFile(store.ManifestPath, data); err != nil {
			return err
		}
		rec.Add(store.OpUpdate, store.ManifestPath, "rlm.on_complete")
		return nil
	})
}

// RunCompletion is the store.AfterCommit that runs the completion handlers
// of the states a commit completed (see runCompletion).
func RunCompletion(s *store.Store, m *store.Mutation, wo store.WriteOptions, changes []store.Change) error {
	return New(s).runCompletion(m, wo, changes)
}

// runCompletion runs the completion handlers of every state this commit
// completed. A commit completes a state when Final is null (or absent) in
// its first parent and non-null in it. Writers of a branch are serialized
// by its lock and each builds on the latest head, and a second writer
// setting Final finds it set and is refused (ErrComplete): so exactly one
// commit completes a state, and only the process that published it runs
// this. A claim file under the git directory, created exclusively, makes a
// second run for the same commit (a retried call, a re-import) a no-op.
func (s *States) runCompletion(m *store.Mutation, wo store.WriteOptions, changes []store.Change) error {
	ids := map[string]bool{}
	for _, ch := range changes {
		rest, ok := strings.CutPrefix(ch.File, "states/")
		if !ok {
			continue
		}
		id, tail, _ := strings.Cut(rest, "/")
		if tail == "variables/Final.json" || (ch.Operation == OpRollback && tail == "") {
			ids[id] = true
		}
	}
	if len(ids) == 0 {
		return nil
	}
	for _, t := range m.Trailers {
		if strings.EqualFold(t.Key, TrailerImportedMutation) {
			return nil // imported history: it completed elsewhere, long ago
		}
	}
	c, err := s.store.Repo().ReadCommit(plumbing.NewHash(m.Commit))
	if err != nil {
		return err
	}
	var parentTree plumbing.Hash
	if len(c.Parents) > 0 {
		p, err := s.store.Repo().ReadCommit(c.Parents[0])
		if err != nil {
			return err
		}
		parentTree = p.Tree
	}
	var errs []error
	for id := range ids {
		file := VarFile("states/"+id+"/variables", verbiage.NameFinal)
		if !s.finalSet(c.Tree, file) || (!parentTree.IsZero() && s.finalSet(parentTree, file)) {
			continue
		}
		if err := s.complete(m, c, id, wo); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

func (s *States) finalSet(root plumbing.Hash, file string) bool {
	data, err := s.store.Repo().ReadFileAt(root, file)
	if err != nil {
		return false
	}
	v, err := DecodeVariable(data)
	return err == nil && v.Value != nil
}

func (s *States) complete(m *store.Mutation, c *repo.Commit, id string, wo store.WriteOptions) error {
	st, err := s.rlmSettingsAt(c.Tree)
	if err != nil || len(st.OnComplete) == 0 {
		return err
	}
	// Only handlers this machine trusts run (trust.go): the manifest is
	// versioned, and what history brings is not consent.
	run := st.OnComplete[:0:0]
	for _, h := range st.OnComplete {
		ok, err := s.handlerTrusted(h)
		if err != nil {
			return err
		}
		if ok {
			run = append(run, h)
			continue
		}
		m.Warn(wo, fmt.Sprintf("completion handler %q (%s) is not trusted on this machine, so it did not run: read it, then aiwg-state trust", h.Name, oneLineCommand(h.Command)))
	}
	if len(run) == 0 {
		return nil
	}
	st.OnComplete = run
	dir := filepath.Join(s.store.Repo().Dir(), "aiwg", "completions")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	claim := filepath.Join(dir, id+"-"+c.Hash.String())
	f, err := os.OpenFile(claim, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644)
	if errors.Is(err, fs.ErrExist) {
		return nil
	}
	if err != nil {
		return err
	}
	defer f.Close()
	var final []byte
	if data, err := s.store.Repo().ReadFileAt(c.Tree, VarFile("states/"+id+"/variables", verbiage.NameFinal)); err == nil {
		if v, err := DecodeVariable(data); err == nil {
			if v.IsStored() {
				if d, err := s.store.Repo().ReadFileAt(c.Tree, v.DataPath()); err == nil {
					v.Load(d)
				}
			}
			final, _ = json.Marshal(v.Value)
			final = append(final, '\n')
		}
	}
	var errs []error
	for _, h := range st.OnComplete {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		cmd := exec.CommandContext(ctx, h.Command[0], h.Command[1:]...)
		if wo.HandlerEnv != nil {
			cmd.Path, cmd.Err = handlerPath(h.Command[0], wo)
		}
		env := wo.HandlerEnv
		if env == nil {
			env = os.Environ()
		}
		cmd.Env = append(slices.Clip(env), "AIWG_STATE_ID="+id, "AIWG_STATE_COMMIT="+c.Hash.String(), "AIWG_STATE_STORE="+s.store.Repo().Dir())
		cmd.Dir = wo.HandlerDir
		cmd.Stdin = bytes.NewReader(final)
		out, err := cmd.CombinedOutput()
		cancel()
		status := "ok"
		if err != nil {
			status = err.Error()
			errs = append(errs, fmt.Errorf("%w: state %s is complete (commit %s) but handler %q failed: %v: %s",
				ErrHandler, id, shortID(c.Hash.String()), h.Name, err, strings.TrimSpace(string(out))))
		}
		fmt.Fprintf(f, "%s\t%s\t%s\n", time.Now().UTC().Format(time.RFC3339), h.Name, status)
	}
	return errors.Join(errs...)
}

// oneLineCommand shows a handler's command on one line, cut short.
func oneLineCommand(cmd []string) string {
	s := CommandLine(cmd)
	if len(s) > 120 {
		s = s[:117] + "..."
	}
	return s
}

// handlerPath finds a handler's program as the writer's process would: on
// the PATH of WriteOptions.HandlerEnv, relative entries against
// HandlerDir. exec.Command would search this process's PATH, which is not
// the client's when a server writes for one.
func handlerPath(name string, wo store.WriteOptions) (string, error) {
	if strings.Contains(name, "/") {
		if !filepath.IsAbs(name) {
			name = filepath.Join(wo.HandlerDir, name)
		}
		return name, nil
	}
	path := ""
	for _, kv := range wo.HandlerEnv {
		if v, ok := strings.CutPrefix(kv, "PATH="); ok {
			path = v
		}
	}
	for _, dir := range filepath.SplitList(path) {
		if dir == "" {
			dir = "."
		}
		p := filepath.Join(dir, name)
		if !filepath.IsAbs(p) {
			p = filepath.Join(wo.HandlerDir, p)
		}
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
			if !filepath.IsAbs(dir) {
				// As exec.LookPath: a program found through a relative
				// PATH entry is not run.
				return "", &exec.Error{Name: name, Err: exec.ErrDot}
			}
			return p, nil
		}
	}
	return "", &exec.Error{Name: name, Err: exec.ErrNotFound}
}

// ExportOptions choose what `state export` prints.
type ExportOptions struct {
	store.ReadOptions
	// Page of the history (1, the default, is the newest MaxHistory
	// mutations). The history is all in git; an export carries one page.
	Page int
}

// Export assembles a state ("" = the newest) as one document of the
// specification's schema and validates it: variables with metadata and access
// counts, history.mutations derived from the commits (old and new values
// read from them), history.checkpoints from the tags, metadata counted.
func (s *States) Export(ctx context.Context, stateID string, eo ExportOptions) ([]byte, error) {
	head, err := s.store.Resolve(eo.At, eo.Branch)
	if err != nil {
		return nil, err
	}
	hc, err := s.store.Repo().ReadCommit(head)
	if err != nil {
		return nil, err
	}
	h, err := s.stateAt(hc.Tree, stateID)
	if err != nil {
		return nil, err
	}
	doc := &Document{Version: Version, StateID: h.StateID, SessionID: h.SessionID, ParentStateID: h.ParentStateID, Variables: map[string]*Variable{}}
	if h.TreeID != "" {
		t := h.TreeID
		doc.TreeID = &t
	}
	vs, err := s.visible(hc.Tree, h, "", s.store.Now())
	if err != nil {
		return nil, err
	}
	meta := &Metadata{CreatedAt: h.CreatedAt, ExecutionConfig: h.ExecutionConfig, CompletionStatus: cmp.Or(h.CompletionStatus, StatusIncomplete)}
	for _, x := range vs {
		v := x.v
		meta.TotalSizeBytes += x.size
		if v.IsStored() {
			data, err := s.store.Repo().ReadFileAt(hc.Tree, v.DataPath())
			if err != nil {
				return nil, fmt.Errorf("variable %s: %w", v.Name, err)
			}
			meta.TotalSizeBytes += int64(len(data))
			if err := v.Load(data); err != nil {
				return nil, err
			}
		}
		n := s.peekAccess(x.file)
		v.AccessCount = &n
		if v.Name == verbiage.NameFinal && v.Value != nil {
			meta.CompletionStatus = StatusComplete
		}
		doc.Variables[v.Name] = v
	}
	muts, err := s.stateHistory(head, h)
	if err != nil {
		return nil, err
	}
	meta.VariableCount = len(doc.Variables)
	meta.MutationCount = len(muts)
	if len(muts) > 0 {
		meta.LastUpdatedAt = muts[len(muts)-1].Timestamp
	} else {
		meta.LastUpdatedAt = h.CreatedAt
	}
	pages := max(1, (len(muts)+MaxHistory-1)/MaxHistory)
	page := max(eo.Page, 1)
	if page > pages {
		return nil, fmt.Errorf("%w: history page %d of %d", store.ErrNotFound, page, pages)
	}
	end := len(muts) - (page-1)*MaxHistory
	start := max(0, end-MaxHistory)
	hist := &History{Mutations: muts[start:end], Checkpoints: []Checkpoint{}}
	if pages > 1 {
		hist.Page, hist.Pages = page, pages
	}
	cks, err := checkpoint.List(s.store.Repo(), h.StateID)
	if err != nil {
		return nil, err
	}
	for _, c := range cks {
		hist.Checkpoints = append(hist.Checkpoints, Checkpoint{CheckpointID: c.ID, Name: c.Name, Timestamp: c.Time.UTC().Format(time.RFC3339),
			SnapshotPath: c.Ref, Description: c.Description})
	}
	meta.CheckpointCount = len(cks)
	doc.History, doc.Metadata = hist, meta
	out, err := doc.Encode()
	if err != nil {
		return nil, err
	}
	if err := s.validateDocument(out); err != nil {
		return nil, fmt.Errorf("export of %s does not validate (a bug; please report it): %w", h.StateID, err)
	}
	return out, nil
}

func (s *States) validateDocument(doc []byte) error {
	sch, err := CompileSchema(StateSchema())
	if err != nil {
		return err
	}
	if _, err := objects.Decode(doc); err != nil {
		return err // not JSON at all: a usage error, as for any value
	}
	if err := sch.Validate(doc); err != nil {
		return fmt.Errorf("%w: %w", ErrInvalidState, err)
	}
	return nil
}

// EntryID is the id of the nth (from 1) history entry of the commit whose
// mutation id is commitID: the first keeps the commit's id, the others add
// .n, so each entry of an export has its own id and the plain part still
// names the commit (`aiwg-state show mut-1a2b3c4d.2` shows it).
func EntryID(commitID string, n int) string {
	if n <= 1 {
		return commitID
	}
	return commitID + "." + strconv.Itoa(n)
}

// CommitMutationID is the mutation id of the commit a history entry's id
// (EntryID) leads to: the id without its .n suffix.
func CommitMutationID(entryID string) string {
	if i := strings.IndexByte(entryID, '.'); i >= 0 {
		return entryID[:i]
	}
	return entryID
}

// stateHistory derives a state's mutations from the first-parent history
// of head, from the commit that created the state: one entry per change of
// a variable file the state sees. Commits written by aiwg-state name each
// variable blob they wrote (Blob trailers), so values are read directly;
// other commits (plain git, merges, rollbacks) are compared with their
// first parent, directory by directory.
func (s *States) stateHistory(head plumbing.Hash, h *Header) ([]Mutation, error) {
	var commits []*repo.Commit
	headerPath := HeaderPath(h.StateID)
	err := s.store.Repo().FirstParents(head, func(c *repo.Commit) (bool, error) {
		commits = append(commits, c)
		for _, ch := range store.MutationOf(c, "").Changes {
			if ch.File == headerPath && ch.Operation == store.OpCreate {
				return false, nil
			}
		}
		return true, nil
	})
	if err != nil {
		return nil, err
	}
	dirs := h.Dirs()
	inState := func(p string) (string, bool) {
		for _, sd := range dirs {
			if rest, ok := strings.CutPrefix(p, sd.Dir+"/"); ok {
				return NameOfFile(rest)
			}
		}
		return "", false
	}
	hv := &historyValues{s: s, cache: map[plumbing.Hash]json.RawMessage{}}
	last := map[string]json.RawMessage{}
	var out []Mutation
	for i := len(commits) - 1; i >= 0; i-- {
		c := commits[i]
		m := store.MutationOf(c, "")
		var parentTree plumbing.Hash
		if len(c.Parents) > 0 {
			p, err := s.store.Repo().ReadCommit(c.Parents[0])
			if err != nil {
				return nil, err
			}
			parentTree = p.Tree
		}
		base := Mutation{MutationID: m.MutationID, Source: m.Source, Timestamp: c.Author.When.UTC().Format(time.RFC3339)}
		tr := c.Trailers()
		if id := tr.Get(TrailerImportedMutation); id != "" {
			base.MutationID = id
		}
		if !verbiage.ValidID(verbiage.PrefixMutation, base.MutationID) {
			base.MutationID = "mut-" + c.Hash.String()[:8]
		}
		meta := map[string]any{"commit": c.Hash.String()}
		if ck := tr.Get(TrailerCheckpoint); ck != "" {
			meta["reason"] = "rollback to " + ck
		}
		type fileChange struct {
			path   string
			newH   plumbing.Hash
			op     string
			from   string
			hasNew bool
		}
		var fcs []fileChange
		var renamedAway []string
		if blobs := tr.All(TrailerBlob); len(blobs) > 0 {
			for _, b := range blobs {
				hs, path, ok := strings.Cut(b, " ")
				if !ok || !plumbing.IsHash(hs) {
					continue
				}
				if _, ok := inState(path); !ok {
					continue
				}
				fc := fileChange{path: path, newH: plumbing.NewHash(hs)}
				fc.hasNew = !fc.newH.IsZero()
				for _, ch := range m.Changes {
					switch {
					case ch.Operation == store.OpRename && ch.To == path:
						fc.op, fc.from = store.OpRename, ch.File
					case ch.Operation == store.OpRename && ch.File == path:
						fc.op = "skip"
					case ch.File == path && fc.op == "":
						fc.op = ch.Operation
					}
				}
				if fc.op == "skip" {
					renamedAway = append(renamedAway, path)
					continue
				}
				fcs = append(fcs, fc)
			}
		} else {
			for _, sd := range dirs {
				a, b := s.dirHashAt(parentTree, sd.Dir), s.dirHashAt(c.Tree, sd.Dir)
				if a == b {
					continue
				}
				diffs, err := s.store.Repo().DiffTrees(a, b)
				if err != nil {
					return nil, err
				}
				for _, d := range diffs {
					if _, ok := NameOfFile(d.Path); !ok {
						continue
					}
					fc := fileChange{path: sd.Dir + "/" + d.Path, newH: d.New, hasNew: !d.New.IsZero()}
					switch {
					case d.Old.IsZero():
						fc.op = store.OpCreate
					case d.New.IsZero():
						fc.op = store.OpDelete
					default:
						fc.op = store.OpUpdate
					}
					fcs = append(fcs, fc)
				}
			}
		}
		for k, fc := range fcs {
			name, _ := inState(fc.path)
			e := base
			e.MutationID = EntryID(base.MutationID, k+1)
			e.VariableName = name
			e.Metadata = meta
			oldPath := fc.path
			if fc.op == store.OpRename {
				oldPath = fc.from
				if from, ok := NameOfFile(fc.from[strings.LastIndex(fc.from, "/")+1:]); ok {
					e.Metadata = map[string]any{"commit": c.Hash.String(), "reason": "renamed from " + from, "renamed_from": from}
				}
			}
			old, seen := last[oldPath]
			if !seen && !parentTree.IsZero() {
				old = hv.at(parentTree, oldPath)
			}
			if fc.hasNew {
				nv, err := hv.blob(fc.newH, c.Tree)
				if err != nil {
					return nil, err
				}
				e.NewValue = nv
				last[fc.path] = nv
			} else {
				last[fc.path] = nil
			}
			switch {
			case fc.op == store.OpCreate && old != nil && fc.hasNew:
				fc.op = store.OpUpdate // re-created over a value the walk had not seen go
			case fc.op == store.OpUpdate && old == nil:
				fc.op = store.OpCreate
			case fc.op == "" || fc.op == OpRollback:
				fc.op = map[bool]string{true: store.OpUpdate, false: store.OpDelete}[fc.hasNew]
				if fc.hasNew && old == nil {
					fc.op = store.OpCreate
				}
			}
			e.Operation = fc.op
			if fc.op != store.OpCreate {
				e.OldValue = old
			}
			out = append(out, e)
		}
		for _, p := range renamedAway {
			last[p] = nil
		}
	}
	return out, nil
}

func (s *States) dirHashAt(root plumbing.Hash, dir string) plumbing.Hash {
	if root.IsZero() {
		return plumbing.ZeroHash
	}
	e, err := s.store.Repo().Lookup(root, dir)
	if err != nil || !e.IsDir() {
		return plumbing.ZeroHash
	}
	return e.Hash
}

// historyValues reads variable values out of history, each blob once.
type historyValues struct {
	s     *States
	cache map[plumbing.Hash]json.RawMessage
}

// blob is the value in a variable file's blob; a large value's content is
// read from the tree the blob belongs to.
func (hv *historyValues) blob(h plumbing.Hash, tree plumbing.Hash) (json.RawMessage, error) {
	if v, ok := hv.cache[h]; ok {
		return v, nil
	}
	data, err := hv.s.store.Repo().ReadBlob(h)
	if err != nil {
		return nil, err
	}
	v, err := DecodeVariable(data)
	if err != nil {
		return nil, err
	}
	stored := v.IsStored()
	if stored {
		if d, err := hv.s.store.Repo().ReadFileAt(tree, v.DataPath()); err == nil {
			v.Load(d)
		}
	}
	enc, err := json.Marshal(v.Value)
	if err != nil {
		return nil, err
	}
	if !stored {
		hv.cache[h] = enc // a stored value's file may differ between trees
	}
	return enc, nil
}

func (hv *historyValues) at(tree plumbing.Hash, path string) json.RawMessage {
	e, err := hv.s.store.Repo().Lookup(tree, path)
	if err != nil || e.IsDir() {
		return nil
	}
	v, _ := hv.blob(e.Hash, tree)
	return v
}

// Import turns a state document (e.g. one exported by another aiwg
// tool) into history on the branch: the state's init commit, one commit per
// mutation (entries sharing a mutation id make one commit) with the
// original timestamps, sources and mutation ids (Imported-Mutation-Id), a
// last commit that makes the variables equal to the document's when the
// history does not, and the checkpoints as tags on the commit each was
// taken at. Completion handlers do not run for imported history. A state
// the store holds already is refused (ErrExists); see ImportWith.
func (s *States) Import(ctx context.Context, data []byte, wo store.WriteOptions) (*StateInfo, error) {
	return s.ImportWith(ctx, data, ImportOptions{}, wo)
}

// ImportOptions say what an import does with a state the store holds
// already.
type ImportOptions struct {
	// As imports the document as a new state of this id (state- and 8
	// hex digits), beside the one it was exported from; its checkpoints
	// get new ids.
	As string
	// Replace makes the store's state what the document says, in one
	// commit, when the store holds it: every variable of the document
	// set, and the state's own variables (state and temporary scope) the
	// document lacks removed. The state's history and checkpoints stay as
	// they are (the document's are not replayed), and a state that ended
	// is refused, as any write to it is.
	Replace bool
}

// ImportWith is Import, with what to do when the store holds
// the state already.
func (s *States) ImportWith(ctx context.Context, data []byte, io ImportOptions, wo store.WriteOptions) (*StateInfo, error) {
	if err := s.validateDocument(data); err != nil {
		return nil, err
	}
	doc, err := DecodeDocument(data)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalidState, err)
	}
	if io.As != "" {
		if io.Replace {
			return nil, fmt.Errorf("%w: ImportOptions.As makes a new state and Replace changes the one there: one or the other", store.ErrUsage)
		}
		if !verbiage.ValidID(verbiage.PrefixState, io.As) {
			return nil, fmt.Errorf("%w: state id %q is not state- and 8 hex digits", store.ErrUsage, io.As)
		}
		doc.StateID = io.As
		if doc.History != nil {
			// Checkpoint ids name one checkpoint store-wide: the copy's
			// are its own.
			for i := range doc.History.Checkpoints {
				doc.History.Checkpoints[i].CheckpointID = ""
			}
		}
	}
	head, err := s.store.Resolve("HEAD", wo.Branch)
	if err != nil {
		return nil, err
	}
	hc, err := s.store.Repo().ReadCommit(head)
	if err != nil {
		return nil, err
	}
	if _, err := readHeader(treeReader(s.store.Repo(), hc.Tree), doc.StateID); err == nil {
		if io.Replace {
			return s.replaceState(ctx, doc, wo)
		}
		return nil, &StateExistsError{State: doc.StateID}
	}
	var muts []Mutation
	var cks []Checkpoint
	if doc.History != nil {
		muts, cks = doc.History.Mutations, doc.History.Checkpoints
	}
	// The specification's limits, checked before anything is written: the import
	// is many commits and tags, and bad input must change nothing.
	if n := len(doc.Variables); n > MaxVariables {
		return nil, fmt.Errorf("%w: %s has %d variables; a state holds at most %d", store.ErrLimit, doc.StateID, n, MaxVariables)
	}
	if n := len(cks); n > checkpoint.MaxPerState {
		return nil, fmt.Errorf("%w: %s has %d checkpoints; a state holds at most %d", store.ErrLimit, doc.StateID, n, checkpoint.MaxPerState)
	}
	for name, v := range doc.Variables {
		if v != nil && v.Type != "" {
			if err := CheckType(v.Type, v.Value); err != nil {
				// As var set --type refuses it, rather than storing the
				// value under the type it happens to look like.
				return nil, fmt.Errorf("%w: variable %s: %w", ErrInvalidState, name, err)
			}
		}
	}
	// Should a later step fail anyway, what was written is taken back:
	// the branch returns to head (unless another writer moved it since)
	// and the checkpoints made are removed.
	ref, err := s.store.WriteRef(wo.Branch)
	if err != nil {
		return nil, err
	}
	var made []*checkpoint.Checkpoint
	var last plumbing.Hash
	undo := func(cause error) error {
		for _, c := range made {
			s.store.Repo().UpdateRef(ctx, c.Ref, c.Tag, plumbing.ZeroHash)
		}
		if last.IsZero() {
			return cause
		}
		if err := s.store.Repo().UpdateRef(ctx, ref, last, head); err != nil {
			return fmt.Errorf("%w (its commits stay: the branch moved on since, or: %v)", cause, err)
		}
		return fmt.Errorf("%w (nothing of it was kept)", cause)
	}
	in := StateInit{ID: doc.StateID, Session: doc.SessionID, Parent: doc.ParentStateID, noCheckpoint: true}
	if doc.TreeID != nil {
		in.Tree = *doc.TreeID
	}
	if doc.Metadata != nil {
		in.ExecutionConfig = doc.Metadata.ExecutionConfig
		in.Time = parseTime(doc.Metadata.CreatedAt)
	}
	initWO := wo
	if p := doc.Variables[verbiage.NamePrompt]; p != nil {
		in.Prompt, _ = p.Value.(string)
		if in.Time.IsZero() {
			in.Time = parseTime(p.CreatedAt)
		}
	}
	if len(muts) > 0 && muts[0].VariableName == verbiage.NamePrompt && muts[0].Operation == store.OpCreate {
		if in.Time.IsZero() {
			in.Time = parseTime(muts[0].Timestamp)
		}
		if initWO.Source == "" {
			initWO.Source = muts[0].Source
		}
		initWO.Trailers = append(append(repo.Trailers(nil), wo.Trailers...), repo.Trailer{Key: TrailerImportedMutation, Value: CommitMutationID(muts[0].MutationID)})
		muts = muts[1:]
	}
	info, m, err := s.Init(ctx, in, initWO)
	if err != nil {
		return nil, err
	}
	last = plumbing.NewHash(m.Commit)
	type landed struct {
		hash plumbing.Hash
		when time.Time
	}
	commits := []landed{{plumbing.NewHash(m.Commit), m.Time}}
	scopeOf := func(name string) Scope {
		if v := doc.Variables[name]; v != nil && v.Metadata.Scope != "" {
			return v.Metadata.Scope
		}
		if name == verbiage.NameFinal || strings.HasPrefix(name, "result_state_") {
			return ScopeState
		}
		return DefaultScope
	}
	for i := 0; i < len(muts); {
		j := i + 1
		for j < len(muts) && CommitMutationID(muts[j].MutationID) == CommitMutationID(muts[i].MutationID) {
			j++
		}
		group := muts[i:j]
		i = j
		gwo := wo
		gwo.Time = parseTime(group[0].Timestamp)
		gwo.Source = group[0].Source
		gwo.Trailers = append(append(repo.Trailers(nil), wo.Trailers...),
			repo.Trailer{Key: TrailerState, Value: doc.StateID}, repo.Trailer{Key: TrailerImportedMutation, Value: CommitMutationID(group[0].MutationID)})
		nb := 0
		for _, e := range group {
			nb++
			if e.Operation == store.OpRename || (e.VariableName == verbiage.NameFinal && doc.ParentStateID != "") {
				nb++
			}
		}
		m, err := s.importBatch(ctx, doc.StateID, nb, gwo, false, func(apply func(name string, op string, value any, from string) error) error {
			for _, e := range group {
				var value any
				if len(e.NewValue) > 0 {
					v, err := objects.Decode(e.NewValue)
					if err != nil {
						return fmt.Errorf("mutation %s: new_value: %w", e.MutationID, err)
					}
					value = v
				}
				from, _ := e.Metadata["renamed_from"].(string)
				if err := apply(e.VariableName, e.Operation, value, from); err != nil {
					return fmt.Errorf("mutation %s: %w", e.MutationID, err)
				}
			}
			return nil
		}, scopeOf, doc.Variables)
		if errors.Is(err, store.ErrNoChange) {
			continue
		}
		if err != nil {
			return nil, undo(fmt.Errorf("import of %s: %w", doc.StateID, err))
		}
		commits = append(commits, landed{plumbing.NewHash(m.Commit), m.Time})
		last = plumbing.NewHash(m.Commit)
	}
	// Make the variables what the document says they are.
	rwo := wo
	rwo.Message = "import " + doc.StateID + ": variables as exported"
	if doc.Metadata != nil && doc.Metadata.LastUpdatedAt != "" {
		rwo.Time = parseTime(doc.Metadata.LastUpdatedAt)
	}
	rwo.Trailers = append(append(repo.Trailers(nil), wo.Trailers...), repo.Trailer{Key: TrailerState, Value: doc.StateID},
		repo.Trailer{Key: TrailerImportedMutation, Value: objects.NewID(verbiage.PrefixMutation)})
	names := make([]string, 0, len(doc.Variables))
	for n := range doc.Variables {
		if n != verbiage.NamePrompt {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	m, err = s.importBatch(ctx, doc.StateID, len(names)+1, rwo, false, func(apply func(string, string, any, string) error) error {
		for _, n := range names {
			if err := apply(n, "reconcile", doc.Variables[n].Value, ""); err != nil {
				return fmt.Errorf("variable %s: %w", n, err)
			}
		}
		return nil
	}, scopeOf, doc.Variables)
	if err == nil {
		commits = append(commits, landed{plumbing.NewHash(m.Commit), m.Time})
		last = plumbing.NewHash(m.Commit)
	} else if !errors.Is(err, store.ErrNoChange) {
		return nil, undo(err)
	}
	// A state exported as ended (error, cancelled) ends again: the
	// export keeps the status, not when or why.
	if md := doc.Metadata; md != nil && (md.CompletionStatus == StatusError || md.CompletionStatus == StatusCancelled) {
		ewo := wo
		ewo.Time = rwo.Time
		_, em, err := s.End(ctx, doc.StateID, md.CompletionStatus, "imported as "+md.CompletionStatus, ewo)
		if err != nil {
			return nil, undo(fmt.Errorf("import of %s: %w", doc.StateID, err))
		}
		commits = append(commits, landed{plumbing.NewHash(em.Commit), em.Time})
		info.CompletionStatus = md.CompletionStatus
	}
	for _, ck := range cks {
		when := parseTime(ck.Timestamp)
		target := commits[0].hash
		for _, l := range commits {
			if !l.when.After(when) {
				target = l.hash
			}
		}
		id := ck.CheckpointID
		if !verbiage.ValidID(verbiage.PrefixCheckpoint, id) {
			id = ""
		}
		c := &checkpoint.Checkpoint{ID: id, Name: ck.Name, State: doc.StateID, Description: ck.Description, Commit: target, Agent: s.store.Agent(wo.Agent), Time: when}
		signer, err := s.store.SignerFor(c.Agent, wo)
		if err != nil {
			return nil, undo(err)
		}
		c.Sign = store.SignFunc(signer)
		if err := checkpoint.Create(ctx, s.store.Repo(), c); err != nil {
			return nil, undo(fmt.Errorf("import of %s: checkpoint %s: %w", doc.StateID, ck.Name, checkpointErr(err)))
		}
		made = append(made, c)
	}
	return info, nil
}

func parseTime(s string) time.Time {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}
	}
	return t
}

// importBatch applies several variable changes of one state as one commit.
// With target variables (the reconcile step), each set takes the
// document's type and metadata.
// replaceState makes the variables of a state the store holds what doc
// says, in one commit (ImportOptions.Replace).
func (s *States) replaceState(ctx context.Context, doc *Document, wo store.WriteOptions) (*StateInfo, error) {
	id := doc.StateID
	have, err := s.Vars(ctx, id, "", store.ReadOptions{Branch: wo.Branch})
	if err != nil {
		return nil, err
	}
	scopes := map[string]Scope{}
	var gone []string
	for _, v := range have {
		scopes[v.Name] = v.Metadata.Scope
		own := v.Metadata.Scope == ScopeState || v.Metadata.Scope == ScopeTemporary
		if doc.Variables[v.Name] == nil && own && v.Name != verbiage.NamePrompt && v.Name != verbiage.NameFinal {
			gone = append(gone, v.Name)
		}
	}
	scopeOf := func(name string) Scope {
		if v := doc.Variables[name]; v != nil && v.Metadata.Scope != "" {
			return v.Metadata.Scope
		}
		if sc, ok := scopes[name]; ok && sc != "" {
			return sc
		}
		if name == verbiage.NameFinal || strings.HasPrefix(name, "result_state_") {
			return ScopeState
		}
		return DefaultScope
	}
	names := make([]string, 0, len(doc.Variables))
	for n := range doc.Variables {
		if n != verbiage.NamePrompt {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	sort.Strings(gone)
	rwo := wo
	if rwo.Message == "" {
		rwo.Message = "import " + id + " --replace: variables as exported"
	}
	rwo.Trailers = append(append(repo.Trailers(nil), wo.Trailers...), repo.Trailer{Key: TrailerState, Value: id},
		repo.Trailer{Key: TrailerImportedMutation, Value: objects.NewID(verbiage.PrefixMutation)})
	_, err = s.importBatch(ctx, id, len(names)+len(gone)+1, rwo, true, func(apply func(string, string, any, string) error) error {
		for _, n := range gone {
			if err := apply(n, store.OpDelete, nil, ""); err != nil {
				return fmt.Errorf("variable %s: %w", n, err)
			}
		}
		for _, n := range names {
			if err := apply(n, "reconcile", doc.Variables[n].Value, ""); err != nil {
				return fmt.Errorf("variable %s: %w", n, err)
			}
		}
		return nil
	}, scopeOf, doc.Variables)
	if err != nil {
		return nil, err
	}
	return s.Get(ctx, id, store.ReadOptions{Branch: wo.Branch})
}

func (s *States) importBatch(ctx context.Context, id string, nblobs int, wo store.WriteOptions, guarded bool, each func(apply func(name, op string, value any, from string) error) error,
	scopeOf func(string) Scope, target ...map[string]*Variable) (*store.Mutation, error) {
	slots := newBlobSlots(nblobs)
	return s.store.Commit(ctx, wo, "", func(tx *repo.Tx, rec *store.Recorder) error {
		slots.reset(rec)
		h, err := readOpenHeader(tx.ReadFile, id)
		if err != nil {
			return err
		}
		return each(func(name, op string, value any, from string) error {
			if err := verbiage.ValidIdentifier(name); err != nil {
				return err
			}
			scope := scopeOf(name)
			switch op {
			case store.OpDelete:
				v, file, err := findVarTx(tx, h, name, scope)
				if errors.Is(err, store.ErrNotFound) {
					return nil
				}
				if err != nil {
					return err
				}
				if guarded && v.Metadata.ReadOnly {
					return fmt.Errorf("%w: variable %s is read-only (%s)", store.ErrReadOnly, name, file)
				}
				tx.Remove(file)
				rec.Add(store.OpDelete, file, "")
				slots.add(file, nil)
				if v.IsStored() {
					tx.Remove(v.DataPath())
				}
				return nil
			case store.OpRename:
				if from != "" {
					if _, file, err := findVarTx(tx, h, from, scope); err == nil {
						tx.Remove(file)
						slots.add(file, nil)
						defer func(at int, from string) { // record one rename, as `var mv` does
							for i := at; i < len(rec.Changes); i++ {
								if c := rec.Changes[i]; c.Operation == store.OpCreate && strings.HasSuffix(c.File, "/"+name+".json") {
									rec.Changes[i] = store.Change{Operation: store.OpRename, File: from, To: c.File}
								}
							}
						}(len(rec.Changes), file)
					}
				}
			}
			// Replaying history (not guarded) writes what was, read-only
			// or not; replacing a state the store holds is a write like
			// any other, with its guards (read-only, Final, children).
			vo := VarOptions{Scope: scope, importing: !guarded}
			typ := InferType(value)
			if len(target) > 0 {
				if t := target[0][name]; t != nil {
					vo.Description, vo.ReadOnly, vo.source = t.Description, t.Metadata.ReadOnly, t.Source
					if t.Metadata.TTLSeconds != nil {
						d := time.Duration(*t.Metadata.TTLSeconds) * time.Second
						vo.TTL = &d
					}
					if t.Type != "" && CheckType(t.Type, value) == nil {
						typ = t.Type
					}
				}
			}
			if name == verbiage.NamePrompt {
				return nil
			}
			if guarded {
				// A read-only variable the document leaves as it is
				// is no write to it.
				if old, _, err := findVarTx(tx, h, name, scope); err == nil && old.Metadata.ReadOnly {
					if old.IsStored() {
						if data, err := tx.ReadFile(old.DataPath()); err == nil {
							old.Load(data)
						}
					}
					if objects.Equal(old.Value, value) {
						return nil
					}
				}
			}
			_, _, err := s.setVarTx(tx, rec, slots, h, name, value, typ, scope, vo, wo)
			if errors.Is(err, store.ErrNoChange) {
				return nil
			}
			return err
		})
	})
}
