package lease_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	aiwgstate "github.com/aiwg/aiwg-state"
	"github.com/aiwg/aiwg-state/lease"
	"github.com/aiwg/aiwg-state/store"
)

// Agents take turns on a resource with a lease: one commit each to
// acquire and release, so the resource's file is the lock's history.
func ExampleLeases_Acquire() {
	ctx := context.Background()
	dir, _ := os.MkdirTemp("", "example-")
	defer os.RemoveAll(dir)
	st, _ := aiwgstate.Init(ctx, filepath.Join(dir, "state.git"), store.InitOptions{})
	defer st.Close()

	pulse := store.WriteOptions{Agent: "pulse"}
	res, err := st.Leases().Acquire(ctx, "tasks/t-17", lease.Options{TTL: 30 * time.Second}, pulse)
	if err != nil {
		panic(err)
	}
	fmt.Println(res.Lease.Holder, res.Lease.Type)
	_, err = st.Leases().Acquire(ctx, "tasks/t-17", lease.Options{TTL: 30 * time.Second}, store.WriteOptions{Agent: "beat"})
	fmt.Println(errors.Is(err, lease.ErrHeld))
	st.Leases().Release(ctx, "tasks/t-17", lease.ReleaseOptions{}, pulse)
	// Output:
	// pulse exclusive
	// true
}
