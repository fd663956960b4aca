package docschema_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	aiwgstate "github.com/aiwg/aiwg-state"
	"github.com/aiwg/aiwg-state/docschema"
	"github.com/aiwg/aiwg-state/store"
)

// A schema rules the documents at its paths: a write that would leave one
// breaking it is refused, naming the file and the field.
func ExampleSchemas_Add() {
	ctx := context.Background()
	dir, _ := os.MkdirTemp("", "example-")
	defer os.RemoveAll(dir)
	st, _ := aiwgstate.Init(ctx, filepath.Join(dir, "state.git"), store.InitOptions{})
	defer st.Close()

	wo := store.WriteOptions{Agent: "conductor"}
	schema := []byte(`{"type": "object", "properties": {"status": {"enum": ["idle", "busy"]}}}`)
	if _, err := st.Schemas().Add(ctx, "agent", []string{"agents/*.json"}, schema, wo); err != nil {
		panic(err)
	}
	_, err := st.Set(ctx, "agents/pulse.json", "status", []byte(`"on fire"`), wo)
	var v *docschema.Violation
	fmt.Println(errors.Is(err, docschema.ErrInvalid), errors.As(err, &v) && v.File == "agents/pulse.json")
	fmt.Println(err)
	// Output:
	// true true
	// agents/pulse.json breaks its schema .aiwg/schemas/agent.schema.json: field status: value must be one of 'idle', 'busy'
}
