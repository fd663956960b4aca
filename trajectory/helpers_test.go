package trajectory

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/aiwg/aiwg-state/internal/testutil"
	"github.com/aiwg/aiwg-state/objects"
)

func loadSchema(t testing.TB) *Schema {
	t.Helper()
	data, err := os.ReadFile("trajectory.schema.json")
	if err != nil {
		t.Fatal(err)
	}
	s, err := CompileSchema(data)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func loadExample(t testing.TB, name string) map[string]any {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "testdata", "trajectories", name+".json"))
	if err != nil {
		t.Fatal(err)
	}
	v, err := objects.Decode(data)
	if err != nil {
		t.Fatal(err)
	}
	return v.(map[string]any)
}

func mustDecode(t testing.TB, s string) map[string]any {
	t.Helper()
	return testutil.DecodeJSON(t, s).(map[string]any)
}
