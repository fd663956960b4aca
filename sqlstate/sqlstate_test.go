package sqlstate_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	aiwgstate "github.com/aiwg/aiwg-state"
	"github.com/aiwg/aiwg-state/internal/signtest"
	"github.com/aiwg/aiwg-state/lease"
	"github.com/aiwg/aiwg-state/memory"
	"github.com/aiwg/aiwg-state/merge"
	"github.com/aiwg/aiwg-state/rlm"
	"github.com/aiwg/aiwg-state/sqlstate"
	"github.com/aiwg/aiwg-state/store"
)

// fixture is a store with a little of everything, written by three
// agents: documents, memory records, queue messages, a lease, an RLM
// state with variables, and a trajectory with two iterations.
func fixture(t testing.TB) *aiwgstate.Store {
	t.Helper()
	ctx := context.Background()
	dir := t.TempDir()
	st, err := aiwgstate.Init(ctx, dir, store.InitOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	wo := func(agent string) store.WriteOptions { return store.WriteOptions{Agent: agent} }
	agents := []string{"alice", "bob", "carol"}
	for i := 0; i < 12; i++ {
		a := agents[i%3]
		if _, err := st.Set(ctx, fmt.Sprintf("config/svc%d.json", i%4), "db.port", []byte(fmt.Sprint(5000+i)), wo(a)); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := st.Set(ctx, "config/app.json", "db.host", []byte(`"pg.internal"`), wo("alice")); err != nil {
		t.Fatal(err)
	}
	topics := []string{"auth", "db", "auth", "billing", "auth"}
	for i, topic := range topics {
		k := memory.Key{Namespace: "long_term", Kind: "fact", ID: fmt.Sprintf("f%d", i)}
		if _, _, err := st.Memory().Put(ctx, k, []byte(fmt.Sprintf(`{"topic":%q,"n":%d}`, topic, i)), 0, wo(agents[i%3])); err != nil {
			t.Fatal(err)
		}
	}
	if _, _, err := st.Memory().Put(ctx, memory.Key{Namespace: "session", Kind: "note", ID: "n1"}, []byte(`{"topic":"auth"}`), time.Hour, wo("bob")); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 3; i++ {
		if _, _, err := st.Queues().Put(ctx, "alerts", []byte(fmt.Sprintf(`{"level":%d}`, i)), wo("carol")); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := st.Leases().Acquire(ctx, "tasks/t-17", lease.Options{TTL: time.Hour}, wo("bob")); err != nil {
		t.Fatal(err)
	}
	info, _, err := st.States().Init(ctx, rlm.StateInit{Prompt: "summarise"}, wo("alice"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.States().SetVar(ctx, info.StateID, "open_risks", 3, rlm.VarOptions{}, wo("alice")); err != nil {
		t.Fatal(err)
	}
	if _, err := st.States().SetVar(ctx, info.StateID, "region", "eu", rlm.VarOptions{Scope: rlm.ScopeGlobal}, wo("alice")); err != nil {
		t.Fatal(err)
	}
	traj := `{"metadata":{"started_at":"2026-11-26T10:00:00Z","completed_at":"2026-11-26T10:01:00Z","total_cost_usd":0.012,"total_duration_ms":60000,"total_iterations":2,"total_tokens":1200},
"outcome":{"final_result":"done","iterations_to_completion":2,"status":"success"},
"task_context":{"task_id":"task-00000001","task_prompt":"Fix it","task_type":"bug_fixing"},"trajectory_id":"traj-0000000a","version":"1.0.0"}`
	if _, err := st.Put(ctx, "trajectories/traj-0000000a/trajectory.json", []byte(traj), wo("carol")); err != nil {
		t.Fatal(err)
	}
	for i := 1; i <= 2; i++ {
		it := fmt.Sprintf(`{"action":{"description":"call Grep","parameters":{},"tool":"Grep"},"cost":{"input_tokens":500,"output_tokens":100,"total_cost_usd":0.006,"total_tokens":600},
"iteration_number":%d,"observation":{"result":"ok","status":"success"},"thought":{"content":"look","type":"research"},"timestamp":"2026-11-26T10:00:0%dZ"}`, i, i)
		if _, err := st.Put(ctx, fmt.Sprintf("trajectories/traj-0000000a/iterations/%04d.json", i), []byte(it), wo("carol")); err != nil {
			t.Fatal(err)
		}
	}
	return st
}

func git(t testing.TB, st *aiwgstate.Store, args ...string) string {
	t.Helper()
	out, err := exec.Command("git", append([]string{"--git-dir", st.Dir()}, args...)...).Output()
	if err != nil {
		t.Fatalf("git %s: %v", strings.Join(args, " "), err)
	}
	return string(out)
}

func sh(t *testing.T, script string) string {
	t.Helper()
	out, err := exec.Command("sh", "-c", script).Output()
	if err != nil {
		t.Fatalf("%s: %v", script, err)
	}
	return string(out)
}

// lines renders a result as "a|b" lines, sorted, for comparison.
func lines(r *sqlstate.Result) []string {
	var out []string
	for _, row := range r.Rows {
		var f []string
		for _, v := range row {
			switch x := v.(type) {
			case []byte:
				f = append(f, string(x))
			case nil:
				f = append(f, "")
			default:
				f = append(f, fmt.Sprint(x))
			}
		}
		out = append(out, strings.Join(f, "|"))
	}
	sort.Strings(out)
	return out
}

func fields(s string) []string {
	var out []string
	for _, l := range strings.Split(strings.TrimSpace(s), "\n") {
		if l = strings.TrimSpace(l); l != "" {
			out = append(out, l)
		}
	}
	sort.Strings(out)
	return out
}

func query(t *testing.T, db *sqlstate.DB, q string, ro store.ReadOptions) []string {
	t.Helper()
	r, err := db.Query(context.Background(), q, ro)
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	return lines(r)
}

func same(t *testing.T, what string, got, want []string) {
	t.Helper()
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("%s:\n sql: %q\n git: %q", what, got, want)
	}
}

// TestAnswersMatchGit asks the fixture store the same questions with SQL
// and with git and jq.
func TestAnswersMatchGit(t *testing.T) {
	st := fixture(t)
	db := sqlstate.Open(st.Store, sqlstate.Options{})
	gd := st.Dir()
	ro := store.ReadOptions{}

	// Commits per agent.
	want := fields(sh(t, "git --git-dir "+gd+" log --format=%an | sort | uniq -c | awk '{print $2\"|\"$1}'"))
	same(t, "commits per agent", query(t, db, `SELECT agent, count(DISTINCT commit_id) FROM mutations GROUP BY agent`, ro), want)
	// The example query runs: a row per change.
	want = fields(sh(t, "git --git-dir "+gd+" log --format='%an %(trailers:key=Operation,valueonly,separator=%x2C)' | awk '{n=split($2,a,\",\"); c[$1]+= (n>0?n:1)} END {for (k in c) print k\"|\"c[k]}'"))
	same(t, "changes per agent", query(t, db, `SELECT agent, count(*) FROM mutations GROUP BY agent`, ro), want)

	// Memory facts about auth.
	want = fields(sh(t, "for f in $(git --git-dir "+gd+" ls-tree -r --name-only HEAD memory/); do git --git-dir "+gd+" show HEAD:$f | jq -r 'select(.record_kind==\"fact\" and .payload.topic==\"auth\") | .record_id'; done"))
	got := query(t, db, `SELECT id FROM memory WHERE kind='fact' AND payload->>'$.topic'='auth'`, ro)
	same(t, "auth facts", got, want)
	if len(got) != 3 {
		t.Errorf("auth facts: %v, want 3", got)
	}
	if r, err := db.Query(context.Background(), `SELECT * FROM memory WHERE kind='fact' AND payload->>'$.topic'='auth'`, ro); err != nil || len(r.Rows) != 3 {
		t.Fatalf("SELECT * FROM memory: %v %v", r, err)
	}
	// The answer names the commit it is about.
	for _, rev := range []string{"HEAD", "HEAD~3"} {
		r, err := db.Query(context.Background(), `SELECT 1`, store.ReadOptions{At: rev})
		if want := strings.TrimSpace(git(t, st, "rev-parse", rev)); err != nil || r.Commit != want {
			t.Errorf("%s: commit %v %v, want %s", rev, r, err, want)
		}
	}

	// A key of a document.
	want = fields(sh(t, "git --git-dir "+gd+" show HEAD:config/app.json | jq -c .db.host"))
	same(t, "db.host", query(t, db, `SELECT value FROM documents WHERE path='config/app.json' AND key='db.host'`, ro), want)
	// Every document's path.
	want = fields(git(t, st, "ls-tree", "-r", "--name-only", "HEAD"))
	same(t, "paths", query(t, db, `SELECT DISTINCT path FROM documents`, ro), want)
	// Commits touching a file.
	want = fields(git(t, st, "log", "--format=%H", "--", "config/svc1.json"))
	same(t, "svc1 history", query(t, db, `SELECT DISTINCT commit_id FROM mutations WHERE path='config/svc1.json'`, ro), want)

	// Queue, lease, variables, trajectories, iterations.
	want = fields(sh(t, "for f in $(git --git-dir "+gd+" ls-tree -r --name-only HEAD queues/alerts/); do git --git-dir "+gd+" show HEAD:$f | jq -r '\"\\(.seq)|\\(.payload.level)\"'; done"))
	same(t, "queue", query(t, db, `SELECT seq, payload->>'$.level' FROM queues WHERE queue='alerts'`, ro), want)
	same(t, "lease", query(t, db, `SELECT resource, holder, type FROM leases`, ro), []string{"tasks/t-17|bob|exclusive"})
	want = fields(sh(t, "for f in $(git --git-dir "+gd+" ls-tree -r --name-only HEAD | grep /variables/); do git --git-dir "+gd+" show HEAD:$f | jq -r '\"\\(.metadata.scope)|\\(.name)|\\(.value|tojson)\"'; done"))
	same(t, "variables", query(t, db, `SELECT scope, name, value FROM variables`, ro), want)
	same(t, "trajectory", query(t, db, `SELECT id, status, iterations, tokens, cost FROM trajectories`, ro), []string{"traj-0000000a|success|2|1200|0.012"})
	want = fields(sh(t, "for f in $(git --git-dir "+gd+" ls-tree -r --name-only HEAD trajectories/ | grep iterations/); do git --git-dir "+gd+" show HEAD:$f | jq -r .cost.total_tokens; done | awk '{s+=$1} END {print s}'"))
	same(t, "iteration tokens", query(t, db, `SELECT sum(tokens) FROM iterations WHERE trajectory='traj-0000000a'`, ro), want)
	same(t, "no problems", query(t, db, `SELECT * FROM index_problems`, ro), nil)
}

// TestIncrementalAndAt: the index follows new commits by reading only
// them; --at answers for a past revision from its own tree.
func TestIncrementalAndAt(t *testing.T) {
	ctx := context.Background()
	st := fixture(t)
	db := sqlstate.Open(st.Store, sqlstate.Options{})
	s, err := db.Update(ctx, store.ReadOptions{})
	if err != nil || !s.Full {
		t.Fatalf("first update: %+v %v", s, err)
	}
	past := strings.TrimSpace(git(t, st, "rev-parse", "HEAD"))
	pastMemory := len(fields(git(t, st, "ls-tree", "-r", "--name-only", "HEAD", "memory/")))
	for i := 0; i < 3; i++ {
		if _, _, err := st.Memory().Put(ctx, memory.Key{Namespace: "long_term", Kind: "fact", ID: fmt.Sprintf("late%d", i)}, []byte(`{"topic":"late"}`), 0, store.WriteOptions{Agent: "dave"}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := st.Delete(ctx, "config/app.json", "", store.WriteOptions{Agent: "dave"}); err != nil {
		t.Fatal(err)
	}
	s, err = db.Update(ctx, store.ReadOptions{})
	if err != nil || s.Full || s.Commits != 4 || s.Files != 4 {
		t.Fatalf("incremental update: %+v %v (want 4 commits, 4 files)", s, err)
	}
	if s, err = db.Update(ctx, store.ReadOptions{}); err != nil || !s.UpToDate {
		t.Fatalf("second update: %+v %v", s, err)
	}
	same(t, "dave", query(t, db, `SELECT agent, count(*) FROM mutations WHERE agent='dave' GROUP BY agent`, store.ReadOptions{}), []string{"dave|4"})
	same(t, "deleted doc", query(t, db, `SELECT count(*) FROM documents WHERE path='config/app.json'`, store.ReadOptions{}), []string{"0"})
	want := len(fields(git(t, st, "ls-tree", "-r", "--name-only", "HEAD", "memory/")))
	same(t, "memory now", query(t, db, `SELECT count(*) FROM memory`, store.ReadOptions{}), []string{fmt.Sprint(want)})

	// The past: from its own tree and history.
	at := store.ReadOptions{At: past}
	same(t, "memory then", query(t, db, `SELECT count(*) FROM memory`, at), []string{fmt.Sprint(pastMemory)})
	same(t, "app then", query(t, db, `SELECT value FROM documents WHERE path='config/app.json' AND key='db.host'`, at), []string{`"pg.internal"`})
	wantN := strings.TrimSpace(git(t, st, "rev-list", "--count", past))
	same(t, "commits then", query(t, db, `SELECT count(DISTINCT commit_id) FROM mutations`, at), []string{wantN})
	same(t, "HEAD~4", query(t, db, `SELECT count(*) FROM mutations WHERE agent='dave'`, store.ReadOptions{At: "HEAD~4"}), []string{"0"})

	// Past a merge, the past revision's history is read, not taken from
	// the branch's index: a merge made with plain git of HEAD~2 into HEAD.
	tree := strings.TrimSpace(git(t, st, "rev-parse", "HEAD^{tree}"))
	merge := strings.TrimSpace(git(t, st, "commit-tree", tree, "-p", "HEAD", "-p", "HEAD~2", "-m", "merge"))
	git(t, st, "update-ref", "refs/heads/"+st.Branch(), merge)
	same(t, "commits then, past a merge", query(t, db, `SELECT count(DISTINCT commit_id) FROM mutations`, at), []string{wantN})
	same(t, "memory then, past a merge", query(t, db, `SELECT count(*) FROM memory`, at), []string{fmt.Sprint(pastMemory)})
	wantAll := strings.TrimSpace(git(t, st, "rev-list", "--count", "HEAD"))
	same(t, "commits with the merge", query(t, db, `SELECT count(DISTINCT commit_id) FROM mutations`, store.ReadOptions{}), []string{wantAll})
	same(t, "merge row", query(t, db, `SELECT parents, operation FROM mutations WHERE subject = 'merge'`, store.ReadOptions{}), []string{"2|"})

	// A deleted index is built again.
	if err := db.Remove(); err != nil {
		t.Fatal(err)
	}
	if s, err := db.Update(ctx, store.ReadOptions{}); err != nil || !s.Full {
		t.Fatalf("after remove: %+v %v", s, err)
	}
}

const notesSchema = `{"columns": [{"name": "title", "type": "text"}, {"name": "priority", "type": "integer"}, {"name": "done", "type": "boolean"}, {"name": "tags", "type": "json"}]}`

// TestAgentTables: a declared table's statements are commits git shows,
// rows are documents, and SELECT joins them with mirrored tables.
func TestAgentTables(t *testing.T) {
	ctx := context.Background()
	st := fixture(t)
	db := sqlstate.Open(st.Store, sqlstate.Options{})
	wo := store.WriteOptions{Agent: "alice"}
	if _, err := db.CreateTable(ctx, "notes", []byte(notesSchema), wo); err != nil {
		t.Fatal(err)
	}
	if _, err := db.CreateTable(ctx, "notes", []byte(notesSchema), wo); !errors.Is(err, store.ErrExists) {
		t.Fatalf("second create: %v", err)
	}
	res, err := db.Exec(ctx, `INSERT INTO notes(id, title, priority, done, tags) VALUES ('n1', 'rotate keys', 2, false, '["auth"]'), ('n2', 'pg upgrade', 1, true, json_array('db'))`, wo)
	if err != nil {
		t.Fatal(err)
	}
	if res.Mutation == nil || strings.Join(res.Written, ",") != "n1,n2" {
		t.Fatalf("insert: %+v", res)
	}
	if got := git(t, st, "show", "HEAD:tables/notes/n1.json"); !strings.Contains(got, `"title": "rotate keys"`) || !strings.Contains(got, `"done": false`) {
		t.Fatalf("row file: %s", got)
	}
	if _, err := db.Exec(ctx, `INSERT INTO notes(title) VALUES ('no id')`, store.WriteOptions{Agent: "bob"}); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(ctx, `UPDATE notes SET priority = priority + 10 WHERE done = 0`, store.WriteOptions{Agent: "bob"}); err != nil {
		t.Fatal(err)
	}
	res, err = db.Exec(ctx, `DELETE FROM notes WHERE id = 'n2'`, store.WriteOptions{Agent: "carol"})
	if err != nil || strings.Join(res.Removed, ",") != "n2" {
		t.Fatalf("delete: %+v %v", res, err)
	}
	// A statement that changes nothing makes no commit.
	before := git(t, st, "rev-parse", "HEAD")
	if res, err := db.Exec(ctx, `DELETE FROM notes WHERE id = 'nope'`, wo); err != nil || res.Mutation != nil {
		t.Fatalf("empty delete: %+v %v", res, err)
	}
	if git(t, st, "rev-parse", "HEAD") != before {
		t.Fatal("an empty delete committed")
	}

	// git log shows each statement as a commit with its trailers.
	log := git(t, st, "log", "--format=%an %s%n%(trailers:key=Sql-Operation,valueonly)%(trailers:key=Sql-Statement,valueonly)", "-5")
	for _, w := range []string{"carol sql delete notes: 0 written, 1 removed", "DELETE FROM notes WHERE id = 'n2'", "bob sql update notes", "bob sql insert notes", "alice sql insert notes: 2 written", "UPDATE notes SET priority = priority + 10 WHERE done = 0"} {
		if !strings.Contains(log, w) {
			t.Errorf("git log lacks %q:\n%s", w, log)
		}
	}
	if out, err := exec.Command("git", "--git-dir", st.Dir(), "fsck", "--strict").CombinedOutput(); err != nil {
		t.Fatalf("git fsck --strict: %v\n%s", err, out)
	}
	same(t, "rows", query(t, db, `SELECT id, title, priority, done, tags FROM notes WHERE id <> '' AND title <> 'no id'`, store.ReadOptions{}), []string{`n1|rotate keys|12|0|["auth"]`})
	// Rows are documents: their history is the mutations table's.
	same(t, "join", query(t, db, `SELECT n.id, m.agent, m.operation FROM notes n JOIN mutations m ON m.path = 'tables/notes/' || n.id || '.json' WHERE n.id = 'n1'`, store.ReadOptions{}),
		[]string{"n1|alice|create", "n1|bob|update"})
	same(t, "generated id", query(t, db, `SELECT count(*) FROM notes WHERE title = 'no id' AND id LIKE 'row-%'`, store.ReadOptions{}), []string{"1"})
	// A row written with plain document verbs is mirrored too; one of
	// the wrong shape is listed, not guessed at.
	if _, err := st.Put(ctx, "tables/notes/n9.json", []byte(`{"title":"by put","priority":"high"}`), wo); err != nil {
		t.Fatal(err)
	}
	same(t, "put row", query(t, db, `SELECT id, title, priority FROM notes WHERE id='n9'`, store.ReadOptions{}), []string{"n9|by put|"})
	same(t, "problem", query(t, db, `SELECT path FROM index_problems`, store.ReadOptions{}), []string{"tables/notes/n9.json"})
	// The table as it was before the update.
	same(t, "at", query(t, db, `SELECT priority FROM notes WHERE id='n1'`, store.ReadOptions{At: "HEAD~4"}), []string{"2"})

	// Types are SQLite's STRICT ones: a text in an integer column fails.
	if _, err := db.Exec(ctx, `INSERT INTO notes(id, priority) VALUES ('x', 'high')`, wo); !errors.Is(err, sqlstate.ErrSQL) {
		t.Fatalf("wrong type: %v", err)
	}
	if _, err := db.Exec(ctx, `INSERT INTO notes(id, title) VALUES ('../x', 't')`, wo); !errors.Is(err, store.ErrUsage) {
		t.Fatalf("bad row id: %v", err)
	}
	if _, err := db.Exec(ctx, `INSERT INTO notes(id, title) VALUES ('N1', 't')`, wo); !errors.Is(err, store.ErrUsage) {
		t.Fatalf("id differing in case: %v", err)
	}
	// Allowlists.
	ro := sqlstate.Open(st.Store, sqlstate.Options{MayWrite: func(string) bool { return false }, MayRead: func(tb string) bool { return tb != "memory" }})
	for _, c := range []struct{ q, kind string }{
		{`INSERT INTO notes(title) VALUES ('x')`, sqlstate.RefusedNotAllowed},
	} {
		if _, err := ro.Exec(ctx, c.q, wo); !isRefused(err, c.kind) {
			t.Errorf("%s: %v, want %s", c.q, err, c.kind)
		}
	}
	if _, err := ro.Query(ctx, `SELECT * FROM memory`, store.ReadOptions{}); !isRefused(err, sqlstate.RefusedNotAllowed) {
		t.Errorf("read memory: %v", err)
	}
	if _, err := ro.Query(ctx, `SELECT count(*) FROM notes`, store.ReadOptions{}); err != nil {
		t.Errorf("read notes: %v", err)
	}
}

func isRefused(err error, kind string) bool {
	var re *sqlstate.RefusedError
	return errors.As(err, &re) && re.Kind == kind && errors.Is(err, store.ErrDenied)
}

// TestRefusals: every kind of statement that does not run, through both
// sql (a query) and sql exec, refused with its kind and nothing moved.
func TestRefusals(t *testing.T) {
	ctx := context.Background()
	st := fixture(t)
	db := sqlstate.Open(st.Store, sqlstate.Options{})
	wo := store.WriteOptions{Agent: "mallory"}
	if _, err := db.CreateTable(ctx, "notes", []byte(notesSchema), store.WriteOptions{Agent: "alice"}); err != nil {
		t.Fatal(err)
	}
	outside := filepath.Join(t.TempDir(), "x.db")
	head := git(t, st, "rev-parse", "HEAD")
	cases := []struct {
		exec bool
		q    string
		kind string
	}{
		{false, `CREATE TABLE t(x)`, sqlstate.RefusedDDL},
		{true, `CREATE TABLE t(x)`, sqlstate.RefusedDDL},
		{false, `DROP TABLE memory`, sqlstate.RefusedDDL},
		{true, `ALTER TABLE notes ADD COLUMN y`, sqlstate.RefusedDDL},
		{true, `CREATE INDEX i ON notes(title)`, sqlstate.RefusedDDL},
		{false, `REINDEX`, sqlstate.RefusedDDL},
		{false, `ANALYZE`, sqlstate.RefusedDDL},
		{true, `CREATE TRIGGER t AFTER INSERT ON notes BEGIN DELETE FROM notes; END`, sqlstate.RefusedDDL},
		{false, `ATTACH DATABASE '` + outside + `' AS x`, sqlstate.RefusedAttach},
		{true, `ATTACH '` + outside + `' AS x`, sqlstate.RefusedAttach},
		{false, `DETACH x`, sqlstate.RefusedAttach},
		{false, `VACUUM`, sqlstate.RefusedFilesystem},
		{false, `VACUUM INTO '` + outside + `'`, sqlstate.RefusedFilesystem},
		{false, `PRAGMA query_only = 0`, sqlstate.RefusedPragma},
		{false, `PRAGMA writable_schema = 1`, sqlstate.RefusedPragma},
		{false, `PRAGMA journal_mode = DELETE`, sqlstate.RefusedPragma},
		{false, `SELECT * FROM pragma_journal_mode`, sqlstate.RefusedUnknown},
		{false, `SELECT load_extension('/tmp/evil.so')`, sqlstate.RefusedExtension},
		{true, `INSERT INTO notes(title) SELECT load_extension('/tmp/evil.so')`, sqlstate.RefusedExtension},
		{false, `SELECT 1; SELECT 2`, sqlstate.RefusedMultiple},
		{true, `DELETE FROM notes; DROP TABLE notes`, sqlstate.RefusedMultiple},
		{false, `SELECT 1; ATTACH '` + outside + `' AS x`, sqlstate.RefusedMultiple},
		{true, `INSERT INTO mutations(seq, commit_id) VALUES (1, 'x')`, sqlstate.RefusedMirrored},
		{true, `DELETE FROM memory`, sqlstate.RefusedMirrored},
		{true, `UPDATE documents SET value = 1`, sqlstate.RefusedMirrored},
		{true, `WITH x AS (SELECT 1) DELETE FROM documents`, sqlstate.RefusedMirrored},
		{true, `DELETE FROM meta`, sqlstate.RefusedMirrored},
		{true, `DELETE FROM sqlite_master`, sqlstate.RefusedDDL},
		{false, `INSERT INTO notes(title) VALUES ('x')`, sqlstate.RefusedWrite},
		{false, `WITH x AS (SELECT 1) DELETE FROM notes`, sqlstate.RefusedWrite},
		{false, `BEGIN`, sqlstate.RefusedTransaction},
		{true, `SAVEPOINT s`, sqlstate.RefusedTransaction},
		{true, `SELECT * FROM notes`, sqlstate.RefusedNotWrite},
		{true, `WITH x AS (SELECT 1) SELECT * FROM x`, sqlstate.RefusedNotWrite},
		{false, `SELECT * FROM sqlite_dbpage`, sqlstate.RefusedUnknown},
		{false, `-- only a comment`, sqlstate.RefusedStatement},
	}
	for _, c := range cases {
		var err error
		if c.exec {
			_, err = db.Exec(ctx, c.q, wo)
		} else {
			_, err = db.Query(ctx, c.q, store.ReadOptions{})
		}
		if !isRefused(err, c.kind) {
			t.Errorf("exec=%v %s: %v, want refused (%s)", c.exec, c.q, err, c.kind)
		}
	}
	if git(t, st, "rev-parse", "HEAD") != head {
		t.Fatal("a refused statement committed")
	}
	if out, err := exec.Command("sh", "-c", "ls "+filepath.Dir(outside)).Output(); err != nil || strings.TrimSpace(string(out)) != "" {
		t.Fatalf("a file appeared beside %s: %q %v", outside, out, err)
	}
	// The index is intact after all of that.
	same(t, "memory still", query(t, db, `SELECT count(*) FROM memory WHERE kind='fact'`, store.ReadOptions{}), []string{"5"})
	// Schema-reading pragmas and JSON table functions run.
	if _, err := db.Query(ctx, `PRAGMA table_info(memory)`, store.ReadOptions{}); err != nil {
		t.Error(err)
	}
	if _, err := db.Query(ctx, `SELECT m.id, j.key FROM memory m, json_each(m.payload) j`, store.ReadOptions{}); err != nil {
		t.Error(err)
	}
	if _, err := db.Query(ctx, `SELECT name FROM pragma_table_info('notes')`, store.ReadOptions{}); err != nil {
		t.Error(err)
	}
	// A statement is recorded in its commit: no NUL, no bytes that are
	// not UTF-8.
	for _, q := range []string{"INSERT INTO notes(title) VALUES ('a\x00b')", "INSERT INTO notes(title) VALUES ('\xff')"} {
		if _, err := db.Exec(ctx, q, wo); !errors.Is(err, store.ErrUsage) {
			t.Errorf("%q: %v", q, err)
		}
	}
	// A table that does not exist is SQLite's error (exit 2), not a refusal.
	for _, q := range []string{`SELECT * FROM nosuch`, `INSERT INTO nosuch VALUES (1)`} {
		if _, err := db.Query(ctx, q, store.ReadOptions{}); !errors.Is(err, sqlstate.ErrSQL) && !isRefused(err, sqlstate.RefusedWrite) {
			t.Errorf("%s: %v", q, err)
		}
	}
	if _, err := db.Exec(ctx, `INSERT INTO nosuch VALUES (1)`, wo); !errors.Is(err, sqlstate.ErrSQL) || !errors.Is(err, store.ErrUsage) {
		t.Errorf("insert nosuch: %v", err)
	}
	// Bounds: a value, an answer's rows.
	if _, err := db.Query(ctx, `SELECT length(zeroblob(1000000000))`, store.ReadOptions{}); !errors.Is(err, sqlstate.ErrSQL) {
		t.Errorf("zeroblob: %v", err)
	}
	small := sqlstate.Open(st.Store, sqlstate.Options{MaxRows: 10})
	if _, err := small.Query(ctx, `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n) SELECT i FROM n`, store.ReadOptions{}); !errors.Is(err, store.ErrLimit) {
		t.Errorf("endless rows: %v", err)
	}
	// The authorizer alone refuses what passes the first keyword's check.
	if _, err := db.Query(ctx, `SELECT * FROM (SELECT 1) WHERE load_extension('x')`, store.ReadOptions{}); !isRefused(err, sqlstate.RefusedExtension) {
		t.Errorf("nested load_extension: %v", err)
	}
}

// TestIndexFiles: processes that meet an absent index at once each get
// an answer; a damaged index file is built again; a branch reset to an
// older commit is followed, not mixed with what it dropped.
func TestIndexFiles(t *testing.T) {
	ctx := context.Background()
	st := fixture(t)
	errs := make(chan error, 4)
	for i := 0; i < 4; i++ {
		go func() {
			// A DB each, as separate processes would have.
			db := sqlstate.Open(st.Store, sqlstate.Options{})
			r, err := db.Query(ctx, `SELECT count(*) FROM memory`, store.ReadOptions{})
			if err == nil && fmt.Sprint(r.Rows[0][0]) != "6" {
				err = fmt.Errorf("count %v", r.Rows[0][0])
			}
			errs <- err
		}()
	}
	for i := 0; i < 4; i++ {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	db := sqlstate.Open(st.Store, sqlstate.Options{})
	files, _ := filepath.Glob(filepath.Join(st.Dir(), "aiwg", "sql", "branch-*.db"))
	if len(files) != 1 {
		t.Fatalf("index files: %v", files)
	}
	if err := os.WriteFile(files[0], []byte("not a database, not at all; long enough to be read as a header........................................................"), 0o644); err != nil {
		t.Fatal(err)
	}
	os.Remove(files[0] + "-wal")
	os.Remove(files[0] + "-shm")
	same(t, "after damage", query(t, db, `SELECT count(*) FROM memory`, store.ReadOptions{}), []string{"6"})

	// Reset the branch with plain git to drop the last five commits.
	git(t, st, "update-ref", "refs/heads/"+st.Branch(), "HEAD~5")
	want := strings.TrimSpace(git(t, st, "rev-list", "--count", "HEAD"))
	same(t, "after reset", query(t, db, `SELECT count(DISTINCT commit_id) FROM mutations`, store.ReadOptions{}), []string{want})
	same(t, "no trajectory", query(t, db, `SELECT count(*) FROM iterations`, store.ReadOptions{}), []string{"0"})
}

// TestExecRacesAWrite: a write that moves the branch while a statement
// runs makes it run again on the new head (never commit on a stale
// reading); with Expect, it is refused as stale instead.
func TestExecRacesAWrite(t *testing.T) {
	ctx := context.Background()
	st := fixture(t)
	wo := store.WriteOptions{Agent: "alice"}
	plain := sqlstate.Open(st.Store, sqlstate.Options{})
	if _, err := plain.CreateTable(ctx, "notes", []byte(notesSchema), wo); err != nil {
		t.Fatal(err)
	}
	if _, err := plain.Exec(ctx, `INSERT INTO notes(id, title, priority) VALUES ('r0', 'ours', 1)`, wo); err != nil {
		t.Fatal(err)
	}
	races := 0
	interloper := func(string) bool {
		// Called by the authorizer while the statement compiles: another
		// agent writes in between, the first time only.
		if races == 0 {
			races++
			if _, err := st.Put(ctx, "tables/notes/r1.json", []byte(`{"title":"theirs","priority":1}`), store.WriteOptions{Agent: "bob"}); err != nil {
				t.Error(err)
			}
		}
		return true
	}
	db := sqlstate.Open(st.Store, sqlstate.Options{MayWrite: interloper})
	res, err := db.Exec(ctx, `UPDATE notes SET priority = priority + 1`, wo)
	if err != nil {
		t.Fatal(err)
	}
	// The second run saw bob's row, and updated it too.
	if strings.Join(res.Written, ",") != "r0,r1" || races != 1 {
		t.Fatalf("written %v", res.Written)
	}
	if got := git(t, st, "show", "HEAD:tables/notes/r1.json"); !strings.Contains(got, `"priority": 2`) {
		t.Fatalf("row: %s", got)
	}
	if got := git(t, st, "log", "-2", "--format=%an"); got != "alice\nbob\n" {
		t.Fatalf("log: %q", got)
	}
	races = 0
	head := strings.TrimSpace(git(t, st, "rev-parse", "HEAD"))
	wo.Expect = &head
	if _, err := db.Exec(ctx, `UPDATE notes SET priority = priority + 1`, wo); !errors.Is(err, store.ErrStale) {
		t.Fatalf("with Expect: %v", err)
	}
}

// TestRowsMerge: rows are documents, merged key by key; a column's merge
// strategy, declared in the schema, settles a clash on it.
func TestRowsMerge(t *testing.T) {
	ctx := context.Background()
	st := fixture(t)
	db := sqlstate.Open(st.Store, sqlstate.Options{})
	wo := store.WriteOptions{Agent: "alice"}
	schema := `{"columns": [{"name": "title", "type": "text"}, {"name": "priority", "type": "integer", "merge": "max"}, {"name": "note", "type": "text"}]}`
	if _, err := db.CreateTable(ctx, "tasks", []byte(schema), wo); err != nil {
		t.Fatal(err)
	}
	if got := git(t, st, "show", "HEAD:.gitattributes"); !strings.Contains(got, "tables/tasks/*.json merge=aiwg-merge-objects aiwg-keys=priority:max -aiwg-fallback") {
		t.Fatalf(".gitattributes: %s", got)
	}
	if _, err := db.CreateTable(ctx, "bad", []byte(`{"columns": [{"name": "n", "type": "integer", "merge": "nope"}]}`), wo); err == nil {
		t.Fatalf("unknown strategy: %v", err)
	}
	if _, err := db.Exec(ctx, `INSERT INTO tasks(id, title, priority) VALUES ('t1', 'ship', 1)`, wo); err != nil {
		t.Fatal(err)
	}
	if _, err := st.CreateBranch(ctx, "side", ""); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(ctx, `UPDATE tasks SET priority = 5, title = 'ship it' WHERE id = 't1'`, wo); err != nil {
		t.Fatal(err)
	}
	side := store.WriteOptions{Agent: "bob", Branch: "side"}
	if _, err := db.Exec(ctx, `UPDATE tasks SET priority = 7, note = 'from side' WHERE id = 't1'`, side); err != nil {
		t.Fatal(err)
	}
	same(t, "side", query(t, db, `SELECT title, priority, note FROM tasks`, store.ReadOptions{Branch: "side"}), []string{"ship|7|from side"})
	// A branch of a long name has its index file too.
	long := "agents/" + strings.Repeat("x", 180) // 187 bytes: 374 hex digits
	if _, err := st.CreateBranch(ctx, long, ""); err != nil {
		t.Fatal(err)
	}
	same(t, "long branch", query(t, db, `SELECT count(*) FROM tasks`, store.ReadOptions{Branch: long}), []string{"1"})
	if _, err := st.Merges().Merge(ctx, "side", merge.MergeOptions{Write: wo}); err != nil {
		t.Fatal(err)
	}
	same(t, "merged", query(t, db, `SELECT title, priority, note FROM tasks`, store.ReadOptions{}), []string{"ship it|7|from side"})
	if _, err := db.Verify(ctx, store.ReadOptions{}); err != nil {
		t.Fatalf("verify after a merge: %v", err)
	}
	if out, err := exec.Command("git", "--git-dir", st.Dir(), "fsck", "--strict").CombinedOutput(); err != nil {
		t.Fatalf("git fsck --strict: %v\n%s", err, out)
	}
}

// TestHostileFiles: files no aiwg-state verb would write, committed with
// plain git as a pushed or merged commit brings them: declarations that
// try to inject SQL or take a mirrored table's name, rows that do not fit.
// The index lists them and stays what it was.
func TestHostileFiles(t *testing.T) {
	ctx := context.Background()
	st := fixture(t)
	db := sqlstate.Open(st.Store, sqlstate.Options{})
	if _, err := db.Update(ctx, store.ReadOptions{}); err != nil {
		t.Fatal(err)
	}
	files := map[string]string{
		".aiwg/tables/evil.json":     `{"columns": [{"name": "x\"); DROP TABLE memory; --", "type": "text"}]}`,
		".aiwg/tables/memory.json":   `{"columns": [{"name": "x", "type": "text"}]}`,
		".aiwg/tables/sneaky.json":   `{"columns": [{"name": "x", "type": "text DEFAULT (load_extension('x'))"}]}`,
		".aiwg/tables/ok.json":       `{"columns": [{"name": "n", "type": "integer"}, {"name": "b", "type": "boolean"}]}`,
		"tables/ok/r1.json":          `{"n": 1, "b": true}`,
		"tables/ok/r2.json":          `{"n": "DROP TABLE memory", "b": 2}`,
		"tables/ok/..evil.json":      `{"n": 3}`,
		"tables/ok/deep/r3.json":     `{"n": 4}`,
		"tables/ok/r4.json":          `[1, 2]`,
		"tables/undeclared/r.json":   `{"n": 1}`,
		"memory/long_term/fact.json": `{"not": "a record"}`,
	}
	env := append(os.Environ(), "GIT_INDEX_FILE="+filepath.Join(t.TempDir(), "index"))
	gitEnv := func(stdin string, args ...string) string {
		cmd := exec.Command("git", append([]string{"--git-dir", st.Dir()}, args...)...)
		cmd.Env = env
		cmd.Stdin = strings.NewReader(stdin)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	gitEnv("", "read-tree", "HEAD")
	for path, body := range files {
		h := gitEnv(body, "hash-object", "-w", "--stdin")
		gitEnv("", "update-index", "--add", "--cacheinfo", "100644,"+h+","+path)
	}
	tree := gitEnv("", "write-tree")
	c := gitEnv("", "commit-tree", tree, "-p", "HEAD", "-m", "hostile")
	gitEnv("", "update-ref", "refs/heads/"+st.Branch(), c)

	same(t, "memory intact", query(t, db, `SELECT count(*) FROM memory`, store.ReadOptions{}), []string{"6"})
	same(t, "ok rows", query(t, db, `SELECT id, n, b FROM ok`, store.ReadOptions{}), []string{"r1|1|1", "r2||"})
	got := query(t, db, `SELECT DISTINCT path FROM index_problems`, store.ReadOptions{})
	want := []string{".aiwg/tables/evil.json", ".aiwg/tables/memory.json", ".aiwg/tables/sneaky.json", "memory/long_term/fact.json", "tables/ok/..evil.json", "tables/ok/r2.json", "tables/ok/r4.json", "tables/undeclared/r.json"}
	sort.Strings(want)
	same(t, "problems", got, want)
	same(t, "tables", query(t, db, `SELECT name FROM sqlite_master WHERE type = 'table' AND name IN ('evil', 'sneaky', 'ok', 'memory')`, store.ReadOptions{}), []string{"memory", "ok"})
	// The rows a commit made with plain git changed are its mutations.
	same(t, "plain git commit", query(t, db, `SELECT count(*) FROM mutations WHERE subject = 'hostile' AND operation IS NULL`, store.ReadOptions{}), []string{fmt.Sprint(len(files))})
}

// TestSignatures: the signature column is the verdict git's SSH
// signature gets from the policy's signers, judged again when the policy
// changes.
func TestSignatures(t *testing.T) {
	ctx := context.Background()
	st := fixture(t)
	alice := signtest.NewKey(t, t.TempDir(), "alice")
	git(t, st, "config", "aiwg.alice.signingKey", alice.Path)
	m, err := st.Set(ctx, "signed/a.json", "v", []byte("1"), store.WriteOptions{Agent: "alice"})
	if err != nil {
		t.Fatal(err)
	}
	db := sqlstate.Open(st.Store, sqlstate.Options{})
	q := `SELECT signature FROM mutations WHERE commit_id = '` + m.Commit + `'`
	same(t, "no signers yet", query(t, db, q, store.ReadOptions{}), []string{"unknown-key"})
	same(t, "unsigned", query(t, db, `SELECT DISTINCT signature FROM mutations WHERE agent = 'bob'`, store.ReadOptions{}), []string{"none"})
	pol := `{"default": "allow", "rules": [], "signers": {"alice": ["` + alice.Public + `"]}}`
	if _, err := st.SetPolicy(ctx, []byte(pol), store.WriteOptions{Agent: "carol"}); err != nil {
		t.Fatal(err)
	}
	same(t, "alice's key listed", query(t, db, q, store.ReadOptions{}), []string{"good"})
	same(t, "before the policy", query(t, db, q, store.ReadOptions{At: "HEAD~1"}), []string{"unknown-key"})
}
