package rlm

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/aiwg/aiwg-state/checkpoint"
	"github.com/aiwg/aiwg-state/internal/errkind"
	"github.com/aiwg/aiwg-state/objects"
	"github.com/aiwg/aiwg-state/repo"
	"github.com/aiwg/aiwg-state/store"
	"github.com/aiwg/aiwg-state/verbiage"
)

// States is the RLM state API of one store (aiwgstate.Store.States):
// states, their variables and Final, checkpoints and rollback, completion
// handlers and their trust on this machine, export and import. Each write
// is one commit.
type States struct{ store *store.Store }

// New is the RLM state API of s.
func New(s *store.Store) *States { return &States{store: s} }

// ErrComplete: Final is already set; a state completes once. It is a
// read-only error (exit 3), so a second agent racing to complete a state
// learns that its answer did not land instead of silently replacing it.
var ErrComplete = fmt.Errorf("state already complete: %w", store.ErrReadOnly)

// Trailers of RLM mutations.
const (
	// TrailerState names the state a mutation belongs to.
	TrailerState = "State"
	// TrailerBlob is "<blob> <path>" for each variable file a mutation
	// writes (a zero blob: removed). `state export` reads old and new values
	// from these blobs directly instead of decoding every commit's tree.
	TrailerBlob = "Blob"
	// TrailerCheckpoint names the checkpoint a rollback restored.
	TrailerCheckpoint = "Checkpoint"
	// TrailerParentEnded names the ended parent a child's Final was not
	// returned to.
	TrailerParentEnded = "Parent-Ended"
	// TrailerImportedMutation keeps a mutation id from an imported
	// document; exports show it in place of the commit's own.
	TrailerImportedMutation = "Imported-Mutation-Id"
)

// InitialCheckpoint is the checkpoint every state starts with.
const InitialCheckpoint = "initial_state"

// StateInit is what a new state starts from.
type StateInit struct {
	Prompt string
	// Session groups states; default: the parent's session, else a new
	// session of this state's own (sess-<same hex as the state>).
	Session string
	// Tree is the task tree (tree-xxxxxxxx); default: the parent's.
	Tree string
	// Parent is the parent state in a task tree.
	Parent          string
	ExecutionConfig map[string]any
	// ID and Time are for importers; empty means a new id and now.
	ID   string
	Time time.Time

	noCheckpoint bool // an import brings its own checkpoints
}

// StateInfo is a state's header with what is derived from it.
type StateInfo struct {
	Header
	CompletionStatus string   `json:"completion_status"`
	Final            any      `json:"final"`
	VariableCount    int      `json:"variable_count"`
	Children         []string `json:"children,omitempty"`
}

