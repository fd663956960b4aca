package repo

import (
	"bytes"
	"crypto/sha1"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"

	"github.com/aiwg/aiwg-state/verbiage"
)

// TreeEntry is one entry of a git tree.
type TreeEntry struct {
	Name string
	Mode filemode.FileMode
	Hash plumbing.Hash
}

// IsDir reports whether the entry is a subtree.
func (e TreeEntry) IsDir() bool { return e.Mode == filemode.Dir }

// Tree is a decoded git tree, entries in git's order.
type Tree struct {
	Entries []TreeEntry
}

// Find returns the entry called name.
func (t *Tree) Find(name string) (TreeEntry, bool) {
	i, ok := search(t.Entries, name)
	if !ok {
		return TreeEntry{}, false
	}
	return t.Entries[i], true
}

// compareNames is git's tree order: names compare bytewise as if a
// directory's name ended in '/'.
func compareNames(a string, aDir bool, b string, bDir bool) int {
	n := min(len(a), len(b))
	for i := 0; i < n; i++ {
		if a[i] != b[i] {
			return int(a[i]) - int(b[i])
		}
	}
	ca, cb := 0, 0
	switch {
	case len(a) > n:
		ca = int(a[n])
	case aDir:
		ca = '/'
	}
	switch {
	case len(b) > n:
		cb = int(b[n])
	case bDir:
		cb = '/'
	}
	return ca - cb
}

// search finds name in git-ordered entries. A file and a directory of the
// same name sort apart, so both candidate positions are probed.
func search(es []TreeEntry, name string) (int, bool) {
	for _, dir := range [2]bool{false, true} {
		i := sort.Search(len(es), func(i int) bool {
			return compareNames(es[i].Name, es[i].IsDir(), name, dir) >= 0
		})
		if i < len(es) && es[i].Name == name {
			return i, true
		}
	}
	return 0, false
}

// insertAt is where an entry belongs in git-ordered entries.
func insertAt(es []TreeEntry, e TreeEntry) int {
	return sort.Search(len(es), func(i int) bool {
		return compareNames(es[i].Name, es[i].IsDir(), e.Name, e.IsDir()) >= 0
	})
}

// encodeTree renders the tree object body. go-git's Tree.Encode does the
// same through fmt and reflection; this is the hot path of every write (a
// 1,000-entry directory is re-encoded on each mutation), so it appends bytes.
func encodeTree(es []TreeEntry) []byte {
	n := 0
	for _, e := range es {
		n += 7 + len(e.Name) + 1 + 20
	}
	buf := make([]byte, 0, n)
	for _, e := range es {
		buf = appendMode(buf, e.Mode)
		buf = append(buf, ' ')
		buf = append(buf, e.Name...)
		buf = append(buf, 0)
		buf = append(buf, e.Hash[:]...)
	}
	return buf
}

// appendMode writes a mode in octal as git does. The two modes of nearly
// every entry are constants: formatting them was a twentieth of a commit
// that rewrites a 1,000-entry directory.
func appendMode(buf []byte, m filemode.FileMode) []byte {
	switch m {
	case filemode.Regular:
		return append(buf, "100644"...)
	case filemode.Dir:
		return append(buf, "40000"...)
	}
	return strconv.AppendUint(buf, uint64(m), 8)
}

func decodeTree(data []byte) (*Tree, error) {
	t := &Tree{Entries: make([]TreeEntry, 0, bytes.Count(data, []byte{0}))}
	for len(data) > 0 {
		sp := bytes.IndexByte(data, ' ')
		if sp < 0 {
			return nil, fmt.Errorf("corrupt tree: no mode")
		}
		mode, err := strconv.ParseUint(string(data[:sp]), 8, 32)
		if err != nil {
			return nil, fmt.Errorf("corrupt tree: mode %q", data[:sp])
		}
		data = data[sp+1:]
		nul := bytes.IndexByte(data, 0)
		if nul < 0 || len(data) < nul+21 {
			return nil, fmt.Errorf("corrupt tree: truncated entry")
		}
		var h plumbing.Hash
		copy(h[:], data[nul+1:nul+21])
		t.Entries = append(t.Entries, TreeEntry{Name: string(data[:nul]), Mode: filemode.FileMode(mode), Hash: h})
		data = data[nul+21:]
	}
	return t, nil
}

