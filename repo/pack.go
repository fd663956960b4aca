package repo

import (
	"bytes"
	"compress/zlib"
	"crypto/sha1"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/format/idxfile"
)

// rawObject is an object about to be written.
type rawObject struct {
	typ  plumbing.ObjectType
	hash plumbing.Hash
	body []byte
}

// writePack writes objs as one pack and its index into objects/pack. Both
// are written under git's temporary names and renamed into place, the index
// first: git finds a pack through its .idx and skips one whose .pack is
// missing, while go-git lists .pack files and fails on one without an .idx.
// In this order a reader of either kind, or a crash at any point, sees
// nothing or a complete pack.
func (r *Repo) writePack(objs []rawObject) (plumbing.Hash, error) {
	var buf bytes.Buffer
	buf.Grow(256)
	var hdr [12]byte
	copy(hdr[:4], "PACK")
	binary.BigEndian.PutUint32(hdr[4:], 2)
	binary.BigEndian.PutUint32(hdr[8:], uint32(len(objs)))
	buf.Write(hdr[:])

	iw := new(idxfile.Writer)
	if err := iw.OnHeader(uint32(len(objs))); err != nil {
		return plumbing.ZeroHash, err
	}
	zw, err := r.zlibWriter()
	if err != nil {
		return plumbing.ZeroHash, err
	}
	defer r.zlibPool.Put(zw)
	for _, o := range objs {
		off := buf.Len()
		writeObjHeader(&buf, o.typ, len(o.body))
		zw.Reset(&buf)
		if _, err := zw.Write(o.body); err != nil {
			return plumbing.ZeroHash, err
		}
		if err := zw.Close(); err != nil {
			return plumbing.ZeroHash, err
		}
		crc := crc32.ChecksumIEEE(buf.Bytes()[off:])
		iw.Add(o.hash, uint64(off), crc)
	}
	sum := sha1.Sum(buf.Bytes())
	buf.Write(sum[:])
	var packHash plumbing.Hash
	copy(packHash[:], sum[:])
	if err := iw.OnFooter(packHash); err != nil {
		return plumbing.ZeroHash, err
	}
	idx, err := iw.Index()
	if err != nil {
		return plumbing.ZeroHash, err
	}
	var ibuf bytes.Buffer
	if _, err := idxfile.NewEncoder(&ibuf).Encode(idx); err != nil {
		return plumbing.ZeroHash, err
	}

	dir := filepath.Join(r.dir, "objects", "pack")
	base := filepath.Join(dir, "pack-"+packHash.String())
	if err := r.writeFileAtomic(dir, "tmp_idx_", base+".idx", ibuf.Bytes(), 0o444); err != nil {
		return plumbing.ZeroHash, err
	}
	if err := r.writeFileAtomic(dir, "tmp_pack_", base+".pack", buf.Bytes(), 0o444); err != nil {
		os.Remove(base + ".idx")
		return plumbing.ZeroHash, err
	}
	if r.opts.Sync {
		if err := syncDir(dir); err != nil {
			return plumbing.ZeroHash, err
		}
	}
	return packHash, nil
}

// zlibWriter reuses compressors: a new one allocates about a megabyte,
// more than the rest of a write.
func (r *Repo) zlibWriter() (*zlib.Writer, error) {
	if zw, ok := r.zlibPool.Get().(*zlib.Writer); ok {
		return zw, nil
	}
	return zlib.NewWriterLevel(nil, r.opts.Compression)
}

// removePack deletes a pack this process wrote and never published (its
// commit lost the compare-and-swap). Nothing else can reference its objects:
// other writers build only on published commits and on their own packs.
func (r *Repo) removePack(h plumbing.Hash) {
	base := filepath.Join(r.dir, "objects", "pack", "pack-"+h.String())
	os.Remove(base + ".pack")
	os.Remove(base + ".idx")
}

// writeObjHeader writes a pack entry header: type and size as git's varint.
func writeObjHeader(buf *bytes.Buffer, t plumbing.ObjectType, size int) {
	c := byte(t)<<4 | byte(size&0x0f)
	size >>= 4
	for size > 0 {
		buf.WriteByte(c | 0x80)
		c = byte(size & 0x7f)
		size >>= 7
	}
	buf.WriteByte(c)
}

// writeFileAtomic writes data to a temporary file in dir, syncs it when the
// repo is durable, and renames it to dst.
func (r *Repo) writeFileAtomic(dir, prefix, dst string, data []byte, perm os.FileMode) error {
	f, tmp, err := r.createTemp(dir, prefix)
	if err != nil {
		return fmt.Errorf("write %s: %w", filepath.Base(dst), err)
	}
	_, err = f.Write(data)
	if err == nil {
		err = f.Chmod(perm)
	}
	if err == nil && r.opts.Sync {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, dst)
	}
	if err != nil {
		os.Remove(tmp)
		return fmt.Errorf("write %s: %w", filepath.Base(dst), err)
	}
	return nil
}

// createTemp creates a temporary file in dir.
func (r *Repo) createTemp(dir, prefix string) (*os.File, string, error) {
	tmp := filepath.Join(dir, prefix+strconv.FormatUint(rand.Uint64(), 36))
	f, err := os.OpenFile(tmp, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	return f, tmp, err
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	return err
}
