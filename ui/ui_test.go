package ui_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aiwg/aiwg-state/internal/signtest"
	"github.com/aiwg/aiwg-state/internal/storetest"
	"github.com/aiwg/aiwg-state/merge"
	"github.com/aiwg/aiwg-state/store"
	"github.com/aiwg/aiwg-state/ui"
)

// get fetches path from the app over the fixture and returns the status
// and body.
func get(t *testing.T, h http.Handler, path string) (int, string) {
	t.Helper()
	req := httptest.NewRequest("GET", "http://127.0.0.1:8080"+path, nil)
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	body, _ := io.ReadAll(rec.Result().Body)
	return rec.Code, string(body)
}

func wantIn(t *testing.T, page, body string, wants ...string) {
	t.Helper()
	for _, w := range wants {
		if !strings.Contains(body, w) {
			t.Errorf("%s: %q missing from the page", page, w)
		}
	}
}

func TestPages(t *testing.T) {
	f := newFixture(t)
	h := ui.New(f.st, ui.Options{})
	q := url.QueryEscape
	for _, c := range []struct {
		path  string
		wants []string
	}{
		{"/", []string{"agents/planner/main", "topic", "staging", "merge in progress: 1", "docs/plan.json#risk.level", "build/artifacts", "builder", "tasks", "<td class=\"num\">2</td>"}},
		{"/history", []string{"topic-agent", "integrator", "|\\", "| *", "|/", "run-42"}},
		{"/history?agent=reviewer", []string{"reviewer"}},
		{"/history?file=docs/plan.json&key=risk.level", []string{"&#34;low&#34; → &#34;high&#34;", "&#34;high&#34; → &#34;critical&#34;"}},
		{"/history?corr=run-42", []string{"planner"}},
		{"/history?since=2026-11-01&until=2026-11-01T09:02:00Z", []string{"reviewer"}},
		{"/mutation/" + f.plan, []string{"Correlation-Id", "run-42", "docs/plan.json", "added", "Ship the report", "none"}},
		{"/mutation/" + f.mergeTopic, []string{"parent 2", "docs/topic.json"}},
		{"/mutation/" + f.report, []string{`<span class="same">Summary`, `<span class="removed">Costs fell.`, `<span class="added">Costs fell sharply.`}},
		{"/review?base=main&head=agents/planner/main", []string{"conflict", "risk.level", "&#34;critical&#34;", "&#34;medium&#34;", "items.1", "taken"}},
		{"/files?dir=docs", []string{"plan.json", "topic.json"}},
		{"/doc?path=docs/plan.json", []string{"Ship the final report", "reviewer", "risk.level", "planner", "/key?"}},
		{"/doc?path=docs/plan.json&rev=" + f.plan, []string{"&#34;low&#34;", "Ship the report"}},
		{"/doc?path=notes/readme.md", []string{"second line", "writer"}},
		{"/key?path=docs/plan.json&key=risk.level", []string{"critical", "reviewer", "create"}},
		{"/rlm", []string{f.state, "Quarter summarised"}},
		{"/rlm/" + f.state, []string{"second pass", "before_review", "first pass", "Quarter summarised", "complete"}},
		{"/traj", []string{f.traj, "summarise", "success"}},
		{"/traj/" + f.traj, []string{"<svg", "<rect class=\"tokens\"", "<polyline", "the search timed out", "overall_quality", "2499 tokens"}},
		{"/history?branch=" + q(xssBranch), []string{"&lt;script&gt;"}},
	} {
		code, body := get(t, h, c.path)
		if code != 200 {
			t.Errorf("%s: status %d: %.400s", c.path, code, body)
			continue
		}
		wantIn(t, c.path, body, c.wants...)
	}
	// A filtered page lists the merge without drawing a lane it could
	// not close.
	if _, body := get(t, h, "/history?agent=integrator"); !strings.Contains(body, "merge topic into main") || strings.Contains(body, "|\\") {
		t.Errorf("history of one agent: lanes drawn or the merge missing")
	}
	wantIn(t, "state", func() string { _, b := get(t, h, "/rlm/"+f.state); return b }(), "checkpoints/"+f.state+"/before_review")
}