// Init creates a state in one commit: its header, prompt (read-only
// from then on) and Final = null; then tags that commit as the state's
// initial checkpoint (the specification's initialize_state).
func (s *States) Init(ctx context.Context, in StateInit, wo store.WriteOptions) (*StateInfo, *store.Mutation, error) {
	id := in.ID
	if id == "" {
		id = objects.NewID(verbiage.PrefixState)
	}
	if !verbiage.ValidID(verbiage.PrefixState, id) {
		return nil, nil, fmt.Errorf("%w: state id %q is not state- and 8 hex digits", store.ErrUsage, id)
	}
	if in.Tree != "" && !verbiage.ValidID(verbiage.PrefixTree, in.Tree) {
		return nil, nil, fmt.Errorf("%w: tree id %q is not tree- and 8 hex digits", store.ErrUsage, in.Tree)
	}
	if in.Session != "" {
		if err := checkSegment("session id", in.Session); err != nil {
			return nil, nil, err
		}
	}
	if in.Parent != "" && !verbiage.ValidID(verbiage.PrefixState, in.Parent) {
		return nil, nil, fmt.Errorf("%w: parent %q is not a state id", store.ErrUsage, in.Parent)
	}
	if err := CheckExecutionConfig(in.ExecutionConfig); err != nil {
		return nil, nil, errkind.Errorf(store.ErrUsage, "%w", err)
	}
	when := in.Time
	if when.IsZero() {
		when = s.store.Now()
	}
	if wo.Time.IsZero() {
		wo.Time = when
	}
	if wo.Message == "" {
		wo.Message = "state init " + id
	}
	wo.Trailers = append(append(repo.Trailers(nil), wo.Trailers...), repo.Trailer{Key: TrailerState, Value: id})
	slots := newBlobSlots(2)
	h := &Header{Version: Version, StateID: id, SessionID: in.Session, TreeID: in.Tree, ParentStateID: in.Parent,
		CreatedAt: Timestamp(when), ExecutionConfig: in.ExecutionConfig}
	m, err := s.store.Commit(ctx, wo, "", func(tx *repo.Tx, rec *store.Recorder) error {
		slots.reset(rec)
		if ok, _ := tx.Exists(HeaderPath(id)); ok {
			return fmt.Errorf("%w: state %s", store.ErrExists, id)
		}
		if in.Parent != "" {
			ph, err := readOpenHeader(tx.ReadFile, in.Parent)
			if err != nil {
				return fmt.Errorf("parent: %w", err)
			}
			if h.SessionID == "" {
				h.SessionID = ph.SessionID
			}
			if h.TreeID == "" {
				h.TreeID = ph.TreeID
			}
		}
		if h.SessionID == "" {
			h.SessionID = "sess-" + strings.TrimPrefix(id, "state-")
		}
		hdr, err := encodeJSON(h)
		if err != nil {
			return err
		}
		if err := tx.WriteFile(HeaderPath(id), hdr); err != nil {
			return err
		}
		rec.Add(store.OpCreate, HeaderPath(id), "")
		dir, _ := h.Dir(ScopeState)
		ts := Timestamp(when)
		src := wo.Source
		if src == "" {
			src = "user_input"
		}
		prompt := &Variable{Name: verbiage.NamePrompt, Value: in.Prompt, Type: TypeText, Source: src, CreatedAt: ts, UpdatedAt: ts,
			Metadata: VarMeta{ReadOnly: true, Scope: ScopeState}}
		final := &Variable{Name: verbiage.NameFinal, Value: nil, Type: TypeNull, CreatedAt: ts, UpdatedAt: ts,
			Metadata: VarMeta{Scope: ScopeState}}
		for _, v := range []*Variable{prompt, final} {
			if err := writeVar(tx, rec, slots, dir, v, store.OpCreate); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	info := &StateInfo{Header: *h, CompletionStatus: StatusIncomplete, VariableCount: 2}
	if in.noCheckpoint {
		return info, m, nil
	}
	c := &checkpoint.Checkpoint{Name: InitialCheckpoint, State: id, Description: "State initialized with user prompt",
		Commit: plumbing.NewHash(m.Commit), Agent: m.Agent, Time: when}
	if signer, err := s.store.SignerFor(m.Agent, wo); err == nil {
		c.Sign = store.SignFunc(signer) // the write itself was signed with it
	}
	if err := checkpoint.Create(ctx, s.store.Repo(), c); err != nil {
		return nil, m, fmt.Errorf("state %s created (commit %s) but its initial checkpoint failed: %w", id, shortID(m.Commit), checkpointErr(err))
	}
	return info, m, nil
}

func checkSegment(what, v string) error {
	if v == "" || strings.Contains(v, "/") {
		return fmt.Errorf("%w: %s %q must be one path segment", store.ErrUsage, what, v)
	}
	if _, err := verbiage.CleanStorePath(v); err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	return nil
}

func shortID(h string) string {
	if len(h) > 12 {
		return h[:12]
	}
	return h
}

// readHeader reads a state's header through read (a transaction's or a
// tree's file reader).
func readHeader(read func(string) ([]byte, error), id string) (*Header, error) {
	if !verbiage.ValidID(verbiage.PrefixState, id) {
		return nil, fmt.Errorf("%w: %q is not a state id (state- and 8 hex digits)", store.ErrUsage, id)
	}
	data, err := read(HeaderPath(id))
	if errors.Is(err, repo.ErrNotFound) {
		return nil, errkind.Errorf(store.ErrNotFound, "no state %s on this branch", id)
	}
	if err != nil {
		return nil, err
	}
	var h Header
	if err := decodeJSON(data, &h); err != nil {
		return nil, fmt.Errorf("%s: %w", HeaderPath(id), err)
	}
	if h.StateID != id {
		return nil, fmt.Errorf("%s names state %q: %w", HeaderPath(id), h.StateID, objects.ErrInvalidJSON)
	}
	return &h, nil
}

// readOpenHeader reads the header of a state whose variables may change:
// one that has not ended with an error or cancelled.
func readOpenHeader(read func(string) ([]byte, error), id string) (*Header, error) {
	h, err := readHeader(read, id)
	if err != nil {
		return nil, err
	}
	if h.CompletionStatus != "" {
		return nil, errkind.Errorf(store.ErrReadOnly, "state %s ended (%s at %s): its variables no longer change (start a new state, or roll back to a checkpoint before the end)", id, h.CompletionStatus, h.EndedAt)
	}
	return h, nil
}

// End ends a state without a Final (the RLM state specification's completion statuses
// error and cancelled): one commit to its header, recording when and why.
// Its variables are read-only from then on; a rollback to a checkpoint
// taken before restores the state as it was, open. A state with a Final
// is complete and cannot end otherwise.
func (s *States) End(ctx context.Context, id, status, reason string, wo store.WriteOptions) (*StateInfo, *store.Mutation, error) {
	if status != StatusError && status != StatusCancelled {
		return nil, nil, fmt.Errorf("%w: a state ends as error or cancelled, not %q (a Final completes it)", store.ErrUsage, status)
	}
	id, _, err := s.stateForWrite(id, wo.Branch)
	if err != nil {
		return nil, nil, err
	}
	now := wo.Time
	if now.IsZero() {
		now = s.store.Now()
	}
	wo.Time = now
	wo.Trailers = append(append(repo.Trailers(nil), wo.Trailers...), repo.Trailer{Key: TrailerState, Value: id})
	var h *Header
	m, err := s.store.Commit(ctx, wo, "state end "+id+": "+status, func(tx *repo.Tx, rec *store.Recorder) error {
		if h, err = readHeader(tx.ReadFile, id); err != nil {
			return err
		}
		if h.CompletionStatus != "" {
			return errkind.Errorf(store.ErrReadOnly, "state %s already ended (%s at %s)", id, h.CompletionStatus, h.EndedAt)
		}
		dir, _ := h.Dir(ScopeState)
		if v, err := readVarTx(tx, VarFile(dir, verbiage.NameFinal)); err != nil {
			return err
		} else if v != nil && v.Value != nil {
			return errkind.Errorf(store.ErrReadOnly, "state %s is complete (its Final is set): it cannot end as %s", id, status)
		}
		h.CompletionStatus, h.EndedAt, h.EndReason = status, Timestamp(now), reason
		b, err := encodeJSON(h)
		if err != nil {
			return err
		}
		if err := tx.WriteFile(HeaderPath(id), b); err != nil {
			return err
		}
		rec.Add(store.OpUpdate, HeaderPath(id), "")
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	info, err := s.Get(ctx, id, store.ReadOptions{At: m.Commit})
	if err != nil {
		return nil, m, err
	}
	return info, m, nil
}

func treeReader(r *repo.Repo, root plumbing.Hash) func(string) ([]byte, error) {
	return func(p string) ([]byte, error) { return r.ReadFileAt(root, p) }
}

// stateAt resolves a state id ("" = the newest state) in a tree.
func (s *States) stateAt(root plumbing.Hash, id string) (*Header, error) {
	if id != "" {
		return readHeader(treeReader(s.store.Repo(), root), id)
	}
	hs, err := s.headers(root)
	if err != nil {
		return nil, err
	}
	if len(hs) == 0 {
		return nil, &store.MissingError{Kind: store.MissingState}
	}
	return hs[len(hs)-1], nil
}

// headers lists the states of a tree, oldest first (by created_at, then
// id). The newest is what commands act on when no state is named.
func (s *States) headers(root plumbing.Hash) ([]*Header, error) {
	es, err := s.store.Repo().ReadDirAt(root, StatesDir)
	if errors.Is(err, repo.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []*Header
	for _, e := range es {
		if !e.IsDir || !verbiage.ValidID(verbiage.PrefixState, e.Name) {
			continue
		}
		h, err := readHeader(treeReader(s.store.Repo(), root), e.Name)
		if err != nil {
			continue // a directory without a header is not a state
		}
		out = append(out, h)
	}
	sort.SliceStable(out, func(i, j int) bool {
		ti, _ := time.Parse(time.RFC3339Nano, out[i].CreatedAt)
		tj, _ := time.Parse(time.RFC3339Nano, out[j].CreatedAt)
		if !ti.Equal(tj) {
			return ti.Before(tj)
		}
		return out[i].StateID < out[j].StateID
	})
	return out, nil
}

// List lists the states on the branch, oldest first.
func (s *States) List(ctx context.Context, ro store.ReadOptions) ([]StateInfo, error) {
	root, err := s.store.Tree(ro)
	if err != nil {
		return nil, err
	}
	hs, err := s.headers(root)
	if err != nil {
		return nil, err
	}
	out := make([]StateInfo, 0, len(hs))
	for _, h := range hs {
		out = append(out, s.info(root, h, hs))
	}
	return out, nil
}

// Get describes one state ("" = the newest).
func (s *States) Get(ctx context.Context, id string, ro store.ReadOptions) (*StateInfo, error) {
	root, err := s.store.Tree(ro)
	if err != nil {
		return nil, err
	}
	h, err := s.stateAt(root, id)
	if err != nil {
		return nil, err
	}
	hs, err := s.headers(root)
	if err != nil {
		return nil, err
	}
	info := s.info(root, h, hs)
	return &info, nil
}

func (s *States) info(root plumbing.Hash, h *Header, all []*Header) StateInfo {
	info := StateInfo{Header: *h, CompletionStatus: cmp.Or(h.CompletionStatus, StatusIncomplete)}
	dir, _ := h.Dir(ScopeState)
	if data, err := s.store.Repo().ReadFileAt(root, VarFile(dir, verbiage.NameFinal)); err == nil {
		if v, err := DecodeVariable(data); err == nil {
			if v.IsStored() {
				if d, err := s.store.Repo().ReadFileAt(root, v.DataPath()); err == nil {
					v.Load(d)
				}
			}
			info.Final = v.Value
			if v.Value != nil {
				info.CompletionStatus = StatusComplete
			}
		}
	}
	vars, _ := s.visible(root, h, "", s.store.Now())
	info.VariableCount = len(vars)
	for _, o := range all {
		if o.ParentStateID == h.StateID {
			info.Children = append(info.Children, o.StateID)
		}
	}
	return info
}

// VarOptions describe a variable write.
type VarOptions struct {
	// Type is declared, or inferred from the value when empty.
	Type Type
	// Scope defaults to session (the specification's default), or temporary when
	// TTL is set. Final always lives in the state's own scope.
	Scope Scope
	// TTL makes a temporary variable invisible TTL after its last write.
	TTL         *time.Duration
	ReadOnly    bool
	Description string

	importing bool // history replay: no read-only or completion guard
	// source, when importing, is the variable's source as exported, which
	// may differ from that of the commit that wrote it.
	source string
}

// VarResult is the outcome of a variable write.
type VarResult struct {
	Mutation *store.Mutation `json:"mutation"`
	Variable Variable        `json:"variable"`
	File     string          `json:"file"`
	// Advice is naming-convention advice (a warning, never an error).
	Advice []string `json:"advice,omitempty"`
}

// SetVar writes one variable of a state ("" = the newest) as one
// commit. The name must be an identifier; prompt and read-only variables
// refuse writes (ErrReadOnly); Final completes the state once (ErrComplete
// after that) and, in a child state, is propagated to the parent in the
// same commit.
func (s *States) SetVar(ctx context.Context, stateID, name string, value any, vo VarOptions, wo store.WriteOptions) (*VarResult, error) {
	if err := verbiage.ValidIdentifier(name); err != nil {
		return nil, err
	}
	if name == verbiage.NamePrompt {
		return nil, fmt.Errorf("%w: variable prompt of a state is set when the state is created and cannot change", store.ErrReadOnly)
	}
	typ := vo.Type
	if typ == "" {
		typ = InferType(value)
	} else if err := CheckType(typ, value); err != nil {
		return nil, fmt.Errorf("%w: variable %s: %v", store.ErrUsage, name, err)
	}
	scope, err := varScope(name, vo)
	if err != nil {
		return nil, err
	}
	id, parent, err := s.stateForWrite(stateID, wo.Branch)
	if err != nil {
		return nil, err
	}
	n := 1
	if name == verbiage.NameFinal && parent != "" {
		n = 2
	}
	wo.Trailers = append(append(repo.Trailers(nil), wo.Trailers...), repo.Trailer{Key: TrailerState, Value: id})
	slots := newBlobSlots(n)
	res := &VarResult{Advice: verbiage.NamingAdvice(name)}
	m, err := s.store.Commit(ctx, wo, "", func(tx *repo.Tx, rec *store.Recorder) error {
		slots.reset(rec)
		h, err := readOpenHeader(tx.ReadFile, id)
		if err != nil {
			return err
		}
		v, file, err := s.setVarTx(tx, rec, slots, h, name, value, typ, scope, vo, wo)
		if err != nil {
			return err
		}
		res.Variable, res.File = *v, file
		return nil
	})
	if err != nil {
		return nil, err
	}
	res.Mutation = m
	return res, nil
}

func varScope(name string, vo VarOptions) (Scope, error) {
	scope := vo.Scope
	if scope != "" {
		if _, err := ParseScope(string(scope)); err != nil {
			return "", fmt.Errorf("%w: %v", store.ErrUsage, err)
		}
	}
	if name == verbiage.NameFinal {
		if scope != "" && scope != ScopeState {
			return "", fmt.Errorf("%w: Final belongs to its state; it takes no scope", store.ErrUsage)
		}
		if vo.TTL != nil {
			return "", fmt.Errorf("%w: Final cannot expire", store.ErrUsage)
		}
		return ScopeState, nil
	}
	if vo.TTL != nil {
		if *vo.TTL < 0 {
			return "", fmt.Errorf("%w: a negative TTL", store.ErrUsage)
		}
		if scope == "" {
			scope = ScopeTemporary
		}
		if scope != ScopeTemporary {
			return "", fmt.Errorf("%w: a TTL is for temporary variables, not %s ones", store.ErrUsage, scope)
		}
	}
	if scope == "" {
		scope = DefaultScope
	}
	return scope, nil
}

// stateForWrite resolves the state id and its parent at the branch head,
// before the write takes the lock: a state's header never changes, so the
// transaction only checks that it still exists.
func (s *States) stateForWrite(id, branch string) (string, string, error) {
	root, err := s.store.Tree(store.ReadOptions{Branch: branch})
	if err != nil {
		return "", "", err
	}
	h, err := s.stateAt(root, id)
	if err != nil {
		return "", "", err
	}
	return h.StateID, h.ParentStateID, nil
}

// setVarTx stages one variable write.
func (s *States) setVarTx(tx *repo.Tx, rec *store.Recorder, slots *blobSlots, h *Header, name string, value any, typ Type, scope Scope, vo VarOptions, wo store.WriteOptions) (*Variable, string, error) {
	dir, err := h.Dir(scope)
	if err != nil {
		return nil, "", fmt.Errorf("%w: %v", store.ErrUsage, err)
	}
	file := VarFile(dir, name)
	now := s.store.Now()
	if !wo.Time.IsZero() {
		now = wo.Time
	}
	old, err := readVarTx(tx, file)
	if err != nil {
		return nil, "", err
	}
	if old != nil && old.Expired(s.store.Now()) {
		old = nil
	}
	op := store.OpCreate
	source := wo.Source
	if vo.source != "" {
		source = vo.source
	}
	v := &Variable{Name: name, Value: value, Type: typ, Description: vo.Description, Source: source,
		CreatedAt: Timestamp(now), UpdatedAt: Timestamp(now), Metadata: VarMeta{ReadOnly: vo.ReadOnly, Scope: scope}}
	if vo.TTL != nil {
		secs := int64(*vo.TTL / time.Second)
		v.Metadata.TTLSeconds = &secs
	}
	if old != nil {
		if old.Metadata.ReadOnly && !vo.importing {
			return nil, "", fmt.Errorf("%w: variable %s is read-only (%s)", store.ErrReadOnly, name, file)
		}
		op = store.OpUpdate
		v.CreatedAt = old.CreatedAt
		if v.Description == "" {
			v.Description = old.Description
		}
		if old.IsStored() {
			data, err := tx.ReadFile(old.DataPath())
			if err != nil {
				return nil, "", fmt.Errorf("variable %s: %w", name, err)
			}
			if err := old.Load(data); err != nil {
				return nil, "", err
			}
		}
		if name == verbiage.NameFinal && old.Value != nil && value != nil && !vo.importing {
			if objects.Equal(old.Value, value) {
				return nil, "", store.ErrNoChange
			}
			return nil, "", fmt.Errorf("%w: %s: Final is already set (to %s); set it to null first to reopen the state", ErrComplete, h.StateID, preview(old.Value))
		}
		if SameContent(old, v) {
			return nil, "", store.ErrNoChange
		}
	} else if err := checkVariableLimit(tx, h, dir, name); err != nil {
		return nil, "", err
	}
	if name == verbiage.NameFinal && value != nil && !vo.importing {
		if err := s.checkChildrenDone(tx, h); err != nil {
			return nil, "", err
		}
	}
	if err := writeVar(tx, rec, slots, dir, v, op); err != nil {
		return nil, "", err
	}
	if name == verbiage.NameFinal && value != nil && h.ParentStateID != "" {
		if err := propagateFinal(tx, rec, slots, h, value, now); err != nil {
			return nil, "", err
		}
	}
	return v, file, nil
}

// checkChildrenDone refuses a parent's Final while a child of it has
// neither completed nor ended (the RLM state specification: "Parent can set Final when all
// children complete"): its result would come back to a parent already
// done.
func (s *States) checkChildrenDone(tx *repo.Tx, h *Header) error {
	root, err := tx.ParentTree()
	if err != nil || root.IsZero() {
		return err
	}
	all, err := s.headers(root)
	if err != nil {
		return err
	}
	var running []string
	for _, c := range all {
		if c.ParentStateID != h.StateID || c.CompletionStatus != "" {
			continue
		}
		dir, _ := c.Dir(ScopeState)
		if v, err := readVarTx(tx, VarFile(dir, verbiage.NameFinal)); err != nil {
			return err
		} else if v == nil || v.Value == nil {
			running = append(running, c.StateID)
		}
	}
	if len(running) > 0 {
		return &ChildrenRunningError{State: h.StateID, Running: running}
	}
	return nil
}

// propagateFinal returns a child's result to its parent, in the child's
// commit (the specification: "Leaf task sets Final → result returned to parent"): the
// parent gets the variable result_<child id> in its own scope.
func propagateFinal(tx *repo.Tx, rec *store.Recorder, slots *blobSlots, h *Header, value any, now time.Time) error {
	ph, err := readHeader(tx.ReadFile, h.ParentStateID)
	if err != nil {
		return fmt.Errorf("propagating Final to the parent: %w", err)
	}
	if ph.CompletionStatus != "" {
		// An ended parent's variables no longer change: the child
		// completes, and its commit says where the result did not go.
		rec.Trailer(TrailerParentEnded, ph.StateID+" ("+ph.CompletionStatus+")")
		return nil
	}
	dir, _ := ph.Dir(ScopeState)
	name := ResultName(h.StateID)
	old, err := readVarTx(tx, VarFile(dir, name))
	if err != nil {
		return err
	}
	v := &Variable{Name: name, Value: value, Type: InferType(value), Source: h.StateID,
		Description: "Final of child state " + h.StateID, CreatedAt: Timestamp(now), UpdatedAt: Timestamp(now),
		Metadata: VarMeta{Scope: ScopeState}}
	op := store.OpCreate
	if old != nil {
		op, v.CreatedAt = store.OpUpdate, old.CreatedAt
	}
	return writeVar(tx, rec, slots, dir, v, op)
}

func preview(v any) string {
	b, _ := objects.Encode(v)
	s := strings.Join(strings.Fields(string(b)), " ")
	if len(s) > 60 {
		s = s[:57] + "..."
	}
	return s
}

func readVarTx(tx *repo.Tx, file string) (*Variable, error) {
	data, err := tx.ReadFile(file)
	if errors.Is(err, repo.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	v, err := DecodeVariable(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	return v, nil
}

// writeVar stages a variable's file, and its .data file when the value is
// large; a .data file the old value had and the new one does not is
// removed.
func writeVar(tx *repo.Tx, rec *store.Recorder, slots *blobSlots, dir string, v *Variable, op string) error {
	file := VarFile(dir, v.Name)
	dataPath := DataFile(dir, v.Name)
	body, data, err := v.Encode(dataPath)
	if err != nil {
		return fmt.Errorf("%w: %v", store.ErrUsage, err)
	}
	if err := tx.WriteFile(file, body); err != nil {
		return err
	}
	rec.Add(op, file, "")
	slots.add(file, body)
	if data != nil {
		if err := tx.WriteFile(dataPath, data); err != nil {
			return err
		}
		rec.Add(op, dataPath, "")
	} else if ok, _ := tx.Exists(dataPath); ok {
		if err := tx.Remove(dataPath); err != nil {
			return err
		}
		rec.Add(store.OpDelete, dataPath, "")
	}
	return nil
}

// checkVariableLimit refuses a new variable in dir when a state that sees
// dir already sees rlm.MaxVariables: the writing state, and, for a shared
// scope (session, tree, global), every other state that shares it. Only
// creations pay for the count.
func checkVariableLimit(tx *repo.Tx, h *Header, dir, name string) error {
	counts := map[string]int{} // variables per directory, each listed once
	sees := func(h *Header) int {
		n := 0
		for _, sd := range h.Dirs() {
			c, ok := counts[sd.Dir]
			if !ok {
				es, _ := tx.ReadDir(sd.Dir)
				for _, e := range es {
					if _, ok := NameOfFile(e.Name); ok && !e.IsDir {
						c++
					}
				}
				counts[sd.Dir] = c
			}
			n += c
		}
		return n
	}
	states := []*Header{h}
	own, _ := h.Dir(ScopeState)
	temp, _ := h.Dir(ScopeTemporary)
	if dir != own && dir != temp {
		es, _ := tx.ReadDir(StatesDir)
		for _, e := range es {
			if !e.IsDir || e.Name == h.StateID {
				continue
			}
			if other, err := readHeader(tx.ReadFile, e.Name); err == nil && seesDir(other, dir) {
				states = append(states, other)
			}
		}
	}
	for _, st := range states {
		if n := sees(st); n >= MaxVariables {
			return &VariableLimitError{State: st.StateID, Seen: n, Limit: MaxVariables, Creating: name}
		}
	}
	return nil
}

func seesDir(h *Header, dir string) bool {
	for _, sd := range h.Dirs() {
		if sd.Dir == dir {
			return true
		}
	}
	return false
}

// blobSlots records a Blob trailer (blob id and path) for each variable
// file a transaction writes, so export reads old and new values straight
// from the blobs. At most n are recorded: the count was fixed before the
// transaction from what the operation writes.
type blobSlots struct {
	rec   *store.Recorder
	n     int
	limit int
}

func newBlobSlots(n int) *blobSlots { return &blobSlots{limit: n} }

// reset binds the slots to a transaction's recorder (a retried
// transaction starts from an empty one).
func (b *blobSlots) reset(rec *store.Recorder) {
	b.rec, b.n = rec, 0
}

func (b *blobSlots) add(path string, data []byte) {
	if b == nil || b.rec == nil || b.n >= b.limit {
		return
	}
	h := plumbing.ZeroHash
	if data != nil {
		h = plumbing.ComputeHash(plumbing.BlobObject, data)
	}
	b.rec.Trailer(TrailerBlob, h.String()+" "+path)
	b.n++
}

// GetOptions say where a variable read looks.
type GetOptions struct {
	store.ReadOptions
	// Scope reads one scope only ("" = resolve temporary → tree →
	// session → global, after the state's own variables).
	Scope Scope
	// Raw returns a large value's reference instead of its content.
	Raw bool
}

// Var reads a variable of a state ("" = the newest). The read writes
// no commit; it counts one access outside the versioned tree, and the
// returned AccessCount includes it. An expired temporary variable is not
// found.
func (s *States) Var(ctx context.Context, stateID, name string, g GetOptions) (*Variable, error) {
	if err := verbiage.ValidIdentifier(name); err != nil {
		return nil, err
	}
	if g.Scope != "" {
		if _, err := ParseScope(string(g.Scope)); err != nil {
			return nil, fmt.Errorf("%w: %v", store.ErrUsage, err)
		}
	}
	root, err := s.store.Tree(g.ReadOptions)
	if err != nil {
		return nil, err
	}
	h, err := s.stateAt(root, stateID)
	if err != nil {
		return nil, err
	}
	v, file, err := s.lookupVar(root, h, name, g.Scope, s.store.Now())
	if err != nil {
		return nil, err
	}
	if v.IsStored() && !g.Raw {
		data, err := s.store.Repo().ReadFileAt(root, v.DataPath())
		if err != nil {
			return nil, fmt.Errorf("variable %s: its value file %s: %w", name, v.DataPath(), err)
		}
		if err := v.Load(data); err != nil {
			return nil, err
		}
	}
	n := s.countAccess(file)
	v.AccessCount = &n
	return v, nil
}

func (s *States) lookupVar(root plumbing.Hash, h *Header, name string, only Scope, now time.Time) (*Variable, string, error) {
	dirs := h.Dirs()
	if only != "" {
		dir, err := h.Dir(only)
		if err != nil {
			return nil, "", fmt.Errorf("%w: %v", store.ErrUsage, err)
		}
		dirs = []ScopeDir{{Scope: only, Dir: dir}}
	}
	for _, sd := range dirs {
		file := VarFile(sd.Dir, name)
		data, err := s.store.Repo().ReadFileAt(root, file)
		if errors.Is(err, repo.ErrNotFound) {
			continue
		}
		if err != nil {
			return nil, "", err
		}
		v, err := DecodeVariable(data)
		if err != nil {
			return nil, "", fmt.Errorf("%s: %w", file, err)
		}
		if v.Expired(now) {
			continue
		}
		v.Metadata.Scope = sd.Scope
		v.file = file
		return v, file, nil
	}
	where := "any scope"
	if only != "" {
		where = "scope " + string(only)
	}
	return nil, "", errkind.Errorf(store.ErrNotFound, "%s has no variable %s in %s", h.StateID, name, where)
}

type visibleVar struct {
	v    *Variable
	file string
	size int64
}

// visible lists the variables a state sees, each name once, resolved in
// scope order (only, when set, restricts to one scope).
func (s *States) visible(root plumbing.Hash, h *Header, only Scope, now time.Time) ([]visibleVar, error) {
	seen := map[string]bool{}
	var out []visibleVar
	for _, sd := range h.Dirs() {
		if only != "" && sd.Scope != only {
			continue
		}
		es, err := s.store.Repo().ReadDirAt(root, sd.Dir)
		if err != nil {
			continue
		}
		for _, e := range es {
			name, ok := NameOfFile(e.Name)
			if !ok || e.IsDir || seen[name] {
				continue
			}
			file := VarFile(sd.Dir, name)
			data, err := s.store.Repo().ReadBlob(e.Hash)
			if err != nil {
				return nil, err
			}
			v, err := DecodeVariable(data)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", file, err)
			}
			if v.Expired(now) {
				continue
			}
			seen[name] = true
			v.Metadata.Scope = sd.Scope
			v.file = file
			out = append(out, visibleVar{v: v, file: file, size: int64(len(data))})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].v.Name < out[j].v.Name })
	return out, nil
}

// Vars lists the variables a state sees (one scope when scope is
// set), with their access counts; large values show as their reference.
func (s *States) Vars(ctx context.Context, stateID string, scope Scope, ro store.ReadOptions) ([]Variable, error) {
	if scope != "" {
		if _, err := ParseScope(string(scope)); err != nil {
			return nil, fmt.Errorf("%w: %v", store.ErrUsage, err)
		}
	}
	root, err := s.store.Tree(ro)
	if err != nil {
		return nil, err
	}
	h, err := s.stateAt(root, stateID)
	if err != nil {
		return nil, err
	}
	vs, err := s.visible(root, h, scope, s.store.Now())
	if err != nil {
		return nil, err
	}
	out := make([]Variable, len(vs))
	for i, x := range vs {
		n := s.peekAccess(x.file)
		x.v.AccessCount = &n
		out[i] = *x.v
	}
	return out, nil
}

// DeleteVar removes a variable (the first one found in resolution
// order, or the one of scope) in one commit.
func (s *States) DeleteVar(ctx context.Context, stateID, name string, scope Scope, wo store.WriteOptions) (*store.Mutation, error) {
	if err := verbiage.ValidIdentifier(name); err != nil {
		return nil, err
	}
	if name == verbiage.NamePrompt || name == verbiage.NameFinal {
		return nil, fmt.Errorf("%w: variable %s of a state cannot be removed (set Final to null to reopen a state)", store.ErrReadOnly, name)
	}
	id, _, err := s.stateForWrite(stateID, wo.Branch)
	if err != nil {
		return nil, err
	}
	wo.Trailers = append(append(repo.Trailers(nil), wo.Trailers...), repo.Trailer{Key: TrailerState, Value: id})
	slots := newBlobSlots(1)
	return s.store.Commit(ctx, wo, "", func(tx *repo.Tx, rec *store.Recorder) error {
		slots.reset(rec)
		h, err := readOpenHeader(tx.ReadFile, id)
		if err != nil {
			return err
		}
		v, file, err := findVarTx(tx, h, name, scope)
		if err != nil {
			return err
		}
		if v.Metadata.ReadOnly {
			return fmt.Errorf("%w: variable %s is read-only (%s)", store.ErrReadOnly, name, file)
		}
		if err := tx.Remove(file); err != nil {
			return err
		}
		rec.Add(store.OpDelete, file, "")
		slots.add(file, nil)
		if v.IsStored() {
			if ok, _ := tx.Exists(v.DataPath()); ok {
				tx.Remove(v.DataPath())
				rec.Add(store.OpDelete, v.DataPath(), "")
			}
		}
		return nil
	})
}

func findVarTx(tx *repo.Tx, h *Header, name string, scope Scope) (*Variable, string, error) {
	for _, sd := range h.Dirs() {
		if scope != "" && sd.Scope != scope {
			continue
		}
		file := VarFile(sd.Dir, name)
		v, err := readVarTx(tx, file)
		if err != nil {
			return nil, "", err
		}
		if v != nil {
			v.Metadata.Scope = sd.Scope
			return v, file, nil
		}
	}
	return nil, "", errkind.Errorf(store.ErrNotFound, "%s has no variable %s", h.StateID, name)
}

// RenameVar renames a variable within its scope in one commit; it
// refuses to overwrite.
func (s *States) RenameVar(ctx context.Context, stateID, oldName, newName string, scope Scope, wo store.WriteOptions) (*store.Mutation, error) {
	for _, n := range []string{oldName, newName} {
		if err := verbiage.ValidIdentifier(n); err != nil {
			return nil, err
		}
		if n == verbiage.NamePrompt || n == verbiage.NameFinal {
			return nil, fmt.Errorf("%w: variable %s of a state cannot be renamed", store.ErrReadOnly, n)
		}
	}
	if oldName == newName {
		return nil, store.ErrNoChange
	}
	id, _, err := s.stateForWrite(stateID, wo.Branch)
	if err != nil {
		return nil, err
	}
	wo.Trailers = append(append(repo.Trailers(nil), wo.Trailers...), repo.Trailer{Key: TrailerState, Value: id})
	slots := newBlobSlots(2)
	return s.store.Commit(ctx, wo, "", func(tx *repo.Tx, rec *store.Recorder) error {
		slots.reset(rec)
		h, err := readOpenHeader(tx.ReadFile, id)
		if err != nil {
			return err
		}
		v, file, err := findVarTx(tx, h, oldName, scope)
		if err != nil {
			return err
		}
		if v.Metadata.ReadOnly {
			return fmt.Errorf("%w: variable %s is read-only (%s)", store.ErrReadOnly, oldName, file)
		}
		dir := strings.TrimSuffix(file, "/"+oldName+".json")
		to := VarFile(dir, newName)
		if ok, _ := tx.Exists(to); ok {
			return fmt.Errorf("%w: variable %s (%s); rename refuses to overwrite", store.ErrExists, newName, to)
		}
		if v.IsStored() {
			data, err := tx.ReadFile(v.DataPath())
			if err != nil {
				return err
			}
			if err := v.Load(data); err != nil {
				return err
			}
			tx.Remove(DataFile(dir, oldName))
		}
		v.Name = newName
		body, data, err := v.Encode(DataFile(dir, newName))
		if err != nil {
			return err
		}
		if err := tx.Remove(file); err != nil {
			return err
		}
		if err := tx.WriteFile(to, body); err != nil {
			return err
		}
		if data != nil {
			if err := tx.WriteFile(DataFile(dir, newName), data); err != nil {
				return err
			}
		}
		rec.Changes = append(rec.Changes, store.Change{Operation: store.OpRename, File: file, To: to})
		slots.add(file, nil)
		slots.add(to, body)
		return nil
	})
}

// SetFinal completes a state: Final = value (see SetVar).
func (s *States) SetFinal(ctx context.Context, stateID string, value any, wo store.WriteOptions) (*VarResult, error) {
	return s.SetVar(ctx, stateID, verbiage.NameFinal, value, VarOptions{}, wo)
}

// RemoveExpired deletes every temporary variable whose TTL has run out, in
// all states, in one commit, and returns the removed variable files
// (ErrNoChange when none has expired). `aiwg-state gc` calls it.
func (s *States) RemoveExpired(ctx context.Context, wo store.WriteOptions) (*store.Mutation, []string, error) {
	var removed []string
	if wo.Message == "" {
		wo.Message = "remove expired temporary variables"
	}
	m, err := s.store.Commit(ctx, wo, "", func(tx *repo.Tx, rec *store.Recorder) error {
		removed = removed[:0]
		now := s.store.Now()
		states, err := tx.ReadDir("temp")
		if errors.Is(err, repo.ErrNotFound) {
			return store.ErrNoChange
		}
		if err != nil {
			return err
		}
		for _, st := range states {
			dir := "temp/" + st.Name + "/variables"
			es, err := tx.ReadDir(dir)
			if err != nil {
				continue
			}
			for _, e := range es {
				name, ok := NameOfFile(e.Name)
				if !ok {
					continue
				}
				file := VarFile(dir, name)
				v, err := readVarTx(tx, file)
				if err != nil || v == nil || !v.Expired(now) {
					continue
				}
				if err := tx.Remove(file); err != nil {
					return err
				}
				rec.Add(store.OpDelete, file, "")
				if ok, _ := tx.Exists(DataFile(dir, name)); ok {
					tx.Remove(DataFile(dir, name))
					rec.Add(store.OpDelete, DataFile(dir, name), "")
				}
				removed = append(removed, file)
			}
		}
		if len(removed) == 0 {
			return store.ErrNoChange
		}
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	return m, removed, nil
}

// Access counts live under the git directory, one file per variable file
// whose size is the count: a read appends one byte (O_APPEND, atomic
// between processes), so counting never commits and costs one stat.
func (s *States) accessFile(file string) string {
	return filepath.Join(s.store.Repo().Dir(), "aiwg", "access", filepath.FromSlash(file)+".count")
}

func (s *States) countAccess(file string) int64 {
	p := s.accessFile(file)
	f, err := os.OpenFile(p, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if errors.Is(err, fs.ErrNotExist) {
		if os.MkdirAll(filepath.Dir(p), 0o755) == nil {
			f, err = os.OpenFile(p, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
		}
	}
	if err != nil {
		return s.peekAccess(file) // a read-only store still reads
	}
	f.Write([]byte{'.'})
	fi, err := f.Stat()
	f.Close()
	if err != nil {
		return 0
	}
	return fi.Size()
}

func (s *States) peekAccess(file string) int64 {
	fi, err := os.Stat(s.accessFile(file))
	if err != nil {
		return 0
	}
	return fi.Size()
}
