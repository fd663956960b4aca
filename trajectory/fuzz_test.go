package trajectory

import (
	"errors"
	"testing"
	"time"

	"github.com/aiwg/aiwg-state/objects"
)

func FuzzParseIterationName(f *testing.F) {
	for _, s := range []string{"0001.json", "0100.json", "0000.json", "1.json", "00001.json", "+001.json", "0001.JSON", "abcd.json"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, name string) {
		n, ok := ParseIterationName(name)
		if !ok {
			return
		}
		if n < 1 || IterationName(n) != name {
			t.Fatalf("%q parsed as %d, which names %q", name, n, IterationName(n))
		}
	})
}

func FuzzParseAge(f *testing.F) {
	for _, s := range []string{"90d", "2w", "36h", "1h30m", "0d", "-1d", "99999999999d", "d", "1.5d", " 3d"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		d, err := ParseAge(s)
		if err == nil && (d < 0 || d > maxAge) {
			t.Fatalf("%q: %v out of range", s, d)
		}
	})
}

// FuzzImport parses arbitrary documents as `traj import` does: decode,
// split, validate, complete and report must never panic, and a document
// that splits and validates must survive a split/assemble round trip.
func FuzzImport(f *testing.F) {
	for _, s := range []string{
		`{"version": "1.0.0", "trajectory_id": "traj-00000001", "task_context": {"task_id": "task-00000001", "task_type": "t", "task_prompt": "p"}}`,
		`{"iterations": [{"iteration_number": 1, "thought": {"type": "goal", "content": "c"}, "action": {"tool": "A", "description": "d"}, "observation": {"status": "failure", "result": []}}]}`,
		`{"iterations": [1, 2]}`,
		`{"iterations": [{"iteration_number": 2}]}`,
		`{"metadata": {"started_at": "2026-01-01T00:00:00Z", "completed_at": "2025-01-01T00:00:00Z"}}`,
		`[]`,
	} {
		f.Add([]byte(s))
	}
	s := loadSchema(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		v, err := objects.Decode(data)
		if err != nil {
			return
		}
		doc, ok := v.(map[string]any)
		if !ok {
			return
		}
		header, its, err := Split(doc)
		if err != nil {
			if !errors.Is(err, ErrInvalid) {
				t.Fatalf("split error does not wrap ErrInvalid: %v", err)
			}
			return
		}
		if err := s.ValidateTrajectory(Assemble(header, its)); err != nil {
			if !errors.Is(err, ErrInvalid) {
				t.Fatalf("validation error does not wrap ErrInvalid: %v", err)
			}
		}
		done := Complete(header, its, Completion{Status: "success", Now: time.Unix(0, 0)})
		if _, err := objects.Encode(done); err != nil {
			t.Fatalf("a completed header does not encode: %v", err)
		}
		Report(Assemble(done, its))
		Analyze([]Run{{Header: done, Iterations: its}}, AnalyzeOptions{})
		back, _, err := Split(Assemble(header, its))
		if err != nil || !objects.Equal(back, header) {
			t.Fatalf("split/assemble round trip changed the header: %v", err)
		}
	})
}
