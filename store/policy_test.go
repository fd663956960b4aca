package store_test

import (
	"context"
	"errors"
	"testing"

	"github.com/aiwg/aiwg-state/internal/storetest"
	"github.com/aiwg/aiwg-state/policy"
	"github.com/aiwg/aiwg-state/store"
)

const ownSessionsPolicy = `{
  "roles": {"coordinator": ["conductor"], "workers": ["pulse", "heartbeat"]},
  "rules": [
    {"name": "coordinator writes all", "roles": ["coordinator"], "paths": ["**"]},
    {"name": "only own sessions", "roles": ["workers"], "paths": ["agents/{agent}/**"]}
  ]
}`

func TestPolicyIsCheckedOnEveryWrite(t *testing.T) {
	ctx := context.Background()
	st := storetest.New(t)
	if _, err := st.SetPolicy(ctx, []byte(`{"rules": [{"agents": ["a"], "paths": ["x"], "efect": "deny"}]}`), store.WriteOptions{Agent: "conductor"}); !errors.Is(err, policy.ErrInvalid) {
		t.Fatalf("invalid policy accepted: %v", err)
	}
	if _, err := st.SetPolicy(ctx, []byte(ownSessionsPolicy), store.WriteOptions{Agent: "conductor"}); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		agent, file string
		allowed     bool
	}{
		{"pulse", "agents/pulse/s.json", true},
		{"pulse", "agents/heartbeat/s.json", false},
		{"pulse", "global/config.json", false},
		{"conductor", "global/config.json", true},
		{"stranger", "agents/stranger/s.json", false},
	}
	for _, tt := range tests {
		_, err := st.Set(ctx, tt.file, "x", []byte("1"), store.WriteOptions{Agent: tt.agent})
		if tt.allowed != (err == nil) {
			t.Errorf("%s writes %s: %v", tt.agent, tt.file, err)
		}
		var d *policy.Denial
		if err != nil && (!errors.Is(err, store.ErrDenied) || !errors.As(err, &d) || d.Agent != tt.agent || d.Path != tt.file || d.Rule == "") {
			t.Errorf("%s writes %s: error %v does not name agent, path and rule", tt.agent, tt.file, err)
		}
	}
	// A worker cannot hand itself rights: the policy in force judges the
	// change of policy.
	if _, err := st.SetPolicy(ctx, []byte(`{"default": "allow", "rules": []}`), store.WriteOptions{Agent: "pulse"}); !errors.Is(err, store.ErrDenied) {
		t.Fatalf("a worker changed the policy: %v", err)
	}
	storetest.Fsck(t, st)
}
