package trajectory

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/aiwg/aiwg-state/objects"
	"github.com/aiwg/aiwg-state/repo"
	"github.com/aiwg/aiwg-state/store"
	"github.com/aiwg/aiwg-state/verbiage"
)

// Trajectories is the trajectory API of one store
// (aiwgstate.Store.Trajectories): start, record, complete, read, report,
// analyze, prune and import trajectories, each write one commit.
type Trajectories struct{ store *store.Store }

// New is the trajectory API of s.
func New(s *store.Store) *Trajectories { return &Trajectories{store: s} }

// Dir holds one directory per trajectory: trajectory.json (the
// specification's document without its iterations), iterations/0001.json, … (one
// file per iteration, so recording one adds a file and touches nothing
// another writer touches) and report.md. The specification's index.json is not
// stored: it is derived from these on demand (List), so agents
// recording trajectories on different branches never conflict over it.
const Dir = "trajectories"

// Trailers linking a commit to a trajectory and one of its iterations.
// Every trajectory commit carries Trajectory; iteration commits, and any
// write made during an iteration (see TrajectoryTrailers), carry Iteration.
const (
	TrailerTrajectory    = "Trajectory"
	TrailerIteration     = "Iteration"
	TrailerStateSnapshot = "State-Snapshot"
	TrailerImportedFrom  = "Imported-From"
)

// trajectorySchema compiles the embedded schema once per process.
var trajectorySchema = sync.OnceValues(func() (*Schema, error) {
	return CompileSchema(SchemaJSON())
})

func trajDir(id string) string        { return Dir + "/" + id }
func trajHeaderPath(id string) string { return trajDir(id) + "/trajectory.json" }
func trajItersDir(id string) string   { return trajDir(id) + "/iterations" }
func trajReportPath(id string) string { return trajDir(id) + "/report.md" }

func checkTrajID(id string) error {
	if !verbiage.ValidID(IDPrefix, id) {
		return fmt.Errorf("%w: %q is not a trajectory id (want traj- and 8 hex digits, e.g. traj-1a2b3c4d)", store.ErrUsage, id)
	}
	return nil
}

// Trailers are the trailers that link a write to iteration iter
// of trajectory id (iter 0: to the trajectory only). Any mutation carries
// them through WriteOptions.Trailers, so `log` and `blame` of what it set
// can name the iteration.
func Trailers(id string, iter int) (repo.Trailers, error) {
	if err := checkTrajID(id); err != nil {
		return nil, err
	}
	if iter < 0 || iter > MaxIterations {
		return nil, fmt.Errorf("%w: iteration %d: want 1 to %d", store.ErrUsage, iter, MaxIterations)
	}
	t := repo.Trailers{{Key: TrailerTrajectory, Value: id}}
	if iter > 0 {
		t = append(t, repo.Trailer{Key: TrailerIteration, Value: strconv.Itoa(iter)})
	}
	return t, nil
}

// Guard refuses a write linked (Trajectory trailer) to a trajectory the
// branch does not hold, after the write: a link to no run would send log's
// readers after nothing, most likely a mistyped or stale id. It is a
// store.Guard.
func Guard(_ *store.Store, tx *repo.Tx, wo store.WriteOptions, _ []store.Change) error {
	for _, t := range wo.Trailers {
		if t.Key != TrailerTrajectory {
			continue
		}
		if _, err := tx.ReadFile(trajHeaderPath(t.Value)); errors.Is(err, repo.ErrNotFound) {
			return &store.MissingError{Kind: store.MissingTrajectory, Name: t.Value}
		} else if err != nil {
			return err
		}
	}
	return nil
}

// Link reads the link trailers of a mutation; ok is false when it
// carries none.
func Link(m *store.Mutation) (id string, iter int, ok bool) {
	for _, t := range m.Trailers {
		switch {
		case t.Key == TrailerTrajectory && id == "":
			id = t.Value
		case t.Key == TrailerIteration && iter == 0:
			iter, _ = strconv.Atoi(t.Value)
		}
	}
	return id, iter, id != ""
}

func trajWithTrailers(wo store.WriteOptions, extra ...repo.Trailer) store.WriteOptions {
	wo.Trailers = append(append(repo.Trailers(nil), wo.Trailers...), extra...)
	return wo
}

