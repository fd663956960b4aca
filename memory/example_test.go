package memory_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	aiwgstate "github.com/aiwg/aiwg-state"
	"github.com/aiwg/aiwg-state/memory"
	"github.com/aiwg/aiwg-state/store"
)

// Memory records (the tiered state specification) keep a payload with its timestamps; one with
// a time to live is gone for readers once it runs out.
func ExampleMemory_Put() {
	ctx := context.Background()
	dir, _ := os.MkdirTemp("", "example-")
	defer os.RemoveAll(dir)
	st, _ := aiwgstate.Init(ctx, filepath.Join(dir, "state.git"), store.InitOptions{})
	defer st.Close()

	theme := memory.Key{Namespace: "long_term", Kind: "preference", ID: "theme"}
	st.Memory().Put(ctx, theme, []byte(`{"value": "dark"}`), 0, store.WriteOptions{Agent: "pulse"})
	cool := memory.Key{Namespace: "session", Kind: "cooldown", ID: "monitors"}
	// Written a minute ago with a time to live of a second: run out.
	st.Memory().Put(ctx, cool, []byte(`true`), time.Second, store.WriteOptions{Agent: "pulse", Time: time.Now().Add(-time.Minute)})

	r, _ := st.Memory().Get(ctx, theme, store.ReadOptions{})
	fmt.Println(string(r.Payload))
	_, err := st.Memory().Get(ctx, cool, store.ReadOptions{})
	fmt.Println(errors.Is(err, store.ErrNotFound))
	pruned, _, _ := st.Memory().Prune(ctx, "", store.WriteOptions{})
	fmt.Println(pruned)
	// Output:
	// {"value":"dark"}
	// true
	// [session/cooldown/monitors]
}
