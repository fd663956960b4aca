package main

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"testing"
)

var update = flag.Bool("update", false, "rewrite docs/cli.md from the commands")

// TestCLIReferenceIsCurrent: docs/cli.md is what the commands' help says
// today. -update (go generate ./cmd/aiwg-state) rewrites it.
func TestCLIReferenceIsCurrent(t *testing.T) {
	var b bytes.Buffer
	writeReference(&b)
	path := filepath.Join("..", "..", "docs", "cli.md")
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	have, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v: generate it with: go generate ./cmd/aiwg-state", err)
	}
	if !bytes.Equal(have, b.Bytes()) {
		t.Fatalf("docs/cli.md is not what the commands' help says: regenerate it with: go generate ./cmd/aiwg-state")
	}
}