func trajDecodeObject(data []byte, what string) (map[string]any, error) {
	if len(data) == 0 {
		return nil, nil
	}
	v, err := objects.Decode(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("%w: %s must be a JSON object", objects.ErrInvalidJSON, what)
	}
	return m, nil
}

// StartInput describes a new trajectory (`traj start`).
type StartInput struct {
	TaskType, Prompt string
	// Task is the task node id (task-xxxxxxxx); a new one when empty, since
	// the schema requires it.
	Task, Tree, State, Parent, Model string
	// Extra is an optional JSON object of further header fields
	// ({"task_context": {"depth": 1}, "metadata": {"temperature": 0.2}}).
	Extra []byte
}

// Start creates trajectories/<id>/trajectory.json in one commit
// and returns the new id.
func (s *Trajectories) Start(ctx context.Context, st StartInput, wo store.WriteOptions) (string, *store.Mutation, error) {
	extra, err := trajDecodeObject(st.Extra, "trajectory fields")
	if err != nil {
		return "", nil, err
	}
	sch, err := trajectorySchema()
	if err != nil {
		return "", nil, err
	}
	id := objects.NewID(IDPrefix)
	task := st.Task
	if task == "" && Str(extra, "task_context", "task_id") == "" {
		task = objects.NewID("task")
	}
	when := wo.Time
	if when.IsZero() {
		when = s.store.Now()
	}
	header := NewHeader(Start{
		ID: id, TaskID: task, TaskType: st.TaskType, Prompt: st.Prompt,
		TreeID: st.Tree, StateID: st.State, ParentTaskID: st.Parent, Model: st.Model,
		Extra: extra, Now: when,
	})
	if err := sch.ValidateTrajectory(header); err != nil {
		return "", nil, err
	}
	data, err := objects.Encode(header)
	if err != nil {
		return "", nil, err
	}
	wo = trajWithTrailers(wo, repo.Trailer{Key: TrailerTrajectory, Value: id})
	m, err := s.store.Commit(ctx, wo, "traj start "+id+": "+Str(header, "task_context", "task_type"), func(tx *repo.Tx, rec *store.Recorder) error {
		if ok, err := tx.Exists(trajHeaderPath(id)); err != nil {
			return err
		} else if ok {
			return fmt.Errorf("%w: trajectory %s", store.ErrExists, id)
		}
		if err := tx.WriteFile(trajHeaderPath(id), data); err != nil {
			return err
		}
		rec.Add(store.OpCreate, trajHeaderPath(id), "")
		return nil
	})
	if err != nil {
		return "", nil, err
	}
	return id, m, nil
}

// IterationInput is one Thought-Action-Observation iteration to record.
type IterationInput struct {
	// JSON is an optional iteration object (the specification's TAOIteration); Fields
	// given override its members.
	JSON   []byte
	Fields IterationFields
	// StateSnapshot is a revision of the store whose state the iteration
	// saw; it is recorded as state_snapshot.commit and a State-Snapshot
	// trailer.
	StateSnapshot string
}

