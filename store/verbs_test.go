package store_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aiwg/aiwg-state/internal/storetest"
	"github.com/aiwg/aiwg-state/merge"
	"github.com/aiwg/aiwg-state/merge/jsonmerge"
	"github.com/aiwg/aiwg-state/objects"
	"github.com/aiwg/aiwg-state/policy"
	"github.com/aiwg/aiwg-state/store"
)

func TestIncrIsOneCommitWithItsDelta(t *testing.T) {
	st := storetest.New(t)
	ctx := context.Background()
	wo := store.WriteOptions{Agent: "counter"}
	for _, c := range []struct{ by, want, op string }{
		{"", "1", "create"},
		{"41", "42", "update"},
		{"-2.5", "39.5", "update"},
		{"0.1", "39.6", "update"},
		{"1e2", "139.6", "update"},
	} {
		v, m, err := st.Incr(ctx, "counters.json", "hits.total", []byte(c.by), wo)
		if err != nil || string(v) != c.want {
			t.Fatalf("incr %q: %s %v, want %s", c.by, v, err, c.want)
		}
		by := c.by
		if by == "" {
			by = "1"
		}
		got := storetest.Git(t, st, "log", "-1", "--format=%(trailers:key=Operation,valueonly)%(trailers:key=Path,valueonly)%(trailers:key=Delta,valueonly)")
		if want := c.op + "\ncounters.json#hits.total\ncounters.json#hits.total " + by + "\n"; strings.TrimRight(got, "\n")+"\n" != want {
			t.Fatalf("incr %q: trailers %q, want %q (%s)", c.by, got, want, m.Subject)
		}
	}
	if v, _ := st.Get(ctx, "counters.json", "hits.total", store.ReadOptions{}); strings.TrimSpace(string(v)) != "139.6" {
		t.Fatalf("stored %s", v)
	}
	st.Set(ctx, "counters.json", "name", []byte(`"x"`), wo)
	if _, _, err := st.Incr(ctx, "counters.json", "name", nil, wo); !errors.Is(err, store.ErrNotNumber) {
		t.Fatalf("incr of a string: %v", err)
	}
	for _, by := range []string{`"1"`, `1e9999`, `[1]`} {
		if _, _, err := st.Incr(ctx, "counters.json", "hits.total", []byte(by), wo); err == nil {
			t.Fatalf("incr by %s was taken", by)
		}
	}
	if _, _, err := st.Incr(ctx, "counters.json", "", nil, wo); !errors.Is(err, store.ErrUsage) {
		t.Fatalf("incr of a document: %v", err)
	}
	storetest.Fsck(t, st)
}

// TestIncrementsOnTwoBranchesMergeToTheirSum: two agents' branches that
// both incremented one counter merge, under the sum strategy, to the base
// plus both increments, without a conflict.
func TestIncrementsOnTwoBranchesMergeToTheirSum(t *testing.T) {
	st := storetest.New(t)
	ctx := context.Background()
	wo := store.WriteOptions{Agent: "conductor"}
	if _, err := st.Merges().SetStrategy(ctx, "counters/*.json", jsonmerge.Options{Strategy: jsonmerge.Sum}, wo); err != nil {
		t.Fatal(err)
	}
	if _, _, err := st.Incr(ctx, "counters/tasks.json", "done", []byte("10"), wo); err != nil {
		t.Fatal(err)
	}
	if _, err := st.CreateBranch(ctx, "agents/a", "main"); err != nil {
		t.Fatal(err)
	}
	if _, err := st.CreateBranch(ctx, "agents/b", "main"); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 3; i++ {
		if _, _, err := st.Incr(ctx, "counters/tasks.json", "done", nil, store.WriteOptions{Agent: "a", Branch: "agents/a"}); err != nil {
			t.Fatal(err)
		}
	}
	if _, _, err := st.Incr(ctx, "counters/tasks.json", "done", []byte("5"), store.WriteOptions{Agent: "b", Branch: "agents/b"}); err != nil {
		t.Fatal(err)
	}
	// b also starts a counter a starts too: absent in the base, both add.
	st.Incr(ctx, "counters/tasks.json", "failed", nil, store.WriteOptions{Agent: "b", Branch: "agents/b"})
	st.Incr(ctx, "counters/tasks.json", "failed", []byte("2"), store.WriteOptions{Agent: "a", Branch: "agents/a"})
	for _, from := range []string{"agents/a", "agents/b"} {
		r, err := st.Merges().Merge(ctx, from, merge.MergeOptions{Into: "main", Write: wo})
		if err != nil || len(r.Conflicts) > 0 {
			t.Fatalf("merge %s: %+v %v", from, r, err)
		}
	}
	v, err := st.GetKeys(ctx, "counters/tasks.json", []string{"done", "failed"}, store.ReadOptions{})
	if err != nil || string(v) != "{\n  \"done\": 18,\n  \"failed\": 3\n}\n" {
		t.Fatalf("after both merges: %s %v", v, err)
	}
	storetest.Fsck(t, st)
}

