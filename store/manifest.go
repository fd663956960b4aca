package store

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/aiwg/aiwg-state/internal/errkind"
	"github.com/aiwg/aiwg-state/objects"
	"github.com/aiwg/aiwg-state/policy"
	"github.com/aiwg/aiwg-state/repo"
	"github.com/aiwg/aiwg-state/statedoc"
)

// FormatVersion is the store layout version written into new manifests.
const FormatVersion = 1

// Manifest is .aiwg/store.json: the store's settings, versioned with it.
type Manifest struct {
	Format int    `json:"format"`
	Limits Limits `json:"limits"`
	// Verbiage declares the verbiage-ruled documents (statedoc.go reads
	// it; the specification's default state document when absent).
	Verbiage *VerbiageRules `json:"verbiage,omitempty"`
	// Sync false makes the store skip fsync, as --no-sync does for one
	// command: for scratch stores where speed beats crash durability.
	Sync *bool `json:"sync,omitempty"`
	// RLM holds the completion handlers of RLM state (package rlm); a
	// versioned handler runs only once trusted on the machine that runs it.
	RLM *RLMSettings `json:"rlm,omitempty"`
	// Trajectories holds the RLM trajectories' settings (package
	// trajectory reads them).
	Trajectories *TrajectorySettings `json:"trajectories,omitempty"`
}

// TrajectorySettings is the manifest's "trajectories" section.
type TrajectorySettings struct {
	// RetentionDays is how long a trajectory is kept after its last
	// activity: gc prunes older ones, in one commit (history keeps them).
	// Absent, the RLM trajectories' 90 days; 0 keeps them all.
	RetentionDays *int `json:"retention_days,omitempty"`
}

// RLMSettings is the manifest's "rlm" section.
type RLMSettings struct {
	OnComplete []CompletionHandler `json:"on_complete,omitempty"`
}

// CompletionHandler is a command run once when a state's Final turns
// non-null (package rlm runs it). It is kept in the store manifest's "rlm"
// section:
//
//	{"rlm": {"on_complete": [{"name": "notify", "command": ["sh", "-c", "..."]}]}}
//
// It runs with AIWG_STATE_ID, AIWG_STATE_COMMIT and AIWG_STATE_STORE set and
// Final's value on standard input (one line of JSON).
type CompletionHandler struct {
	Name    string   `json:"name"`
	Command []string `json:"command"`
}

// VerbiageRules lists the documents whose keys follow the state document specification's rules,
// as gitattributes-style path patterns.
type VerbiageRules struct {
	Documents []string `json:"documents"`
}

// Limits bound what one write may store.
type Limits struct {
	// MaxDocumentBytes bounds one document's canonical size.
	MaxDocumentBytes int64 `json:"max_document_bytes"`
	// MaxFrameBytes bounds one run's frame (its keys and values), and
	// MaxCacheBytes the store's cache on each machine; neither tier is
	// versioned (see tierlimits.go). 0: the defaults.
	MaxFrameBytes int64 `json:"max_frame_bytes,omitempty"`
	MaxCacheBytes int64 `json:"max_cache_bytes,omitempty"`
	// MaxSQLRowsWritten bounds the rows one aiwg-state sql exec statement
	// writes and removes, so one statement is not a commit of a million
	// files on every clone. 0: the SQL default (1,000).
	MaxSQLRowsWritten int `json:"max_sql_rows_written,omitempty"`
}

// DefaultLimits are written by Init and used when a manifest says nothing.
var defaultLimits = Limits{MaxDocumentBytes: 10 << 20}

