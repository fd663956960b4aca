package hooks

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/aiwg/aiwg-state/internal/testutil"
	"github.com/aiwg/aiwg-state/policy"
)

// BenchmarkCheckPush100Merges is the hook's work for one push of 100 commits, 10
// of them merges (a worker merging another's branch), onto a server whose
// main holds a policy: what the merge rule costs shows against plain
// commits.
func BenchmarkCheckPush100Merges(b *testing.B) {
	dir := b.TempDir()
	server := filepath.Join(dir, "s.git")
	w := filepath.Join(dir, "w")
	gitb := func(agent string, args ...string) string {
		b.Helper()
		return strings.TrimSpace(testutil.Git{Dir: w, Env: testutil.AgentEnv(agent)}.Run(b, args...))
	}
	write := func(agent, path, body string) {
		full := filepath.Join(w, path)
		os.MkdirAll(filepath.Dir(full), 0o755)
		if err := os.WriteFile(full, []byte(body), 0o644); err != nil {
			b.Fatal(err)
		}
		gitb(agent, "add", path)
		gitb(agent, "commit", "-q", "-m", "write "+path)
	}
	testutil.Git{}.Run(b, "init", "-q", "--bare", server)
	testutil.Git{}.Run(b, "init", "-q", "-b", "main", w)
	write("conductor", policy.Path, testPolicy)
	for i := 0; i < 20; i++ { // a store with some files to diff
		write("conductor", fmt.Sprintf("global/doc%02d.json", i), fmt.Sprintf("{\n  \"n\": %d\n}\n", i))
	}
	seed := gitb("x", "rev-parse", "HEAD")
	for round := 0; round < 10; round++ {
		gitb("x", "checkout", "-q", "-b", fmt.Sprintf("hb%d", round))
		write("heartbeat", fmt.Sprintf("agents/heartbeat/r%d.json", round), "{\n  \"n\": 1\n}\n")
		gitb("x", "checkout", "-q", "main")
		for i := 0; i < 8; i++ {
			write("pulse", fmt.Sprintf("agents/pulse/r%d/s%d.json", round, i), fmt.Sprintf("{\n  \"n\": %d\n}\n", i))
		}
		gitb("pulse", "merge", "-q", "--no-ff", "-m", "merge", fmt.Sprintf("hb%d", round))
	}
	tip := gitb("x", "rev-parse", "HEAD")
	if n := gitb("x", "rev-list", "--count", seed+".."+tip); n != "100" {
		b.Fatalf("%s commits, want 100", n)
	}
	gitb("x", "push", "-q", server, seed+":refs/heads/main", tip+":refs/bench/tip")
	ups := []Update{{Old: plumbing.NewHash(seed), New: plumbing.NewHash(tip), Ref: "refs/heads/main"}}
	ctx := context.Background()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := Check(ctx, server, ups, Options{}); err != nil {
			b.Fatal(err)
		}
	}
}
