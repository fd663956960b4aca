package storedir_test

import (
	"testing"

	"github.com/aiwg/aiwg-state/internal/storedir"
	"github.com/aiwg/aiwg-state/store"
)

// TestNamesAreTheStoresOwn: the client finds the files the store writes.
func TestNamesAreTheStoresOwn(t *testing.T) {
	if storedir.Default != store.DefaultDir || storedir.Manifest != store.ManifestPath {
		t.Fatalf("storedir looks for %s and %s; the store keeps %s and %s",
			storedir.Default, storedir.Manifest, store.DefaultDir, store.ManifestPath)
	}
}
