package sqlstate

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/go-git/go-git/v5/plumbing"
	sqlite "modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/aiwg/aiwg-state/internal/sandbox"
	"github.com/aiwg/aiwg-state/merge/jsonmerge"
	"github.com/aiwg/aiwg-state/objects"
	"github.com/aiwg/aiwg-state/policy"
	"github.com/aiwg/aiwg-state/repo"
	"github.com/aiwg/aiwg-state/store"
)

// Options choose what statements may touch. Both functions get a table's
// name in lower case; nil allows, for reads, every mirrored and agent
// table, and for writes, every declared agent table. A table that
// mirrors the store is never written, whatever MayWrite says.
type Options struct {
	MayRead  func(table string) bool
	MayWrite func(table string) bool
	// Dir holds the index files; default <gitdir>/aiwg/sql.
	Dir string
	// MaxRows bounds a query's answer (0: DefaultMaxRows); past it the
	// query fails with store.ErrLimit rather than fill memory.
	MaxRows int
	// Refuse, when set, is the error a table that MayRead or MayWrite
	// refuses is reported with (a sandbox profile's, naming its rule);
	// nil: a *RefusedError of kind not_allowed.
	Refuse func(table string, write bool) error
	// Timeout bounds how long the caller's statement runs, a query's or
	// sql exec's (0: DefaultTimeout; negative: no limit); past it the
	// statement is interrupted and fails with store.ErrLimit. Bringing
	// the index up to date is not counted: it is the store's work.
	Timeout time.Duration
	// MaxBytes bounds a query's whole answer, its values' bytes (0:
	// DefaultMaxBytes); past it the query fails with store.ErrLimit.
	MaxBytes int64
	// MaxRowsWritten bounds the rows one sql exec statement writes and
	// removes (0: the store's limits.max_sql_rows_written, else
	// DefaultMaxRowsWritten; the store's limit bounds any other value);
	// past it the statement is refused with store.ErrLimit and nothing is
	// committed.
	MaxRowsWritten int
}

// Defaults of Options' limits.
const (
	DefaultTimeout        = 10 * time.Second
	DefaultMaxBytes       = 256 << 20
	DefaultMaxRowsWritten = 1000
)

// ErrBusy: the index file stayed locked by another process's update past
// SQLite's busy timeout. The error returned wraps it and store.ErrLocked
// (exit 5): try again.
var ErrBusy = errors.New("the SQL index is busy: another process is updating it; try again")

// busy makes SQLite's "database is locked" ErrBusy.
func busy(err error) error {
	if err == nil || errors.Is(err, ErrBusy) {
		return err
	}
	if s := err.Error(); strings.Contains(s, "SQLITE_BUSY") || strings.Contains(s, "database is locked") {
		return fmt.Errorf("%w (%w)", ErrBusy, store.ErrLocked)
	}
	return err
}

// statementContext is ctx with the statement's deadline.
func (d *DB) statementContext(ctx context.Context) (context.Context, context.CancelFunc) {
	t := d.opts.Timeout
	if t == 0 {
		t = DefaultTimeout
	}
	if t < 0 {
		return context.WithCancel(ctx)
	}
	return context.WithTimeout(ctx, t)
}

// timedOut is err, or a limit error when the statement's own deadline
// (not the caller's context) ended it.
func (d *DB) timedOut(ctx, sctx context.Context, err error) error {
	if err == nil || ctx.Err() != nil || !errors.Is(sctx.Err(), context.DeadlineExceeded) {
		return err
	}
	t := d.opts.Timeout
	if t == 0 {
		t = DefaultTimeout
	}
	return fmt.Errorf("%w: the statement ran past its time limit of %s (--timeout)", store.ErrLimit, t)
}

// ProfileOptions are the options that hold agent to its sandbox profile
// (the access policy's at the head of st's branch), a refusal naming the
// profile and its rule. Its "tables" rule names the tables the agent may
// read and write, the mirrored ones included; a mirrored table also needs
// its whole tier, since its rows are all of that tier's: documents,
// mutations, variables, trajectories, iterations and index_problems
// documents.read "**"; memory every namespace ("*"); queues every queue
// ("*"); leases coordination. An agent without a profile gets the
// defaults.
func ProfileOptions(ctx context.Context, st *store.Store, agent string) (Options, error) {
	p, err := sandbox.Policy(ctx, st)
	if err != nil || p == nil || agent == "" {
		return Options{}, err
	}
	pr, _ := p.ProfileOf(agent)
	if pr == nil {
		return Options{}, nil
	}
	name := pr.Name()
	readRule := func(table string) (bool, string) {
		if !pr.MayReadTable(table) {
			return false, policy.TierTables + ".read"
		}
		switch table {
		case "documents", "mutations", "variables", "trajectories", "iterations", "index_problems":
			return slices.Contains(pr.Documents.Read, "**"), policy.TierDocuments + ".read"
		case "memory":
			return slices.Contains(pr.Memory, "*"), policy.TierMemory
		case "queues":
			return slices.Contains(pr.Queues, "*"), policy.TierQueues
		case "leases":
			return pr.Coordination, policy.TierCoordination
		}
		return true, ""
	}
	return Options{
		MayRead: func(table string) bool {
			ok, _ := readRule(table)
			return ok
		},
		MayWrite: pr.MayWriteTable,
		Refuse: func(table string, write bool) error {
			access, rule := "read", ""
			if write {
				access, rule = "write", policy.TierTables+".write"
			} else {
				_, rule = readRule(table)
			}
			return &policy.ProfileError{Agent: agent, Profile: name, Rule: rule, Access: access, Target: "table " + table}
		},
	}, nil
}

