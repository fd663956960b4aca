package mcp

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/aiwg/aiwg-state/objects"
	"github.com/aiwg/aiwg-state/repo"
	"github.com/aiwg/aiwg-state/store"
)

// Documents are resources named aiwg://REV/PATH: REV a branch (the
// document as it is now, which a client may subscribe to) or any
// revision (a commit, a tag, HEAD~2: as it was), with a "/" in it written
// %2F so that aiwg://agents%2Fplanner%2Fmain/plan.json is plan.json on
// agents/planner/main.
const uriTemplate = "aiwg://{rev}/{+path}"

// DocumentURI is the resource URI of file at rev (a branch or revision).
func DocumentURI(rev, file string) string {
	return "aiwg://" + url.PathEscape(rev) + "/" + file
}

// parseURI splits a document's URI into its revision and path.
func parseURI(uri string) (rev, file string, err error) {
	rest, ok := strings.CutPrefix(uri, "aiwg://")
	if !ok {
		return "", "", fmt.Errorf("%q is not a document of this store: want aiwg://REV/PATH", uri)
	}
	enc, file, ok := strings.Cut(rest, "/")
	if !ok || enc == "" || file == "" {
		return "", "", fmt.Errorf("%q: want aiwg://REV/PATH, with a / in REV written %%2F", uri)
	}
	rev, err = url.PathUnescape(enc)
	if err != nil {
		return "", "", fmt.Errorf("%q: %v", uri, err)
	}
	return rev, file, nil
}

func (s *Server) addResources() {
	s.sdk.AddResourceTemplate(&sdk.ResourceTemplate{
		Name:  "document",
		Title: "A JSON document of the store",
		Description: "A document at a branch (aiwg://main/plan.json; subscribe to be told of each commit that changes it) " +
			"or at any revision (aiwg://HEAD~3/plan.json, aiwg://<commit>/plan.json). A / in a branch's name is written %2F.",
		URITemplate: uriTemplate,
		MIMEType:    "application/json",
	}, s.readResource)
}

func (s *Server) readResource(ctx context.Context, req *sdk.ReadResourceRequest) (*sdk.ReadResourceResult, error) {
	uri := req.Params.URI
	rev, file, err := parseURI(uri)
	if err != nil {
		return nil, err
	}
	v, err := s.st.Get(ctx, file, "", store.ReadOptions{At: rev})
	if errors.Is(err, objects.ErrNotFound) || errors.Is(err, repo.ErrNotFound) {
		return nil, sdk.ResourceNotFoundError(uri)
	}
	if err != nil {
		return nil, err
	}
	return &sdk.ReadResourceResult{Contents: []*sdk.ResourceContents{{URI: uri, MIMEType: "application/json", Text: string(v)}}}, nil
}

// watch follows one subscribed document: one Watch of its branch for
// every client subscribed to its URI.
type watch struct {
	subscribers int
	cancel      context.CancelFunc
}

// subscribe starts following a document when its first client
// subscribes. A revision that is not a branch never changes: the
// subscription is taken, and never fires.
func (s *Server) subscribe(ctx context.Context, req *sdk.SubscribeRequest) error {
	uri := req.Params.URI
	rev, file, err := parseURI(uri)
	if err != nil {
		return err
	}
	branch, ok, err := s.branchOf(ctx, rev)
	if err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if w := s.watches[uri]; w != nil {
		w.subscribers++
		return nil
	}
	w := &watch{subscribers: 1, cancel: func() {}}
	s.watches[uri] = w
	if !ok {
		return nil
	}
	// The watch outlives the subscribe request: its own context, ended
	// by the last unsubscribe or the server's end.
	wctx, cancel := context.WithCancel(context.Background())
	w.cancel = cancel
	go func() {
		_ = s.st.Watch(wctx, store.WatchOptions{Branch: branch, Path: file, Poll: s.poll}, func(m *store.Mutation) bool {
			_ = s.sdk.ResourceUpdated(wctx, &sdk.ResourceUpdatedNotificationParams{URI: uri})
			return true
		})
	}()
	return nil
}

func (s *Server) unsubscribe(ctx context.Context, req *sdk.UnsubscribeRequest) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	w := s.watches[req.Params.URI]
	if w == nil {
		return nil
	}
	if w.subscribers--; w.subscribers <= 0 {
		w.cancel()
		delete(s.watches, req.Params.URI)
	}
	return nil
}

// stopWatches ends every watch, at the server's end.
func (s *Server) stopWatches() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for uri, w := range s.watches {
		w.cancel()
		delete(s.watches, uri)
	}
}

// branchOf tells whether rev names a branch ("HEAD" is the store's), and
// which.
func (s *Server) branchOf(ctx context.Context, rev string) (string, bool, error) {
	if rev == "HEAD" {
		return "", true, nil
	}
	bs, err := s.st.Branches(ctx)
	if err != nil {
		return "", false, err
	}
	for _, b := range bs {
		if b.Name == rev {
			return rev, true, nil
		}
	}
	return "", false, nil
}
