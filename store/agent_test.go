package store

import (
	"context"
	"testing"
)

func TestDefaultAgentFollowsTheConfig(t *testing.T) {
	ctx := context.Background()
	s, err := Init(ctx, t.TempDir(), InitOptions{Options: Options{NoSync: true}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if got := s.DefaultAgent(); got != "" {
		t.Fatalf("a new store's agent: %q", got)
	}
	for _, name := range []string{"scout", "pilot", "a-longer-name"} {
		if err := s.SetDefaultAgent(ctx, name); err != nil {
			t.Fatal(err)
		}
		if got := s.DefaultAgent(); got != name {
			t.Fatalf("after setting %q: %q", name, got)
		}
	}
	for _, bad := range []string{"", " ", "a<b>", "two\nlines"} {
		if err := s.SetDefaultAgent(ctx, bad); err == nil {
			t.Errorf("agent %q taken", bad)
		}
	}
	if a, from := s.AgentFor("", func(string) string { return "" }); a != "a-longer-name" || from != AgentFromStore {
		t.Fatalf("AgentFor: %q from %q", a, from)
	}
}

// BenchmarkDefaultAgent is what a write that names no agent pays to read
// the store's: a stat while the config is unchanged (decoding it each time
// cost about 10 µs).
func BenchmarkDefaultAgent(b *testing.B) {
	ctx := context.Background()
	s, err := Init(ctx, b.TempDir(), InitOptions{Options: Options{NoSync: true}})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	if err := s.SetDefaultAgent(ctx, "scout"); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		s.DefaultAgent()
	}
}