func TestReadOnlyAndHeaders(t *testing.T) {
	f := newFixture(t)
	h := ui.New(f.st, ui.Options{})
	head := storetest.Git(t, f.st, "rev-parse", "main")
	for _, m := range []string{"POST", "PUT", "DELETE", "PATCH", "OPTIONS"} {
		req := httptest.NewRequest(m, "http://127.0.0.1/", strings.NewReader("x"))
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != http.StatusMethodNotAllowed {
			t.Errorf("%s: status %d, want 405", m, rec.Code)
		}
	}
	req := httptest.NewRequest("GET", "http://127.0.0.1/", nil)
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	csp := rec.Header().Get("Content-Security-Policy")
	if !strings.Contains(csp, "script-src 'self'") || !strings.Contains(csp, "default-src 'none'") || strings.Contains(csp, "unsafe") {
		t.Errorf("Content-Security-Policy %q", csp)
	}
	if rec.Header().Get("X-Content-Type-Options") != "nosniff" {
		t.Error("no nosniff")
	}
	if got := storetest.Git(t, f.st, "rev-parse", "main"); got != head {
		t.Errorf("main moved from %s to %s", head, got)
	}
}

func TestHostCheck(t *testing.T) {
	f := newFixture(t)
	for _, c := range []struct {
		host   string
		opts   ui.Options
		status int
	}{
		{"127.0.0.1:8080", ui.Options{}, 200},
		{"localhost:8080", ui.Options{}, 200},
		{"[::1]:8080", ui.Options{}, 200},
		{"LOCALHOST", ui.Options{}, 200},
		{"attacker.example:8080", ui.Options{}, http.StatusMisdirectedRequest},
		{"127.0.0.1.attacker.example", ui.Options{}, http.StatusMisdirectedRequest},
		{"review.internal:80", ui.Options{Hosts: []string{"review.internal"}}, 200},
		{"attacker.example", ui.Options{AllowRemote: true}, 200},
	} {
		req := httptest.NewRequest("GET", "/", nil)
		req.Host = c.host
		rec := httptest.NewRecorder()
		ui.New(f.st, c.opts).ServeHTTP(rec, req)
		if rec.Code != c.status {
			t.Errorf("Host %q: status %d, want %d", c.host, rec.Code, c.status)
		}
	}
}

// TestNoReadOutsideTheStore: a path is a store path at a revision, never
// a file of the machine.
func TestNoReadOutsideTheStore(t *testing.T) {
	f := newFixture(t)
	h := ui.New(f.st, ui.Options{})
	for _, p := range []string{
		"/doc?path=../../../../etc/passwd", "/doc?path=/etc/passwd", "/doc?path=docs/../../config",
		"/doc?path=.git/config", "/doc?path=config", "/files?dir=..", "/files?dir=/etc", "/key?path=../HEAD&key=a",
		"/history?file=../../etc/passwd", "/static/../fixture_test.go", "/static/../../go.mod", "/doc?path=HEAD",
		"/mutation/..%2F..%2Fetc%2Fpasswd", "/rlm/..%2F..", "/traj/..%2Fconfig",
	} {
		code, body := get(t, h, p)
		if code == 200 || strings.Contains(body, "root:") || strings.Contains(body, "[core]") || strings.Contains(body, "package ui") || strings.Contains(body, "module github.com") {
			t.Errorf("%s: status %d: %.300s", p, code, body)
		}
	}
}

// TestEscaped: every page with hostile names and values holds no markup
// of theirs, only the app's own script tag.
func TestEscaped(t *testing.T) {
	f := newFixture(t)
	h := ui.New(f.st, ui.Options{})
	evil := storetest.Git(t, f.st, "rev-parse", xssBranch)
	for _, p := range []string{
		"/", "/history", "/history?branch=" + url.QueryEscape(xssBranch), "/history?agent=" + url.QueryEscape(xssAgent),
		"/history?corr=" + url.QueryEscape(xssScript), "/mutation/" + strings.TrimSpace(evil),
		"/review?base=main&head=" + url.QueryEscape(xssBranch), "/files?dir=evil", "/doc?path=evil/doc.json",
		"/doc?path=" + url.QueryEscape("evil/javascript:x.md"), "/key?path=evil/doc.json&key=link",
		"/doc?path=" + url.QueryEscape(xssFile), "/history?file=" + url.QueryEscape(xssFile) + "&branch=" + url.QueryEscape(xssBranch),
	} {
		code, body := get(t, h, p)
		if code != 200 {
			t.Errorf("%s: status %d: %.300s", p, code, body)
		}
		if n := strings.Count(body, "<script"); n != 1 {
			t.Errorf("%s: %d script tags", p, n)
		}
		for _, bad := range []string{"<img", "onerror=\"", "onfocus=\"", "href=\"javascript:", "<script>window"} {
			if strings.Contains(body, bad) {
				t.Errorf("%s: %q in the page", p, bad)
			}
		}
	}
}

