package repo

import (
	"bytes"
	"encoding/binary"
	"errors"
)

// makeDelta encodes dst as a git delta against src: copy the common prefix,
// insert what differs, copy the common suffix. The write path changes one
// entry of a tree or one key of a document at a time, so the part between
// prefix and suffix is the change itself and the delta is tens of bytes
// where the object is kilobytes (a 1,000-entry directory tree is ~40 KB).
func makeDelta(src, dst []byte) []byte {
	p, s := commonEnds(src, dst)
	var out bytes.Buffer
	out.Grow(32 + len(dst) - p - s)
	putVarint(&out, len(src))
	putVarint(&out, len(dst))
	deltaCopy(&out, 0, p)
	deltaInsert(&out, dst[p:len(dst)-s])
	deltaCopy(&out, len(src)-s, s)
	return out.Bytes()
}

// commonEnds returns the lengths of the common prefix and, in what is
// left, the common suffix of a and b.
func commonEnds(a, b []byte) (prefix, suffix int) {
	for prefix < len(a) && prefix < len(b) && a[prefix] == b[prefix] {
		prefix++
	}
	for suffix < len(a)-prefix && suffix < len(b)-prefix && a[len(a)-1-suffix] == b[len(b)-1-suffix] {
		suffix++
	}
	return prefix, suffix
}

// deltaInsert emits insert instructions, 127 bytes at most each.
func deltaInsert(b *bytes.Buffer, data []byte) {
	for len(data) > 0 {
		n := min(len(data), 0x7f)
		b.WriteByte(byte(n))
		b.Write(data[:n])
		data = data[n:]
	}
}

// rebaseDelta makes dst as a delta against the base of toPrev, a delta
// that makes prev. dst differs from prev in one stretch (prefix and
// suffix in common, as makeDelta finds them), so its delta is toPrev's
// instructions for the prefix, the stretch inserted, and toPrev's
// instructions for the suffix: a delta against a version several changes
// back, without searching that version for matches. Each change since the
// base adds a copy and an insert.
func rebaseDelta(toPrev, prev, dst []byte) ([]byte, error) {
	baseLen, ops, err := parseDelta(toPrev, len(prev))
	if err != nil {
		return nil, err
	}
	p, s := commonEnds(prev, dst)
	var out bytes.Buffer
	out.Grow(len(toPrev) + len(dst) - p - s + 32)
	putVarint(&out, baseLen)
	putVarint(&out, len(dst))
	e := deltaEmitter{out: &out}
	e.span(ops, prev, 0, p)
	e.flush()
	deltaInsert(&out, dst[p:len(dst)-s])
	e.span(ops, prev, len(prev)-s, len(prev))
	e.flush()
	return out.Bytes(), nil
}

// deltaOp is one delta instruction: a copy of n bytes of the base from
// off, or (off < 0) an insert of n bytes of the result, which are the
// result's own bytes at that position.
type deltaOp struct {
	at  int // where its output starts in the result
	off int
	n   int
}

// parseDelta returns a delta's base size and instructions, checking them
// against the result's size.
func parseDelta(d []byte, resultLen int) (int, []deltaOp, error) {
	baseLen, size, body, err := deltaSizes(d)
	if err != nil {
		return 0, nil, err
	}
	if size != resultLen {
		return 0, nil, errCorruptDelta
	}
	var ops []deltaOp
	at := 0
	err = walkDelta(body, baseLen, func(off, n int, lit []byte) {
		if lit != nil {
			off = -1
		}
		ops = append(ops, deltaOp{at: at, off: off, n: n})
		at += n
	})
	if err == nil && at != resultLen {
		err = errCorruptDelta
	}
	return baseLen, ops, err
}

var errCorruptDelta = errors.New("corrupt delta")

// deltaSizes reads a delta's header: the sizes of its base and result.
func deltaSizes(d []byte) (baseLen, resultLen int, body []byte, err error) {
	b, w := binary.Uvarint(d)
	if w <= 0 || b > maxObjectSize {
		return 0, 0, nil, errCorruptDelta
	}
	r, w2 := binary.Uvarint(d[w:])
	if w2 <= 0 || r > maxObjectSize {
		return 0, 0, nil, errCorruptDelta
	}
	return int(b), int(r), d[w+w2:], nil
}

// walkDelta calls emit for each instruction after a delta's header: a
// copy of n bytes of the base from off, or an insert of lit (n bytes).
func walkDelta(d []byte, baseLen int, emit func(off, n int, lit []byte)) error {
	for len(d) > 0 {
		op := d[0]
		d = d[1:]
		if op&0x80 == 0 {
			if op == 0 || int(op) > len(d) {
				return errCorruptDelta
			}
			emit(0, int(op), d[:op])
			d = d[op:]
			continue
		}
		off, n := 0, 0
		for i := 0; i < 4; i++ {
			if op&(1<<i) != 0 {
				if len(d) == 0 {
					return errCorruptDelta
				}
				off |= int(d[0]) << (8 * i)
				d = d[1:]
			}
		}
		for i := 0; i < 3; i++ {
			if op&(0x10<<i) != 0 {
				if len(d) == 0 {
					return errCorruptDelta
				}
				n |= int(d[0]) << (8 * i)
				d = d[1:]
			}
		}
		if n == 0 {
			n = 0x10000
		}
		if off+n > baseLen {
			return errCorruptDelta
		}
		emit(off, n, nil)
	}
	return nil
}

// deltaEmitter writes the instructions of spans of a result, joining a
// copy that continues the previous one and inserts that follow each
// other.
type deltaEmitter struct {
	out      *bytes.Buffer
	copyOff  int
	copyN    int
	inserted []byte
}

// span emits the instructions that make result[from:to], given ops that
// make all of result.
func (e *deltaEmitter) span(ops []deltaOp, result []byte, from, to int) {
	// The first op that ends after from.
	lo, hi := 0, len(ops)
	for lo < hi {
		m := (lo + hi) / 2
		if ops[m].at+ops[m].n <= from {
			lo = m + 1
		} else {
			hi = m
		}
	}
	for _, op := range ops[lo:] {
		if op.at >= to {
			break
		}
		start, end := max(op.at, from), min(op.at+op.n, to)
		if op.off < 0 {
			e.flushCopy()
			e.inserted = append(e.inserted, result[start:end]...)
			continue
		}
		e.flushInsert()
		off := op.off + start - op.at
		if e.copyN > 0 && e.copyOff+e.copyN == off {
			e.copyN += end - start
			continue
		}
		e.flushCopy()
		e.copyOff, e.copyN = off, end-start
	}
}

func (e *deltaEmitter) flushCopy() {
	if e.copyN > 0 {
		deltaCopy(e.out, e.copyOff, e.copyN)
		e.copyN = 0
	}
}

func (e *deltaEmitter) flushInsert() {
	if len(e.inserted) > 0 {
		deltaInsert(e.out, e.inserted)
		e.inserted = e.inserted[:0]
	}
}

func (e *deltaEmitter) flush() {
	e.flushCopy()
	e.flushInsert()
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