// DefaultMaxRows is the most rows a query answers by default.
const DefaultMaxRows = 1_000_000

// maxValueBytes bounds one value a statement makes (SQLite's
// SQLITE_LIMIT_LENGTH, a billion by default): zeroblob(1e9) is no way to
// take a gigabyte of memory.
const maxValueBytes = 64 << 20

// DB is SQL over one store. It holds no open database between calls:
// each call opens the index, brings it up to date and closes it, so that
// any number of processes share it (SQLite's own locking orders them).
type DB struct {
	st   *store.Store
	opts Options
}

// Open is SQL over st. Nothing is read until the first call.
func Open(st *store.Store, opts Options) *DB {
	if opts.Dir == "" {
		opts.Dir = filepath.Join(st.Dir(), "aiwg", "sql")
	}
	return &DB{st: st, opts: opts}
}

// Result is a query's answer.
type Result struct {
	Columns []string
	Rows    [][]any // each value nil, int64, float64, string or []byte
	// Commit is the commit the answer is about.
	Commit string
}

// indexPath is the index file of a branch.
func (d *DB) indexPath(branch string) string {
	name := hex.EncodeToString([]byte(branch))
	if len(name) > 128 {
		// A file name has 255 bytes at most; a long branch name is hashed.
		sum := sha256.Sum256([]byte(branch))
		name = "h" + hex.EncodeToString(sum[:])
	}
	return filepath.Join(d.opts.Dir, "branch-"+name+".db")
}

// openFile opens (creating) the index file of branch.
func (d *DB) openFile(branch string) (*sql.DB, error) {
	if err := os.MkdirAll(d.opts.Dir, 0o755); err != nil {
		return nil, err
	}
	// synchronous=OFF: the index is derived; a crash that loses its last
	// update costs a rebuild (its commit tells what it mirrors), never a
	// wrong answer. WAL lets queries read while another process updates.
	// A 64 MB page cache at most: an index of 100,000 commits is about
	// 28 MB, and a smaller cache made its build wait on reads.
	//
	// The path is escaped as a file: URI: SQLite cuts a filename at # and
	// decodes %XX, and the driver cuts it at ?, so a store at
	// /x/app.db#v2 must not open /x/app.db.
	return sql.Open("sqlite", fileURI(d.indexPath(branch))+fmt.Sprintf("?_pragma=busy_timeout(%d)&_pragma=journal_mode(WAL)&_pragma=synchronous(OFF)&_pragma=cache_size(-65536)&_txlock=immediate", busyTimeout.Milliseconds()))
}

// busyTimeout is how long a process waits for another's update of the
// index file (a full build of a large store's takes seconds) before the
// index is reported busy (ErrBusy).
var busyTimeout = 30 * time.Second

// fileURI is path as a file: URI, every character SQLite or the driver
// would read as syntax escaped.
func fileURI(path string) string {
	path = filepath.ToSlash(path)
	if !strings.HasPrefix(path, "/") {
		path = "/" + path // a Windows drive letter: file:/C:/...
	}
	return (&url.URL{Scheme: "file", OmitHost: true, Path: path}).String()
}

// openMemory is an index of its own, for a revision other than a branch's
// head.
func openMemory() (*sql.DB, error) {
	db, err := sql.Open("sqlite", "file::memory:")
	if err != nil {
		return nil, err
	}
	db.SetMaxOpenConns(1) // an in-memory database lives in its one connection
	return db, nil
}

// revision resolves ro to a commit, and tells whether it is its branch's
// head (then the branch's index file answers).
func (d *DB) revision(ro store.ReadOptions) (commit plumbing.Hash, branch string, head bool, err error) {
	branch = ro.Branch
	if branch == "" {
		branch = d.st.Branch()
	}
	tip, err := d.st.Resolve("", branch)
	if err != nil {
		return plumbing.ZeroHash, "", false, err
	}
	rev := store.RevName(ro)
	if rev == "" || rev == "HEAD" {
		return tip, branch, true, nil
	}
	commit, err = d.st.Resolve(rev, branch)
	if err != nil {
		return plumbing.ZeroHash, "", false, err
	}
	return commit, branch, commit == tip, nil
}

