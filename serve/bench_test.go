package serve

import (
	"context"
	"io"
	"testing"
)

// BenchmarkRoundTrip is the protocol's own cost per command: connect,
// request, start, a line of output, exit; both ends in this process.
func BenchmarkRoundTrip(b *testing.B) {
	path := start(b, &Server{Handler: func(ctx context.Context, inv *Invocation) int {
		io.WriteString(inv.Stdout, "ok\n")
		return 0
	}})
	req := Request{Args: []string{"aiwg-state", "get", "plan.json", "risk.level"}, Dir: "/work", Env: []string{"HOME=/root", "AIWG_AGENT=planner"}}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if code, err := Forward(context.Background(), path, req, nil, io.Discard, io.Discard); err != nil || code != 0 {
			b.Fatal(code, err)
		}
	}
}
