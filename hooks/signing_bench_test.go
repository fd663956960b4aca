package hooks_test

import (
	"context"
	"fmt"
	"testing"

	aiwgstate "github.com/aiwg/aiwg-state"
	"github.com/aiwg/aiwg-state/docschema"
	"github.com/aiwg/aiwg-state/hooks"
	"github.com/aiwg/aiwg-state/internal/cputime"
	"github.com/aiwg/aiwg-state/internal/signtest"
	"github.com/aiwg/aiwg-state/internal/storetest"
	"github.com/aiwg/aiwg-state/internal/testutil"
	"github.com/aiwg/aiwg-state/store"
)

// BenchmarkCheckSignedPush100 is the hook's check of a push of 100 commits by
// one agent: unsigned under a policy that requires no signature, and
// signed (ed25519) under one that requires it and lists the agent's key,
// each signature verified in-process. One op is the whole push.
func BenchmarkCheckSignedPush100(b *testing.B) {
	for _, signed := range []bool{false, true} {
		b.Run(fmt.Sprintf("signed=%v", signed), func(b *testing.B) {
			ctx := context.Background()
			st := storetest.New(b)
			key := signtest.NewKey(b, b.TempDir(), "alice")
			policy := `{"default": "allow", "rules": []}`
			if signed {
				policy = `{"default": "allow", "require_signed": ["alice"], "signers": {"alice": ["` + key.Public + `"]}, "rules": []}`
				testutil.RunGit(b, st.Dir(), "config", "aiwg.alice.signingKey", key.Path)
			}
			base, err := st.SetPolicy(ctx, []byte(policy), store.WriteOptions{Agent: "admin"})
			if err != nil {
				b.Fatal(err)
			}
			var head string
			for i := 0; i < 100; i++ {
				m, err := st.Set(ctx, fmt.Sprintf("agents/alice/doc-%02d.json", i%10), "n", []byte(fmt.Sprint(i)), store.WriteOptions{Agent: "alice"})
				if err != nil {
					b.Fatal(err)
				}
				head = m.Commit
			}
			opts := hooks.Options{PolicyFrom: base.Commit, Validate: aiwgstate.ValidateKnownFile, Schemas: docschema.PushCheck}
			b.ResetTimer()
			defer cputime.Start(b)()
			for i := 0; i < b.N; i++ {
				if err := hooks.CheckRevs(ctx, st.Dir(), []string{base.Commit + ".." + head}, opts); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