// index opens the index for ro, up to date: the branch's file for its
// head, else one built in memory for the revision.
func (d *DB) index(ctx context.Context, ro store.ReadOptions) (*sql.DB, plumbing.Hash, Stats, error) {
	commit, branch, head, err := d.revision(ro)
	if err != nil {
		return nil, commit, Stats{}, err
	}
	if !head {
		return d.past(ctx, branch, commit)
	}
	db, err := d.openFile(branch)
	if err != nil {
		return nil, commit, Stats{}, err
	}
	st, err := d.update(ctx, db, commit)
	if err != nil && !errors.Is(err, context.Canceled) && !errors.Is(err, context.DeadlineExceeded) && isDamaged(err) {
		// A damaged index is rebuilt: it is derived, and safe to delete.
		db.Close()
		d.removeFile(branch)
		if db, err = d.openFile(branch); err != nil {
			return nil, commit, st, err
		}
		st, err = d.update(ctx, db, commit)
	}
	if err != nil {
		db.Close()
		return nil, commit, st, err
	}
	return db, commit, st, nil
}

// maxLine bounds the walk that looks for a past revision on its branch's
// line of one-parent commits.
const maxLine = 20000

// past is an index of a revision other than its branch's head, in memory.
// Its files' tables come from its own tree. Its mutations are those of
// the branch's index but for the commits since the revision, when those
// are a line of one-parent commits from the head (exactly what the head
// reaches and the revision does not) and the policy that judges
// signatures is the same; otherwise every commit the revision reaches is
// read.
func (d *DB) past(ctx context.Context, branch string, commit plumbing.Hash) (*sql.DB, plumbing.Hash, Stats, error) {
	db, err := openMemory()
	if err != nil {
		return nil, commit, Stats{}, err
	}
	var since []string
	tip, err := d.st.Resolve("", branch)
	if err != nil {
		db.Close()
		return nil, commit, Stats{}, err
	}
	line := false
	if d.st.EntryHash(d.st.TreeOf(tip), store.PolicyPath) == d.st.EntryHash(d.st.TreeOf(commit), store.PolicyPath) {
		err = d.st.Repo().FirstParents(tip, func(c *repo.Commit) (bool, error) {
			if c.Hash == commit {
				line = true
				return false, nil
			}
			if len(c.Parents) != 1 || len(since) >= maxLine {
				return false, nil
			}
			since = append(since, c.Hash.String())
			return true, nil
		})
		if err != nil {
			db.Close()
			return nil, commit, Stats{}, err
		}
	}
	var mutations mutationsFunc
	if line {
		// The branch's own index, up to date, attached to copy from.
		fdb, _, _, err := d.index(ctx, store.ReadOptions{Branch: branch})
		if err != nil {
			db.Close()
			return nil, commit, Stats{}, err
		}
		fdb.Close()
		if _, err := db.ExecContext(ctx, `ATTACH DATABASE ? AS branch`, fileURI(d.indexPath(branch))); err != nil {
			db.Close()
			return nil, commit, Stats{}, err
		}
		mutations = func(ctx context.Context, tx *sql.Tx) (int, error) {
			if _, err := tx.ExecContext(ctx, `CREATE TEMP TABLE aiwg_since(id TEXT PRIMARY KEY)`); err != nil {
				return 0, err
			}
			for _, id := range since {
				if _, err := tx.ExecContext(ctx, `INSERT INTO temp.aiwg_since VALUES (?)`, id); err != nil {
					return 0, err
				}
			}
			if _, err := tx.ExecContext(ctx, `INSERT INTO main.mutations SELECT * FROM branch.mutations WHERE commit_id NOT IN (SELECT id FROM temp.aiwg_since)`); err != nil {
				return 0, err
			}
			_, err := tx.ExecContext(ctx, `DROP TABLE temp.aiwg_since`)
			return 0, err // copied, not read: Stats.Commits stays 0
		}
	}
	st, err := d.updateWith(ctx, db, commit, mutations, false)
	if err == nil && line {
		_, err = db.ExecContext(ctx, `DETACH DATABASE branch`)
	}
	if err != nil {
		db.Close()
		return nil, commit, st, err
	}
	return db, commit, st, nil
}

func isDamaged(err error) bool {
	s := err.Error()
	return strings.Contains(s, "malformed") || strings.Contains(s, "not a database") || strings.Contains(s, "no such table") || strings.Contains(s, "no such column")
}

func (d *DB) removeFile(branch string) {
	p := d.indexPath(branch)
	for _, suffix := range []string{"", "-wal", "-shm"} {
		os.Remove(p + suffix)
	}
}

// Update brings the index of ro's branch up to date and tells what it
// did; queries do so themselves, this is for warming it and for figures.
func (d *DB) Update(ctx context.Context, ro store.ReadOptions) (Stats, error) {
	db, _, st, err := d.index(ctx, ro)
	if err != nil {
		return st, busy(err)
	}
	return st, db.Close()
}

