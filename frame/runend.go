package frame

import (
	"context"
	"encoding/json"
	"strings"

	"github.com/aiwg/aiwg-state/store"
	"github.com/aiwg/aiwg-state/trajectory"
)

// EndCompletedRuns is the store.AfterCommit that ends the run of a
// trajectory the commit completes: its frame, keyed by the trajectory's
// id, is discarded, in this process's memory or in the git directory.
func EndCompletedRuns(s *store.Store, m *store.Mutation, _ store.WriteOptions, changes []store.Change) error {
	for _, c := range changes {
		rest, ok := strings.CutPrefix(c.File, trajectory.Dir+"/")
		if !ok {
			continue
		}
		id, file, ok := strings.Cut(rest, "/")
		if !ok || file != "trajectory.json" {
			continue
		}
		data, err := s.Cat(context.Background(), c.File, store.ReadOptions{At: m.Commit})
		if err != nil {
			continue // removed, or unreadable: not a completion
		}
		var header map[string]any
		if json.Unmarshal(data, &header) != nil || !trajectory.Completed(header) {
			continue
		}
		if err := Of(s).End(id); err != nil {
			return err
		}
	}
	return nil
}
