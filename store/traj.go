package store

import (
	"context"
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
	"github.com/aiwg/aiwg-state/trajectory"
	"github.com/aiwg/aiwg-state/verbiage"
)

// TrajectoriesDir holds one directory per trajectory: trajectory.json (the
// specification's document without its iterations), iterations/0001.json, … (one
// file per iteration, so recording one adds a file and touches nothing
// another writer touches) and report.md. The specification's index.json is not
// stored: it is derived from these on demand (Trajectories), so agents
// recording trajectories on different branches never conflict over it.
const TrajectoriesDir = "trajectories"

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
var trajectorySchema = sync.OnceValues(func() (*trajectory.Schema, error) {
	return trajectory.CompileSchema(trajectory.SchemaJSON())
})

// TrajectorySchema is the JSON Schema (2020-12) that every stored
// trajectory and iteration is validated against.
func TrajectorySchema() []byte { return trajectory.SchemaJSON() }

func trajDir(id string) string        { return TrajectoriesDir + "/" + id }
func trajHeaderPath(id string) string { return trajDir(id) + "/trajectory.json" }
func trajItersDir(id string) string   { return trajDir(id) + "/iterations" }
func trajReportPath(id string) string { return trajDir(id) + "/report.md" }

func checkTrajID(id string) error {
	if !verbiage.ValidID(trajectory.IDPrefix, id) {
		return fmt.Errorf("%w: %q is not a trajectory id (want traj- and 8 hex digits, e.g. traj-1a2b3c4d)", ErrUsage, id)
	}
	return nil
}

// TrajectoryTrailers are the trailers that link a write to iteration iter
// of trajectory id (iter 0: to the trajectory only). Any mutation carries
// them through WriteOptions.Trailers, so `log` and `blame` of what it set
// can name the iteration.
func TrajectoryTrailers(id string, iter int) (repo.Trailers, error) {
	if err := checkTrajID(id); err != nil {
		return nil, err
	}
	if iter < 0 || iter > trajectory.MaxIterations {
		return nil, fmt.Errorf("%w: iteration %d: want 1 to %d", ErrUsage, iter, trajectory.MaxIterations)
	}
	t := repo.Trailers{{Key: TrailerTrajectory, Value: id}}
	if iter > 0 {
		t = append(t, repo.Trailer{Key: TrailerIteration, Value: strconv.Itoa(iter)})
	}
	return t, nil
}

// checkTrajectoryLink refuses a write linked (Trajectory trailer) to a
// trajectory the branch does not hold, after the write: a link to no run
// would send log's readers after nothing, most likely a mistyped or stale
// id.
func checkTrajectoryLink(tx *repo.Tx, wo WriteOptions, _ []Change) error {
	for _, t := range wo.Trailers {
		if t.Key != TrailerTrajectory {
			continue
		}
		if _, err := tx.ReadFile(trajHeaderPath(t.Value)); errors.Is(err, repo.ErrNotFound) {
			return &MissingError{Kind: MissingTrajectory, Name: t.Value}
		} else if err != nil {
			return err
		}
	}
	return nil
}

