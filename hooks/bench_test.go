package hooks

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/aiwg/aiwg-state/internal/testutil"
	"github.com/aiwg/aiwg-state/policy"
)

// benchPolicy is testPolicy with leases open to workers, and, with
// pushers, alice's HTTP user acting as her.
const benchPolicy = `{
  "roles": {"coordinator": ["conductor"], "workers": ["alice", "bob"]},
  %s
  "rules": [
    {"name": "coordinator writes all", "roles": ["coordinator"], "paths": ["**"]},
    {"name": "own directory", "roles": ["workers"], "paths": ["agents/{agent}/**", "leases/**"]}
  ]
}`

// pushOf100 makes a repository whose main holds the policy, and 100
// commits by alice on no branch (as a push brings them), each writing a
// file of hers and every tenth her lease; it returns the git dir and the
// update that would push them to agents/alice/main. With quarantine,
// the 100 commits' objects are in a quarantine directory, as a push's are
// when pre-receive runs, and the benchmark's environment names it as
// git's does (the check then reads them in process, see walk.go).
func pushOf100(b *testing.B, pol string, quarantine bool) (string, []Update) {
	b.Helper()
	dir := filepath.Join(b.TempDir(), "s.git")
	testutil.Git{}.Run(b, "init", "-q", "--bare", dir)
	var in strings.Builder
	// fast-import's data: s with a final newline.
	blob := func(s string) string { return fmt.Sprintf("data %d\n%s\n", len(s)+1, s) }
	if _, err := policy.Parse([]byte(pol)); err != nil {
		b.Fatal(err)
	}
	canonPol := strings.Join(strings.Fields(pol), " ") // the seed is in force, not checked
	fmt.Fprintf(&in, "commit refs/heads/main\ncommitter conductor <c@agents.invalid> 1700000000 +0000\n%sM 100644 inline %s\n%s", blob("seed"), policy.Path, blob(canonPol))
	testutil.Git{GitDir: dir, Stdin: in.String()}.Run(b, "fast-import", "--quiet")
	in.Reset()
	fmt.Fprintf(&in, "commit refs/heads/pending\ncommitter alice <a@agents.invalid> 1700000001 +0000\n%sfrom refs/heads/main\n", blob("c0"))
	for i := 1; i <= 100; i++ {
		if i > 1 {
			fmt.Fprintf(&in, "commit refs/heads/pending\ncommitter alice <a@agents.invalid> %d +0000\n%s", 1700000001+i, blob(fmt.Sprintf("c%d", i)))
		}
		fmt.Fprintf(&in, "M 100644 inline agents/alice/f%d.json\n%s", i, blob(fmt.Sprintf("{\n  \"i\": %d\n}", i)))
		if i%10 == 0 {
			rec := fmt.Sprintf(`{
  "locks": [
    {
      "acquiredAt": "2099-01-01T00:00:00Z",
      "expiresAt": "2099-01-01T01:00:00Z",
      "holder": "alice",
      "id": "lease-%d",
      "renewCount": 0,
      "ttl": 3600000,
      "type": "exclusive"
    }
  ],
  "resource": "tasks/t"
}`, i)
			fmt.Fprintf(&in, "M 100644 inline leases/tasks/t.json\n%s", blob(rec))
		}
	}
	var env []string
	if quarantine {
		objects := filepath.Join(dir, "objects")
		q := filepath.Join(objects, "tmp_objdir-incoming-bench")
		if err := os.MkdirAll(filepath.Join(q, "pack"), 0o755); err != nil {
			b.Fatal(err)
		}
		env = []string{"GIT_OBJECT_DIRECTORY=" + q, "GIT_ALTERNATE_OBJECT_DIRECTORIES=" + objects}
		b.Setenv("GIT_OBJECT_DIRECTORY", q)
		b.Setenv("GIT_ALTERNATE_OBJECT_DIRECTORIES", objects)
		defer b.Setenv("GIT_QUARANTINE_PATH", q) // after the refs below are written: git refuses them inside a quarantine
	}
	testutil.Git{GitDir: dir, Stdin: in.String(), Env: env}.Run(b, "fast-import", "--quiet")
	tip := testutil.Git{GitDir: dir, Env: env}.Output(b, "rev-parse", "refs/heads/pending")
	testutil.RunGit(b, dir, "update-ref", "-d", "refs/heads/pending")
	testutil.RunGit(b, dir, "symbolic-ref", "HEAD", "refs/heads/main")
	return dir, []Update{{New: plumbing.NewHash(strings.TrimSpace(tip)), Ref: "refs/heads/agents/alice/main"}}
}

// BenchmarkCheckPush100 is the hook's check of a push of 100 commits: with
// a policy, and with a policy naming pushers (the identity checks, the
// pusher read from the server's environment and git config).
func BenchmarkCheckPush100(b *testing.B) {
	ctx := context.Background()
	for _, bc := range []struct {
		name, extra string
		getenv      func(string) string
		quarantine  bool
	}{
		{"policy", "", nil, false},
		{"policy/quarantined", "", nil, true},
		{"pushers", `"pushers": {"alice-http": {"agents": ["alice"]}},`, func(k string) string {
			if k == "REMOTE_USER" {
				return "alice-http"
			}
			return ""
		}, false},
	} {
		b.Run(bc.name, func(b *testing.B) {
			dir, ups := pushOf100(b, fmt.Sprintf(benchPolicy, bc.extra), bc.quarantine)
			opts := Options{Getenv: bc.getenv}
			b.ResetTimer()
			cpu := cpuTime()
			for i := 0; i < b.N; i++ {
				if err := Check(ctx, dir, ups, opts); err != nil {
					b.Fatal(err)
				}
			}
			// CPU time (this process and the git processes it ran) says
			// what the check costs on a busy machine, where wall time
			// mostly says how busy it is.
			b.ReportMetric(float64((cpuTime()-cpu).Microseconds())/1000/float64(b.N), "cpu-ms/op")
		})
	}
}

// cpuTime is the user and system time of this process and of its children
// that have ended.
func cpuTime() time.Duration {
	var self, children syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &self)
	syscall.Getrusage(syscall.RUSAGE_CHILDREN, &children)
	var d time.Duration
	for _, r := range []syscall.Rusage{self, children} {
		d += time.Duration(r.Utime.Nano() + r.Stime.Nano())
	}
	return d
}
