package ui

import (
	"bytes"
	"encoding/json"
	"net/http"
	"path"
	"strings"

	"github.com/aiwg/aiwg-state/store"
	"github.com/aiwg/aiwg-state/verbiage"
)

// readAt is the revision a page reads: ?rev= (a commit, branch, tag or
// any revision the CLI takes), else the branch.
func (a *app) readAt(r *http.Request) (store.ReadOptions, string) {
	rev := r.URL.Query().Get("rev")
	if rev == "" {
		return store.ReadOptions{Branch: a.branchOf(r)}, a.branchOf(r)
	}
	return store.ReadOptions{Branch: a.branchOf(r), At: rev}, rev
}

// storePath reads a path parameter as a store path: never a file of the
// machine, whatever it spells.
func storePath(p string, dir bool) (string, error) {
	if dir && (p == "" || p == "/" || p == ".") {
		return "", nil
	}
	c, err := verbiage.CleanStorePath(strings.TrimSuffix(p, "/"))
	if err != nil {
		return "", badRequest("%v", err)
	}
	return c, nil
}

type filesData struct {
	Rev     string
	Dir     string
	Parent  string
	Entries []store.Entry
}

func (a *app) files(r *http.Request) (string, *view, error) {
	ro, rev := a.readAt(r)
	dir, err := storePath(r.URL.Query().Get("dir"), true)
	if err != nil {
		return "", nil, err
	}
	es, err := a.st.List(r.Context(), dir, ro)
	if err != nil {
		return "", nil, err
	}
	d := &filesData{Rev: rev, Dir: dir, Entries: es}
	if dir != "" {
		d.Parent = path.Dir(dir)
		if d.Parent == "." {
			d.Parent = "/"
		}
	}
	title := "Files at " + rev
	if dir != "" {
		title += " — " + dir + "/"
	}
	return "files", &view{Title: title, Nav: "files", Data: d}, nil
}

type documentData struct {
	Path    string
	Rev     string
	Content string
	JSON    bool
	Blame   []store.BlameEntry
	Lines   []store.BlameLine
	History []*store.Mutation
}

// document is a file at a revision with its per-key blame (or per-line,
// for a file that is not JSON) and its last changes.
func (a *app) document(r *http.Request) (string, *view, error) {
	ctx := r.Context()
	ro, rev := a.readAt(r)
	p, err := storePath(r.URL.Query().Get("path"), false)
	if err != nil {
		return "", nil, err
	}
	raw, err := a.st.ReadRaw(ctx, p, ro)
	if err != nil {
		return "", nil, err
	}
	d := &documentData{Path: p, Rev: rev, Content: string(raw)}
	if json.Valid(raw) {
		// Cat leaves out what has expired, as every read of a document.
		if raw, err = a.st.Cat(ctx, p, ro); err != nil {
			return "", nil, err
		}
		d.JSON = true
		var b bytes.Buffer
		if json.Indent(&b, raw, "", "  ") == nil {
			d.Content = b.String()
		}
		if d.Blame, err = a.st.Blame(ctx, p, ro, store.BlameOptions{}); err != nil {
			return "", nil, err
		}
	} else if d.Lines, err = a.st.BlameLines(ctx, p, ro); err != nil {
		return "", nil, err
	}
	err = a.st.Log(ctx, store.LogOptions{ReadOptions: ro, File: p, Limit: 20}, func(m *store.Mutation) bool {
		d.History = append(d.History, m)
		return true
	})
	if err != nil {
		return "", nil, err
	}
	return "document", &view{Title: p + " at " + rev, Nav: "files", Data: d}, nil
}

type keyData struct {
	Path, Key, Rev string
	History        []*store.Mutation
}

// keyHistory is one key's history: each commit that changed its value,
// old → new, from the changed-paths index.
func (a *app) keyHistory(r *http.Request) (string, *view, error) {
	ro, rev := a.readAt(r)
	q := r.URL.Query()
	p, err := storePath(q.Get("path"), false)
	if err != nil {
		return "", nil, err
	}
	d := &keyData{Path: p, Key: q.Get("key"), Rev: rev}
	err = a.st.Log(r.Context(), store.LogOptions{ReadOptions: ro, File: p, Key: d.Key, Limit: 100}, func(m *store.Mutation) bool {
		d.History = append(d.History, m)
		return true
	})
	if err != nil {
		return "", nil, err
	}
	return "key", &view{Title: "History of " + p + "#" + d.Key, Nav: "files", Data: d}, nil
}
