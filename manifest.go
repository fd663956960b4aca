package aiwgstate

import (
	"encoding/json"
	"fmt"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/aiwg/aiwg-state/objects"
	"github.com/aiwg/aiwg-state/repo"
)

// FormatVersion is the store layout version written into new manifests.
const FormatVersion = 1

// Manifest is .aiwg/store.json: the store's settings, versioned with it.
type Manifest struct {
	Format int    `json:"format"`
	Limits Limits `json:"limits"`
}

// Limits bound what one write may store.
type Limits struct {
	// MaxDocumentBytes bounds one document's canonical size.
	MaxDocumentBytes int64 `json:"max_document_bytes"`
}

// DefaultLimits are written by Init and used when a manifest says nothing.
var defaultLimits = Limits{MaxDocumentBytes: 10 << 20}

func defaultManifest() []byte {
	b, err := json.Marshal(Manifest{Format: FormatVersion, Limits: defaultLimits})
	if err != nil {
		panic(err)
	}
	out, err := objects.Canonical(b)
	if err != nil {
		panic(err)
	}
	return out
}

// DefaultAttributes are the merge strategies a new store declares; git reads
// the same file, so after `aiwg-state install-drivers` a plain git merge in a
// clone uses them too.
const DefaultAttributes = `# Merge strategy per path (gitattributes(5) patterns; the last match wins).
# aiwg-state merge reads this file, and so does plain "git merge" in a clone
# once "aiwg-state install-drivers" has registered the drivers.
# Strategies: last-write-wins, first-write-wins, merge-objects,
# merge-arrays, higher-priority-wins.
*.json                  merge=aiwg-merge-objects
**/variables/*.json     merge=aiwg-last-write-wins
`

// manifestAt reads the manifest of a tree.
func (s *Store) manifestAt(root plumbing.Hash) (Manifest, error) {
	data, _ := s.repo.ReadFileAt(root, ManifestPath)
	return parseManifest(data)
}

func manifestTx(tx *repo.Tx) (Manifest, error) {
	data, _ := tx.ReadFile(ManifestPath)
	return parseManifest(data)
}

// parseManifest falls back to the defaults for what a manifest leaves out,
// and for stores made by hand with plain git, which have none.
func parseManifest(data []byte) (Manifest, error) {
	m := Manifest{Format: FormatVersion, Limits: defaultLimits}
	if data == nil {
		return m, nil
	}
	if err := json.Unmarshal(data, &m); err != nil {
		return m, fmt.Errorf("%s: %w: %v", ManifestPath, objects.ErrInvalidJSON, err)
	}
	if m.Limits.MaxDocumentBytes <= 0 {
		m.Limits.MaxDocumentBytes = defaultLimits.MaxDocumentBytes
	}
	return m, nil
}
