package audit

import (
	"bytes"
	"encoding/binary"
	"errors"
	"hash/crc32"

	"github.com/go-git/go-git/v5/plumbing"
)

// record is what the index knows of one commit: its parents, its committer
// time, its mutation id, the files whose blob differs from the first
// parent's, and the exact changed key paths in them (index keys, see keyOf).
type record struct {
	hash    plumbing.Hash
	parents []plumbing.Hash
	time    int64
	mutID   string
	files   []string
	// blobs are the files' blobs in this commit, in files' order (zero:
	// the file is gone), so a query reads a document's version without
	// walking the commit's trees. nil when unknown: records written before
	// they were kept.
	blobs []plumbing.Hash
	keys  []string
	deep  []string // the keys that changed keys below them too
}

// frameMagic starts every log record, so a reader that meets a torn record
// can find the next one. Records of the first format (0x1D), checked with
// CRC-32C, are skipped like torn ones and their commits indexed again on
// first use: CRC-32C cost every writing process 1.3 million instructions
// to build its tables (14% of a CLI `set`), where the CRC-32 the pack
// index needs anyway is built already.
var frameMagic = [4]byte{0xA1, 'W', 'G', 0x1E}

const frameHeader = 12 // magic, length, CRC-32 (IEEE) of the payload

// maxRecord bounds a record's payload: a length beyond it is garbage.
const maxRecord = 64 << 20

func (r *record) appendFrame(b []byte) []byte {
	p := r.payload()
	b = append(b, frameMagic[:]...)
	b = binary.LittleEndian.AppendUint32(b, uint32(len(p)))
	b = binary.LittleEndian.AppendUint32(b, crc32.ChecksumIEEE(p))
	return append(b, p...)
}

func (r *record) payload() []byte {
	b := make([]byte, 0, 64)
	b = append(b, r.hash[:]...)
	b = binary.AppendUvarint(b, uint64(len(r.parents)))
	for _, p := range r.parents {
		b = append(b, p[:]...)
	}
	b = binary.AppendVarint(b, r.time)
	b = appendString(b, r.mutID)
	b = binary.AppendUvarint(b, uint64(len(r.files)))
	for _, f := range r.files {
		b = appendString(b, f)
	}
	for _, list := range [][]string{r.keys, r.deep} {
		b = binary.AppendUvarint(b, uint64(len(list)))
		for _, k := range list {
			b = appendString(b, k)
		}
	}
	// The blobs come last, so a reader of the format without them takes
	// the record for a torn one and indexes its commit again.
	if len(r.blobs) == len(r.files) {
		for _, h := range r.blobs {
			b = append(b, h[:]...)
		}
	}
	return b
}

func appendString(b []byte, s string) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

var errBadRecord = errors.New("malformed index record")

type decoder struct {
	b   []byte
	err error
}

func (d *decoder) uvarint() uint64 {
	v, n := binary.Uvarint(d.b)
	if n <= 0 {
		d.err = errBadRecord
		d.b = nil
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *decoder) bytes(n uint64) []byte {
	if uint64(len(d.b)) < n {
		d.err = errBadRecord
		d.b = nil
		return nil
	}
	out := d.b[:n]
	d.b = d.b[n:]
	return out
}

func (d *decoder) hash() plumbing.Hash {
	var h plumbing.Hash
	copy(h[:], d.bytes(20))
	return h
}

func (d *decoder) string() string { return string(d.bytes(d.uvarint())) }

func decodeRecord(p []byte) (*record, error) {
	d := &decoder{b: p}
	r := &record{hash: d.hash()}
	np := d.uvarint()
	if np > uint64(len(d.b)) {
		return nil, errBadRecord
	}
	for i := uint64(0); i < np; i++ {
		r.parents = append(r.parents, d.hash())
	}
	t, n := binary.Varint(d.b)
	if n <= 0 {
		return nil, errBadRecord
	}
	d.b = d.b[n:]
	r.time = t
	r.mutID = d.string()
	nf := d.uvarint()
	if nf > uint64(len(d.b)) {
		return nil, errBadRecord
	}
	for i := uint64(0); i < nf; i++ {
		r.files = append(r.files, d.string())
	}
	for _, list := range []*[]string{&r.keys, &r.deep} {
		nk := d.uvarint()
		if nk > uint64(len(d.b)) {
			return nil, errBadRecord
		}
		for i := uint64(0); i < nk; i++ {
			*list = append(*list, d.string())
		}
	}
	if d.err == nil && len(d.b) > 0 && len(d.b) == 20*len(r.files) {
		r.blobs = make([]plumbing.Hash, len(r.files))
		for i := range r.blobs {
			r.blobs[i] = d.hash()
		}
	}
	if d.err != nil || len(d.b) != 0 {
		return nil, errBadRecord
	}
	return r, nil
}

// readFrames decodes the records of a log, skipping anything that is not a
// whole record with a good checksum (a write torn by a crash) by searching
// for the next frame.
func readFrames(data []byte) []*record {
	var out []*record
	for len(data) >= frameHeader {
		if !bytes.Equal(data[:4], frameMagic[:]) {
			i := bytes.Index(data[1:], frameMagic[:])
			if i < 0 {
				break
			}
			data = data[1+i:]
			continue
		}
		n := binary.LittleEndian.Uint32(data[4:])
		sum := binary.LittleEndian.Uint32(data[8:])
		if n > maxRecord || uint64(len(data)-frameHeader) < uint64(n) || crc32.ChecksumIEEE(data[frameHeader:frameHeader+int(n)]) != sum {
			data = data[1:]
			continue
		}
		if r, err := decodeRecord(data[frameHeader : frameHeader+int(n)]); err == nil {
			out = append(out, r)
		}
		data = data[frameHeader+int(n):]
	}
	return out
}
