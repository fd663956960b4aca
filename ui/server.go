package ui

import (
	"bytes"
	"context"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"io/fs"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	aiwgstate "github.com/aiwg/aiwg-state"
	"github.com/aiwg/aiwg-state/internal/exitcode"
	"github.com/aiwg/aiwg-state/store"
)

//go:embed templates/*.html
var templateFS embed.FS

//go:embed static
var staticFS embed.FS

// CSP is the Content-Security-Policy of every response: nothing but the
// app's own script, style sheet and images, no inline script or style,
// no frames, forms or plugins. A value an agent wrote that slipped past
// escaping still could not run.
const CSP = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"

// Options tune the app.
type Options struct {
	// Branch is the branch pages start from ("" = the store's default).
	Branch string
	// AllowRemote accepts any Host header. Without it only the loopback
	// names (localhost, 127.0.0.1, [::1]) and Hosts are accepted, so a
	// web page elsewhere cannot reach the app through DNS rebinding.
	AllowRemote bool
	// Hosts are further host names accepted in the Host header.
	Hosts []string
	// PageSize is how many mutations a history page lists (default 50).
	PageSize int
	// Poll is how often the live pages' watch reads the branch (default
	// 250ms).
	Poll time.Duration
	// Now is the clock that ages (--since 2h) count from; nil = time.Now.
	Now func() time.Time
	// PageTimeout bounds the drawing of one page (default 20s): a page
	// past it answers 503 and its work stops.
	PageTimeout time.Duration
	// MaxPages is how many pages are drawn at once (default 4); a request
	// beyond them waits for a place until its deadline.
	MaxPages int
	// MaxReviewCommits bounds the commits of a range the pull-request
	// view judges (default 2,000); a longer one is the command line's.
	MaxReviewCommits int
}

// app is the handler New returns.
type app struct {
	st    *aiwgstate.Store
	opts  Options
	pages map[string]*template.Template
	mux   *http.ServeMux
	slots chan struct{} // one a page being drawn
}

// New returns the read-only web app over st. st stays the caller's to
// close, after the handler's last request. Each open page keeps one
// request open for its live head (server-sent events, ended when the page
// goes): http.Server.Shutdown waits for them, so give it a deadline.
func New(st *aiwgstate.Store, opts Options) http.Handler {
	if opts.PageSize <= 0 {
		opts.PageSize = 50
	}
	if opts.Poll <= 0 {
		opts.Poll = 250 * time.Millisecond
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Branch == "" {
		opts.Branch = st.Branch()
	}
	if opts.PageTimeout <= 0 {
		opts.PageTimeout = 20 * time.Second
	}
	if opts.MaxPages <= 0 {
		opts.MaxPages = 4
	}
	if opts.MaxReviewCommits <= 0 {
		opts.MaxReviewCommits = 2000
	}
	a := &app{st: st, opts: opts, pages: parsePages(), mux: http.NewServeMux(), slots: make(chan struct{}, opts.MaxPages)}
	static, err := fs.Sub(staticFS, "static")
	if err != nil {
		panic(err) // the embedded tree is part of the binary
	}
	a.mux.Handle("GET /static/", http.StripPrefix("/static/", http.FileServerFS(static)))
	a.mux.HandleFunc("GET /{$}", a.page(a.overview))
	a.mux.HandleFunc("GET /history", a.page(a.history))
	a.mux.HandleFunc("GET /mutation/{rev}", a.page(a.mutation))
	a.mux.HandleFunc("GET /review", a.page(a.review))
	a.mux.HandleFunc("GET /files", a.page(a.files))
	a.mux.HandleFunc("GET /doc", a.page(a.document))
	a.mux.HandleFunc("GET /key", a.page(a.keyHistory))
	a.mux.HandleFunc("GET /rlm", a.page(a.states))
	a.mux.HandleFunc("GET /rlm/{id}", a.page(a.state))
	a.mux.HandleFunc("GET /traj", a.page(a.trajectories))
	a.mux.HandleFunc("GET /traj/{id}", a.page(a.trajectory))
	a.mux.HandleFunc("GET /events", a.live)
	return a
}

// ServeHTTP refuses what the app never does (any method but GET and
// HEAD), a Host it does not answer to, and sets the security headers.
func (a *app) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("Content-Security-Policy", CSP)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("Cross-Origin-Opener-Policy", "same-origin")
	h.Set("Cross-Origin-Resource-Policy", "same-origin")
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		h.Set("Allow", "GET, HEAD")
		http.Error(w, "the review app is read-only: only GET and HEAD", http.StatusMethodNotAllowed)
		return
	}
	if !a.hostAllowed(r.Host) {
		http.Error(w, "unknown host: the review app answers to localhost and its loopback addresses", http.StatusMisdirectedRequest)
		return
	}
	if r.Header.Get("Sec-Fetch-Site") == "cross-site" && r.Header.Get("Sec-Fetch-Mode") != "navigate" {
		// A page elsewhere may link here, but not fetch, embed or
		// script it: its requests would only cost the app work.
		http.Error(w, "the review app answers other sites' links, not their requests", http.StatusForbidden)
		return
	}
	a.mux.ServeHTTP(w, r)
}

