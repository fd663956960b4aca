package jsonmerge

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"
	"time"

	"github.com/aiwg/aiwg-state/verbiage"
)

// mergeArrays merges two arrays element by element: base order is kept,
// what either side removed is removed, an element present on both sides is
// merged recursively, and the elements new on either side are appended after
// the base elements in the order described at addedOrder.
func (m *merger) mergeArrays(b val, oa, ta []any, s Strategy) []any {
	var ba []any
	if b.ok {
		ba, _ = b.v.([]any)
	}
	bk, ok, tk := identities(ba), identities(oa), identities(ta)
	inBase := make(map[string]bool, len(bk))
	for _, k := range bk {
		inBase[k] = true
	}
	oAt, tAt := indexOf(ok), indexOf(tk)
	elem := func(arr []any, at map[string]int, k string) val {
		if i, found := at[k]; found {
			return val{arr[i], true}
		}
		return val{}
	}

	depth := len(m.path)
	m.path = append(m.path, verbiage.Segment{})
	out := make([]any, 0, max(len(oa), len(ta)))
	add := func(from int, v val) {
		// The element's index is known only now; conflicts recorded
		// inside it carry a placeholder segment at this depth.
		at := strconv.Itoa(len(out))
		for i := from; i < len(m.conflicts); i++ {
			m.conflicts[i].Path[depth] = verbiage.Segment{Key: at}
		}
		if v.ok {
			out = append(out, v.v)
		}
	}
	for i, k := range bk {
		from := len(m.conflicts)
		add(from, m.merge(val{ba[i], true}, elem(oa, oAt, k), elem(ta, tAt, k), s, true))
	}

	oNew, tNew := added(oa, ok, inBase), added(ta, tk, inBase)
	for _, it := range m.addedOrder(oNew, tNew) {
		from := len(m.conflicts)
		add(from, m.merge(val{}, elem(oa, oAt, it.key), elem(ta, tAt, it.key), s, true))
	}
	m.path = m.path[:depth]
	return out
}

// item is an element new on one side since the base.
type item struct {
	key string
	v   any
}

func added(arr []any, keys []string, inBase map[string]bool) []item {
	var out []item
	for i, k := range keys {
		if !inBase[k] {
			out = append(out, item{k, arr[i]})
		}
	}
	return out
}

// addedOrder interleaves the two sides' new elements. Each side's own order
// is kept. The side whose clock is older goes first, and an element of the
// other side moves ahead of it only when both carry a creation time and the
// other side's is earlier; so entries of an append-only log end up in time
// order, and entries without times keep the order in which the sides
// wrote. An element both sides added (same identity) appears once, where it
// is first met. Nothing here depends on which side is ours.
func (m *merger) addedOrder(oNew, tNew []item) []item {
	first, second := oNew, tNew
	c := m.clocks[0].Compare(m.clocks[1])
	if c == 0 {
		c = bytes.Compare(appendItems(nil, oNew), appendItems(nil, tNew))
	}
	if c > 0 {
		first, second = tNew, oNew
	}
	out := make([]item, 0, len(first)+len(second))
	seen := make(map[string]bool, len(first)+len(second))
	i, j := 0, 0
	for i < len(first) || j < len(second) {
		if i < len(first) && seen[first[i].key] {
			i++
			continue
		}
		if j < len(second) && seen[second[j].key] {
			j++
			continue
		}
		var it item
		if i == len(first) || (j < len(second) && createdBefore(second[j].v, first[i].v)) {
			it, j = second[j], j+1
		} else {
			it, i = first[i], i+1
		}
		seen[it.key] = true
		out = append(out, it)
	}
	return out
}

func appendItems(b []byte, items []item) []byte {
	for _, it := range items {
		b = appendCanonical(b, it.v)
		b = append(b, '\n')
	}
	return b
}

// createdBefore reports whether element a carries a creation time strictly
// before b's: both RFC 3339 texts, or both numbers.
func createdBefore(a, b any) bool {
	at, aok := createdAt(a)
	bt, bok := createdAt(b)
	if !aok || !bok {
		return false
	}
	switch x := at.(type) {
	case time.Time:
		y, ok := bt.(time.Time)
		return ok && x.Before(y)
	case json.Number:
		y, ok := bt.(json.Number)
		if !ok {
			return false
		}
		c, ok := compareNumbers(string(x), string(y))
		return ok && c < 0
	}
	return false
}

// createdAt returns an element's own time as time.Time or json.Number.
func createdAt(e any) (any, bool) {
	obj, ok := e.(map[string]any)
	if !ok {
		return nil, false
	}
	for _, n := range [...]string{"created_at", "CREATED-AT", "timestamp", "ts"} {
		switch x := obj[n].(type) {
		case string:
			if t, err := time.Parse(time.RFC3339Nano, x); err == nil {
				return t, true
			}
		case json.Number:
			if _, _, _, ok := parseDecimal(string(x)); ok {
				return x, true
			}
		}
	}
	return nil, false
}

// identities names every element of an array: an object with an id field is
// named by that field, anything else by its canonical bytes. Repeats of one
// name are numbered in order, so duplicates are matched one to one.
func identities(arr []any) []string {
	keys := make([]string, len(arr))
	count := make(map[string]int, len(arr))
	var buf []byte
	for i, e := range arr {
		buf = buf[:0]
		if obj, ok := e.(map[string]any); ok {
			if name, ok := idField(obj); ok {
				buf = append(buf, 'k')
				buf = appendString(buf, name)
				buf = appendCanonical(buf, obj[name])
			}
		}
		if len(buf) == 0 {
			buf = append(buf, 'v')
			buf = appendCanonical(buf, e)
		}
		id := string(buf)
		n := count[id]
		count[id] = n + 1
		keys[i] = id + "#" + strconv.Itoa(n)
	}
	return keys
}

// idField picks the key that identifies an object in an array: "id", else
// "ID", else the first key in byte order ending in "_id" or "-ID". Only a
// string or number identifies; a null id (the state document specification's template) does not.
func idField(obj map[string]any) (string, bool) {
	usable := func(k string) bool {
		switch obj[k].(type) {
		case string, json.Number:
			return true
		}
		return false
	}
	for _, k := range [...]string{"id", "ID"} {
		if usable(k) {
			return k, true
		}
	}
	best, found := "", false
	for k := range obj {
		if (strings.HasSuffix(k, "_id") || strings.HasSuffix(k, "-ID")) && usable(k) && (!found || k < best) {
			best, found = k, true
		}
	}
	return best, found
}

func indexOf(keys []string) map[string]int {
	at := make(map[string]int, len(keys))
	for i, k := range keys {
		at[k] = i
	}
	return at
}
