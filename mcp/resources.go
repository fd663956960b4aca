package mcp

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/aiwg/aiwg-state/internal/sandbox"
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
	agent := s.agent
	if req.Extra != nil && req.Extra.TokenInfo != nil && req.Extra.TokenInfo.UserID != "" {
		agent = req.Extra.TokenInfo.UserID
	}
	if err := sandbox.CheckRead(ctx, s.st.Store, agent, file); err != nil {
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

// Subscriptions are bounded, per session: each costs a watch of its
// branch, and a client is not trusted to unsubscribe.
const (
	maxSubscriptions = 100  // per session
	maxURI           = 1024 // bytes
)

// watch follows one subscribed document for the sessions subscribed to
// its URI: one Watch of its branch, ended when the last of them
// unsubscribes or ends.
type watch struct {
	sessions map[*sdk.ServerSession]bool
	cancel   context.CancelFunc
}

// subscribe starts following a document when its first client
// subscribes. A revision that is not a branch never changes: the
// subscription is taken, and never fires, and costs nothing.
func (s *Server) subscribe(ctx context.Context, req *sdk.SubscribeRequest) error {
	uri := req.Params.URI
	if len(uri) > maxURI {
		return fmt.Errorf("a resource URI of %d bytes: at most %d", len(uri), maxURI)
	}
	rev, file, err := parseURI(uri)
	if err != nil {
		return err
	}
	branch, ok, err := s.branchOf(ctx, rev)
	if err != nil || !ok {
		return err
	}
	ss := req.Session
	s.mu.Lock()
	defer s.mu.Unlock()
	w := s.watches[uri]
	if w != nil && w.sessions[ss] {
		return nil // subscribed already: once is enough
	}
	n, known := s.subscribed[ss]
	if n >= maxSubscriptions {
		return fmt.Errorf("this session follows %d documents already, the most one may", n)
	}
	s.subscribed[ss] = n + 1
	if !known {
		// A session that ends without unsubscribing lets go of its
		// watches then.
		go func() {
			_ = ss.Wait()
			s.dropSession(ss)
		}()
	}
	if w != nil {
		w.sessions[ss] = true
		return nil
	}
	// The watch outlives the subscribe request: its own context, ended
	// by the last subscriber's leaving or the server's end.
	wctx, cancel := context.WithCancel(context.Background())
	s.watches[uri] = &watch{sessions: map[*sdk.ServerSession]bool{ss: true}, cancel: cancel}
	go func() {
		_ = s.st.Watch(wctx, store.WatchOptions{Branch: branch, Path: file, Poll: s.poll}, func(m *store.Mutation) bool {
			_ = s.sdk.ResourceUpdated(wctx, &sdk.ResourceUpdatedNotificationParams{URI: uri})
			return true
		})
	}()
	return nil
}

// unsubscribe ends a session's subscription; one it does not hold is no
// business of its own (another session's, which it must not end).
func (s *Server) unsubscribe(ctx context.Context, req *sdk.UnsubscribeRequest) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.leave(req.Params.URI, req.Session)
	return nil
}

// leave takes ss off uri's watch, ending it with its last subscriber.
// s.mu is held.
func (s *Server) leave(uri string, ss *sdk.ServerSession) {
	w := s.watches[uri]
	if w == nil || !w.sessions[ss] {
		return
	}
	delete(w.sessions, ss)
	s.subscribed[ss]--
	if len(w.sessions) == 0 {
		w.cancel()
		delete(s.watches, uri)
	}
}

// dropSession ends the subscriptions of a session that ended.
func (s *Server) dropSession(ss *sdk.ServerSession) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for uri := range s.watches {
		s.leave(uri, ss)
	}
	delete(s.subscribed, ss)
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
