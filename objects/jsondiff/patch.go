package jsondiff

import (
	"strconv"
	"strings"

	"github.com/aiwg/aiwg-state/objects"
)

// Op is one RFC 6902 JSON Patch operation. Path and From are RFC 6901
// pointers; From is set for "move", Value for "add" and "replace".
type Op struct {
	Op    string
	Path  string
	From  string
	Value any
}

// MarshalJSON writes the RFC 6902 form. "value" is written whenever the
// operation takes one, even when it is null (an add of null is not an add
// without a value), and "from" only for the operations that read it.
func (o Op) MarshalJSON() ([]byte, error) {
	var b strings.Builder
	b.WriteString(`{"op":`)
	writeString(&b, o.Op)
	if o.Op == "move" || o.Op == "copy" {
		b.WriteString(`,"from":`)
		writeString(&b, o.From)
	}
	b.WriteString(`,"path":`)
	writeString(&b, o.Path)
	if o.Op == "add" || o.Op == "replace" || o.Op == "test" {
		b.WriteString(`,"value":`)
		writeJSON(&b, o.Value, "", 0)
	}
	b.WriteByte('}')
	return []byte(b.String()), nil
}

// Patch returns the JSON Patch that turns old into new when its operations
// are applied in order. Array operations are emitted against the array as
// it stands after the operations before them, so indices are always those
// of the document the operation meets.
//
// Equal movable subtrees (see Diff) become "move" operations within one
// array, and between object members whose paths cross no array; elsewhere a
// move is written as a remove and an add, which is always correct, where a
// move would need every later index rewritten.
func Patch(old, new any) []Op {
	p := &patcher{}
	p.value("", normalize(old), normalize(new), true)
	p.pairMoves()
	ops := make([]Op, 0, len(p.ops))
	for _, o := range p.ops {
		if !o.dropped {
			ops = append(ops, o.Op)
		}
	}
	return ops
}

type patchOp struct {
	Op
	// removed is the value a "remove" takes away, for pairing into a move.
	removed any
	// stable says every container above Path is an object, so the pointer
	// names the same place before and after any other operation.
	stable  bool
	dropped bool
}

type patcher struct {
	ops []patchOp
}

func (p *patcher) emit(o Op, removed any, stable bool) {
	p.ops = append(p.ops, patchOp{Op: o, removed: removed, stable: stable})
}

func pointerChild(ptr, key string) string {
	key = strings.ReplaceAll(key, "~", "~0")
	return ptr + "/" + strings.ReplaceAll(key, "/", "~1")
}

func (p *patcher) value(ptr string, o, n any, stable bool) {
	ko, kn := kindOf(o), kindOf(n)
	if ko != kn {
		p.emit(Op{Op: "replace", Path: ptr, Value: n}, nil, stable)
		return
	}
	switch ko {
	case kindObject:
		om, nm := o.(map[string]any), n.(map[string]any)
		for _, k := range differingKeys(om, nm) {
			ov, inOld := om[k]
			nv, inNew := nm[k]
			child := pointerChild(ptr, k)
			switch {
			case !inNew:
				p.emit(Op{Op: "remove", Path: child}, ov, stable)
			case !inOld:
				p.emit(Op{Op: "add", Path: child, Value: nv}, nil, stable)
			default:
				p.value(child, ov, nv, stable)
			}
		}
	case kindArray:
		p.array(ptr, o.([]any), n.([]any))
	default:
		if !objects.Equal(o, n) {
			p.emit(Op{Op: "replace", Path: ptr, Value: n}, nil, stable)
		}
	}
}

// array walks the alignment with cur, the index the next step acts on. The
// array always reads: new[0:…] interleaved with elements waiting to move
// later (pending) — that prefix is cur long — then the old elements not yet
// visited, in order, minus those already moved out early.
func (p *patcher) array(ptr string, o, n []any) {
	if objects.Equal(o, n) {
		return
	}
	at := func(i int) string { return ptr + "/" + strconv.Itoa(i) }
	type waiting struct{ old, pos int }
	var pending []waiting
	taken := make([]bool, len(o)) // moved out before its own step came
	cur, nextOld := 0, 0
	steps := align(o, n)
	for k := 0; k < len(steps); k++ {
		s := steps[k]
		switch s.kind {
		case stepKeep, stepPair:
			p.value(at(cur), o[s.i], n[s.j], false)
			cur++
			nextOld = s.i + 1
		case stepRemove:
			// A run of removals goes from its highest index down, so each
			// index is the element's place before the run, as a reader
			// of the patch would count it.
			end := k + 1
			for end < len(steps) && steps[end].kind == stepRemove {
				end++
			}
			for r := end - 1; r >= k; r-- {
				p.emit(Op{Op: "remove", Path: at(cur + r - k)}, o[steps[r].i], false)
			}
			nextOld = steps[end-1].i + 1
			k = end - 1
		case stepAdd:
			p.emit(Op{Op: "add", Path: at(cur), Value: n[s.j]}, nil, false)
			cur++
		case stepMoveFrom:
			nextOld = s.i + 1
			if taken[s.i] {
				continue
			}
			// Leave it where it is until its destination comes up.
			pending = append(pending, waiting{s.i, cur})
			cur++
		case stepMoveTo:
			w := -1
			for k, pw := range pending {
				if pw.old == s.i {
					w = k
					break
				}
			}
			if w >= 0 {
				from := pending[w].pos
				pending = append(pending[:w], pending[w+1:]...)
				for k := range pending {
					if pending[k].pos > from {
						pending[k].pos--
					}
				}
				// Removing it shifts the prefix down by one, so the end of
				// the prefix is cur-1.
				if from != cur-1 {
					p.emit(Op{Op: "move", From: at(from), Path: at(cur - 1)}, nil, false)
				}
				p.value(at(cur-1), o[s.i], n[s.j], false)
				continue
			}
			from := cur
			for k := nextOld; k < s.i; k++ {
				if !taken[k] {
					from++
				}
			}
			taken[s.i] = true
			if from != cur {
				p.emit(Op{Op: "move", From: at(from), Path: at(cur)}, nil, false)
			}
			p.value(at(cur), o[s.i], n[s.j], false)
			cur++
		}
	}
}

// pairMoves rewrites a remove and an add of one movable value, both at
// stable pointers, into one move at the add's place. That is safe in either
// order: nothing else touches the removed member (its subtree is gone on the
// new side) and both parents are objects present throughout, so the pointers
// mean the same place at any point of the patch.
func (p *patcher) pairMoves() {
	removed := make(map[string][]int)
	for i, o := range p.ops {
		if o.Op.Op == "remove" && o.stable && movable(o.removed) {
			k := canonical(o.removed)
			removed[k] = append(removed[k], i)
		}
	}
	if len(removed) == 0 {
		return
	}
	for i := range p.ops {
		o := &p.ops[i]
		if o.Op.Op != "add" || !o.stable || !movable(o.Value) {
			continue
		}
		k := canonical(o.Value)
		queue := removed[k]
		if len(queue) == 0 {
			continue
		}
		r := queue[0]
		removed[k] = queue[1:]
		p.ops[r].dropped = true
		o.Op = Op{Op: "move", From: p.ops[r].Path, Path: o.Path}
	}
}
