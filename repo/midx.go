package repo

import (
	"bytes"
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"strings"
)

// git's multi-pack-index (objects/pack/multi-pack-index, written by `git
// multi-pack-index write` and `git maintenance run --task=incremental-repack`,
// and a chain of them under multi-pack-index.d in later gits) names the
// packs it indexes. A pack it names must not disappear while it names it:
// git then fails every read through the index, and `git fsck` with it. So
// a pack a multi-pack-index names is never a tail (extending it would
// leave it superseded) and is never removed here; `git repack -d`, which
// our maintenance runs, rewrites or drops the index itself, and
// repairMidx drops one that already names a missing pack.

// midxPNAM is the id of the chunk listing the packs' index names.
const midxPNAM = 0x504e414d

// parseMidxPacks returns the packs a multi-pack-index file names, as
// pack-<hash> (no extension).
func parseMidxPacks(b []byte) ([]string, error) {
	bad := errors.New("not a multi-pack-index git writes")
	if len(b) < 12 || string(b[:4]) != "MIDX" || b[4] != 1 {
		return nil, bad
	}
	chunks := int(b[6])
	npacks := int(binary.BigEndian.Uint32(b[8:]))
	table := 12
	if len(b) < table+12*(chunks+1) {
		return nil, bad
	}
	for i := range chunks {
		e := b[table+12*i:]
		if binary.BigEndian.Uint32(e) != midxPNAM {
			continue
		}
		start := binary.BigEndian.Uint64(e[4:])
		end := binary.BigEndian.Uint64(e[16:]) // the next entry's offset
		if start > end || end > uint64(len(b)) {
			return nil, bad
		}
		var names []string
		for _, n := range bytes.Split(b[start:end], []byte{0}) {
			if len(n) == 0 {
				continue // padding
			}
			s := strings.TrimSuffix(string(n), ".idx")
			s = strings.TrimSuffix(s, ".pack")
			names = append(names, s)
		}
		if len(names) != npacks {
			return nil, bad
		}
		return names, nil
	}
	return nil, bad
}

// midxFiles lists the multi-pack-index files of the pack directory: the
// single one, and those of an incremental chain.
func midxFiles(packDir string) []string {
	var out []string
	if exists(filepath.Join(packDir, "multi-pack-index")) {
		out = append(out, filepath.Join(packDir, "multi-pack-index"))
	}
	chain, _ := filepath.Glob(filepath.Join(packDir, "multi-pack-index.d", "*.midx"))
	return append(out, chain...)
}

// midxCover is what the multi-pack-indexes name: all is set when one
// could not be read, and then every pack counts as named.
type midxCover struct {
	packs map[string]bool
	all   bool
}

func (c midxCover) covers(pack string) bool { return c.all || c.packs[pack] }

// readMidxCover reads the multi-pack-indexes of packDir; the zero cover
// when there is none (the common case: one stat, or none when the caller
// has listed the directory and found no index).
func readMidxCover(packDir string) midxCover {
	var c midxCover
	for _, f := range midxFiles(packDir) {
		b, err := os.ReadFile(f)
		if errors.Is(err, os.ErrNotExist) {
			continue // removed meanwhile by git repack
		}
		names, err := parseMidxPacks(b)
		if err != nil {
			return midxCover{all: true}
		}
		if c.packs == nil {
			c.packs = map[string]bool{}
		}
		for _, n := range names {
			c.packs[n] = true
		}
	}
	return c
}

// repairMidx removes the multi-pack-indexes when one names a pack that is
// gone or cannot be read (a store a writer of an older aiwg-state left so:
// git fails every read through it). The index only speeds reads up; git
// reads the packs without it, and `git multi-pack-index write` makes a new
// one. It reports whether it removed anything.
func repairMidx(packDir string) (bool, error) {
	files := midxFiles(packDir)
	broken := false
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			broken = true
			break
		}
		names, err := parseMidxPacks(b)
		if err != nil {
			broken = true
			break
		}
		for _, n := range names {
			if !exists(filepath.Join(packDir, n+".pack")) || !exists(filepath.Join(packDir, n+".idx")) {
				broken = true
			}
		}
	}
	if !broken {
		return false, nil
	}
	extra, _ := filepath.Glob(filepath.Join(packDir, "multi-pack-index-*"))
	for _, f := range append(files, extra...) {
		if err := os.Remove(f); err != nil && !errors.Is(err, os.ErrNotExist) {
			return false, err
		}
	}
	if err := os.RemoveAll(filepath.Join(packDir, "multi-pack-index.d")); err != nil {
		return false, err
	}
	return true, nil
}