// hashObject is git's object id: SHA-1 of "<type> <len>\0<body>".
func hashObject(t plumbing.ObjectType, body []byte) plumbing.Hash {
	h := sha1.New()
	h.Write([]byte(t.String()))
	h.Write([]byte{' '})
	h.Write([]byte(strconv.Itoa(len(body))))
	h.Write([]byte{0})
	h.Write(body)
	var out plumbing.Hash
	h.Sum(out[:0])
	return out
}

// checkEntryName refuses the names `git fsck --strict` refuses, so that a
// tree we write is always one git accepts.
func checkEntryName(name string) error {
	switch {
	case name == "", name == ".", name == "..":
		return fmt.Errorf("%w: %q", ErrInvalidName, name)
	case strings.ContainsAny(name, "/\x00"):
		return fmt.Errorf("%w: %q contains a slash or NUL", ErrInvalidName, name)
	case verbiage.IsDotGit(name):
		return fmt.Errorf("%w: %q is reserved by git", ErrInvalidName, name)
	}
	return nil
}

// checkNewName refuses a name that would be added to es beside an entry
// whose name differs only in case or in Unicode normalization (NFC "café"
// and NFD "café"): the two clash on case- and normalization-insensitive
// file systems (macOS, Windows) when the store is cloned. Only added names
// are checked, so a write costs one pass over the directory, not a map of
// it.
func checkNewName(es []TreeEntry, name string) error {
	if err := checkEntryName(name); err != nil {
		return err
	}
	for _, e := range es {
		if verbiage.SameOnCheckout(e.Name, name) {
			return clashError(e.Name, name)
		}
	}
	return nil
}

func clashError(a, b string) error {
	if strings.EqualFold(a, b) {
		return fmt.Errorf("%w: %q and %q differ only in case", ErrInvalidName, a, b)
	}
	return fmt.Errorf("%w: %q and %q differ only in case or Unicode normalization (NFC/NFD): macOS and Windows checkouts would merge them", ErrInvalidName, a, b)
}

// caseIndex checks new names for case-insensitive clashes: one scan of the
// directory per name for a few names, a map of folded names built once
// when a transaction adds many (a bulk import into one directory would
// otherwise be quadratic).
type caseIndex struct {
	bulk bool
	seen map[string]string
}

func (c *caseIndex) check(es []TreeEntry, name string) error {
	if !c.bulk {
		return checkNewName(es, name)
	}
	if err := checkEntryName(name); err != nil {
		return err
	}
	if c.seen == nil {
		c.seen = make(map[string]string, len(es))
		for _, e := range es {
			c.seen[verbiage.FoldName(e.Name)] = e.Name
		}
	}
	k := verbiage.FoldName(name)
	if prev, ok := c.seen[k]; ok && prev != name {
		return clashError(prev, name)
	}
	c.seen[k] = name
	return nil
}

// scanTree finds one entry in a raw tree body without decoding the rest.
func scanTree(data []byte, name string) (TreeEntry, bool, error) {
	for len(data) > 0 {
		sp := bytes.IndexByte(data, ' ')
		if sp < 0 {
			return TreeEntry{}, false, fmt.Errorf("corrupt tree: no mode")
		}
		nul := bytes.IndexByte(data[sp:], 0)
		if nul < 0 || len(data) < sp+nul+21 {
			return TreeEntry{}, false, fmt.Errorf("corrupt tree: truncated entry")
		}
		nul += sp
		if string(data[sp+1:nul]) == name {
			mode, err := strconv.ParseUint(string(data[:sp]), 8, 32)
			if err != nil {
				return TreeEntry{}, false, fmt.Errorf("corrupt tree: mode %q", data[:sp])
			}
			var h plumbing.Hash
			copy(h[:], data[nul+1:nul+21])
			return TreeEntry{Name: name, Mode: filemode.FileMode(mode), Hash: h}, true, nil
		}
		data = data[nul+21:]
	}
	return TreeEntry{}, false, nil
}
