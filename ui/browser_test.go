package ui_test

import (
	"context"
	"fmt"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	aiwgstate "github.com/aiwg/aiwg-state"
	"github.com/aiwg/aiwg-state/store"
	"github.com/aiwg/aiwg-state/ui"
)

// The end-to-end tests drive headless Chromium (Debian's chromium
// package). One browser serves every test; each test has its own tab.
// Without Chromium they skip, except under CI (CI set), where they fail.
//
// AIWG_UI_SCREENSHOTS=DIR keeps the screenshots of the main pages in DIR.

var (
	browserOnce   sync.Once
	browserCtx    context.Context
	browserCancel context.CancelFunc
	browserErr    error
	browserDir    string
)

func TestMain(m *testing.M) {
	if dir := os.Getenv("AIWG_UI_TEST_WRITER"); dir != "" {
		// The other process of TestBrowserLive: one write, its commit
		// printed.
		st, err := aiwgstate.Open(context.Background(), dir, store.Options{NoSync: true})
		if err == nil {
			var mu *store.Mutation
			if mu, err = st.Set(context.Background(), "docs/live.json", "n", []byte("1"), store.WriteOptions{Agent: "late-agent"}); err == nil {
				fmt.Println(mu.Commit)
			}
			st.Close()
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	code := m.Run()
	if browserCancel != nil {
		browserCancel()
	}
	if browserDir != "" {
		os.RemoveAll(browserDir)
	}
	os.Exit(code)
}

func chromiumPath() string {
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	return ""
}

// tab opens a new tab of the shared browser, closed when the test ends.
func tab(t *testing.T) context.Context {
	t.Helper()
	path := chromiumPath()
	if path == "" {
		if os.Getenv("CI") != "" {
			t.Fatal("chromium is not installed: the browser tests need it under CI (apt-get install chromium)")
		}
		t.Skip("chromium is not installed (apt-get install chromium): skipping the browser tests")
	}
	browserOnce.Do(func() {
		browserDir, browserErr = os.MkdirTemp("", "aiwg-ui-chromium-")
		if browserErr != nil {
			return
		}
		opts := []chromedp.ExecAllocatorOption{
			chromedp.ExecPath(path),
			chromedp.UserDataDir(browserDir),
			chromedp.Flag("headless", true),
			chromedp.Flag("no-sandbox", true),
			chromedp.Flag("disable-gpu", true),
			chromedp.Flag("disable-quic", true),
			chromedp.Flag("no-first-run", true),
			chromedp.Flag("no-default-browser-check", true),
			chromedp.Flag("disable-background-networking", true),
			chromedp.Flag("disable-component-update", true),
			chromedp.Flag("disable-sync", true),
			chromedp.Flag("disable-dev-shm-usage", true),
			chromedp.WindowSize(1280, 900),
		}
		alloc, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
		ctx, cancel := chromedp.NewContext(alloc)
		browserCtx = ctx
		browserCancel = func() { cancel(); cancelAlloc() }
		// Start the browser now, so a failure to start is reported once.
		browserErr = chromedp.Do(ctx)
	})
	if browserErr != nil {
		t.Fatalf("starting chromium: %v", browserErr)
	}
	ctx, cancel := chromedp.NewContext(browserCtx)
	ctx, cancelT := context.WithTimeout(ctx, 60*time.Second)
	t.Cleanup(func() { cancelT(); cancel() })
	return ctx
}

// serve starts the app over the fixture on a loopback port.
func serve(t *testing.T, f *fixture) string {
	t.Helper()
	srv := httptest.NewServer(ui.New(f.st, ui.Options{Poll: 50 * time.Millisecond}))
	// A page's event stream stays open while its tab does: end it
	// whichever is cleaned up first.
	t.Cleanup(func() { srv.CloseClientConnections(); srv.Close() })
	return srv.URL
}

// noScriptRan fails the test when a script of the fixture's set the flag.
func noScriptRan(t *testing.T, ctx context.Context, page string) {
	t.Helper()
	flag, err := chromedp.Run(ctx, chromedp.Evaluate[string](`String(window.__xss)`))
	if err != nil {
		t.Fatalf("%s: %v", page, err)
	}
	if flag != "undefined" {
		t.Errorf("%s: a script of the fixture ran (window.__xss = %s)", page, flag)
	}
	jsLinks, err := chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelectorAll('a[href^="javascript:" i], [onerror], [onfocus], [onload], img').length`))
	if err != nil {
		t.Fatalf("%s: %v", page, err)
	}
	if jsLinks != 0 {
		t.Errorf("%s: %d elements of the fixture's markup", page, jsLinks)
	}
}

func screenshot(t *testing.T, ctx context.Context, name string) {
	t.Helper()
	dir := os.Getenv("AIWG_UI_SCREENSHOTS")
	if dir == "" {
		dir = t.TempDir()
	}
	png, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
	if err != nil {
		t.Fatalf("screenshot of %s: %v", name, err)
	}
	if err := os.WriteFile(filepath.Join(dir, name+".png"), png, 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestBrowserPages opens each page on the fixture and reads what it
// shows.
func TestBrowserPages(t *testing.T) {
	ctx := tab(t)
	f := newFixture(t)
	base := serve(t, f)
	for _, c := range []struct {
		name, path, sel, want string
	}{
		{"overview", "/", `tr[data-branch="staging"] div.conflict`, "docs/plan.json#risk.level"},
		{"history", "/history", `table.history`, "topic-agent"},
		{"mutation", "/mutation/" + f.plan, `#agent`, "planner"},
		{"review", "/review?base=main&head=" + url.QueryEscape("agents/planner/main"), `table.conflicts`, "critical"},
		{"document", "/doc?path=docs/plan.json", `tr[data-key="risk.level"] .agent`, "reviewer"},
		{"key", "/key?path=docs/plan.json&key=risk.level", `table.keylog`, "critical"},
		{"files", "/files?dir=docs", `table.files`, "plan.json"},
		{"rlm", "/rlm/" + f.state, `#final`, "Quarter summarised"},
		{"trajectory", "/traj/" + f.traj, `ol.timeline`, "the search timed out"},
		{"states", "/rlm", `table.states`, f.state},
		{"trajectories", "/traj", `table.trajs`, "summarise"},
	} {
		if err := chromedp.Do(ctx, chromedp.Navigate(base+c.path), chromedp.WaitVisible(chromedp.CSS(c.sel))); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		text, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(c.sel)))
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if c.name == "trajectory" {
			// The chart's numbers are in its titles, which Text leaves out.
			chart, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.querySelector('#chart').textContent + ' ' + document.querySelectorAll('#chart rect.tokens').length + ' bars'`))
			if err != nil || !strings.Contains(chart, "3 bars") || !strings.Contains(chart, "2499 tokens") {
				t.Errorf("trajectory chart: %q, %v", chart, err)
			}
		}
		if !strings.Contains(text, c.want) {
			t.Errorf("%s: %q not in %q", c.name, c.want, text)
		}
		noScriptRan(t, ctx, c.name)
		screenshot(t, ctx, c.name)
	}
}

// TestBrowserClickThrough goes from the history to a mutation by its
// link and back.
func TestBrowserClickThrough(t *testing.T) {
	ctx := tab(t)
	f := newFixture(t)
	base := serve(t, f)
	link := chromedp.CSS(fmt.Sprintf(`tr[data-commit="%s"] a.commit`, f.mergeTopic))
	err := chromedp.Do(ctx,
		chromedp.Navigate(base+"/history"),
		chromedp.WaitVisible(link),
		chromedp.Click(link),
		chromedp.WaitVisible(chromedp.CSS(`#commit`)),
	)
	if err != nil {
		t.Fatal(err)
	}
	commit, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(`#commit`)))
	if err != nil {
		t.Fatal(err)
	}
	subject, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(`#subject`)))
	if err != nil {
		t.Fatal(err)
	}
	if commit != f.mergeTopic || !strings.Contains(subject, "merge topic") {
		t.Errorf("the mutation page shows %q %q, want %s", commit, subject, f.mergeTopic)
	}
	if err := chromedp.Do(ctx, chromedp.NavigateBack(), chromedp.WaitVisible(link)); err != nil {
		t.Fatal(err)
	}
	loc, err := chromedp.Run(ctx, chromedp.Location())
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasSuffix(loc, "/history") {
		t.Errorf("back at %s", loc)
	}
	// And by the page's own link back.
	err = chromedp.Do(ctx,
		chromedp.Click(link),
		chromedp.WaitVisible(chromedp.CSS(`#back`)),
		chromedp.Click(chromedp.CSS(`#back`)),
		chromedp.WaitVisible(chromedp.CSS(`table.history`)),
	)
	if err != nil {
		t.Fatal(err)
	}
}