// RecordIteration appends one iteration to a running trajectory as one
// commit adding trajectories/<id>/iterations/NNNN.json, and returns its
// number. The number is chosen inside the transaction, under the branch
// lock, so concurrent writers get 1, 2, 3… without gaps or duplicates. An
// iteration_number given in the input is an expectation: a mismatch fails
// with ErrStale instead of recording the step twice.
func (s *Trajectories) RecordIteration(ctx context.Context, id string, in IterationInput, wo store.WriteOptions) (int, *store.Mutation, error) {
	if err := checkTrajID(id); err != nil {
		return 0, nil, err
	}
	base, err := trajDecodeObject(in.JSON, "iteration")
	if err != nil {
		return 0, nil, err
	}
	sch, err := trajectorySchema()
	if err != nil {
		return 0, nil, err
	}
	var snapshot string
	if in.StateSnapshot != "" {
		h, err := s.store.Resolve(in.StateSnapshot, wo.Branch)
		if err != nil {
			return 0, nil, fmt.Errorf("state snapshot: %w", err)
		}
		snapshot = h.String()
		if base == nil {
			base = map[string]any{}
		}
		snap, _ := base["state_snapshot"].(map[string]any)
		if snap == nil {
			snap = map[string]any{}
		}
		snap["commit"] = snapshot
		base["state_snapshot"] = snap
	}
	when := wo.Time
	if when.IsZero() {
		when = s.store.Now()
	}
	// Validate before taking the lock, so bad input never holds up other
	// writers; the number is provisional here.
	provisional := 1
	if g, ok := base["iteration_number"]; ok {
		if n, err := strconv.Atoi(fmt.Sprint(g)); err == nil && n >= 1 {
			provisional = n
		}
	}
	probe, err := BuildIteration(base, in.Fields, provisional, when)
	var ne *NumberError
	if errors.As(err, &ne) {
		// Only an iteration_number that is not a positive integer gets here.
		return 0, nil, fmt.Errorf("iteration of %s: %w", id, &ValidationError{Field: "iteration_number", Reason: "must be a positive integer"})
	}
	if err != nil {
		return 0, nil, fmt.Errorf("%s: %w", id, err)
	}
	if err := sch.ValidateIteration(probe); err != nil {
		return 0, nil, fmt.Errorf("iteration of %s: %w", id, err)
	}

	var number int
	var data []byte
	extra := repo.Trailers{{Key: TrailerTrajectory, Value: id}}
	if snapshot != "" {
		extra = append(extra, repo.Trailer{Key: TrailerStateSnapshot, Value: snapshot})
	}
	wo = trajWithTrailers(wo, extra...)
	build := func(tx *repo.Tx, rec *store.Recorder) error {
		header, err := s.readTrajHeaderTx(tx, id)
		if err != nil {
			return err
		}
		if Completed(header) {
			return fmt.Errorf("%w: trajectory %s is completed (%s); start a new one", store.ErrReadOnly, id, Str(header, "outcome", "status"))
		}
		entries, err := s.trajIterationEntries(tx, id)
		if err != nil {
			return err
		}
		number = len(entries) + 1
		if number > MaxIterations {
			return fmt.Errorf("%w: trajectory %s already has %d iterations, the most one trajectory may record (a limit of the RLM trajectories specification)", store.ErrLimit, id, MaxIterations)
		}
		it, err := BuildIteration(base, in.Fields, number, when)
		if errors.As(err, &ne) {
			return fmt.Errorf("%s: %w: %v", id, repo.ErrStale, err)
		}
		if err != nil {
			return err
		}
		if data, err = objects.Encode(it); err != nil {
			return err
		}
		if err := s.checkTrajSize(tx, id, entries, int64(len(data))); err != nil {
			return err
		}
		file := trajItersDir(id) + "/" + IterationName(number)
		if err := tx.WriteFile(file, data); err != nil {
			return err
		}
		rec.Trailer(TrailerIteration, strconv.Itoa(number)) // the number chosen under the lock
		rec.Add(store.OpCreate, file, "")
		return nil
	}
	m, err := s.store.Commit(ctx, wo, "", build)
	if err != nil {
		return 0, nil, err
	}
	return number, m, nil
}

// readTrajHeaderTx reads a trajectory's header inside a transaction.
func (s *Trajectories) readTrajHeaderTx(tx *repo.Tx, id string) (map[string]any, error) {
	data, err := tx.ReadFile(trajHeaderPath(id))
	if errors.Is(err, repo.ErrNotFound) {
		return nil, fmt.Errorf("trajectory %s: %w", id, store.ErrNotFound)
	}
	if err != nil {
		return nil, err
	}
	return trajDecodeObject(data, trajHeaderPath(id))
}

// trajIterationEntries lists a trajectory's iteration files as of the
// transaction's parent, in order, checking they are numbered without gaps.
func (s *Trajectories) trajIterationEntries(tx *repo.Tx, id string) ([]repo.DirEntry, error) {
	root, err := s.trajParentTree(tx)
	if err != nil {
		return nil, err
	}
	return s.trajIterationEntriesAt(root, id)
}

