package repo

import "bytes"

// makeDelta encodes dst as a git delta against src: copy the common prefix,
// insert what differs, copy the common suffix. The write path changes one
// entry of a tree or one key of a document at a time, so the part between
// prefix and suffix is the change itself and the delta is tens of bytes
// where the object is kilobytes (a 1,000-entry directory tree is ~40 KB).
func makeDelta(src, dst []byte) []byte {
	p := 0
	for p < len(src) && p < len(dst) && src[p] == dst[p] {
		p++
	}
	s := 0
	for s < len(src)-p && s < len(dst)-p && src[len(src)-1-s] == dst[len(dst)-1-s] {
		s++
	}
	var out bytes.Buffer
	out.Grow(32 + len(dst) - p - s)
	putVarint(&out, len(src))
	putVarint(&out, len(dst))
	deltaCopy(&out, 0, p)
	ins := dst[p : len(dst)-s]
	for len(ins) > 0 {
		n := min(len(ins), 0x7f)
		out.WriteByte(byte(n))
		out.Write(ins[:n])
		ins = ins[n:]
	}
	deltaCopy(&out, len(src)-s, s)
	return out.Bytes()
}

func putVarint(b *bytes.Buffer, n int) {
	for n >= 0x80 {
		b.WriteByte(byte(n) | 0x80)
		n >>= 7
	}
	b.WriteByte(byte(n))
}

// deltaCopy emits copy instructions in chunks of 64 KiB, the largest every
// git version reads.
func deltaCopy(b *bytes.Buffer, off, size int) {
	for size > 0 {
		n := min(size, 0x10000)
		op := byte(0x80)
		var args []byte
		for i := 0; i < 4; i++ {
			if v := byte(off >> (8 * i)); v != 0 {
				op |= 1 << i
				args = append(args, v)
			}
		}
		if n != 0x10000 { // a size of zero bytes means 0x10000
			for i := 0; i < 3; i++ {
				if v := byte(n >> (8 * i)); v != 0 {
					op |= 0x10 << i
					args = append(args, v)
				}
			}
		}
		b.WriteByte(op)
		b.Write(args)
		off += n
		size -= n
	}
}
