package repo

import (
	"github.com/go-git/go-git/v5/plumbing"
)

// FileChange is a file whose blob differs between two trees; a zero hash
// is an absent side.
type FileChange struct {
	Path     string
	Old, New plumbing.Hash
}

// DiffTrees lists the files that differ between trees a and b, in path
// order. Subtrees with equal hashes are skipped whole, so the cost follows
// the size of the change, not of the store.
func (r *Repo) DiffTrees(a, b plumbing.Hash) ([]FileChange, error) {
	var out []FileChange
	err := r.diffTrees(a, b, "", &out)
	return out, err
}

func (r *Repo) diffTrees(a, b plumbing.Hash, prefix string, out *[]FileChange) error {
	if a == b {
		return nil
	}
	ta, err := r.readTreeOrEmpty(a)
	if err != nil {
		return err
	}
	tb, err := r.readTreeOrEmpty(b)
	if err != nil {
		return err
	}
	i, j := 0, 0
	for i < len(ta.Entries) || j < len(tb.Entries) {
		var ea, eb *TreeEntry
		switch {
		case i == len(ta.Entries):
			eb = &tb.Entries[j]
			j++
		case j == len(tb.Entries):
			ea = &ta.Entries[i]
			i++
		default:
			x, y := ta.Entries[i], tb.Entries[j]
			c := compareNames(x.Name, x.IsDir(), y.Name, y.IsDir())
			switch {
			case c < 0:
				ea = &ta.Entries[i]
				i++
			case c > 0:
				eb = &tb.Entries[j]
				j++
			default:
				ea, eb = &ta.Entries[i], &tb.Entries[j]
				i++
				j++
			}
		}
		if err := r.diffEntry(ea, eb, prefix, out); err != nil {
			return err
		}
	}
	return nil
}

func (r *Repo) diffEntry(ea, eb *TreeEntry, prefix string, out *[]FileChange) error {
	if ea != nil && eb != nil && ea.Hash == eb.Hash && ea.Mode == eb.Mode {
		return nil
	}
	var name string
	if ea != nil {
		name = ea.Name
	} else {
		name = eb.Name
	}
	var da, db, fa, fb plumbing.Hash
	if ea != nil {
		if ea.IsDir() {
			da = ea.Hash
		} else {
			fa = ea.Hash
		}
	}
	if eb != nil {
		if eb.IsDir() {
			db = eb.Hash
		} else {
			fb = eb.Hash
		}
	}
	if !da.IsZero() || !db.IsZero() {
		if err := r.diffTrees(orEmpty(da), orEmpty(db), prefix+name+"/", out); err != nil {
			return err
		}
	}
	if fa != fb {
		*out = append(*out, FileChange{Path: prefix + name, Old: fa, New: fb})
	}
	return nil
}

func orEmpty(h plumbing.Hash) plumbing.Hash {
	if h.IsZero() {
		return emptyTree
	}
	return h
}

func (r *Repo) readTreeOrEmpty(h plumbing.Hash) (*Tree, error) {
	if h.IsZero() {
		return &Tree{}, nil
	}
	return r.ReadTree(h)
}