// Remove deletes the index files (they are rebuilt on next use).
func (d *DB) Remove() error {
	return os.RemoveAll(d.opts.Dir)
}

// Query runs one read-only statement over the store at ro's revision.
func (d *DB) Query(ctx context.Context, query string, ro store.ReadOptions, args ...any) (*Result, error) {
	if err := gate(query, false); err != nil {
		return nil, err
	}
	db, _, _, err := d.index(ctx, ro)
	if err != nil {
		return nil, busy(err)
	}
	defer db.Close()
	res, err := d.query(ctx, db, query, args)
	return res, busy(err)
}

func (d *DB) query(ctx context.Context, db *sql.DB, query string, args []any) (*Result, error) {
	conn, err := db.Conn(ctx)
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	// query_only before the authorizer, which refuses every pragma a
	// statement might use to turn it off.
	if _, err := conn.ExecContext(ctx, "PRAGMA query_only = 1"); err != nil {
		return nil, err
	}
	// One read transaction, so that the commit the answer names is the
	// one it is about even when another process updates the index
	// meanwhile (a deferred BEGIN takes no lock until it reads).
	if _, err := conn.ExecContext(ctx, "BEGIN"); err != nil {
		return nil, err
	}
	defer conn.ExecContext(context.WithoutCancel(ctx), "ROLLBACK")
	res := &Result{}
	if err := conn.QueryRowContext(ctx, `SELECT value FROM meta WHERE key = 'commit'`).Scan(&res.Commit); err != nil {
		return nil, err
	}
	tables, err := loadSchemas(ctx, conn)
	if err != nil {
		return nil, err
	}
	g := d.newGuard(tables, false)
	if g.real, err = realNames(ctx, conn); err != nil {
		return nil, err
	}
	if err := guardConn(conn, g); err != nil {
		return nil, err
	}
	// The transaction's end is ours, not the caller's statement's.
	defer setAuthorizer(conn, nil)
	sctx, cancel := d.statementContext(ctx)
	defer cancel()
	if err := d.collect(sctx, conn, g, res, query, args); err != nil {
		return nil, d.timedOut(ctx, sctx, err)
	}
	if !g.saw && g.err == nil {
		return nil, refused(RefusedStatement, "aiwg-state sql runs SELECT (and schema-reading pragmas)")
	}
	return res, nil
}

// collect runs a query and keeps its answer, at most MaxRows rows.
func (d *DB) collect(ctx context.Context, conn *sql.Conn, g *guard, res *Result, query string, args []any) error {
	maxRows := d.opts.MaxRows
	if maxRows <= 0 {
		maxRows = DefaultMaxRows
	}
	rows, err := conn.QueryContext(ctx, query, args...)
	if err != nil {
		return d.fail(g, err)
	}
	defer rows.Close()
	if res.Columns, err = rows.Columns(); err != nil {
		return err
	}
	maxBytes := d.opts.MaxBytes
	if maxBytes <= 0 {
		maxBytes = DefaultMaxBytes
	}
	var size int64
	for rows.Next() {
		if len(res.Rows) == maxRows {
			return fmt.Errorf("%w: the answer has more than %d rows (LIMIT it, or aggregate)", store.ErrLimit, maxRows)
		}
		vals := make([]any, len(res.Columns))
		ptrs := make([]any, len(vals))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			return err
		}
		for _, v := range vals {
			switch x := v.(type) {
			case string:
				size += int64(len(x))
			case []byte:
				size += int64(len(x))
			default:
				size += 8
			}
		}
		if size > maxBytes {
			return fmt.Errorf("%w: the answer holds more than %d bytes (LIMIT it, or select less)", store.ErrLimit, maxBytes)
		}
		res.Rows = append(res.Rows, vals)
	}
	if err := rows.Err(); err != nil {
		return d.fail(g, err)
	}
	return nil
}

// realNames are the tables and views of every database of conn, and the
// virtual table modules SQLite knows, lower case: what a statement's
// name may be when it is not a common table expression's.
func realNames(ctx context.Context, conn *sql.Conn) (map[string]bool, error) {
	rows, err := conn.QueryContext(ctx, `SELECT name FROM pragma_database_list`)
	if err != nil {
		return nil, err
	}
	var dbs []string
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			rows.Close()
			return nil, err
		}
		dbs = append(dbs, n)
	}
	rows.Close()
	q := `SELECT lower(name) FROM pragma_module_list`
	for _, db := range dbs {
		q += fmt.Sprintf(` UNION SELECT lower(name) FROM %q.sqlite_schema`, db)
	}
	return nameSet(ctx, conn, q)
}

// nameSet is the set of the strings in the one column query q's rows
// hold.
func nameSet(ctx context.Context, conn *sql.Conn, q string) (map[string]bool, error) {
	rows, err := conn.QueryContext(ctx, q)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[string]bool{}
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			return nil, err
		}
		out[n] = true
	}
	return out, rows.Err()
}