func TestSetIfAbsent(t *testing.T) {
	st := storetest.New(t)
	ctx := context.Background()
	wo := store.WriteOptions{Agent: "a"}
	once := store.SetOptions{IfAbsent: true}
	if _, err := st.SetWith(ctx, "locks.json", "owner", []byte(`"a"`), once, wo); err != nil {
		t.Fatal(err)
	}
	head := storetest.Git(t, st, "rev-parse", "main")
	_, err := st.SetWith(ctx, "locks.json", "owner", []byte(`"b"`), once, store.WriteOptions{Agent: "b"})
	var ke *store.KeyExistsError
	if !errors.As(err, &ke) || !errors.Is(err, store.ErrStale) || ke.Key != "owner" {
		t.Fatalf("second set-if-absent: %v", err)
	}
	// The same value again is not absent either.
	if _, err := st.SetWith(ctx, "locks.json", "owner", []byte(`"a"`), once, wo); !errors.Is(err, store.ErrKeyExists) {
		t.Fatalf("same value: %v", err)
	}
	if _, err := st.PutWith(ctx, "locks.json", []byte(`{}`), once, wo); !errors.Is(err, store.ErrKeyExists) {
		t.Fatalf("put-if-absent of a document there: %v", err)
	}
	if storetest.Git(t, st, "rev-parse", "main") != head {
		t.Fatal("a refused set-if-absent wrote")
	}
	if _, err := st.Apply(ctx, []store.Op{{Op: "set", File: "locks.json", Path: "other", Value: []byte(`1`), IfAbsent: true}, {Op: "set", File: "locks.json", Path: "owner", Value: []byte(`"c"`), IfAbsent: true}}, wo); !errors.Is(err, store.ErrKeyExists) {
		t.Fatalf("apply: %v", err)
	}
	if v, _ := st.Get(ctx, "locks.json", "", store.ReadOptions{}); string(v) != "{\n  \"owner\": \"a\"\n}\n" {
		t.Fatalf("after refusals: %s", v)
	}
}