// TestBrowserLive: a page shows the head move when another process
// commits to the store.
func TestBrowserLive(t *testing.T) {
	ctx := tab(t)
	f := newFixture(t)
	base := serve(t, f)
	if err := chromedp.Do(ctx, chromedp.Navigate(base+"/history"), chromedp.WaitVisible(chromedp.CSS(`#live-head`))); err != nil {
		t.Fatal(err)
	}
	// Let the page's event stream connect before the write.
	time.Sleep(300 * time.Millisecond)
	// This test program again, as the writer (TestMain).
	writer := exec.Command(os.Args[0], "-test.run", "^$")
	writer.Env = append(os.Environ(), "AIWG_UI_TEST_WRITER="+f.st.Dir())
	out, err := writer.Output()
	if err != nil {
		t.Fatalf("the writing process: %v", err)
	}
	m := &store.Mutation{Commit: strings.TrimSpace(string(out))}
	err = chromedp.Do(ctx,
		chromedp.WaitVisible(chromedp.CSS(fmt.Sprintf(`#live-head[data-commit="%s"]`, m.Commit))),
		chromedp.WaitVisible(chromedp.CSS(`#live-note`)),
	)
	if err != nil {
		t.Fatal(err)
	}
	subject, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(`#live-subject`)))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(subject, "late-agent") {
		t.Errorf("live subject %q", subject)
	}
	// The history page lists it at its top, as a link to the mutation.
	row := chromedp.CSS(fmt.Sprintf(`table.history tr.row.live[data-commit="%s"] a.commit`, m.Commit))
	if err := chromedp.Do(ctx, chromedp.WaitVisible(row)); err != nil {
		t.Fatal(err)
	}
	first, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.querySelector('table.history tr.row').getAttribute('data-commit')`))
	if err != nil || first != m.Commit {
		t.Errorf("the first row is %q, want the new commit %s (%v)", first, m.Commit, err)
	}
	agent, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(`table.history tr.row.live td.agent`)))
	if err != nil || agent != "late-agent" {
		t.Errorf("the new row's agent %q (%v)", agent, err)
	}
	screenshot(t, ctx, "live")
}

// TestBrowserXSS: names and values that are HTML, attribute breakers and
// javascript: URLs show as text, and no script of theirs runs.
func TestBrowserXSS(t *testing.T) {
	ctx := tab(t)
	f := newFixture(t)
	base := serve(t, f)
	q := url.QueryEscape
	for _, c := range []struct{ path, want string }{
		{"/", xssBranch},
		{"/", xssScript},
		{"/history?branch=" + q(xssBranch), xssAttr},
		{"/history?branch=" + q(xssBranch), xssAgent},
		{"/history?corr=" + q(xssScript), xssScript},
		{"/doc?path=evil/doc.json", xssURL},
		{"/doc?path=evil/doc.json", xssScript},
		{"/doc?path=" + q("evil/javascript:x.md"), xssAttr},
		{"/files?dir=evil", "javascript:x.md"},
		{"/doc?path=" + q(xssFile), xssFile},
		{"/review?base=main&head=" + q(xssBranch), xssURL},
		{"/key?path=evil/doc.json&key=link", xssURL},
	} {
		if err := chromedp.Do(ctx, chromedp.Navigate(base+c.path), chromedp.WaitReady(chromedp.CSS(`main`))); err != nil {
			t.Fatalf("%s: %v", c.path, err)
		}
		body, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.body.innerText`))
		if err != nil {
			t.Fatalf("%s: %v", c.path, err)
		}
		if !strings.Contains(body, c.want) {
			t.Errorf("%s: %q is not shown literally", c.path, c.want)
		}
		noScriptRan(t, ctx, c.path)
	}
	// Following every link of the hostile branch's history runs nothing
	// either: none is a javascript: URL, each stays on the app.
	if err := chromedp.Do(ctx, chromedp.Navigate(base+"/history?branch="+q(xssBranch)), chromedp.WaitReady(chromedp.CSS(`main`))); err != nil {
		t.Fatal(err)
	}
	hrefs, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`Array.from(document.querySelectorAll('a')).map(a => a.href)`))
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range hrefs {
		if !strings.HasPrefix(h, base+"/") {
			t.Errorf("a link leaves the app: %q", h)
		}
	}
}
