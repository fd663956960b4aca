package redteam

import (
	"strings"
	"testing"
)

// TestLeaseForceReleaseThroughMerge: mallory may write leases/**, and
// alice holds a lease. A merge of main with the commit before the lease,
// taking that commit's tree, drops the lease: the merge's own write, a
// forced release. Once alice released it, a merge with the commit that
// held it brings the lease back: a forged hold.
func TestLeaseForceReleaseThroughMerge(t *testing.T) {
	s := newServer(t, identityPolicy)
	id := leaseHeld(t, s)
	w := cloneAs(t, s.as("mallory"))
	m := strings.TrimSpace(git(t, w, "commit-tree", "origin/main~1^{tree}", "-p", "origin/main", "-p", "origin/main~1", "-m", "merge"))
	refused(t, s, w, s.as("mallory"), m+":refs/heads/main", "rule lease: removes alice's lease "+id+" on tasks/t1")
	refused(t, s, w, s.as("mallory"), m+":refs/heads/agents/mallory/main", "rule lease: removes alice's lease "+id)

	st := agentStore(t, s.as("alice"), "alice")
	runIn(t, st, "", "lease", "release", "tasks/t1", "--agent", "alice")
	runIn(t, st, "", "push")
	git(t, w, "fetch", "-q")
	m = strings.TrimSpace(git(t, w, "commit-tree", "origin/main~1^{tree}", "-p", "origin/main", "-p", "origin/main~1", "-m", "merge"))
	refused(t, s, w, s.as("mallory"), m+":refs/heads/main", "rule lease: writes alice's lease "+id+" on tasks/t1, which only alice may take or renew")

	// A lease taken on an agent's branch and merged by the integrator is
	// the holder's doing, not the merger's.
	b := agentStore(t, s.as("bob"), "bob")
	runIn(t, b, "", "agent", "start", "bob")
	runIn(t, b, "", "lease", "acquire", "tasks/t2", "--ttl", "1h", "--agent", "bob")
	runIn(t, b, "", "push")
	runIn(t, s.Coordinator, "", "integrate", "--agent", "conductor")
	if out := git(t, s.Dir, "ls-tree", "main", "leases/tasks/t2.json"); out == "" {
		t.Fatal("bob's lease did not reach main")
	}
	fsck(t, s.Dir)
}