func TestGetKeysReadsOneRevision(t *testing.T) {
	st := storetest.New(t)
	ctx := context.Background()
	wo := store.WriteOptions{Agent: "a"}
	st.Put(ctx, "plan.json", []byte(`{"risk":{"level":"high","score":0.8},"items":[{"id":1},{"id":2}],"a.b":true}`), wo)
	v, err := st.GetKeys(ctx, "plan.json", []string{"risk.level", "risk/score", "items.*.id", `a\.b`}, store.ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want := `{"a\\.b":true,"items.0.id":1,"items.1.id":2,"risk.level":"high","risk.score":0.8}`
	if got, _ := objects.Decode(v); !objects.Equal(got, must(objects.Decode([]byte(want)))) {
		t.Fatalf("got %s, want %s", v, want)
	}
	st.Set(ctx, "plan.json", "risk.level", []byte(`"low"`), wo)
	v, _ = st.GetKeys(ctx, "plan.json", []string{"risk.level"}, store.ReadOptions{At: "HEAD~1"})
	if !strings.Contains(string(v), `"high"`) {
		t.Fatalf("at HEAD~1: %s", v)
	}
	if _, err := st.GetKeys(ctx, "plan.json", []string{"risk.level", "nope"}, store.ReadOptions{}); !errors.Is(err, objects.ErrNotFound) || !strings.Contains(err.Error(), "nope") {
		t.Fatalf("a missing key: %v", err)
	}
	if _, err := st.GetKeys(ctx, "plan.json", nil, store.ReadOptions{}); !errors.Is(err, store.ErrUsage) {
		t.Fatalf("no keys: %v", err)
	}
}

func must(v any, err error) any {
	if err != nil {
		panic(err)
	}
	return v
}

// TestTimeToLive: an expired key or document reads as absent, is absent
// to writes, and RemoveExpired removes it in one commit; the sidecar
// follows the document through set, del and mv.
func TestTimeToLive(t *testing.T) {
	st := storetest.New(t)
	ctx := context.Background()
	now := time.Now().UTC().Truncate(time.Second)
	past := store.WriteOptions{Agent: "a", Time: now.Add(-time.Hour)}
	wo := store.WriteOptions{Agent: "a"}
	minute := store.SetOptions{TTL: time.Minute}
	if _, err := st.SetWith(ctx, "cache.json", "fresh", []byte(`1`), store.SetOptions{TTL: time.Hour}, wo); err != nil {
		t.Fatal(err)
	}
	st.Set(ctx, "cache.json", "keep", []byte(`true`), wo)
	// Written an hour ago with a minute to live: expired.
	if _, err := st.SetWith(ctx, "cache.json", "token", []byte(`"t1"`), minute, past); err != nil {
		t.Fatal(err)
	}
	side := storetest.Git(t, st, "show", "main:.aiwg/ttl/cache.json")
	if !strings.Contains(side, `"token": "`+now.Add(-time.Hour+time.Minute).Format(time.RFC3339)+`"`) || !strings.Contains(side, `"fresh"`) {
		t.Fatalf("sidecar:\n%s", side)
	}
	if _, err := st.Get(ctx, "cache.json", "token", store.ReadOptions{}); !errors.Is(err, objects.ErrNotFound) {
		t.Fatalf("an expired key: %v", err)
	}
	if v, _ := st.Get(ctx, "cache.json", "", store.ReadOptions{}); strings.Contains(string(v), "token") || !strings.Contains(string(v), "fresh") {
		t.Fatalf("the document: %s", v)
	}
	if _, err := st.SetWith(ctx, "cache.json", "token", []byte(`"t2"`), store.SetOptions{IfAbsent: true}, wo); err != nil {
		t.Fatalf("set-if-absent of an expired key: %v", err)
	}
	// The write says it dropped the expired value, before its own change.
	if tr := storetest.Git(t, st, "log", "-1", "--format=%(trailers:key=Operation,valueonly,separator=%x2C) %(trailers:key=Path,valueonly,separator=%x2C) %(trailers:key=Expired,valueonly)"); strings.TrimSpace(tr) != "delete,create cache.json#token,cache.json#token 1" {
		t.Fatalf("trailers of a write over an expired key: %q", tr)
	}
	// Written without a time to live, the key is permanent now.
	if side := storetest.Git(t, st, "show", "main:.aiwg/ttl/cache.json"); strings.Contains(side, "token") {
		t.Fatalf("a set without a ttl left the key's:\n%s", side)
	}
	// A whole document's.
	if _, err := st.PutWith(ctx, "session.json", []byte(`{"user":"x"}`), minute, past); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Get(ctx, "session.json", "", store.ReadOptions{}); !errors.Is(err, store.ErrNotFound) || !strings.Contains(err.Error(), "expired at") {
		t.Fatalf("an expired document: %v", err)
	}
	if v, err := st.Get(ctx, "session.json", "", store.ReadOptions{At: "HEAD"}); err == nil {
		t.Fatalf("expired at HEAD too: %s", v)
	}
	if es, _ := st.List(ctx, "", store.ReadOptions{}); slices.ContainsFunc(es, func(e store.Entry) bool { return e.Name == "session.json" }) {
		t.Fatalf("ls lists an expired document: %+v", es)
	}
	st.SetWith(ctx, "old.json", "k", []byte(`1`), minute, past)
	st.SetWith(ctx, "moved.json", "k", []byte(`1`), store.SetOptions{TTL: time.Hour}, wo)
	if _, err := st.Move(ctx, "moved.json", "moved2.json", wo); err != nil {
		t.Fatal(err)
	}
	if out := storetest.Git(t, st, "ls-tree", "-r", "--name-only", "main", ".aiwg/ttl/"); out != ".aiwg/ttl/cache.json\n.aiwg/ttl/moved2.json\n.aiwg/ttl/old.json\n.aiwg/ttl/session.json\n" {
		t.Fatalf("sidecars after mv:\n%s", out)
	}
	head := storetest.Git(t, st, "rev-parse", "main")
	ex, m, err := st.RemoveExpired(ctx, wo)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(ex.Paths, " ") != "old.json#k session.json" {
		t.Fatalf("removed %v", ex.Paths)
	}
	if parent := storetest.Git(t, st, "rev-parse", "main~1"); parent != head || !strings.HasPrefix(m.Subject, "expire 2 values") {
		t.Fatalf("not one commit: %s", m.Subject)
	}
	if out := storetest.Git(t, st, "ls-tree", "-r", "--name-only", "main"); strings.Contains(out, "session.json") || strings.Contains(out, "ttl/old.json") {
		t.Fatalf("after RemoveExpired:\n%s", out)
	}
	if v := storetest.Git(t, st, "show", "main:old.json"); v != "{}\n" {
		t.Fatalf("old.json: %q", v)
	}
	if _, _, err := st.RemoveExpired(ctx, wo); !errors.Is(err, store.ErrNoChange) {
		t.Fatalf("again: %v", err)
	}
	if _, err := st.Delete(ctx, "moved2.json", "", wo); err != nil {
		t.Fatal(err)
	}
	if out := storetest.Git(t, st, "ls-tree", "-r", "--name-only", "main", ".aiwg/ttl/"); out != ".aiwg/ttl/cache.json\n" {
		t.Fatalf("sidecars after del:\n%s", out)
	}
	for _, bad := range []store.SetOptions{{TTL: -time.Second}, {TTL: 1500 * time.Millisecond}, {TTL: 200 * 365 * 24 * time.Hour}} {
		if _, err := st.SetWith(ctx, "x.json", "k", []byte(`1`), bad, wo); !errors.Is(err, store.ErrUsage) {
			t.Fatalf("ttl %s: %v", bad.TTL, err)
		}
	}
	st.Put(ctx, "list.json", []byte(`{"items":[1,2]}`), wo)
	if _, err := st.SetWith(ctx, "list.json", "items.0", []byte(`3`), minute, wo); !errors.Is(err, store.ErrUsage) {
		t.Fatalf("ttl on an array element: %v", err)
	}
	storetest.Fsck(t, st)
}

func TestTTLFilesAreChecked(t *testing.T) {
	for _, c := range []struct{ path, body, want string }{
		{".aiwg/ttl/a.json", "{\n  \"expires_at\": \"2026-01-01T00:00:00Z\"\n}\n", ""},
		{".aiwg/ttl/a.json", "{\n  \"keys\": {\n    \"a.b\": \"2026-01-01T00:00:00Z\"\n  }\n}\n", ""},
		{".aiwg/ttl/a.json", `{"expires_at":"2026-01-01T00:00:00Z"}`, "not canonical"},
		{".aiwg/ttl/a.json", "{}\n", "names no expiry"},
		{".aiwg/ttl/a.json", "{\n  \"expires_at\": \"tomorrow\"\n}\n", "RFC 3339"},
		{".aiwg/ttl/a.json", "{\n  \"keys\": {\n    \"a.*\": \"2026-01-01T00:00:00Z\"\n  }\n}\n", "key path"},
		{".aiwg/ttl/a.json", "{\n  \"other\": 1\n}\n", "not \"other\""},
		{".aiwg/ttl/a.txt", "{\n  \"expires_at\": \"2026-01-01T00:00:00Z\"\n}\n", "not the time-to-live file of a document"},
		{".aiwg/ttl/.aiwg/policy.json", "{\n  \"expires_at\": \"2026-01-01T00:00:00Z\"\n}\n", "not the time-to-live file"},
	} {
		err := store.CheckTTLFile(c.path, []byte(c.body))
		if (c.want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), c.want)) {
			t.Errorf("%s %q: %v, want %q", c.path, c.body, err, c.want)
		}
		if rule, _ := store.ValidateKnownFile(c.path, []byte(c.body)); (rule == "") != (c.want == "") {
			t.Errorf("ValidateKnownFile %s: rule %q", c.path, rule)
		}
	}
}

