package repo

import (
	"errors"
	"fmt"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
)

// ObjectSize returns an object's size. For a packed object it reads the
// entry's header only, so summing the sizes of many files stays cheap.
func (r *Repo) ObjectSize(h plumbing.Hash) (int64, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if o, ok := r.cache.get(h); ok {
		if raw, ok := o.(rawObject); ok {
			return int64(len(raw.body)), nil
		}
	}
	var lastErr error
	// As in readObjectLocked: a pack may be replaced under the reader.
	for attempt := 0; attempt < 4; attempt++ {
		if attempt > 1 {
			r.mu.Unlock() // as in readObjectLocked
			time.Sleep(time.Duration(attempt) * 5 * time.Millisecond)
			r.mu.Lock()
		}
		n, err := r.objs.size(h)
		if err == nil {
			return n, nil
		}
		lastErr = err
	}
	if errors.Is(lastErr, errNotHere) {
		// As in readObjectLocked: fetched in a partial clone, damage
		// elsewhere.
		r.mu.Unlock()
		err := r.missingObject(h)
		r.mu.Lock()
		if err == nil {
			if n, err := r.objs.size(h); err == nil {
				return n, nil
			}
			err = &MissingObjectError{Hash: h, Promisor: true, Remote: r.partial.remotes[0], Cause: errors.New("the remote did not send it")}
		}
		return 0, err
	}
	return 0, fmt.Errorf("object %s: %w", h, lastErr)
}
