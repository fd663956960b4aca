package storedir_test

import (
	"testing"

	aiwgstate "github.com/aiwg/aiwg-state"
	"github.com/aiwg/aiwg-state/internal/storedir"
)

// TestNamesAreTheStoresOwn: the client finds the files the store writes.
func TestNamesAreTheStoresOwn(t *testing.T) {
	if storedir.Default != aiwgstate.DefaultDir || storedir.Manifest != aiwgstate.ManifestPath {
		t.Fatalf("storedir looks for %s and %s; the store keeps %s and %s",
			storedir.Default, storedir.Manifest, aiwgstate.DefaultDir, aiwgstate.ManifestPath)
	}
}
