package audit

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
)

// Verify reports whether the index's snapshot, when there is one, is
// readable. A damaged one costs queries time (history is read from git
// again until the next fold replaces it) but never gives a wrong answer;
// `aiwg-state reindex` rebuilds it at once.
func (ix *Index) Verify() error {
	data, err := os.ReadFile(ix.snapshotPath())
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	if _, err := parseSnapshot(data); err != nil {
		return fmt.Errorf("%s: %w", IndexDir+"/snapshot", err)
	}
	return nil
}
