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
	f, err := os.Open(ix.snapshotPath())
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return err
	}
	// Checked again, whatever this process checked before: a file
	// damaged since is what this looks for.
	err = errCorrupt
	if st.Size() >= snapHeaderSize {
		err = checkSnapshotFile(int(f.Fd()), st.Size())
	}
	if err == nil {
		var h [snapHeaderSize]byte
		if _, err = f.ReadAt(h[:], 0); err == nil {
			err = checkHeader(h[:], st.Size())
		}
	}
	if err != nil {
		return fmt.Errorf("%s: %w", IndexDir+"/snapshot", err)
	}
	return nil
}
