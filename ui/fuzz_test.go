package ui_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/aiwg/aiwg-state/ui"
)

var (
	fuzzOnce    sync.Once
	fuzzHandler http.Handler
)

// FuzzRequest sends any path and query to the app over the hostile
// fixture: whatever a link or a person types, the app answers without
// panicking, and a page holds no markup but its own (one script tag, the
// app's; no element or handler of the fixture's).
func FuzzRequest(f *testing.F) {
	for _, s := range []string{
		"/", "/history?agent=planner&file=docs/plan.json&key=risk.level&since=2h&until=now&at=HEAD~1",
		"/doc?path=evil/doc.json&rev=main~2", "/review?range=main...topic", "/key?path=docs/plan.json&key=items.0",
		"/mutation/mut-00000000.1", "/rlm/state-0", "/traj/traj-0", "/files?dir=evil&rev=HEAD@{0}",
		"/history?branch=%22%3E%3Cimg%2Fsrc%3Dx%2Fonerror%3Dwindow.__xss%3D4%3E", "/doc?path=%00", "/static/app.js",
	} {
		f.Add(s)
	}
	fuzzOnce.Do(func() { fuzzHandler = ui.New(newFixture(f).st, ui.Options{}) })
	f.Fuzz(func(t *testing.T, target string) {
		if !strings.HasPrefix(target, "/") || strings.HasPrefix(target, "/events") {
			return
		}
		req, err := http.NewRequest("GET", "http://127.0.0.1"+target, nil)
		if err != nil {
			return
		}
		rec := httptest.NewRecorder()
		fuzzHandler.ServeHTTP(rec, req)
		body := rec.Body.String()
		if !strings.HasPrefix(rec.Header().Get("Content-Type"), "text/html") {
			return
		}
		if n := strings.Count(body, "<script"); n > 1 {
			t.Errorf("%s: %d script tags", target, n)
		}
		for _, bad := range []string{"<img", "onerror=\"", "onfocus=\"", "href=\"javascript:"} {
			if strings.Contains(body, bad) {
				t.Errorf("%s: %q in the page", target, bad)
			}
		}
	})
}