// TrajectoryLink reads the link trailers of a mutation; ok is false when it
// carries none.
func TrajectoryLink(m *Mutation) (id string, iter int, ok bool) {
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

func trajWithTrailers(wo WriteOptions, extra ...repo.Trailer) WriteOptions {
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

// TrajectoryStart describes a new trajectory (`traj start`).
type TrajectoryStart struct {
	TaskType, Prompt string
	// Task is the task node id (task-xxxxxxxx); a new one when empty, since
	// the schema requires it.
	Task, Tree, State, Parent, Model string
	// Extra is an optional JSON object of further header fields
	// ({"task_context": {"depth": 1}, "metadata": {"temperature": 0.2}}).
	Extra []byte
}

// StartTrajectory creates trajectories/<id>/trajectory.json in one commit
// and returns the new id.
func (s *Store) StartTrajectory(ctx context.Context, st TrajectoryStart, wo WriteOptions) (string, *Mutation, error) {
	extra, err := trajDecodeObject(st.Extra, "trajectory fields")
	if err != nil {
		return "", nil, err
	}
	sch, err := trajectorySchema()
	if err != nil {
		return "", nil, err
	}
	id := objects.NewID(trajectory.IDPrefix)
	task := st.Task
	if task == "" && trajectory.Str(extra, "task_context", "task_id") == "" {
		task = objects.NewID("task")
	}
	when := wo.Time
	if when.IsZero() {
		when = s.now()
	}
	header := trajectory.NewHeader(trajectory.Start{
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
	m, err := s.Commit(ctx, wo, "traj start "+id+": "+trajectory.Str(header, "task_context", "task_type"), func(tx *repo.Tx, rec *Recorder) error {
		if ok, err := tx.Exists(trajHeaderPath(id)); err != nil {
			return err
		} else if ok {
			return fmt.Errorf("%w: trajectory %s", ErrExists, id)
		}
		if err := tx.WriteFile(trajHeaderPath(id), data); err != nil {
			return err
		}
		rec.Add(OpCreate, trajHeaderPath(id), "")
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
	Fields trajectory.IterationFields
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
func (s *Store) RecordIteration(ctx context.Context, id string, in IterationInput, wo WriteOptions) (int, *Mutation, error) {
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
		h, err := s.Resolve(in.StateSnapshot, wo.Branch)
		if err != nil {
			return 0, nil, fmt.Errorf("--state-snapshot: %w", err)
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
		when = s.now()
	}
	// Validate before taking the lock, so bad input never holds up other
	// writers; the number is provisional here.
	provisional := 1
	if g, ok := base["iteration_number"]; ok {
		if n, err := strconv.Atoi(fmt.Sprint(g)); err == nil && n >= 1 {
			provisional = n
		}
	}
	probe, err := trajectory.BuildIteration(base, in.Fields, provisional, when)
	var ne *trajectory.NumberError
	if errors.As(err, &ne) {
		// Only an iteration_number that is not a positive integer gets here.
		return 0, nil, fmt.Errorf("iteration of %s: %w", id, &trajectory.ValidationError{Field: "iteration_number", Reason: "must be a positive integer"})
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
	build := func(tx *repo.Tx, rec *Recorder) error {
		header, err := s.readTrajHeaderTx(tx, id)
		if err != nil {
			return err
		}
		if trajectory.Completed(header) {
			return fmt.Errorf("%w: trajectory %s is completed (%s); start a new one", ErrReadOnly, id, trajectory.Str(header, "outcome", "status"))
		}
		entries, err := s.trajIterationEntries(tx, id)
		if err != nil {
			return err
		}
		number = len(entries) + 1
		if number > trajectory.MaxIterations {
			return fmt.Errorf("%w: trajectory %s already has %d iterations, the most one trajectory may record (a limit of the RLM trajectories specification)", ErrLimit, id, trajectory.MaxIterations)
		}
		it, err := trajectory.BuildIteration(base, in.Fields, number, when)
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
		file := trajItersDir(id) + "/" + trajectory.IterationName(number)
		if err := tx.WriteFile(file, data); err != nil {
			return err
		}
		rec.Trailer(TrailerIteration, strconv.Itoa(number)) // the number chosen under the lock
		rec.Add(OpCreate, file, "")
		return nil
	}
	m, err := s.Commit(ctx, wo, "", build)
	if err != nil {
		return 0, nil, err
	}
	return number, m, nil
}

// readTrajHeaderTx reads a trajectory's header inside a transaction.
func (s *Store) readTrajHeaderTx(tx *repo.Tx, id string) (map[string]any, error) {
	data, err := tx.ReadFile(trajHeaderPath(id))
	if errors.Is(err, repo.ErrNotFound) {
		return nil, fmt.Errorf("trajectory %s: %w", id, ErrNotFound)
	}
	if err != nil {
		return nil, err
	}
	return trajDecodeObject(data, trajHeaderPath(id))
}

// trajIterationEntries lists a trajectory's iteration files as of the
// transaction's parent, in order, checking they are numbered without gaps.
func (s *Store) trajIterationEntries(tx *repo.Tx, id string) ([]repo.DirEntry, error) {
	root, err := s.trajParentTree(tx)
	if err != nil {
		return nil, err
	}
	return s.trajIterationEntriesAt(root, id)
}

func (s *Store) trajParentTree(tx *repo.Tx) (plumbing.Hash, error) {
	if tx.Parent().IsZero() {
		return plumbing.ZeroHash, nil
	}
	c, err := s.repo.ReadCommit(tx.Parent())
	if err != nil {
		return plumbing.ZeroHash, err
	}
	return c.Tree, nil
}

func (s *Store) trajIterationEntriesAt(root plumbing.Hash, id string) ([]repo.DirEntry, error) {
	if root.IsZero() {
		return nil, nil
	}
	es, err := s.repo.ReadDirAt(root, trajItersDir(id))
	if errors.Is(err, repo.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	out := es[:0:0]
	for _, e := range es {
		n, ok := trajectory.ParseIterationName(e.Name)
		if !ok || e.IsDir {
			continue
		}
		if n != len(out)+1 {
			return nil, fmt.Errorf("%w: trajectory %s: iteration files skip from %d to %d; the store numbers them without gaps, so something outside it removed one",
				trajectory.ErrInvalid, id, len(out), n)
		}
		out = append(out, e)
	}
	return out, nil
}

// checkTrajSize enforces the specification's 10 MB per trajectory over everything
// stored for it: header, iterations and report, with the write in hand.
func (s *Store) checkTrajSize(tx *repo.Tx, id string, iterations []repo.DirEntry, adding int64) error {
	total := adding
	for _, e := range iterations {
		n, err := s.repo.ObjectSize(e.Hash)
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
	if total > trajectory.MaxBytes {
		return fmt.Errorf("%w: trajectory %s would hold %d bytes; a trajectory holds at most %d (10 MB, a limit of the RLM trajectories specification)", ErrLimit, id, total, trajectory.MaxBytes)
	}
	return nil
}

// readTrajIterationsAt decodes a trajectory's iterations at a tree.
func (s *Store) readTrajIterationsAt(root plumbing.Hash, id string) ([]map[string]any, []repo.DirEntry, error) {
	es, err := s.trajIterationEntriesAt(root, id)
	if err != nil {
		return nil, nil, err
	}
	out := make([]map[string]any, len(es))
	for i, e := range es {
		data, err := s.repo.ReadBlob(e.Hash)
		if err != nil {
			return nil, nil, err
		}
		if out[i], err = trajDecodeObject(data, trajItersDir(id)+"/"+e.Name); err != nil {
			return nil, nil, err
		}
	}
	return out, es, nil
}

func (s *Store) readTrajHeaderAt(root plumbing.Hash, id string) (map[string]any, error) {
	data, err := s.repo.ReadFileAt(root, trajHeaderPath(id))
	if errors.Is(err, repo.ErrNotFound) {
		return nil, fmt.Errorf("trajectory %s: %w", id, ErrNotFound)
	}
	if err != nil {
		return nil, err
	}
	return trajDecodeObject(data, trajHeaderPath(id))
}

// TrajectoryCompletion is what `traj complete` records.
type TrajectoryCompletion struct {
	Status, Final, Reason string
	// Extra is an optional JSON object of outcome, metadata and
	// quality_metrics fields, kept over what the store computes
	// ({"quality_metrics": {"overall_quality": 0.9, "lessons_learned": […]}}).
	Extra []byte
}

// CompleteTrajectory writes the outcome, the metadata totals and the
// computable quality metrics into trajectory.json, after validating the
// whole document, in one commit.
func (s *Store) CompleteTrajectory(ctx context.Context, id string, c TrajectoryCompletion, wo WriteOptions) (*Mutation, error) {
	if err := checkTrajID(id); err != nil {
		return nil, err
	}
	extra, err := trajDecodeObject(c.Extra, "completion fields")
	if err != nil {
		return nil, err
	}
	if c.Status == "" && trajectory.Str(extra, "outcome", "status") == "" {
		return nil, fmt.Errorf("%w: complete needs a status (--status success, failure, partial_success, timeout, cancelled or error)", ErrUsage)
	}
	sch, err := trajectorySchema()
	if err != nil {
		return nil, err
	}
	when := wo.Time
	if when.IsZero() {
		when = s.now()
	}
	wo = trajWithTrailers(wo, repo.Trailer{Key: TrailerTrajectory, Value: id})
	status := c.Status
	if status == "" {
		status = trajectory.Str(extra, "outcome", "status")
	}
	return s.Commit(ctx, wo, "traj complete "+id+": "+status, func(tx *repo.Tx, rec *Recorder) error {
		header, err := s.readTrajHeaderTx(tx, id)
		if err != nil {
			return err
		}
		if trajectory.Completed(header) {
			return fmt.Errorf("%w: trajectory %s is already completed (%s)", ErrReadOnly, id, trajectory.Str(header, "outcome", "status"))
		}
		root, err := s.trajParentTree(tx)
		if err != nil {
			return err
		}
		its, es, err := s.readTrajIterationsAt(root, id)
		if err != nil {
			return err
		}
		done := trajectory.Complete(header, its, trajectory.Completion{Status: c.Status, FinalResult: c.Final, Reason: c.Reason, Extra: extra, Now: when})
		if err := sch.ValidateTrajectory(trajectory.Assemble(done, its)); err != nil {
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
		rec.Add(OpUpdate, trajHeaderPath(id), "")
		return nil
	})
}

// Trajectory returns the specification's document of a trajectory (header and
// iterations assembled), as of ro.
func (s *Store) Trajectory(ctx context.Context, id string, ro ReadOptions) (map[string]any, error) {
	if err := checkTrajID(id); err != nil {
		return nil, err
	}
	root, err := s.Tree(ro)
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
	return trajectory.Assemble(header, its), nil
}

// TrajectoryFilter narrows Trajectories.
type TrajectoryFilter struct {
	TaskType string
	// Status is an outcome status, or "running" for trajectories without
	// one.
	Status string
	// Since keeps trajectories started at or after it.
	Since time.Time
}

// Trajectories is the specification's trajectory index, derived from the tree:
// one summary per trajectory, oldest start first.
func (s *Store) Trajectories(ctx context.Context, f TrajectoryFilter, ro ReadOptions) ([]trajectory.Summary, error) {
	root, err := s.Tree(ro)
	if err != nil {
		return nil, err
	}
	out := []trajectory.Summary{}
	keep := trajectory.AnalyzeOptions{TaskType: f.TaskType, Since: f.Since}
	err = s.eachTrajectory(ctx, root, func(id string, header map[string]any) error {
		if !keep.Keep(header, nil) {
			return nil
		}
		es, err := s.trajIterationEntriesAt(root, id)
		if err != nil {
			return err
		}
		sum := trajectory.Summarize(header, len(es))
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
func (s *Store) eachTrajectory(ctx context.Context, root plumbing.Hash, fn func(id string, header map[string]any) error) error {
	es, err := s.repo.ReadDirAt(root, TrajectoriesDir)
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
		if !e.IsDir || !verbiage.ValidID(trajectory.IDPrefix, e.Name) {
			continue
		}
		header, err := s.readTrajHeaderAt(root, e.Name)
		if errors.Is(err, ErrNotFound) {
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

// WriteTrajectoryReport renders report.md for a trajectory and commits it
// beside trajectory.json; it returns the report.
func (s *Store) WriteTrajectoryReport(ctx context.Context, id string, wo WriteOptions) ([]byte, *Mutation, error) {
	if err := checkTrajID(id); err != nil {
		return nil, nil, err
	}
	var report []byte
	wo = trajWithTrailers(wo, repo.Trailer{Key: TrailerTrajectory, Value: id})
	m, err := s.Commit(ctx, wo, "traj report "+id, func(tx *repo.Tx, rec *Recorder) error {
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
		report = trajectory.Report(trajectory.Assemble(header, its))
		op := OpCreate
		if ok, _ := tx.Exists(trajReportPath(id)); ok {
			op = OpUpdate
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

// AnalyzeTrajectories computes the learning patterns of the RLM trajectories specification over all
// trajectories at ro.
func (s *Store) AnalyzeTrajectories(ctx context.Context, o trajectory.AnalyzeOptions, ro ReadOptions) (trajectory.Analysis, error) {
	root, err := s.Tree(ro)
	if err != nil {
		return trajectory.Analysis{}, err
	}
	var runs []trajectory.Run
	err = s.eachTrajectory(ctx, root, func(id string, header map[string]any) error {
		// Filter on the header first: a run left out costs no iteration
		// reads (only an undated one needs its iterations to be judged).
		if o.TaskType != "" && trajectory.Str(header, "task_context", "task_type") != o.TaskType {
			return nil
		}
		its, _, err := s.readTrajIterationsAt(root, id)
		if err != nil {
			return err
		}
		runs = append(runs, trajectory.Run{Header: header, Iterations: its})
		return nil
	})
	if err != nil {
		return trajectory.Analysis{}, err
	}
	return trajectory.Analyze(runs, o), nil
}

// PruneTrajectories removes, in one commit, every trajectory whose last
// activity (completion, start or iteration time, else the time of the last
// commit naming it in a Trajectory trailer) is older than olderThan.
// History keeps them: `git show REV:trajectories/<id>/trajectory.json`.
// It returns the pruned ids; ErrNoChange when none is old enough.
func (s *Store) PruneTrajectories(ctx context.Context, olderThan time.Duration, wo WriteOptions) ([]string, *Mutation, error) {
	if olderThan <= 0 {
		return nil, nil, fmt.Errorf("%w: prune needs a positive age", ErrUsage)
	}
	now := wo.Time
	if now.IsZero() {
		now = s.now()
	}
	cutoff := now.Add(-olderThan)
	var pruned []string
	m, err := s.Commit(ctx, wo, "", func(tx *repo.Tx, rec *Recorder) error {
		pruned = nil
		root, err := s.trajParentTree(tx)
		if err != nil || root.IsZero() {
			return err
		}
		var undated []string
		err = s.eachTrajectory(ctx, root, func(id string, header map[string]any) error {
			last, ok := trajectory.LastActivity(header, nil)
			if !ok {
				its, _, err := s.readTrajIterationsAt(root, id)
				if err != nil {
					return err
				}
				if last, ok = trajectory.LastActivity(header, its); !ok {
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
			err := s.repo.Walk(root, trajDir(id), func(p string, _ plumbing.Hash) error { return tx.Remove(p) })
			if err != nil {
				return err
			}
			// One change per trajectory, not per file: a prune of a
			// thousand runs would otherwise carry 100,000 trailers.
			rec.Add(OpDelete, trajDir(id), "")
		}
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	return pruned, m, nil
}

// lastTrajectoryCommits finds, walking first parents from head, the time
// of the newest commit naming each of ids in its Trajectory trailer.
func (s *Store) lastTrajectoryCommits(ctx context.Context, head plumbing.Hash, ids []string) (map[string]time.Time, error) {
	want := map[string]bool{}
	for _, id := range ids {
		want[id] = true
	}
	out := map[string]time.Time{}
	err := s.repo.FirstParents(head, func(c *repo.Commit) (bool, error) {
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

// TrajectoryImport tunes ImportTrajectory.
type TrajectoryImport struct {
	// Name is where the document came from (a file name), for the
	// Imported-From trailer.
	Name string
	// NewID gives the trajectory a fresh id instead of its own.
	NewID bool
}

// ImportTrajectory brings a trajectory document in the specification's format document into the
// store as one commit: trajectory.json plus one file per iteration, as if
// it had been recorded here. The document is validated first; its own
// times stay in it, while the commit is dated now, so first-parent
// history stays in time order for `log --since`.
func (s *Store) ImportTrajectory(ctx context.Context, data []byte, im TrajectoryImport, wo WriteOptions) (string, *Mutation, error) {
	doc, err := trajDecodeObject(data, "trajectory "+im.Name)
	if err != nil {
		return "", nil, err
	}
	if doc == nil {
		return "", nil, fmt.Errorf("%w: %s is empty", objects.ErrInvalidJSON, im.Name)
	}
	header, its, err := trajectory.Split(doc)
	if err != nil {
		return "", nil, fmt.Errorf("%s: %w", im.Name, err)
	}
	id := trajectory.Str(header, "trajectory_id")
	if im.NewID {
		id = objects.NewID(trajectory.IDPrefix)
		header["trajectory_id"] = id
	}
	sch, err := trajectorySchema()
	if err != nil {
		return "", nil, err
	}
	if err := sch.ValidateTrajectory(trajectory.Assemble(header, its)); err != nil {
		return "", nil, fmt.Errorf("%s: %w", im.Name, err)
	}
	if len(its) > trajectory.MaxIterations {
		return "", nil, fmt.Errorf("%w: %s holds %d iterations; a trajectory holds at most %d", ErrLimit, im.Name, len(its), trajectory.MaxIterations)
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
		files[trajItersDir(id)+"/"+trajectory.IterationName(i+1)] = b
		total += int64(len(b))
	}
	if total > trajectory.MaxBytes {
		return "", nil, fmt.Errorf("%w: %s is %d bytes stored; a trajectory holds at most %d (10 MB)", ErrLimit, im.Name, total, trajectory.MaxBytes)
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
	m, err := s.Commit(ctx, wo, subject, func(tx *repo.Tx, rec *Recorder) error {
		if ok, err := tx.Exists(trajHeaderPath(id)); err != nil {
			return err
		} else if ok {
			return fmt.Errorf("%w: trajectory %s is already in the store (import with --new-id for a copy)", ErrExists, id)
		}
		for _, p := range paths {
			if err := tx.WriteFile(p, files[p]); err != nil {
				return err
			}
		}
		rec.Add(OpCreate, trajHeaderPath(id), "")
		if len(its) > 0 {
			rec.Add(OpCreate, trajItersDir(id), "")
		}
		return nil
	})
	if err != nil {
		return "", nil, err
	}
	return id, m, nil
}

// ValidateKnownFile checks a stored file against the schema and limits of
// the kind of file its path says it is: the server-side hook runs it on
// every pushed file, so a trajectory iteration written by plain git is held
// to the same rules as one recorded by aiwg-state, and the manifest to what
// `config` holds it to. It returns the rule broken ("schema", "limit" or
// "store-settings"), or "" for a file it has nothing to say on.
func ValidateKnownFile(path string, body []byte) (rule, detail string) {
	if path == ManifestPath {
		// A manifest that does not validate would be in force on the
		// server and in every clone once the push lands.
		if err := CheckManifest(body); err != nil {
			return "store-settings", err.Error() + " (write it with aiwg-state config, which checks it)"
		}
		return "", ""
	}
	rest, ok := strings.CutPrefix(path, TrajectoriesDir+"/")
	if !ok {
		return "", ""
	}
	parts := strings.Split(rest, "/")
	if len(parts) != 3 || parts[1] != "iterations" {
		return "", ""
	}
	n, ok := trajectory.ParseIterationName(parts[2])
	if !ok {
		return "schema", "an iteration file is named NNNN.json"
	}
	if n > trajectory.MaxIterations {
		return "limit", fmt.Sprintf("iteration %d: a trajectory records at most %d (the RLM trajectories specification)", n, trajectory.MaxIterations)
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