func (d *DB) newGuard(tables map[string]*Schema, write bool) *guard {
	g := &guard{write: write, agent: map[string]bool{}, mayRead: d.opts.MayRead, mayWrite: d.opts.MayWrite, refuseTable: d.opts.Refuse}
	for name := range tables {
		g.agent[name] = true
	}
	return g
}

// fail is the error of a statement SQLite refused: the guard's refusal
// when it made one, else SQLite's message.
func (d *DB) fail(g *guard, err error) error {
	if g.err != nil {
		return g.err
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	if strings.Contains(err.Error(), "may not be modified") {
		// SQLite refuses writes to its schema table before asking the
		// authorizer.
		return refused(RefusedDDL, "the schema is declared with aiwg-state table create")
	}
	return &sqlError{err: err}
}

// guardConn puts a caller's statement under g, with SQLite's limit on a
// value's length.
func guardConn(conn *sql.Conn, g *guard) error {
	if _, err := sqlite.Limit(conn, sqlite3.SQLITE_LIMIT_LENGTH, maxValueBytes); err != nil {
		return err
	}
	return setAuthorizer(conn, g.authorize)
}

func setAuthorizer(conn *sql.Conn, fn sqlite.AuthorizerFn) error {
	return conn.Raw(func(dc any) error {
		r, ok := dc.(sqlite.AuthorizerRegisterer)
		if !ok {
			return errors.New("sqlite: the driver has no authorizer")
		}
		return r.RegisterAuthorizer(fn)
	})
}

// ExecResult is what a write statement did: the rows it wrote and
// removed, and the commit that records them (nil when it changed none).
type ExecResult struct {
	Table    string
	Written  []string // row ids written (inserted or updated)
	Removed  []string // row ids removed
	Mutation *store.Mutation

	pending []pendingRow
}

// Trailer keys of a commit made by sql exec.
const (
	TrailerSQLOperation = "Sql-Operation"
	TrailerSQLStatement = "Sql-Statement"
)

// MaxStatementBytes bounds a statement sql exec records in its commit.
const MaxStatementBytes = 16 << 10

// Exec runs one INSERT, UPDATE or DELETE on declared agent tables and
// records what it changed as one commit: each row written is its file
// tables/NAME/ID.json, each row deleted its file removed, with the
// statement in the commit's trailers. The statement runs against the
// index at the branch's head inside a transaction that is always rolled
// back: the store is the truth, and the index follows it.
func (d *DB) Exec(ctx context.Context, stmt string, wo store.WriteOptions) (*ExecResult, error) {
	if err := gate(stmt, true); err != nil {
		return nil, err
	}
	if !utf8.ValidString(stmt) || strings.ContainsRune(stmt, 0) {
		return nil, fmt.Errorf("%w: a statement is UTF-8 text without NUL bytes (it is recorded in the commit)", store.ErrUsage)
	}
	if len(stmt) > MaxStatementBytes {
		return nil, fmt.Errorf("%w: a statement of %d bytes; at most %d are recorded in a commit", store.ErrUsage, len(stmt), MaxStatementBytes)
	}
	const attempts = 5
	for attempt := 1; ; attempt++ {
		res, head, err := d.execOnce(ctx, stmt, wo)
		if err != nil {
			return nil, err
		}
		if len(res.Written)+len(res.Removed) == 0 {
			return res, nil
		}
		res.Mutation, err = d.commitRows(ctx, res, head, stmt, wo)
		if errors.Is(err, repo.ErrStale) && wo.Expect == nil && attempt < attempts {
			// Another write moved the branch between reading and
			// committing: run the statement again on the new head.
			res.pending = nil
			continue
		}
		res.pending = nil
		return res, err
	}
}

type pendingRow struct {
	id   string
	data []byte // nil: removed
}

func (d *DB) execOnce(ctx context.Context, stmt string, wo store.WriteOptions) (*ExecResult, plumbing.Hash, error) {
	branch := wo.Branch
	if branch == "" {
		branch = d.st.Branch()
	}
	fdb, head, _, err := d.index(ctx, store.ReadOptions{Branch: branch})
	if err != nil {
		return nil, head, busy(err)
	}
	fdb.Close()
	// The statement runs in a database of its own, in memory: the agent
	// tables it may write are copied there, and the branch's index is
	// attached for everything else it reads. So a statement, however long
	// it computes, holds no write lock on the shared index file (a read
	// transaction in WAL mode blocks no one's update).
	db, err := openMemory()
	if err != nil {
		return nil, head, err
	}
	defer db.Close()
	conn, err := db.Conn(ctx)
	if err != nil {
		return nil, head, err
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, `ATTACH DATABASE ? AS aiwg_index`, fileURI(d.indexPath(branch))); err != nil {
		return nil, head, busy(err)
	}
	tx, err := conn.BeginTx(ctx, nil)
	if err != nil {
		return nil, head, err
	}
	defer tx.Rollback() // always: the index changes only by following the store
	// The head is the one the attached index mirrors in this read
	// transaction (another process may have brought it further since).
	var commit string
	if err := tx.QueryRowContext(ctx, `SELECT value FROM aiwg_index.meta WHERE key = 'commit'`).Scan(&commit); err != nil {
		return nil, head, busy(err)
	}
	head = plumbing.NewHash(commit)
	tables, err := loadSchemas(ctx, tx)
	if err != nil {
		return nil, head, err
	}
	for name, sc := range tables {
		if d.opts.MayWrite != nil && !d.opts.MayWrite(name) {
			continue // read from the index; a write to it is refused
		}
		if _, err := tx.ExecContext(ctx, sc.ddl(name)); err != nil {
			return nil, head, err
		}
		if _, err := tx.ExecContext(ctx, fmt.Sprintf(`INSERT INTO main.%q SELECT * FROM aiwg_index.%q`, name, name)); err != nil {
			return nil, head, err
		}
	}
	// Which columns an UPDATE changed, so that a row's file keeps what
	// the statement did not touch.
	if _, err := tx.ExecContext(ctx, `CREATE TEMP TABLE aiwg_changes(tbl TEXT, old_id TEXT, new_rowid INTEGER, changed TEXT)`); err != nil {
		return nil, head, err
	}
	for name, sc := range tables {
		if d.opts.MayWrite != nil && !d.opts.MayWrite(name) {
			continue
		}
		var flags []string
		for _, c := range sc.Columns {
			flags = append(flags, fmt.Sprintf("old.%q IS NOT new.%q", c.Name, c.Name))
		}
		for _, t := range []struct{ ev, old, new, changed string }{
			{"INSERT", "NULL", "new.rowid", "NULL"},
			{"UPDATE", "old.id", "new.rowid", "json_array(" + strings.Join(flags, ", ") + ")"},
			{"DELETE", "old.id", "NULL", "NULL"},
		} {
			q := fmt.Sprintf(`CREATE TEMP TRIGGER %q AFTER %s ON main.%q BEGIN INSERT INTO temp.aiwg_changes VALUES (%q, %s, %s, %s); END`,
				captureTrigger+name+"_"+strings.ToLower(t.ev), t.ev, name, name, t.old, t.new, t.changed)
			if _, err := tx.ExecContext(ctx, q); err != nil {
				return nil, head, err
			}
		}
	}
	g := d.newGuard(tables, true)
	if g.real, err = realNames(ctx, conn); err != nil {
		return nil, head, err
	}
	if err := guardConn(conn, g); err != nil {
		return nil, head, err
	}
	sctx, cancel := d.statementContext(ctx)
	_, execErr := tx.ExecContext(sctx, stmt)
	cancel()
	if err := setAuthorizer(conn, nil); err != nil {
		return nil, head, err
	}
	if execErr != nil {
		return nil, head, d.timedOut(ctx, sctx, d.fail(g, execErr))
	}
	if g.err != nil {
		return nil, head, g.err
	}
	if !g.saw {
		return nil, head, refused(RefusedNotWrite, "the statement writes no agent table")
	}
	if len(g.written) != 1 {
		names := make([]string, 0, len(g.written))
		for n := range g.written {
			names = append(names, n)
		}
		sort.Strings(names)
		return nil, head, refused(RefusedStatement, "one statement writes one agent table, not %s", strings.Join(names, ", "))
	}
	res := &ExecResult{}
	for n := range g.written {
		res.Table = n
	}
	sc := tables[res.Table]
	// The store's own limit (limits.max_sql_rows_written in its manifest)
	// bounds whatever the caller asks for.
	maxRows := d.opts.MaxRowsWritten
	storeMax := d.st.TierLimits().MaxSQLRowsWritten
	switch {
	case maxRows <= 0 && storeMax > 0:
		maxRows = storeMax
	case maxRows <= 0:
		maxRows = DefaultMaxRowsWritten
	case storeMax > 0:
		maxRows = min(maxRows, storeMax)
	}
	tooMany := func() error {
		return fmt.Errorf("%w: the statement changes more than %d rows of %s; one commit records at most %d (split it with WHERE or LIMIT; limits.max_sql_rows_written)", store.ErrLimit, maxRows, res.Table, maxRows)
	}
	var n int
	if err := tx.QueryRowContext(ctx, `SELECT count(DISTINCT coalesce(old_id, '') || '/' || coalesce(new_rowid, '')) FROM temp.aiwg_changes WHERE tbl = ?`, res.Table).Scan(&n); err != nil {
		return nil, head, err
	}
	if n > maxRows {
		return nil, head, tooMany()
	}
	// A row's changes, by its rowid after the statement: whether it was
	// inserted (its file is its columns), else the id it had and the
	// columns the statement changed (its file is the one it had, those
	// columns replaced).
	type change struct {
		inserted bool
		old      string
		changed  []bool
	}
	rows, err := tx.QueryContext(ctx, `SELECT old_id, new_rowid, changed FROM temp.aiwg_changes WHERE tbl = ? ORDER BY rowid`, res.Table)
	if err != nil {
		return nil, head, err
	}
	written := map[string][]byte{}
	removed := map[string]bool{}
	byRow := map[int64]*change{}
	var order []int64
	for rows.Next() {
		var old, changed sql.NullString
		var rowid sql.NullInt64
		if err := rows.Scan(&old, &rowid, &changed); err != nil {
			rows.Close()
			return nil, head, err
		}
		if old.Valid {
			removed[old.String] = true
		}
		if !rowid.Valid {
			continue
		}
		c := byRow[rowid.Int64]
		if c == nil {
			c = &change{changed: make([]bool, len(sc.Columns))}
			byRow[rowid.Int64] = c
			order = append(order, rowid.Int64)
		}
		if !old.Valid {
			c.inserted = true
			continue
		}
		if c.old == "" {
			c.old = old.String
		}
		var flags []int
		if err := json.Unmarshal([]byte(changed.String), &flags); err != nil || len(flags) != len(c.changed) {
			rows.Close()
			return nil, head, fmt.Errorf("sql exec: the changed columns of a row: %q", changed.String)
		}
		for i, f := range flags {
			c.changed[i] = c.changed[i] || f != 0
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, head, err
	}
	cols := `"id"`
	for _, c := range sc.Columns {
		cols += fmt.Sprintf(", %q", c.Name)
	}
	headTree := d.st.TreeOf(head)
	for _, rowid := range order {
		c := byRow[rowid]
		vals := make([]any, len(sc.Columns)+1)
		ptrs := make([]any, len(vals))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		err := tx.QueryRowContext(ctx, fmt.Sprintf("SELECT %s FROM main.%q WHERE rowid = ?", cols, res.Table), rowid).Scan(ptrs...)
		if errors.Is(err, sql.ErrNoRows) {
			continue // written, then deleted by the same statement's upsert
		}
		if err != nil {
			return nil, head, err
		}
		id := ""
		if vals[0] != nil {
			id = asString(vals[0])
		} else {
			id = objects.NewID("row")
		}
		if !validRowID(id) {
			return nil, head, fmt.Errorf("%w: row id %q: letters, digits, _, . and -, starting with a letter, digit or _ (at most 128)", store.ErrUsage, id)
		}
		if _, dup := written[id]; dup {
			return nil, head, fmt.Errorf("%w: the statement writes row %s twice", store.ErrUsage, id)
		}
		// Two rows whose ids differ only in letter case would be one file
		// in a checkout on macOS or Windows.
		var other string
		err = tx.QueryRowContext(ctx, fmt.Sprintf("SELECT id FROM main.%q WHERE lower(id) = lower(?) AND id <> ?", res.Table), id, id).Scan(&other)
		if err == nil {
			return nil, head, fmt.Errorf("%w: row id %s differs from row %s only in letter case (one file where letter case does not count)", store.ErrUsage, id, other)
		}
		if !errors.Is(err, sql.ErrNoRows) {
			return nil, head, err
		}
		var data []byte
		if c.inserted || c.old == "" {
			data, err = sc.rowDocument(vals[1:])
		} else {
			data, err = d.updatedRow(headTree, res.Table, c.old, sc, vals[1:], c.changed)
		}
		if err != nil {
			if errors.Is(err, store.ErrDenied) {
				return nil, head, err
			}
			return nil, head, fmt.Errorf("%w: row %s: %v", store.ErrUsage, id, err)
		}
		written[id] = data
		if len(written)+len(removed) > 2*maxRows {
			return nil, head, tooMany()
		}
	}
	for id := range written {
		delete(removed, id)
	}
	if len(written)+len(removed) > maxRows {
		return nil, head, tooMany()
	}
	for id := range written {
		res.Written = append(res.Written, id)
		res.pending = append(res.pending, pendingRow{id: id, data: written[id]})
	}
	for id := range removed {
		res.Removed = append(res.Removed, id)
		res.pending = append(res.pending, pendingRow{id: id})
	}
	sort.Strings(res.Written)
	sort.Strings(res.Removed)
	sort.Slice(res.pending, func(i, j int) bool { return res.pending[i].id < res.pending[j].id })
	return res, head, nil
}

// updatedRow is the file of a row an UPDATE changed: the one it has at
// the head (the row's id before the statement), with the columns the
// statement changed replaced and every other key kept as it is, a key
// that is no column and a value of a type the index could not hold
// included. A row whose file is not a JSON object is refused.
func (d *DB) updatedRow(root plumbing.Hash, table, oldID string, sc *Schema, vals []any, changed []bool) ([]byte, error) {
	path := RowPath(table, oldID)
	cur, err := d.st.Repo().ReadFileAt(root, path)
	if errors.Is(err, repo.ErrNotFound) {
		return sc.rowDocument(vals)
	}
	if err != nil {
		return nil, err
	}
	doc, err := objects.Decode(cur)
	obj, ok := doc.(map[string]any)
	if err != nil || !ok {
		return nil, fmt.Errorf("%w: row %s: its file %s is not a JSON object (see index_problems); write it with put", store.ErrDenied, oldID, path)
	}
	for i, c := range sc.Columns {
		if !changed[i] {
			continue
		}
		v, err := columnJSON(c, vals[i])
		if err != nil {
			return nil, err
		}
		if v == nil {
			delete(obj, c.Name)
		} else {
			obj[c.Name] = v
		}
	}
	return objects.Encode(obj)
}

// commitRows records res's rows as one commit on the head the statement
// ran against.
func (d *DB) commitRows(ctx context.Context, res *ExecResult, head plumbing.Hash, stmt string, wo store.WriteOptions) (*store.Mutation, error) {
	op := strings.ToLower(lex(stmt).Keyword)
	if op == "with" {
		op = "write"
	}
	if wo.Expect == nil {
		h := head.String()
		wo.Expect = &h
	}
	flat := strings.Join(strings.Fields(stmt), " ")
	subject := fmt.Sprintf("sql %s %s: %d written, %d removed", op, res.Table, len(res.Written), len(res.Removed))
	return d.st.Commit(ctx, wo, "", func(tx *repo.Tx, rec *store.Recorder) error {
		for _, p := range res.pending {
			path := RowPath(res.Table, p.id)
			exists, err := tx.Exists(path)
			if err != nil {
				return err
			}
			if p.data == nil {
				if !exists {
					continue
				}
				if err := tx.Remove(path); err != nil {
					return err
				}
				rec.Add(store.OpDelete, path, "")
				continue
			}
			if err := tx.WriteFile(path, p.data); err != nil {
				return err
			}
			if exists {
				rec.Add(store.OpUpdate, path, "")
			} else {
				rec.Add(store.OpCreate, path, "")
			}
		}
		rec.Subject = subject
		rec.Trailer(TrailerSQLOperation, op)
		rec.Trailer(TrailerSQLStatement, flat)
		return nil
	})
}

// CreateTable declares an agent table: its schema becomes
// .aiwg/tables/NAME.json in one commit. A table declared already is
// refused (store.ErrExists).
func (d *DB) CreateTable(ctx context.Context, name string, schema []byte, wo store.WriteOptions) (*store.Mutation, error) {
	sc, err := ParseSchema(name, schema)
	if err != nil {
		return nil, err
	}
	// The declaration as parsed, in canonical JSON: unknown keys were
	// refused above, so nothing is lost.
	raw, err := json.Marshal(sc)
	if err != nil {
		return nil, err
	}
	data, err := objects.Canonical(raw)
	if err != nil {
		return nil, err
	}
	path := SchemaPath(name)
	return d.st.Commit(ctx, wo, "", func(tx *repo.Tx, rec *store.Recorder) error {
		exists, err := tx.Exists(path)
		if err != nil {
			return err
		}
		if exists {
			return fmt.Errorf("%w: table %s is declared already (%s)", store.ErrExists, name, path)
		}
		if err := tx.WriteFile(path, data); err != nil {
			return err
		}
		rec.Add(store.OpCreate, path, "")
		if line := sc.attributesLine(name); line != "" {
			attrs, err := tx.ReadFile(store.AttributesPath)
			op := store.OpUpdate
			if errors.Is(err, repo.ErrNotFound) {
				op, err = store.OpCreate, nil
			}
			if err != nil {
				return err
			}
			if len(attrs) > 0 && attrs[len(attrs)-1] != '\n' {
				attrs = append(attrs, '\n')
			}
			attrs = append(attrs, line+"\n"...)
			if _, err := jsonmerge.ParseAttributes(attrs); err != nil {
				return fmt.Errorf("%w: %w", store.ErrUsage, err)
			}
			if err := tx.WriteFile(store.AttributesPath, attrs); err != nil {
				return err
			}
			rec.Add(op, store.AttributesPath, "")
		}
		rec.Subject = "table create " + name
		rec.Trailer(TrailerSQLOperation, "create table")
		return nil
	})
}

// Tables lists the agent tables declared at ro's revision.
func (d *DB) Tables(ctx context.Context, ro store.ReadOptions) (map[string]*Schema, error) {
	root, err := d.st.Tree(ro)
	if err != nil {
		return nil, err
	}
	out := map[string]*Schema{}
	entries, err := d.st.Repo().ReadDirAt(root, TablesDir)
	if errors.Is(err, repo.ErrNotFound) {
		return out, nil
	}
	if err != nil {
		return nil, err
	}
	for _, e := range entries {
		name, ok := strings.CutSuffix(e.Name, ".json")
		if !ok || e.IsDir {
			continue
		}
		data, err := d.st.Repo().ReadBlob(e.Hash)
		if err != nil {
			return nil, err
		}
		if sc, err := ParseSchema(name, data); err == nil {
			out[name] = sc
		}
	}
	return out, nil
}
