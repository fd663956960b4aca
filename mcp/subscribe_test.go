package mcp

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/aiwg/aiwg-state/internal/storetest"
	"github.com/aiwg/aiwg-state/store"
)

type bearerTransport struct{ token string }

func (b bearerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return http.DefaultTransport.RoundTrip(r)
}

func connectHTTP(t *testing.T, url, token string, updated func()) *sdk.ClientSession {
	t.Helper()
	opts := &sdk.ClientOptions{}
	if updated != nil {
		opts.ResourceUpdatedHandler = func(context.Context, *sdk.ResourceUpdatedNotificationRequest) { updated() }
	}
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "test", Version: "1"}, opts).Connect(context.Background(),
		&sdk.StreamableClientTransport{Endpoint: url, HTTPClient: &http.Client{Transport: bearerTransport{token}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// waitFor polls cond for up to two seconds.
func waitFor(cond func() bool) bool {
	for deadline := time.Now().Add(2 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if cond() {
			return true
		}
	}
	return cond()
}

// TestSubscriptionsAreTheSessions: one agent's session cannot end another's
// subscription by unsubscribing from what it never subscribed to; a
// session's subscriptions are bounded, and end with it.
func TestSubscriptionsAreTheSessions(t *testing.T) {
	st := storetest.New(t)
	ctx := context.Background()
	if _, err := st.Put(ctx, "plan.json", []byte(`{"a":1}`), store.WriteOptions{Agent: "alice"}); err != nil {
		t.Fatal(err)
	}
	tokens, err := ParseTokens([]byte("alice aaaaaaaaaaaaaaaaaaaa\nmallory mmmmmmmmmmmmmmmmmmmm\n"))
	if err != nil {
		t.Fatal(err)
	}
	srv := New(st, Options{Poll: 10 * time.Millisecond})
	hs := httptest.NewServer(srv.HTTPHandler(tokens))
	t.Cleanup(func() { hs.CloseClientConnections(); hs.Close(); srv.stopWatches() })
	var heard atomic.Int32
	alice := connectHTTP(t, hs.URL, "aaaaaaaaaaaaaaaaaaaa", func() { heard.Add(1) })
	uri := "aiwg://main/plan.json"
	if err := alice.Subscribe(ctx, &sdk.SubscribeParams{URI: uri}); err != nil {
		t.Fatal(err)
	}
	mallory := connectHTTP(t, hs.URL, "mmmmmmmmmmmmmmmmmmmm", nil)
	if err := mallory.Unsubscribe(ctx, &sdk.UnsubscribeParams{URI: uri}); err != nil {
		t.Fatal(err)
	}
	time.Sleep(50 * time.Millisecond) // the watch has read the branch
	if _, err := st.Put(ctx, "plan.json", []byte(`{"a":2}`), store.WriteOptions{Agent: "alice"}); err != nil {
		t.Fatal(err)
	}
	if !waitFor(func() bool { return heard.Load() > 0 }) {
		t.Fatal("alice was not told of a change after mallory unsubscribed from what she never subscribed to")
	}

	// mallory may follow a bounded number of documents, and her watches
	// end with her session.
	var err2 error
	for i := 0; i <= maxSubscriptions; i++ {
		if err2 = mallory.Subscribe(ctx, &sdk.SubscribeParams{URI: fmt.Sprintf("aiwg://main/x%d.json", i)}); err2 != nil {
			break
		}
	}
	if err2 == nil {
		t.Fatalf("%d subscriptions in one session were all taken", maxSubscriptions+1)
	}
	mallory.Close()
	if !waitFor(func() bool { srv.mu.Lock(); defer srv.mu.Unlock(); return len(srv.watches) == 1 }) {
		srv.mu.Lock()
		defer srv.mu.Unlock()
		t.Fatalf("after mallory's session ended: %d watches (want alice's one)", len(srv.watches))
	}
}