func (s *Trajectories) trajParentTree(tx *repo.Tx) (plumbing.Hash, error) {
	if tx.Parent().IsZero() {
		return plumbing.ZeroHash, nil
	}
	c, err := s.store.Repo().ReadCommit(tx.Parent())
	if err != nil {
		return plumbing.ZeroHash, err
	}
	return c.Tree, nil
}

func (s *Trajectories) trajIterationEntriesAt(root plumbing.Hash, id string) ([]repo.DirEntry, error) {
	if root.IsZero() {
		return nil, nil
	}
	es, err := s.store.Repo().ReadDirAt(root, trajItersDir(id))
	if errors.Is(err, repo.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	out := es[:0:0]
	for _, e := range es {
		n, ok := ParseIterationName(e.Name)
		if !ok || e.IsDir {
			continue
		}
		if n != len(out)+1 {
			return nil, fmt.Errorf("%w: trajectory %s: iteration files skip from %d to %d; the store numbers them without gaps, so something outside it removed one",
				ErrInvalid, id, len(out), n)
		}
		out = append(out, e)
	}
	return out, nil
}

// checkTrajSize enforces the specification's 10 MB per trajectory over everything
// stored for it: header, iterations and report, with the write in hand.
func (s *Trajectories) checkTrajSize(tx *repo.Tx, id string, iterations []repo.DirEntry, adding int64) error {
	total := adding
	for _, e := range iterations {
		n, err := s.store.Repo().ObjectSize(e.Hash)
		if err != nil {
			return err
		}
		total += n
	}
	for _, f := range []string{trajHeaderPath(id), trajReportPath(id)} {
		if data, err := tx.ReadFile(f); err == nil {
			total += int64(len(data))
		}
	}
	if total > MaxBytes {
		return fmt.Errorf("%w: trajectory %s would hold %d bytes; a trajectory holds at most %d (10 MB, a limit of the RLM trajectories specification)", store.ErrLimit, id, total, MaxBytes)
	}
	return nil
}

// readTrajIterationsAt decodes a trajectory's iterations at a tree.
func (s *Trajectories) readTrajIterationsAt(root plumbing.Hash, id string) ([]map[string]any, []repo.DirEntry, error) {
	es, err := s.trajIterationEntriesAt(root, id)
	if err != nil {
		return nil, nil, err
	}
	out := make([]map[string]any, len(es))
	for i, e := range es {
		data, err := s.store.Repo().ReadBlob(e.Hash)
		if err != nil {
			return nil, nil, err
		}
		if out[i], err = trajDecodeObject(data, trajItersDir(id)+"/"+e.Name); err != nil {
			return nil, nil, err
		}
	}
	return out, es, nil
}

func (s *Trajectories) readTrajHeaderAt(root plumbing.Hash, id string) (map[string]any, error) {
	data, err := s.store.Repo().ReadFileAt(root, trajHeaderPath(id))
	if errors.Is(err, repo.ErrNotFound) {
		return nil, fmt.Errorf("trajectory %s: %w", id, store.ErrNotFound)
	}
	if err != nil {
		return nil, err
	}
	return trajDecodeObject(data, trajHeaderPath(id))
}

// CompletionInput is what `traj complete` records.
type CompletionInput struct {
	Status, Final, Reason string
	// Extra is an optional JSON object of outcome, metadata and
	// quality_metrics fields, kept over what the store computes
	// ({"quality_metrics": {"overall_quality": 0.9, "lessons_learned": […]}}).
	Extra []byte
}

// Complete writes the outcome, the metadata totals and the
// computable quality metrics into trajectory.json, after validating the
// whole document, in one commit.
func (s *Trajectories) Complete(ctx context.Context, id string, c CompletionInput, wo store.WriteOptions) (*store.Mutation, error) {
	if err := checkTrajID(id); err != nil {
		return nil, err
	}
	extra, err := trajDecodeObject(c.Extra, "completion fields")
	if err != nil {
		return nil, err
	}
	if c.Status == "" && Str(extra, "outcome", "status") == "" {
		return nil, fmt.Errorf("%w: completing a trajectory needs a status (success, failure, partial_success, timeout, cancelled or error)", store.ErrUsage)
	}
	sch, err := trajectorySchema()
	if err != nil {
		return nil, err
	}
	when := wo.Time
	if when.IsZero() {
		when = s.store.Now()
	}
	wo = trajWithTrailers(wo, repo.Trailer{Key: TrailerTrajectory, Value: id})
	status := c.Status
	if status == "" {
		status = Str(extra, "outcome", "status")
	}
	return s.store.Commit(ctx, wo, "traj complete "+id+": "+status, func(tx *repo.Tx, rec *store.Recorder) error {
		header, err := s.readTrajHeaderTx(tx, id)
		if err != nil {
			return err
		}
		if Completed(header) {
			return fmt.Errorf("%w: trajectory %s is already completed (%s)", store.ErrReadOnly, id, Str(header, "outcome", "status"))
		}
		root, err := s.trajParentTree(tx)
		if err != nil {
			return err
		}
		its, es, err := s.readTrajIterationsAt(root, id)
		if err != nil {
			return err
		}
		done := Complete(header, its, Completion{Status: c.Status, FinalResult: c.Final, Reason: c.Reason, Extra: extra, Now: when})
		if err := sch.ValidateTrajectory(Assemble(done, its)); err != nil {
			return fmt.Errorf("trajectory %s: %w", id, err)
		}
		data, err := objects.Encode(done)
		if err != nil {
			return err
		}
		if err := tx.WriteFile(trajHeaderPath(id), data); err != nil {
			return err
		}
		if err := s.checkTrajSize(tx, id, es, 0); err != nil {
			return err
		}
		rec.Add(store.OpUpdate, trajHeaderPath(id), "")
		return nil
	})
}

// Get returns the specification's document of a trajectory (header and
// iterations assembled), as of ro.
func (s *Trajectories) Get(ctx context.Context, id string, ro store.ReadOptions) (map[string]any, error) {
	if err := checkTrajID(id); err != nil {
		return nil, err
	}
	root, err := s.store.Tree(ro)
	if err != nil {
		return nil, err
	}
	header, err := s.readTrajHeaderAt(root, id)
	if err != nil {
		return nil, err
	}
	its, _, err := s.readTrajIterationsAt(root, id)
	if err != nil {
		return nil, err
	}
	return Assemble(header, its), nil
}

// Filter narrows List.
type Filter struct {
	TaskType string
	// Status is an outcome status, or "running" for trajectories without
	// one.
	Status string
	// Since keeps trajectories started at or after it.
	Since time.Time
}

// List is the specification's trajectory index, derived from the tree:
// one summary per trajectory, oldest start first.
func (s *Trajectories) List(ctx context.Context, f Filter, ro store.ReadOptions) ([]Summary, error) {
	root, err := s.store.Tree(ro)
	if err != nil {
		return nil, err
	}
	out := []Summary{}
	keep := AnalyzeOptions{TaskType: f.TaskType, Since: f.Since}
	err = s.eachTrajectory(ctx, root, func(id string, header map[string]any) error {
		if !keep.Keep(header, nil) {
			return nil
		}
		es, err := s.trajIterationEntriesAt(root, id)
		if err != nil {
			return err
		}
		sum := Summarize(header, len(es))
		if f.Status != "" && sum.Status != f.Status {
			return nil
		}
		out = append(out, sum)
		return nil
	})
	sort.SliceStable(out, func(i, j int) bool {
		if !out[i].StartedAt.Equal(out[j].StartedAt) {
			return out[i].StartedAt.Before(out[j].StartedAt)
		}
		return out[i].ID < out[j].ID
	})
	return out, err
}

// eachTrajectory calls fn for every trajectory directory with a header.
func (s *Trajectories) eachTrajectory(ctx context.Context, root plumbing.Hash, fn func(id string, header map[string]any) error) error {
	es, err := s.store.Repo().ReadDirAt(root, Dir)
	if errors.Is(err, repo.ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	for _, e := range es {
		if err := ctx.Err(); err != nil {
			return err
		}
		if !e.IsDir || !verbiage.ValidID(IDPrefix, e.Name) {
			continue
		}
		header, err := s.readTrajHeaderAt(root, e.Name)
		if errors.Is(err, store.ErrNotFound) {
			continue
		}
		if err != nil {
			return err
		}
		if err := fn(e.Name, header); err != nil {
			return err
		}
	}
	return nil
}

// WriteReport renders report.md for a trajectory and commits it
// beside trajectory.json; it returns the report.
func (s *Trajectories) WriteReport(ctx context.Context, id string, wo store.WriteOptions) ([]byte, *store.Mutation, error) {
	if err := checkTrajID(id); err != nil {
		return nil, nil, err
	}
	var report []byte
	wo = trajWithTrailers(wo, repo.Trailer{Key: TrailerTrajectory, Value: id})
	m, err := s.store.Commit(ctx, wo, "traj report "+id, func(tx *repo.Tx, rec *store.Recorder) error {
		header, err := s.readTrajHeaderTx(tx, id)
		if err != nil {
			return err
		}
		root, err := s.trajParentTree(tx)
		if err != nil {
			return err
		}
		its, es, err := s.readTrajIterationsAt(root, id)
		if err != nil {
			return err
		}
		report = Report(Assemble(header, its))
		op := store.OpCreate
		if ok, _ := tx.Exists(trajReportPath(id)); ok {
			op = store.OpUpdate
		}
		if err := tx.WriteFile(trajReportPath(id), report); err != nil {
			return err
		}
		if err := s.checkTrajSize(tx, id, es, 0); err != nil {
			return err
		}
		rec.Add(op, trajReportPath(id), "")
		return nil
	})
	return report, m, err
}

// Analyze computes the learning patterns of the RLM trajectories specification over all
// trajectories at ro.
func (s *Trajectories) Analyze(ctx context.Context, o AnalyzeOptions, ro store.ReadOptions) (Analysis, error) {
	root, err := s.store.Tree(ro)
	if err != nil {
		return Analysis{}, err
	}
	var runs []Run
	err = s.eachTrajectory(ctx, root, func(id string, header map[string]any) error {
		// Filter on the header first: a run left out costs no iteration
		// reads (only an undated one needs its iterations to be judged).
		if o.TaskType != "" && Str(header, "task_context", "task_type") != o.TaskType {
			return nil
		}
		its, _, err := s.readTrajIterationsAt(root, id)
		if err != nil {
			return err
		}
		runs = append(runs, Run{Header: header, Iterations: its})
		return nil
	})
	if err != nil {
		return Analysis{}, err
	}
	return Analyze(runs, o), nil
}

// Prune removes, in one commit, every trajectory whose last
// activity (completion, start or iteration time, else the time of the last
// commit naming it in a Trajectory trailer) is older than olderThan.
// History keeps them: `git show REV:trajectories/<id>/trajectory.json`.
// It returns the pruned ids; ErrNoChange when none is old enough.
func (s *Trajectories) Prune(ctx context.Context, olderThan time.Duration, wo store.WriteOptions) ([]string, *store.Mutation, error) {
	if olderThan <= 0 {
		return nil, nil, fmt.Errorf("%w: prune needs a positive age", store.ErrUsage)
	}
	now := wo.Time
	if now.IsZero() {
		now = s.store.Now()
	}
	cutoff := now.Add(-olderThan)
	var pruned []string
	m, err := s.store.Commit(ctx, wo, "", func(tx *repo.Tx, rec *store.Recorder) error {
		pruned = nil
		root, err := s.trajParentTree(tx)
		if err != nil || root.IsZero() {
			return err
		}
		var undated []string
		err = s.eachTrajectory(ctx, root, func(id string, header map[string]any) error {
			last, ok := LastActivity(header, nil)
			if !ok {
				its, _, err := s.readTrajIterationsAt(root, id)
				if err != nil {
					return err
				}
				if last, ok = LastActivity(header, its); !ok {
					undated = append(undated, id)
					return nil
				}
			}
			if last.Before(cutoff) {
				pruned = append(pruned, id)
			}
			return nil
		})
		if err != nil {
			return err
		}
		if len(undated) > 0 {
			times, err := s.lastTrajectoryCommits(ctx, tx.Parent(), undated)
			if err != nil {
				return err
			}
			for _, id := range undated {
				if t, ok := times[id]; ok && t.Before(cutoff) {
					pruned = append(pruned, id)
				}
			}
		}
		sort.Strings(pruned)
		for _, id := range pruned {
			err := s.store.Repo().Walk(root, trajDir(id), func(p string, _ plumbing.Hash) error { return tx.Remove(p) })
			if err != nil {
				return err
			}
			// One change per trajectory, not per file: a prune of a
			// thousand runs would otherwise carry 100,000 trailers.
			rec.Add(store.OpDelete, trajDir(id), "")
		}
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	return pruned, m, nil
}

// Retention is how long the store keeps a trajectory after its last
// activity: the manifest's trajectories.retention_days, else the RLM
// trajectories' RetentionDays. Zero means every trajectory is kept.
func (s *Trajectories) Retention(ctx context.Context, ro store.ReadOptions) (time.Duration, error) {
	root, err := s.store.Tree(ro)
	if err != nil {
		return 0, err
	}
	var m struct {
		Trajectories store.TrajectorySettings `json:"trajectories"`
	}
	data, err := s.store.Repo().ReadFileAt(root, store.ManifestPath)
	if err != nil && !errors.Is(err, repo.ErrNotFound) {
		return 0, err // unread settings are not the defaults
	}
	if data != nil {
		if err := json.Unmarshal(data, &m); err != nil {
			return 0, fmt.Errorf("%s: trajectories section: %w", store.ManifestPath, objects.ErrInvalidJSON)
		}
	}
	days := RetentionDays
	if d := m.Trajectories.RetentionDays; d != nil {
		days = max(*d, 0)
	}
	return time.Duration(days) * 24 * time.Hour, nil
}

// PruneRetained prunes, in one commit, the trajectories older than the
// store's retention (see Retention): what gc does. ErrNoChange when none
// is, or when the retention keeps them all.
func (s *Trajectories) PruneRetained(ctx context.Context, wo store.WriteOptions) ([]string, *store.Mutation, error) {
	keep, err := s.Retention(ctx, store.ReadOptions{Branch: wo.Branch})
	if err != nil {
		return nil, nil, err
	}
	if keep <= 0 {
		return nil, nil, fmt.Errorf("%w: the retention keeps every trajectory", store.ErrNoChange)
	}
	if wo.Message == "" {
		wo.Message = fmt.Sprintf("prune trajectories older than the retention (%d days)", int(keep/(24*time.Hour)))
	}
	return s.Prune(ctx, keep, wo)
}

// lastTrajectoryCommits finds, walking first parents from head, the time
// of the newest commit naming each of ids in its Trajectory trailer.
func (s *Trajectories) lastTrajectoryCommits(ctx context.Context, head plumbing.Hash, ids []string) (map[string]time.Time, error) {
	want := map[string]bool{}
	for _, id := range ids {
		want[id] = true
	}
	out := map[string]time.Time{}
	err := s.store.Repo().FirstParents(head, func(c *repo.Commit) (bool, error) {
		if err := ctx.Err(); err != nil {
			return false, err
		}
		for _, id := range c.Trailers().All(TrailerTrajectory) {
			if want[id] {
				if _, seen := out[id]; !seen {
					out[id] = c.Committer.When
				}
			}
		}
		return len(out) < len(want), nil
	})
	return out, err
}

// ImportOptions tunes Import.
type ImportOptions struct {
	// Name is where the document came from (a file name), for the
	// Imported-From trailer.
	Name string
	// NewID gives the trajectory a fresh id instead of its own.
	NewID bool
}

// Import brings a trajectory document in the specification's format document into the
// store as one commit: trajectory.json plus one file per iteration, as if
// it had been recorded here. The document is validated first; its own
// times stay in it, while the commit is dated now, so first-parent
// history stays in time order for `log --since`.
func (s *Trajectories) Import(ctx context.Context, data []byte, im ImportOptions, wo store.WriteOptions) (string, *store.Mutation, error) {
	doc, err := trajDecodeObject(data, "trajectory "+im.Name)
	if err != nil {
		return "", nil, err
	}
	if doc == nil {
		return "", nil, fmt.Errorf("%w: %s is empty", objects.ErrInvalidJSON, im.Name)
	}
	header, its, err := Split(doc)
	if err != nil {
		return "", nil, fmt.Errorf("%s: %w", im.Name, err)
	}
	id := Str(header, "trajectory_id")
	if im.NewID {
		id = objects.NewID(IDPrefix)
		header["trajectory_id"] = id
	}
	sch, err := trajectorySchema()
	if err != nil {
		return "", nil, err
	}
	if err := sch.ValidateTrajectory(Assemble(header, its)); err != nil {
		return "", nil, fmt.Errorf("%s: %w", im.Name, err)
	}
	if len(its) > MaxIterations {
		return "", nil, fmt.Errorf("%w: %s holds %d iterations; a trajectory holds at most %d", store.ErrLimit, im.Name, len(its), MaxIterations)
	}
	files := map[string][]byte{}
	var total int64
	hd, err := objects.Encode(header)
	if err != nil {
		return "", nil, err
	}
	files[trajHeaderPath(id)] = hd
	total += int64(len(hd))
	for i, it := range its {
		b, err := objects.Encode(it)
		if err != nil {
			return "", nil, err
		}
		files[trajItersDir(id)+"/"+IterationName(i+1)] = b
		total += int64(len(b))
	}
	if total > MaxBytes {
		return "", nil, fmt.Errorf("%w: %s is %d bytes stored; a trajectory holds at most %d (10 MB)", store.ErrLimit, im.Name, total, MaxBytes)
	}
	paths := make([]string, 0, len(files))
	for p := range files {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	extra := repo.Trailers{{Key: TrailerTrajectory, Value: id}}
	if im.Name != "" {
		extra = append(extra, repo.Trailer{Key: TrailerImportedFrom, Value: path.Base(im.Name)})
	}
	wo = trajWithTrailers(wo, extra...)
	subject := fmt.Sprintf("traj import %s: %d iterations", id, len(its))
	m, err := s.store.Commit(ctx, wo, subject, func(tx *repo.Tx, rec *store.Recorder) error {
		if ok, err := tx.Exists(trajHeaderPath(id)); err != nil {
			return err
		} else if ok {
			return &ExistsError{ID: id}
		}
		for _, p := range paths {
			if err := tx.WriteFile(p, files[p]); err != nil {
				return err
			}
		}
		rec.Add(store.OpCreate, trajHeaderPath(id), "")
		if len(its) > 0 {
			rec.Add(store.OpCreate, trajItersDir(id), "")
		}
		return nil
	})
	if err != nil {
		return "", nil, err
	}
	return id, m, nil
}

// ValidateFile checks a stored file against the schema and limits of the
// trajectory file its path says it is: the server-side hook runs it on
// every pushed file (through aiwgstate.ValidateKnownFile), so a trajectory
// iteration written by plain git is held to the same rules as one recorded
// by aiwg-state. It returns the rule broken ("schema" or "limit"), or ""
// for a file it has nothing to say on.
func ValidateFile(path string, body []byte) (rule, detail string) {
	rest, ok := strings.CutPrefix(path, Dir+"/")
	if !ok {
		return "", ""
	}
	parts := strings.Split(rest, "/")
	if len(parts) != 3 || parts[1] != "iterations" {
		return "", ""
	}
	n, ok := ParseIterationName(parts[2])
	if !ok {
		return "schema", "an iteration file is named NNNN.json"
	}
	if n > MaxIterations {
		return "limit", fmt.Sprintf("iteration %d: a trajectory records at most %d (the RLM trajectories specification)", n, MaxIterations)
	}
	sch, err := trajectorySchema()
	if err != nil {
		return "schema", err.Error()
	}
	doc, err := objects.Decode(body)
	if err != nil {
		return "schema", err.Error()
	}
	if err := sch.ValidateIteration(doc); err != nil {
		return "schema", err.Error()
	}
	return "", ""
}

// ExistsError: an import of a trajectory the store holds already (see
// ImportOptions.NewID). It is store.ErrExists.
type ExistsError struct{ ID string }

func (e *ExistsError) Error() string {
	return fmt.Sprintf("%v: trajectory %s is already in the store", store.ErrExists, e.ID)
}

func (e *ExistsError) Unwrap() error { return store.ErrExists }