func TestPagination(t *testing.T) {
	f := newFixture(t)
	forks := 0
	for size := 1; size <= 6; size++ {
		forks += pages(t, f, size)
	}
	if forks == 0 {
		t.Error("no page ended beside an open lane")
	}
}

// pages follows the history's pages of size mutations each and checks
// them against git and against one long page; it returns how many links
// carried an open lane.
func pages(t *testing.T, f *fixture, size int) (forks int) {
	h := ui.New(f.st, ui.Options{PageSize: size})
	want := strings.Fields(storetest.Git(t, f.st, "rev-list", "--first-parent", "main"))
	var got, lanes []string
	graph := regexp.MustCompile(`<td class="graph">([^<]*)</td>`)
	next := "/history"
	for pages := 0; next != ""; pages++ {
		if pages > len(want) {
			t.Fatal("the pages do not end")
		}
		code, body := get(t, h, next)
		if code != 200 {
			t.Fatalf("%s: %d", next, code)
		}
		// The main line's rows only: merged branches' rows are drawn
		// with a lane.
		for _, row := range strings.Split(body, "<tr class=\"row\" data-commit=\"")[1:] {
			commit := row[:40]
			if strings.Contains(row, "<td class=\"graph\">| ") {
				continue
			}
			got = append(got, commit)
		}
		for _, m := range graph.FindAllStringSubmatch(body, -1) {
			lanes = append(lanes, m[1])
		}
		next = ""
		if i := strings.Index(body, `id="older"`); i >= 0 {
			href := body[strings.LastIndex(body[:i], `href="`)+6:]
			next = strings.ReplaceAll(href[:strings.Index(href, `"`)], "&amp;", "&")
			if strings.Contains(next, "lanes=") {
				forks++
			}
		}
	}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("pages of %d: the pages list\n%v\ngit rev-list --first-parent lists\n%v", size, got, want)
	}
	// The lanes drawn page by page are those of one long page: a lane
	// left open goes on on the next.
	_, one := get(t, ui.New(f.st, ui.Options{PageSize: 1000}), "/history")
	var whole []string
	for _, m := range graph.FindAllStringSubmatch(one, -1) {
		whole = append(whole, m[1])
	}
	if strings.Join(lanes, ",") != strings.Join(whole, ",") {
		t.Errorf("pages of %d: lanes page by page\n%q\non one page\n%q", size, lanes, whole)
	}
	// A filter the index does not answer still pages.
	code, body := get(t, h, "/history?agent=rlm-agent")
	if code != 200 || strings.Count(body, "<tr class=\"row\"") != size || !strings.Contains(body, `id="older"`) {
		t.Errorf("agent filter: %d, %d rows", code, strings.Count(body, "<tr class=\"row\""))
	}
	return forks
}

func TestNotFound(t *testing.T) {
	f := newFixture(t)
	h := ui.New(f.st, ui.Options{})
	for _, p := range []string{"/mutation/0123456789012345678901234567890123456789", "/mutation/mut-00000000", "/doc?path=nope.json", "/rlm/state-00000000", "/traj/traj-00000000", "/nowhere"} {
		if code, body := get(t, h, p); code != 404 {
			t.Errorf("%s: status %d, want 404: %.200s", p, code, body)
		}
	}
	for _, p := range []string{"/history?since=yesterdayish", "/history?key=a", "/review?base=main"} {
		if code, _ := get(t, h, p); code != 400 {
			t.Errorf("%s: status %d, want 400", p, code)
		}
	}
}