func defaultManifest() []byte {
	b, err := json.Marshal(Manifest{Format: FormatVersion, Limits: defaultLimits,
		Verbiage: &VerbiageRules{Documents: []string{statedoc.DefaultPath}}})
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
# Strategies: last-write-wins, first-write-wins, merge-objects, merge-arrays,
# higher-priority-wins, max, sum, conflict. aiwg-fallback=S settles what
# merge-objects/merge-arrays cannot; aiwg-keys=KEY:S,... per object key.
# Change them with "aiwg-state strategy set PATTERN STRATEGY"; see why a key
# merges as it does with "aiwg-state strategy explain FILE#KEY".
*.json                   merge=aiwg-merge-objects
**/variables/*.json      merge=aiwg-last-write-wins
state/**/*.json          merge=aiwg-merge-objects aiwg-keys=EVENTS:merge-arrays,NOTES:merge-arrays,REQUEST-NOTES:merge-arrays,SEEN:max,LAST-SEEN-IDX:max aiwg-fallback=last-write-wins
memory/**/*.json         merge=aiwg-merge-objects aiwg-fallback=last-write-wins
.aiwg/ttl/**             merge=aiwg-merge-objects aiwg-fallback=last-write-wins
.aiwg/store.json         merge=aiwg-conflict
# git diff and git log -p name the key a hunk is in (install-drivers
# registers the aiwg-json diff driver in a clone).
*.json                   diff=aiwg-json
`

// manifestAt reads the manifest of a tree.
func (s *Store) manifestAt(root plumbing.Hash) (Manifest, error) {
	data, err := s.repo.ReadFileAt(root, ManifestPath)
	if err != nil && !errors.Is(err, repo.ErrNotFound) {
		return Manifest{}, err // never fall back to defaults on a read error
	}
	return parseManifest(data)
}

func manifestTx(tx *repo.Tx) (Manifest, error) {
	data, err := tx.ReadFile(ManifestPath)
	if err != nil && !errors.Is(err, repo.ErrNotFound) {
		return Manifest{}, err
	}
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
		return m, &BrokenFileError{Kind: BrokenManifest, File: ManifestPath, Err: fmt.Errorf("%s: %w (%v)", ManifestPath, ErrBadManifest, err)}
	}
	if m.Limits.MaxDocumentBytes <= 0 {
		m.Limits.MaxDocumentBytes = defaultLimits.MaxDocumentBytes
	}
	return m, nil
}

// checkSettings refuses a write that would leave the store's own settings
// unreadable: an access policy, a manifest or schema rules that do not
// parse and validate would make every later write, and every push to a
// server holding them, fail. Setting commands check what they write; this
// catches every other way in (a merge, a pull, a rollback). Schemas are
// docschema.Guard's (it compiles every rule's schema when they change).
func checkSettings(tx *repo.Tx, _ WriteOptions, _ []Change) error {
	for _, path := range tx.Changed() {
		if path != policy.Path && path != ManifestPath {
			continue
		}
		data, err := tx.ReadFile(path)
		if errors.Is(err, repo.ErrNotFound) {
			continue // deleted: no policy, or the default settings
		}
		if err != nil {
			return err
		}
		if path == policy.Path {
			if _, err := policy.Parse(data); err != nil {
				return err
			}
			continue
		}
		if err := CheckManifest(data); err != nil {
			return errkind.Errorf(ErrInvalidRecord, "%s: %v", ManifestPath, err)
		}
	}
	return nil
}

// checkSettingsFastForward is checkSettings for a fast-forward, which
// writes no commit for the write checks to judge: the policy and manifest
// the branch brings must parse and validate.
func (s *Store) checkSettingsFastForward(ours, theirs plumbing.Hash) error {
	from, to := s.TreeOf(ours), s.TreeOf(theirs)
	for _, path := range []string{policy.Path, ManifestPath} {
		now, err := s.repo.ReadFileAt(to, path)
		if errors.Is(err, repo.ErrNotFound) {
			continue
		}
		if err != nil {
			return err
		}
		if was, err := s.repo.ReadFileAt(from, path); err == nil && string(was) == string(now) {
			continue // unchanged: not this fast-forward's doing
		}
		var bad error
		if path == policy.Path {
			_, bad = policy.Parse(now)
		} else if err := CheckManifest(now); err != nil {
			bad = errkind.Errorf(ErrInvalidRecord, "%s: %v", ManifestPath, err)
		}
		if bad != nil {
			return fmt.Errorf("%w (the fast-forward would bring it; repair it on the branch first)", bad)
		}
	}
	return nil
}

// checkSizes holds every file a write stages to its limit (see
// Manifest.LimitFor): documents, and the files of variables, trajectories
// and state documents, to limits.max_document_bytes.
func checkSizes(tx *repo.Tx, _ WriteOptions, _ []Change) error {
	m, err := manifestTx(tx)
	if err != nil {
		return err
	}
	for _, path := range tx.Changed() {
		data, err := tx.ReadFile(path)
		if errors.Is(err, repo.ErrNotFound) {
			continue // deleted
		}
		if err != nil {
			return err
		}
		if limit := m.LimitFor(path); int64(len(data)) > limit {
			if limit != m.Limits.MaxDocumentBytes {
				return fmt.Errorf("%w: %s would be %d bytes; the store's settings files are held to %d",
					ErrLimit, path, len(data), limit)
			}
			return fmt.Errorf("%w: %s would be %d bytes; the store's limit is %d (limits.max_document_bytes in %s)",
				ErrLimit, path, len(data), limit, ManifestPath)
		}
	}
	return nil
}
