package ui_test

import (
	"net/http/httptest"
	"testing"

	"github.com/aiwg/aiwg-state/ui"
)

// BenchmarkPages draws each page of the small fixture, server-side. The
// figures on a 100,000-commit store come from go run ./bench/ui.
func BenchmarkPages(b *testing.B) {
	f := newFixture(b)
	h := ui.New(f.st, ui.Options{})
	for _, p := range []struct{ name, path string }{
		{"overview", "/"},
		{"history", "/history"},
		{"mutation", "/mutation/" + f.mergeTopic},
		{"review", "/review?base=main&head=agents/planner/main"},
		{"document", "/doc?path=docs/plan.json"},
		{"state", "/rlm/" + f.state},
		{"trajectory", "/traj/" + f.traj},
	} {
		b.Run(p.name, func(b *testing.B) {
			for b.Loop() {
				rec := httptest.NewRecorder()
				h.ServeHTTP(rec, httptest.NewRequest("GET", "http://127.0.0.1"+p.path, nil))
				if rec.Code != 200 {
					b.Fatalf("%s: %d", p.path, rec.Code)
				}
			}
		})
	}
}