// TestTTLFileIsJudgedAsItsDocument: whoever may write a document may give
// it a time to live, and no one else, whatever the policy says of .aiwg/.
func TestTTLFileIsJudgedAsItsDocument(t *testing.T) {
	p, err := policy.Parse([]byte(`{"default":"deny","rules":[{"agents":["*"],"paths":[".aiwg/**"],"effect":"deny"},{"agents":["alice"],"paths":["agents/alice/**"]}]}`))
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Check("alice", ".aiwg/ttl/agents/alice/x.json"); err != nil {
		t.Fatal(err)
	}
	if err := p.Check("bob", ".aiwg/ttl/agents/alice/x.json"); err == nil {
		t.Fatal("bob may give alice's document a ttl")
	}
	if err := p.Check("alice", ".aiwg/ttl/.aiwg/ttl/agents/alice/x.json"); err == nil {
		t.Fatal("a ttl of a ttl file")
	}
}

func TestReadOpsTakesTheNewOperations(t *testing.T) {
	ops, err := store.ReadOps(strings.NewReader(`{"op":"incr","file":"c.json","path":"n","value":2}
{"op":"set","file":"c.json","path":"owner","value":"a","if_absent":true,"ttl":"15m"}
`))
	if err != nil || len(ops) != 2 || !ops[1].IfAbsent || ops[1].TTL != "15m" {
		t.Fatalf("%+v %v", ops, err)
	}
	st := storetest.New(t)
	ctx := context.Background()
	if _, err := st.Apply(ctx, ops, store.WriteOptions{Agent: "a"}); err != nil {
		t.Fatal(err)
	}
	if v, _ := st.GetKeys(ctx, "c.json", []string{"n", "owner"}, store.ReadOptions{}); string(v) != "{\n  \"n\": 2,\n  \"owner\": \"a\"\n}\n" {
		t.Fatalf("%s", v)
	}
	for _, bad := range []string{
		`{"op":"set","file":"c.json","path":"x","value":1,"if_absent":"yes"}`,
		`{"op":"set","file":"c.json","path":"x","value":1,"ttl":"soon"}`,
		`{"op":"del","file":"c.json","path":"x","ttl":"1m"}`,
		`{"op":"incr","file":"c.json","path":"x","value":"1"}`,
	} {
		ops, err := store.ReadOps(strings.NewReader(bad))
		if err == nil {
			_, err = st.Apply(ctx, ops, store.WriteOptions{Agent: "a"})
		}
		if err == nil {
			t.Errorf("%s was taken", bad)
		}
	}
}

