package sqlstate

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/aiwg/aiwg-state/repo"
	"github.com/aiwg/aiwg-state/store"
)

// Stats tell what an update of the index did.
type Stats struct {
	Commit   string        // the commit the index now mirrors
	Full     bool          // built from nothing (first use, another history, a new schema version)
	Commits  int           // commits added to mutations
	Files    int           // files read again
	Took     time.Duration // how long the update took
	UpToDate bool          // nothing to do
}

// update brings the index in db to commit head, in one transaction: only
// the commits since the one it mirrors and the files that differ between
// their trees are read. An index of another history or schema version is
// built again from nothing.
func (d *DB) update(ctx context.Context, db *sql.DB, head plumbing.Hash) (Stats, error) {
	return d.updateWith(ctx, db, head, nil, true)
}

// mutationsFunc fills the mutations table in an update's transaction, in
// place of reading the commits.
type mutationsFunc func(ctx context.Context, tx *sql.Tx) (int, error)

// updateWith is update with mutations read by mutations (nil: from the
// commits); withIndexes makes the indexes after a full build (an index
// in memory answers one query, for which a scan is cheaper than an
// index).
func (d *DB) updateWith(ctx context.Context, db *sql.DB, head plumbing.Hash, mutations mutationsFunc, withIndexes bool) (Stats, error) {
	start := time.Now()
	st := Stats{Commit: head.String()}
	// Up to date, the usual case, is read without the write lock an
	// update takes, so that queries of many processes do not queue.
	var version, commit string
	if db.QueryRowContext(ctx, `SELECT (SELECT value FROM meta WHERE key = 'version'), (SELECT value FROM meta WHERE key = 'commit')`).Scan(&version, &commit) == nil &&
		version == schemaVersion && commit == head.String() {
		st.UpToDate = true
		return st, nil
	}
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return st, err
	}
	defer tx.Rollback()
	meta := map[string]string{}
	if rows, err := tx.QueryContext(ctx, `SELECT key, value FROM meta`); err == nil {
		for rows.Next() {
			var k, v string
			if err := rows.Scan(&k, &v); err != nil {
				rows.Close()
				return st, err
			}
			meta[k] = v
		}
		rows.Close()
	}
	if meta["version"] == schemaVersion && meta["commit"] == head.String() {
		st.UpToDate = true
		return st, nil
	}
	r := d.st.Repo()
	var old plumbing.Hash
	if meta["version"] == schemaVersion && plumbing.IsHash(meta["commit"]) {
		old = plumbing.NewHash(meta["commit"])
		if ok, err := r.IsAncestor(old, head); err != nil || !ok {
			old = plumbing.ZeroHash // another history (a reset, a rewrite): build again
		}
	}
	if old.IsZero() {
		st.Full = true
		if err := createSchema(ctx, tx, meta); err != nil {
			return st, err
		}
	}
	oldTree := plumbing.ZeroHash
	if !old.IsZero() {
		oldTree = d.st.TreeOf(old)
	}
	newTree := d.st.TreeOf(head)
	changes, err := r.DiffTrees(oldTree, newTree)
	if err != nil {
		return st, err
	}
	w, err := newWriter(ctx, tx)
	if err != nil {
		return st, err
	}
	defer w.close()

	// Agent tables first: a declaration added, changed or removed makes
	// its table again, with every row of the new tree.
	tables, err := loadSchemas(ctx, tx)
	if err != nil {
		return st, err
	}
	remade := map[string]bool{}
	var schemaProblems [][2]string
	policyChanged := false
	for _, c := range changes {
		if c.Path == store.PolicyPath {
			policyChanged = true
		}
		name, ok := strings.CutPrefix(c.Path, TablesDir+"/")
		if !ok || !strings.HasSuffix(name, ".json") || strings.Contains(name, "/") {
			continue
		}
		name = strings.TrimSuffix(name, ".json")
		if err := checkTableName(name); err != nil {
			if !c.New.IsZero() {
				schemaProblems = append(schemaProblems, [2]string{c.Path, err.Error()})
			}
			continue
		}
		if _, had := tables[name]; had {
			if _, err := tx.ExecContext(ctx, fmt.Sprintf("DROP TABLE IF EXISTS %q", name)); err != nil {
				return st, err
			}
			delete(tables, name)
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM meta WHERE key = ?`, "table:"+name); err != nil {
			return st, err
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM index_problems WHERE path = ?`, c.Path); err != nil {
			return st, err
		}
		remade[name] = true
		if c.New.IsZero() {
			continue
		}
		data, err := r.ReadBlob(c.New)
		if err != nil {
			return st, err
		}
		sc, err := ParseSchema(name, data)
		if err != nil {
			// Listed once the files' own rows are in (they replace a
			// changed file's problems).
			schemaProblems = append(schemaProblems, [2]string{c.Path, err.Error()})
			continue
		}
		if _, err := tx.ExecContext(ctx, sc.ddl(name)); err != nil {
			return st, err
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO meta(key, value) VALUES (?, ?)`, "table:"+name, string(data)); err != nil {
			return st, err
		}
		tables[name] = sc
	}

	for _, c := range changes {
		st.Files++
		for _, t := range fileTables {
			if st.Full {
				break // the tables were just made: nothing to replace
			}
			if err := w.deletePath(t, c.Path); err != nil {
				return st, err
			}
		}
		if c.New.IsZero() {
			if err := d.unmirrorRow(ctx, tx, tables, remade, c.Path); err != nil {
				return st, err
			}
			continue
		}
		data, err := r.ReadBlob(c.New)
		if err != nil {
			return st, err
		}
		if err := mirrorFile(c.Path, data, w.insert); err != nil {
			return st, err
		}
		if name, _, ok := rowOf(c.Path); ok && !remade[name] {
			if err := d.mirrorRow(ctx, tx, w, tables, c.Path, c.New, false); err != nil {
				return st, err
			}
		}
	}

	for _, p := range schemaProblems {
		if err := w.insert("index_problems", p[0], p[1]); err != nil {
			return st, err
		}
	}
	// Every row of a table made again, once, after the files' own rows.
	for name := range remade {
		if tables[name] == nil {
			continue
		}
		err := r.Walk(newTree, RowsDir+"/"+name, func(path string, h plumbing.Hash) error {
			return d.mirrorRow(ctx, tx, w, tables, path, h, true)
		})
		if err != nil && !errors.Is(err, repo.ErrNotFound) {
			return st, err
		}
	}

	var n int
	if mutations != nil {
		n, err = mutations(ctx, tx)
	} else {
		n, err = d.addMutations(ctx, tx, w, head, old, policyChanged)
	}
	if err != nil {
		return st, err
	}
	st.Commits = n
	if st.Full && withIndexes {
		if err := createIndexes(ctx, tx); err != nil {
			return st, err
		}
	}
	if _, err := tx.ExecContext(ctx, `INSERT OR REPLACE INTO meta(key, value) VALUES ('commit', ?), ('version', ?), ('tree', ?)`, head.String(), schemaVersion, newTree.String()); err != nil {
		return st, err
	}
	w.close()
	if err := tx.Commit(); err != nil {
		return st, err
	}
	st.Took = time.Since(start)
	return st, nil
}

// createSchema drops everything the index held and creates its tables.
func createSchema(ctx context.Context, tx *sql.Tx, meta map[string]string) error {
	rows, err := tx.QueryContext(ctx, `SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'`)
	if err != nil {
		return err
	}
	var names []string
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			rows.Close()
			return err
		}
		names = append(names, n)
	}
	rows.Close()
	if len(names) > 0 && meta["version"] == "" {
		// Not a file an index made: never drop another program's tables.
		return fmt.Errorf("%w: the index file holds tables (%s...) but no index's version; it is not ours: move it away", store.ErrDenied, names[0])
	}
	for _, n := range names {
		if _, err := tx.ExecContext(ctx, fmt.Sprintf("DROP TABLE %q", n)); err != nil {
			return err
		}
	}
	stmts := []string{`CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT)`}
	for _, m := range mirrored {
		stmts = append(stmts, m.ddl)
	}
	// The indexes come after the rows (createIndexes): building one over
	// 100,000 rows is several times quicker than keeping it while
	// inserting them.
	for _, s := range stmts {
		if _, err := tx.ExecContext(ctx, s); err != nil {
			return fmt.Errorf("index schema: %w", err)
		}
	}
	clear(meta)
	return nil
}