// TestBoundedPages: no request holds the app: a review of a range past
// the bound is the command line's, a page past its deadline stops with
// 503, and another site's page may link to the app but not fetch it.
func TestBoundedPages(t *testing.T) {
	f := newFixture(t)
	const review = "/review?base=main&head=agents/planner/main"
	if code, body := get(t, ui.New(f.st, ui.Options{}), review); code != 200 {
		t.Fatalf("review: %d %.300s", code, body)
	}
	if code, body := get(t, ui.New(f.st, ui.Options{MaxReviewCommits: 1}), review); code != 400 || !strings.Contains(body, "aiwg-state review main...agents/planner/main") {
		t.Errorf("a review past the bound: %d %.300s", code, body)
	}
	if code, body := get(t, ui.New(f.st, ui.Options{PageTimeout: time.Nanosecond}), "/history"); code != 503 || !strings.Contains(body, "longer than") {
		t.Errorf("a page past its deadline: %d %.300s", code, body)
	}
	h := ui.New(f.st, ui.Options{})
	for _, c := range []struct {
		site, mode string
		want       int
	}{{"cross-site", "no-cors", 403}, {"cross-site", "cors", 403}, {"cross-site", "navigate", 200}, {"same-origin", "cors", 200}, {"", "", 200}} {
		req := httptest.NewRequest("GET", "http://127.0.0.1:8080/history", nil)
		if c.site != "" {
			req.Header.Set("Sec-Fetch-Site", c.site)
			req.Header.Set("Sec-Fetch-Mode", c.mode)
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != c.want {
			t.Errorf("Sec-Fetch-Site %q, mode %q: %d, want %d", c.site, c.mode, rec.Code, c.want)
		}
	}
}

func TestLiveEvents(t *testing.T) {
	f := newFixture(t)
	srv := httptest.NewServer(ui.New(f.st, ui.Options{Poll: 20 * time.Millisecond}))
	defer srv.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", srv.URL+"/events?branch=main", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Fatalf("Content-Type %q", ct)
	}
	br := bufio.NewReader(resp.Body)
	if line, _ := br.ReadString('\n'); !strings.HasPrefix(line, ": watching") {
		t.Fatalf("first line %q", line)
	}
	m, err := f.st.Set(ctx, "docs/live.json", "n", []byte("1"), store.WriteOptions{Agent: "late-agent"})
	if err != nil {
		t.Fatal(err)
	}
	next := func() string {
		t.Helper()
		for {
			line, err := br.ReadString('\n')
			if err != nil {
				t.Fatal(err)
			}
			if strings.HasPrefix(line, "data: ") {
				return line
			}
		}
	}
	if line := next(); !strings.Contains(line, m.Commit) || !strings.Contains(line, "late-agent") || !strings.Contains(line, `"mainline":true`) {
		t.Errorf("event %q", line)
	}
	// A merge brings its branch's commits first, off the line, then
	// itself, on it.
	if _, err := f.st.CreateBranch(ctx, "side", "main"); err != nil {
		t.Fatal(err)
	}
	for _, v := range []string{"1", "2"} {
		if _, err := f.st.Set(ctx, "docs/side.json", "v", []byte(v), store.WriteOptions{Agent: "side-agent", Branch: "side"}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := f.st.Merges().Merge(ctx, "side", merge.MergeOptions{Into: "main", NoFF: true, Write: store.WriteOptions{Agent: "merger"}}); err != nil {
		t.Fatal(err)
	}
	for i, want := range []string{`"agent":"side-agent"`, `"agent":"side-agent"`, `"agent":"merger"`} {
		line := next()
		mainline := strings.Contains(line, `"mainline":true`)
		if !strings.Contains(line, want) || mainline != (i == 2) {
			t.Errorf("event %d after the merge: %q", i, line)
		}
	}
}

// TestSignatureStatus: a mutation page says whether the commit is signed
// by a key the policy lists for its agent.
func TestSignatureStatus(t *testing.T) {
	signtest.NeedSSHKeygen(t)
	ctx := context.Background()
	st := storetest.New(t)
	alice := signtest.NewKey(t, t.TempDir(), "alice")
	if _, err := st.SetPolicy(ctx, []byte(`{"default": "allow", "rules": [], "signers": {"alice": ["`+alice.Public+`"]}}`), store.WriteOptions{Agent: "admin"}); err != nil {
		t.Fatal(err)
	}
	storetest.Git(t, st, "config", "aiwg.alice.signingKey", alice.Path)
	signed, err := st.Set(ctx, "docs/a.json", "v", []byte("1"), store.WriteOptions{Agent: "alice"})
	if err != nil {
		t.Fatal(err)
	}
	unsigned, err := st.Set(ctx, "docs/a.json", "v", []byte("2"), store.WriteOptions{Agent: "bob"})
	if err != nil {
		t.Fatal(err)
	}
	h := ui.New(st, ui.Options{})
	for commit, want := range map[string]string{signed.Commit: `<span class="badge good">good</span> alice`, unsigned.Commit: `<span class="badge none">none</span>`} {
		code, body := get(t, h, "/mutation/"+commit)
		if code != 200 || !strings.Contains(body, want) {
			t.Errorf("%s: %d, want %q in the signature", commit, code, want)
		}
	}
}

// TestAheadBehind: the overview's counts are git's (git rev-list
// --first-parent --count), for branches forked from main's line, behind
// it, and merged into it.
func TestAheadBehind(t *testing.T) {
	f := newFixture(t)
	// A branch that synced main into itself: its fork is off its own
	// first-parent line.
	ctx := context.Background()
	if _, err := f.st.CreateBranch(ctx, "synced", "topic"); err != nil {
		t.Fatal(err)
	}
	if _, err := f.st.Set(ctx, "docs/synced.json", "a", []byte("1"), store.WriteOptions{Agent: "s", Branch: "synced"}); err != nil {
		t.Fatal(err)
	}
	if _, err := f.st.Merges().Merge(ctx, "main", merge.MergeOptions{Into: "synced", NoFF: true, Write: store.WriteOptions{Agent: "s", Branch: "synced"}}); err != nil {
		t.Fatal(err)
	}
	_, body := get(t, ui.New(f.st, ui.Options{}), "/")
	row := regexp.MustCompile(`<tr data-branch="([a-z/]+)">\s*<td>.*\s*<td class="num">(\d+)</td>\s*<td class="num">(\d+)</td>`)
	seen := 0
	for _, m := range row.FindAllStringSubmatch(body, -1) {
		if m[1] == "main" {
			continue
		}
		seen++
		ahead := strings.TrimSpace(storetest.Git(t, f.st, "rev-list", "--first-parent", "--count", "main.."+m[1]))
		behind := strings.TrimSpace(storetest.Git(t, f.st, "rev-list", "--first-parent", "--count", m[1]+"..main"))
		if m[2] != ahead || m[3] != behind {
			t.Errorf("%s: ahead %s behind %s, git says %s and %s", m[1], m[2], m[3], ahead, behind)
		}
	}
	if seen < 4 {
		t.Errorf("%d branches checked", seen)
	}
}

// TestOverviewManyBranches: a swarm's agent branches are listed most
// recent first, 50 unless all are asked for.
func TestOverviewManyBranches(t *testing.T) {
	ctx := context.Background()
	st := storetest.New(t)
	if _, err := st.Set(ctx, "d.json", "a", []byte("1"), store.WriteOptions{Agent: "seed"}); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 60; i++ {
		b := "agents/a" + strconv.Itoa(100+i) + "/main"
		if _, err := st.CreateBranch(ctx, b, "main"); err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			// The oldest name, written last: listed first.
			if _, err := st.Set(ctx, "d.json", "b", []byte("2"), store.WriteOptions{Agent: "late", Branch: b}); err != nil {
				t.Fatal(err)
			}
		}
	}
	h := ui.New(st, ui.Options{})
	_, body := get(t, h, "/")
	if n := strings.Count(body, `<tr data-branch="agents/`); n != 50 || !strings.Contains(body, "10 less recently written branches") {
		t.Errorf("the overview lists %d agent branches", n)
	}
	if i, j := strings.Index(body, `data-branch="agents/a100/main"`), strings.Index(body, `data-branch="agents/a101/main"`); i < 0 || (j >= 0 && j < i) {
		t.Error("the branch written last is not listed first")
	}
	if _, body = get(t, h, "/?branches=all"); strings.Count(body, `<tr data-branch="agents/`) != 60 {
		t.Errorf("?branches=all lists %d agent branches", strings.Count(body, `<tr data-branch="agents/`))
	}
}

// TestMutationPagesItsFiles: a commit of many files is shown a page of
// files at a time, every file on one of the pages.
func TestMutationPagesItsFiles(t *testing.T) {
	st := storetest.New(t)
	var ops []store.Op
	for i := 0; i < 150; i++ {
		ops = append(ops, store.Op{Op: "put", File: fmt.Sprintf("import/f%03d.json", i), Value: []byte(fmt.Sprintf(`{"n":%d}`, i))})
	}
	m, err := st.Apply(context.Background(), ops, store.WriteOptions{Agent: "importer"})
	if err != nil {
		t.Fatal(err)
	}
	h := ui.New(st, ui.Options{})
	seen := map[string]bool{}
	next := "/mutation/" + m.Commit
	for pages := 0; next != ""; pages++ {
		if pages > 2 {
			t.Fatal("the pages do not end")
		}
		code, body := get(t, h, next)
		if code != 200 {
			t.Fatalf("%s: %d", next, code)
		}
		for i := 0; i < 150; i++ {
			if strings.Contains(body, fmt.Sprintf("import/f%03d.json", i)) {
				seen[fmt.Sprint(i)] = true
			}
		}
		next = ""
		if i := strings.Index(body, `id="next-files"`); i >= 0 {
			href := body[strings.LastIndex(body[:i], `href="`)+6:]
			next = strings.ReplaceAll(href[:strings.Index(href, `"`)], "&amp;", "&")
		}
	}
	if len(seen) != 150 {
		t.Errorf("the pages showed %d of the 150 files", len(seen))
	}
	if _, body := get(t, h, "/mutation/"+m.Commit); !strings.Contains(body, "Files 1–100 of 150") {
		t.Errorf("the first page does not say which files it shows")
	}
}