// TestTTLFilesMerge: two branches that gave one key different times to
// live, and other keys their own, merge without a conflict: each key's
// time from its branch, the one both set from the later write.
func TestTTLFilesMerge(t *testing.T) {
	st := storetest.New(t)
	ctx := context.Background()
	wo := store.WriteOptions{Agent: "a"}
	st.Put(ctx, "cache.json", []byte(`{"a":1,"b":1,"c":1}`), wo)
	st.CreateBranch(ctx, "other", "main")
	hour, day := store.SetOptions{TTL: time.Hour}, store.SetOptions{TTL: 24 * time.Hour}
	if _, err := st.SetWith(ctx, "cache.json", "a", []byte(`2`), hour, wo); err != nil {
		t.Fatal(err)
	}
	if _, err := st.SetWith(ctx, "cache.json", "c", []byte(`1`), hour, wo); err != nil {
		t.Fatal(err)
	}
	ob := store.WriteOptions{Agent: "b", Branch: "other", Time: time.Now().Add(time.Second)}
	if _, err := st.SetWith(ctx, "cache.json", "b", []byte(`2`), day, ob); err != nil {
		t.Fatal(err)
	}
	if _, err := st.SetWith(ctx, "cache.json", "c", []byte(`1`), day, ob); err != nil {
		t.Fatal(err)
	}
	r, err := st.Merges().Merge(ctx, "other", merge.MergeOptions{Into: "main", Write: wo})
	if err != nil || len(r.Conflicts) > 0 {
		t.Fatalf("merge: %+v %v", r, err)
	}
	side := storetest.Git(t, st, "show", "main:.aiwg/ttl/cache.json")
	for _, k := range []string{`"a"`, `"b"`, `"c"`} {
		if !strings.Contains(side, k) {
			t.Fatalf("merged ttl file lacks %s:\n%s", k, side)
		}
	}
	if err := store.CheckTTLFile(".aiwg/ttl/cache.json", []byte(side)); err != nil {
		t.Fatal(err)
	}
	storetest.Fsck(t, st)
}

// TestFsckNamesBadTTLFiles: a time-to-live file plain git committed that
// does not read as one, or whose document is gone, is a problem fsck
// names, with its repair; a good one is not.
func TestFsckNamesBadTTLFiles(t *testing.T) {
	st := storetest.New(t)
	ctx := context.Background()
	st.SetWith(ctx, "ok.json", "k", []byte(`1`), store.SetOptions{TTL: time.Hour}, store.WriteOptions{Agent: "a"})
	for _, f := range []struct{ path, body string }{
		{".aiwg/ttl/bad.json", "{\n  \"expires_at\": \"soon\"\n}\n"},
		{".aiwg/ttl/gone.json", "{\n  \"expires_at\": \"2030-01-01T00:00:00Z\"\n}\n"},
	} {
		storetest.Git(t, st, "update-ref", "refs/heads/main", storetest.PlainCommit(t, st, f.path, f.body))
	}
	rep, err := st.Fsck(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, p := range rep.Problems {
		if p.Check == "ttl" {
			got = append(got, p.File)
		}
	}
	if strings.Join(got, " ") != ".aiwg/ttl/bad.json .aiwg/ttl/gone.json" {
		t.Fatalf("ttl problems: %+v (checks %v)", rep.Problems, rep.Checks)
	}
	// Reads go on: a damaged time-to-live file expires nothing.
	if _, err := st.Get(ctx, "ok.json", "k", store.ReadOptions{}); err != nil {
		t.Fatal(err)
	}
}