func createIndexes(ctx context.Context, tx *sql.Tx) error {
	for _, s := range indexes {
		if _, err := tx.ExecContext(ctx, s); err != nil {
			return fmt.Errorf("index schema: %w", err)
		}
	}
	return nil
}

// loadSchemas reads the agent tables the index holds.
func loadSchemas(ctx context.Context, q interface {
	QueryContext(context.Context, string, ...any) (*sql.Rows, error)
}) (map[string]*Schema, error) {
	rows, err := q.QueryContext(ctx, `SELECT key, value FROM meta WHERE key LIKE 'table:%'`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[string]*Schema{}
	for rows.Next() {
		var k, v string
		if err := rows.Scan(&k, &v); err != nil {
			return nil, err
		}
		name := strings.TrimPrefix(k, "table:")
		if sc, err := ParseSchema(name, []byte(v)); err == nil {
			out[name] = sc
		}
	}
	return out, rows.Err()
}

// rowOf splits tables/NAME/ID.json.
func rowOf(path string) (name, id string, ok bool) {
	rest, ok := strings.CutPrefix(path, RowsDir+"/")
	if !ok {
		return "", "", false
	}
	name, file, ok := strings.Cut(rest, "/")
	if !ok || strings.Contains(file, "/") || !strings.HasSuffix(file, ".json") {
		return "", "", false
	}
	return name, strings.TrimSuffix(file, ".json"), true
}

func (d *DB) unmirrorRow(ctx context.Context, tx *sql.Tx, tables map[string]*Schema, remade map[string]bool, path string) error {
	name, id, ok := rowOf(path)
	if !ok || tables[name] == nil || remade[name] {
		return nil
	}
	_, err := tx.ExecContext(ctx, fmt.Sprintf("DELETE FROM %q WHERE id = ?", name), id)
	return err
}

// mirrorRow puts one row file into its agent table (fresh: the table was
// just made, so there is no row to replace).
func (d *DB) mirrorRow(ctx context.Context, tx *sql.Tx, w *writer, tables map[string]*Schema, path string, h plumbing.Hash, fresh bool) error {
	name, id, ok := rowOf(path)
	if !ok {
		return nil
	}
	if fresh {
		if err := w.deletePath("index_problems", path); err != nil {
			return err
		}
	}
	sc := tables[name]
	if sc == nil {
		return w.insert("index_problems", path, "a row of table "+name+", which is not declared ("+SchemaPath(name)+")")
	}
	if !validRowID(id) {
		return w.insert("index_problems", path, "row id "+id+": letters, digits, _, . and -")
	}
	data, err := d.st.Repo().ReadBlob(h)
	if err != nil {
		return err
	}
	vals, problems, err := sc.rowValues(id, data)
	if err != nil {
		return w.insert("index_problems", path, err.Error())
	}
	for _, p := range problems {
		if err := w.insert("index_problems", path, p); err != nil {
			return err
		}
	}
	q := fmt.Sprintf("INSERT OR REPLACE INTO %q VALUES (?%s)", name, strings.Repeat(", ?", len(sc.Columns)))
	if _, err := tx.ExecContext(ctx, q, vals...); err != nil {
		// A value SQLite's types refuse (boolean 2, say): the row is
		// listed as a problem, with what it holds.
		return w.insert("index_problems", path, err.Error())
	}
	return nil
}

// addMutations adds a row per change of every commit reachable from head
// and not from old (all of them when old is zero).
func (d *DB) addMutations(ctx context.Context, tx *sql.Tx, w *writer, head, old plumbing.Hash, policyChanged bool) (int, error) {
	var exclude []plumbing.Hash
	if !old.IsZero() {
		exclude = []plumbing.Hash{old}
	}
	commits, err := d.st.Range(ctx, []plumbing.Hash{head}, exclude, 0)
	if err != nil {
		return 0, err
	}
	var seq int64
	if err := tx.QueryRowContext(ctx, `SELECT coalesce(max(seq), 0) FROM mutations`).Scan(&seq); err != nil {
		return 0, err
	}
	sigs, err := d.st.Signatures(store.ReadOptions{At: head.String()})
	if err != nil {
		return 0, err
	}
	r := d.st.Repo()
	// Range lists newest first; seq grows with time.
	for i := len(commits) - 1; i >= 0; i-- {
		if err := ctx.Err(); err != nil {
			return 0, err
		}
		c := commits[i]
		seq++
		m := store.MutationOf(c, "")
		sig := "none"
		if c.PGPSignature != "" {
			v, err := sigs.Verify(m.Commit)
			if err != nil {
				return 0, err
			}
			sig = string(v.Status)
		}
		row := func(op, path, key any) error {
			return w.insert("mutations", seq, m.Commit, m.Agent, m.Time.UTC().Format(time.RFC3339Nano), op, path, key,
				nullable(m.MutationID), nullable(m.Source), nullable(m.Correlation), sig, m.Subject, len(c.Parents))
		}
		if len(m.Changes) > 0 {
			for _, ch := range m.Changes {
				if err := row(ch.Operation, nullable(ch.File), nullable(ch.Key)); err != nil {
					return 0, err
				}
			}
			continue
		}
		// A commit made with plain git: the files it changed, from its
		// first parent (a merge without trailers is one row).
		var paths []string
		if len(c.Parents) <= 1 && !c.Shallow {
			parent := plumbing.ZeroHash
			if len(c.Parents) == 1 {
				parent = d.st.TreeOf(c.Parents[0])
			}
			if fc, err := r.DiffTrees(parent, c.Tree); err == nil && len(fc) <= 1000 {
				for _, f := range fc {
					paths = append(paths, f.Path)
				}
			}
		}
		if len(paths) == 0 {
			if err := row(nil, nil, nil); err != nil {
				return 0, err
			}
		}
		for _, p := range paths {
			if err := row(nil, p, nil); err != nil {
				return 0, err
			}
		}
	}
	if policyChanged && !old.IsZero() {
		// Signatures are judged by the policy at the indexed commit: a
		// new policy judges every signed commit again.
		rows, err := tx.QueryContext(ctx, `SELECT DISTINCT commit_id FROM mutations WHERE signature <> 'none'`)
		if err != nil {
			return 0, err
		}
		var ids []string
		for rows.Next() {
			var id string
			if err := rows.Scan(&id); err != nil {
				rows.Close()
				return 0, err
			}
			ids = append(ids, id)
		}
		rows.Close()
		for _, id := range ids {
			v, err := sigs.Verify(id)
			if err != nil {
				return 0, err
			}
			if _, err := tx.ExecContext(ctx, `UPDATE mutations SET signature = ? WHERE commit_id = ?`, string(v.Status), id); err != nil {
				return 0, err
			}
		}
	}
	return len(commits), nil
}

// writer keeps one prepared statement per table for the update's inserts
// and deletes.
type writer struct {
	ctx  context.Context
	tx   *sql.Tx
	ins  map[string]*sql.Stmt
	del  map[string]*sql.Stmt
	cols map[string]int
}

func newWriter(ctx context.Context, tx *sql.Tx) (*writer, error) {
	w := &writer{ctx: ctx, tx: tx, ins: map[string]*sql.Stmt{}, del: map[string]*sql.Stmt{}, cols: map[string]int{}}
	for _, m := range mirrored {
		var n int
		if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM pragma_table_info(?)`, m.name).Scan(&n); err != nil {
			return nil, err
		}
		w.cols[m.name] = n
	}
	return w, nil
}

func (w *writer) insert(table string, args ...any) error {
	s := w.ins[table]
	if s == nil {
		n := w.cols[table]
		if n != len(args) {
			return fmt.Errorf("index: table %s has %d columns, %d values given", table, n, len(args))
		}
		var err error
		s, err = w.tx.PrepareContext(w.ctx, fmt.Sprintf("INSERT INTO %s VALUES (?%s)", table, strings.Repeat(", ?", n-1)))
		if err != nil {
			return err
		}
		w.ins[table] = s
	}
	_, err := s.ExecContext(w.ctx, args...)
	return err
}

func (w *writer) deletePath(table, path string) error {
	s := w.del[table]
	if s == nil {
		var err error
		s, err = w.tx.PrepareContext(w.ctx, fmt.Sprintf("DELETE FROM %s WHERE path = ?", table))
		if err != nil {
			return err
		}
		w.del[table] = s
	}
	_, err := s.ExecContext(w.ctx, path)
	return err
}

func (w *writer) close() {
	for _, s := range w.ins {
		s.Close()
	}
	for _, s := range w.del {
		s.Close()
	}
	clear(w.ins)
	clear(w.del)
}