func (a *app) hostAllowed(hostport string) bool {
	if a.opts.AllowRemote {
		return true
	}
	host := hostport
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		host = h
	}
	host = strings.TrimSuffix(strings.TrimPrefix(host, "["), "]")
	if strings.EqualFold(host, "localhost") {
		return true
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsLoopback() {
		return true
	}
	for _, x := range a.opts.Hosts {
		if strings.EqualFold(host, x) {
			return true
		}
	}
	return false
}

// view is what a handler gives its page's template.
type view struct {
	Title  string
	Nav    string // the navigation entry to highlight
	Branch string // the branch the live head follows
	Head   *store.Mutation
	Data   any
}

// handlerFunc renders one page: it returns its template's name and view,
// or an error that becomes the error page.
type handlerFunc func(r *http.Request) (string, *view, error)

func (a *app) page(fn handlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		// Every page is bounded in time and in how many are drawn at
		// once, so no request (a review of a long range, say) holds the
		// app or the machine.
		ctx, cancel := context.WithTimeout(r.Context(), a.opts.PageTimeout)
		defer cancel()
		select {
		case a.slots <- struct{}{}:
			defer func() { <-a.slots }()
		case <-ctx.Done():
			a.fail(w, r, ctx.Err())
			return
		}
		r = r.WithContext(ctx)
		name, v, err := fn(r)
		if err == nil && ctx.Err() != nil {
			err = ctx.Err()
		}
		if err != nil {
			a.fail(w, r, err)
			return
		}
		if v.Branch == "" {
			v.Branch = a.opts.Branch
		}
		if v.Head == nil {
			v.Head, _ = a.st.Show(r.Context(), "HEAD", store.ReadOptions{Branch: v.Branch})
		}
		a.render(w, http.StatusOK, name, v)
	}
}

func (a *app) render(w http.ResponseWriter, status int, name string, v *view) {
	var buf bytes.Buffer
	if err := a.pages[name].ExecuteTemplate(&buf, "layout", v); err != nil {
		http.Error(w, "the page could not be drawn: "+err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	w.Write(buf.Bytes())
}

// errBadRequest marks an error of the request itself (a parameter that
// does not read).
var errBadRequest = errors.New("bad request")

func badRequest(format string, args ...any) error {
	return fmt.Errorf("%w: %s", errBadRequest, fmt.Sprintf(format, args...))
}

func (a *app) fail(w http.ResponseWriter, r *http.Request, err error) {
	status := http.StatusInternalServerError
	_, kind := exitcode.Of(err)
	switch {
	case errors.Is(err, context.Canceled):
		return
	case errors.Is(err, context.DeadlineExceeded):
		status = http.StatusServiceUnavailable
		err = fmt.Errorf("the page took longer than %v to draw and was stopped; narrow it, or ask the command line (aiwg-state review, log), which has no such bound", a.opts.PageTimeout)
	case errors.Is(err, errBadRequest):
		status = http.StatusBadRequest
	case strings.Contains(kind, "not_found") || errors.Is(err, store.ErrNotFound):
		status = http.StatusNotFound
	case kind != exitcode.KindUnexpected:
		status = http.StatusBadRequest
	}
	a.render(w, status, "error", &view{Title: http.StatusText(status), Branch: a.opts.Branch, Data: err.Error()})
}

// parsePages parses each page's template with the layout it shares.
func parsePages() map[string]*template.Template {
	base := template.Must(template.New("").Funcs(funcs).ParseFS(templateFS, "templates/layout.html", "templates/_parts.html"))
	names, err := fs.Glob(templateFS, "templates/*.html")
	if err != nil {
		panic(err)
	}
	pages := map[string]*template.Template{}
	for _, n := range names {
		name := strings.TrimSuffix(strings.TrimPrefix(n, "templates/"), ".html")
		if name == "layout" || strings.HasPrefix(name, "_") {
			continue
		}
		pages[name] = template.Must(template.Must(base.Clone()).ParseFS(templateFS, n))
	}
	return pages
}

var funcs = template.FuncMap{
	"short": shortHash,
	"json":  compactJSON,
	"time": func(t time.Time) string {
		if t.IsZero() {
			return ""
		}
		return t.UTC().Format("2006-01-02 15:04:05")
	},
	"link": link,
	"add":  func(a, b int) int { return a + b },
}

func shortHash(h string) string {
	if len(h) > 10 {
		return h[:10]
	}
	return h
}

// link is a URL of the app: path and query pairs, every value
// query-escaped, so a value an agent chose stays a value.
func link(path string, kv ...string) string {
	q := url.Values{}
	for i := 0; i+1 < len(kv); i += 2 {
		if kv[i+1] != "" {
			q.Set(kv[i], kv[i+1])
		}
	}
	if len(q) == 0 {
		return path
	}
	return path + "?" + q.Encode()
}

// compactJSON is a value as one line of JSON, for display (html/template
// escapes it where it lands).
func compactJSON(v any) string {
	switch x := v.(type) {
	case json.RawMessage:
		var b bytes.Buffer
		if json.Compact(&b, x) == nil {
			return b.String()
		}
		return string(x)
	case []byte:
		return string(x)
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return fmt.Sprint(v)
	}
	return strings.TrimSpace(b.String())
}

func (a *app) branchOf(r *http.Request) string {
	if b := r.URL.Query().Get("branch"); b != "" {
		return b
	}
	return a.opts.Branch
}
