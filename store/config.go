package store

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"

	"github.com/aiwg/aiwg-state/objects"
	"github.com/aiwg/aiwg-state/repo"
	"github.com/aiwg/aiwg-state/verbiage"
)

// Config returns a key of the store manifest (the whole manifest when key
// is empty), as canonical JSON.
func (s *Store) Config(ctx context.Context, key string, ro ReadOptions) ([]byte, error) {
	root, err := s.Tree(ro)
	if err != nil {
		return nil, err
	}
	data, err := s.repo.ReadFileAt(root, ManifestPath)
	if errors.Is(err, repo.ErrNotFound) {
		data = defaultManifest()
	} else if err != nil {
		return nil, err
	}
	if _, err := parseManifest(data); err != nil {
		return nil, err
	}
	p, err := verbiage.ParsePath(key)
	if err != nil {
		return nil, err
	}
	if len(p) == 0 {
		return objects.Canonical(data)
	}
	return objects.GetRaw(data, p)
}

// SetConfig sets a key of the store manifest (e.g. limits.max_document_bytes,
// sync) in one commit. The result must still be a manifest the store can
// read; documents cannot write .aiwg/, so this is the way to change it.
func (s *Store) SetConfig(ctx context.Context, key string, value []byte, wo WriteOptions) (*Mutation, error) {
	p, err := verbiage.ParsePath(key)
	if err != nil {
		return nil, err
	}
	if len(p) == 0 {
		return nil, fmt.Errorf("%w: name the setting to change", ErrUsage)
	}
	v, err := objects.Decode(value)
	if err != nil {
		return nil, fmt.Errorf("value: %w", err)
	}
	return s.Commit(ctx, wo, "", func(tx *repo.Tx, rec *Recorder) error {
		data, err := tx.ReadFile(ManifestPath)
		if errors.Is(err, repo.ErrNotFound) {
			data = defaultManifest()
		} else if err == nil {
			if _, perr := parseManifest(data); perr != nil {
				// A manifest that does not read (committed by plain git)
				// is replaced by the defaults with this setting: the one
				// way to repair it from here, and nothing of it could be
				// read anyway.
				data = defaultManifest()
			}
		} else if err != nil {
			return err
		}
		doc, err := objects.Decode(data)
		if err != nil {
			return fmt.Errorf("%s: %w", ManifestPath, err)
		}
		if doc, err = objects.Set(doc, p, v); err != nil {
			return err
		}
		out, err := objects.Encode(doc)
		if err != nil {
			return err
		}
		if err := CheckManifest(out); err != nil {
			return fmt.Errorf("%w: %v", ErrUsage, err)
		}
		rec.Add(OpUpdate, ManifestPath, p.String())
		return tx.WriteFile(ManifestPath, out)
	})
}

// CheckManifest is what SetConfig holds a manifest to, beyond what reading
// one needs: every setting known and of its type, the limit positive, the
// format this version's (it describes the store, it does not configure it).
func CheckManifest(data []byte) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var m Manifest
	if err := dec.Decode(&m); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			return fmt.Errorf("%s must be %s", te.Field, jsonKindOf(te.Type))
		}
		if name, ok := strings.CutPrefix(err.Error(), "json: unknown field "); ok {
			return fmt.Errorf("no setting %s (the settings are limits.max_document_bytes, limits.max_frame_bytes, limits.max_cache_bytes, limits.max_sql_rows_written, sync, verbiage.documents, rlm.on_complete and trajectories.retention_days)", name)
		}
		return fmt.Errorf("%s: %w", ManifestPath, err)
	}
	if m.Format != FormatVersion {
		return fmt.Errorf("format is %d, the store format of this aiwg-state, not a setting", FormatVersion)
	}
	if m.Limits.MaxDocumentBytes <= 0 {
		return errors.New("limits.max_document_bytes must be a positive number of bytes")
	}
	if m.Limits.MaxFrameBytes < 0 || m.Limits.MaxCacheBytes < 0 {
		return errors.New("limits.max_frame_bytes and limits.max_cache_bytes must be positive numbers of bytes (or absent)")
	}
	if m.Limits.MaxSQLRowsWritten < 0 {
		return errors.New("limits.max_sql_rows_written must be a positive number of rows (or absent)")
	}
	if _, err := ruledPatterns(data); err != nil {
		return err
	}
	if m.RLM != nil {
		for i, h := range m.RLM.OnComplete {
			if len(h.Command) == 0 || h.Command[0] == "" {
				return fmt.Errorf("rlm.on_complete: handler %d (%q) has no command", i+1, h.Name)
			}
		}
	}
	if t := m.Trajectories; t != nil && t.RetentionDays != nil && *t.RetentionDays < 0 {
		return errors.New("trajectories.retention_days must be a number of days, 0 to keep every trajectory")
	}
	if m.Verbiage != nil {
		for _, d := range m.Verbiage.Documents {
			if slices.Contains(strings.Split(d, "/"), "..") {
				return fmt.Errorf("verbiage.documents: %q names a path outside the store", d)
			}
		}
	}
	return nil
}

// jsonKindOf names what JSON a Go type takes, for messages.
func jsonKindOf(t reflect.Type) string {
	switch t.Kind() {
	case reflect.Int, reflect.Int64, reflect.Int32, reflect.Uint, reflect.Uint64, reflect.Uint32:
		return "a whole number"
	case reflect.Float64, reflect.Float32:
		return "a number"
	case reflect.Bool:
		return "true or false"
	case reflect.String:
		return "a string"
	case reflect.Slice, reflect.Array:
		return "an array"
	case reflect.Pointer:
		return jsonKindOf(t.Elem())
	}
	return "an object"
}

// ValidateKnownFile checks a stored file the core has rules for: the
// server-side hook runs it on every pushed file, so the manifest is held
// to what `config` holds it to. It returns the rule broken
// ("store-settings"), or "" for a file it has nothing to say on; the
// features add theirs (aiwgstate.ValidateKnownFile).
func ValidateKnownFile(path string, body []byte) (rule, detail string) {
	if path == ManifestPath {
		// A manifest that does not validate would be in force on the
		// server and in every clone once the push lands.
		if err := CheckManifest(body); err != nil {
			return "store-settings", err.Error() + " (write it with aiwg-state config, which checks it)"
		}
	}
	if err := CheckTTLFile(path, body); err != nil {
		return "ttl", err.Error()
	}
	return "", ""
}
