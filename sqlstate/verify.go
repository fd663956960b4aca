package sqlstate

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/aiwg/aiwg-state/repo"
	"github.com/aiwg/aiwg-state/store"
)

// Verify builds the index of ro's branch again, in memory, from the store
// at the commit the index file mirrors, and compares every table of the
// two (mutations' seq, an order number, aside). The index file is trusted
// as far as the git directory's permissions go: a process that can write
// it can make answers false. Verify finds such an edit; it returns the
// tables that differ, wrapped in repo.ErrCorrupt, or nil.
func (d *DB) Verify(ctx context.Context, ro store.ReadOptions) (Stats, error) {
	commit, branch, _, err := d.revision(store.ReadOptions{Branch: ro.Branch})
	if err != nil {
		return Stats{}, err
	}
	fdb, _, st, err := d.index(ctx, store.ReadOptions{Branch: branch})
	if err != nil {
		return st, busy(err)
	}
	fdb.Close()
	st.Commit = commit.String()
	mem, err := openMemory()
	if err != nil {
		return st, err
	}
	defer mem.Close()
	if _, err := d.updateWith(ctx, mem, commit, nil, false); err != nil {
		return st, err
	}
	conn, err := mem.Conn(ctx)
	if err != nil {
		return st, err
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, `ATTACH DATABASE ? AS f`, fileURI(d.indexPath(branch))); err != nil {
		return st, busy(err)
	}
	if _, err := conn.ExecContext(ctx, "BEGIN"); err != nil {
		return st, err
	}
	defer conn.ExecContext(context.WithoutCancel(ctx), "ROLLBACK")
	var fileCommit string
	if err := conn.QueryRowContext(ctx, `SELECT value FROM f.meta WHERE key = 'commit'`).Scan(&fileCommit); err != nil {
		return st, busy(err)
	}
	if fileCommit != commit.String() {
		return st, fmt.Errorf("%w: the index moved on to %s while it was verified; run it again", ErrBusy, fileCommit)
	}
	names := func(schema string) (map[string]bool, error) {
		return nameSet(ctx, conn, fmt.Sprintf(`SELECT name FROM %s.sqlite_schema WHERE type = 'table' AND name NOT LIKE 'sqlite_%%'`, schema))
	}
	want, err := names("main")
	if err != nil {
		return st, err
	}
	got, err := names("f")
	if err != nil {
		return st, err
	}
	var differ []string
	for n := range got {
		if !want[n] {
			differ = append(differ, n+" (not the store's)")
		}
	}
	for n := range want {
		if !got[n] {
			differ = append(differ, n+" (missing)")
			continue
		}
		var cols []string
		rows, err := conn.QueryContext(ctx, `SELECT name FROM pragma_table_info(?, 'main')`, n)
		if err != nil {
			return st, err
		}
		for rows.Next() {
			var c string
			if err := rows.Scan(&c); err != nil {
				rows.Close()
				return st, err
			}
			if n == "mutations" && c == "seq" {
				continue // an order number, given as commits came
			}
			cols = append(cols, fmt.Sprintf("%q", c))
		}
		rows.Close()
		list := strings.Join(cols, ", ")
		var same bool
		q := fmt.Sprintf(`SELECT (SELECT count(*) FROM main.%[1]q) = (SELECT count(*) FROM f.%[1]q)
			AND NOT EXISTS (SELECT %[2]s FROM main.%[1]q EXCEPT SELECT %[2]s FROM f.%[1]q)
			AND NOT EXISTS (SELECT %[2]s FROM f.%[1]q EXCEPT SELECT %[2]s FROM main.%[1]q)`, n, list)
		if err := conn.QueryRowContext(ctx, q).Scan(&same); err != nil {
			differ = append(differ, n+" ("+err.Error()+")")
			continue
		}
		if !same {
			differ = append(differ, n)
		}
	}
	if len(differ) > 0 {
		sort.Strings(differ)
		return st, fmt.Errorf("%w: the SQL index at %s differs from the store in %s: whoever can write %s can make answers false; run aiwg-state sql index --rebuild",
			repo.ErrCorrupt, commit.String()[:12], strings.Join(differ, ", "), d.opts.Dir)
	}
	return st, nil
}
