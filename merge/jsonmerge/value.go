package jsonmerge

import (
	"bytes"
	"encoding/json"
	"math"
	"math/big"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/aiwg/aiwg-state/verbiage"
)

// Side is one input of a three-way merge: a decoded JSON value (the
// encoding/json UseNumber form), or Missing when the document or key does not
// exist on that side. Clock is the hybrid logical clock of the side's last
// write (from its head commit's trailer); it orders writes when the data
// carries no time of its own.
type Side struct {
	Value   any
	Missing bool
	Clock   Clock
}

// Conflict is a clash no strategy settled, with the three values at its path.
// A side's Missing flag is set when the key does not exist on that side (its
// value is then nil).
type Conflict struct {
	Path                                    verbiage.Path
	Base, Ours, Theirs                      any
	BaseMissing, OursMissing, TheirsMissing bool
	Reason                                  string
}

// Values merges ours and theirs against their common base; see the package
// documentation for the rules. The result shares unchanged subtrees with the
// inputs, so callers must not modify either afterwards. missing reports that
// the merged document does not exist (deleted). A merge with conflicts still
// returns a complete value: each conflicted path holds ours' value there.
func Values(base, ours, theirs Side, opts Options) (result any, missing bool, conflicts []Conflict) {
	m := &merger{opts: opts, clocks: [2]Clock{ours.Clock, theirs.Clock}}
	s := opts.Strategy
	if s == "" {
		s = MergeObjects
	}
	v := m.merge(side(base), side(ours), side(theirs), s, false)
	return v.v, !v.ok, m.conflicts
}

// val is a value that may be absent.
type val struct {
	v  any
	ok bool
}

func side(s Side) val {
	if s.Missing {
		return val{}
	}
	return val{s.Value, true}
}

func get(m map[string]any, k string) val {
	v, ok := m[k]
	return val{v, ok}
}

// pair holds the two sides' objects at one depth of the current path; the
// data clocks and priorities are looked up in them.
type pair struct{ ours, theirs map[string]any }

type merger struct {
	opts      Options
	clocks    [2]Clock // ours, theirs
	path      verbiage.Path
	enclosing []pair
	conflicts []Conflict
}

// merge is the three-way step at m.path. Objects on both sides are always
// merged key by key, whatever the strategy, so a strategy only ever decides
// between two values that cannot be combined. inArray marks an array
// element, which a conflict must not drop (see conflict).
func (m *merger) merge(b, o, t val, s Strategy, inArray bool) val {
	if o.ok && t.ok {
		if om, ok := o.v.(map[string]any); ok {
			if tm, ok := t.v.(map[string]any); ok {
				return val{m.mergeObjects(b, om, tm, s), true}
			}
		}
	}
	if s == Sum {
		// Before the shortcuts: the same increment on both sides is two.
		if v, ok := sum(b, o, t); ok {
			return v
		}
	}
	switch {
	case same(o, t):
		return o
	case same(b, o):
		return t
	case same(b, t):
		return o
	}
	return m.clash(b, o, t, s, inArray)
}

// sum is base + (ours - base) + (theirs - base) when both sides hold a
// number and the base is a number or absent, computed exactly on the
// decimal text; ok is false otherwise.
func sum(b, o, t val) (val, bool) {
	if !o.ok || !t.ok {
		return val{}, false
	}
	on, ok1 := o.v.(json.Number)
	tn, ok2 := t.v.(json.Number)
	if !ok1 || !ok2 {
		return val{}, false
	}
	// One side unchanged: the other side's number as it was written.
	if same(b, o) {
		return t, true
	}
	if same(b, t) {
		return o, true
	}
	bn := json.Number("0")
	if b.ok {
		var ok bool
		if bn, ok = b.v.(json.Number); !ok {
			return val{}, false
		}
	}
	var r, x big.Rat
	digits := 0
	for i, n := range []json.Number{on, tn, bn} {
		if exponent(string(n)) > maxSumExponent {
			return val{}, false // exact, it would be unboundedly long
		}
		if _, ok := x.SetString(string(n)); !ok {
			return val{}, false
		}
		if i < 2 {
			r.Add(&r, &x)
		} else {
			r.Sub(&r, &x)
		}
		digits = max(digits, fractionDigits(string(n)))
	}
	if r.IsInt() {
		return val{json.Number(r.Num().String()), true}, true
	}
	text := strings.TrimRight(r.FloatString(digits), "0")
	return val{json.Number(strings.TrimSuffix(text, ".")), true}, true
}

// maxSumExponent bounds the exponents sum adds exactly: 1e999999 written
// out in full is a million digits.
const maxSumExponent = 1000

// exponent is the magnitude of a number's exponent part (0 without one).
func exponent(n string) int {
	_, exp, ok := strings.Cut(strings.ToLower(n), "e")
	if !ok {
		return 0
	}
	e, err := strconv.Atoi(exp)
	if err != nil {
		return math.MaxInt
	}
	return max(e, -e)
}

// fractionDigits is how many digits a number's text needs after the
// point to be written without an exponent.
func fractionDigits(n string) int {
	mant, exp, _ := strings.Cut(strings.ToLower(n), "e")
	_, frac, _ := strings.Cut(mant, ".")
	e, _ := strconv.Atoi(exp)
	return max(len(frac)-e, 0)
}

// mergeObjects merges key by key. Keys are visited in sorted order so that
// conflicts come out in a stable order.
func (m *merger) mergeObjects(b val, om, tm map[string]any, s Strategy) map[string]any {
	if sameMap(om, tm) {
		return om
	}
	var bm map[string]any
	if b.ok {
		bm, _ = b.v.(map[string]any)
	}
	keys := make([]string, 0, max(len(om), len(tm)))
	for k := range om {
		keys = append(keys, k)
	}
	for k := range tm {
		if _, ok := om[k]; !ok {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	out := make(map[string]any, len(keys))
	m.enclosing = append(m.enclosing, pair{om, tm})
	for _, k := range keys {
		ks := s
		if x, ok := m.opts.Keys[k]; ok {
			ks = x
		}
		m.path = append(m.path, verbiage.Segment{Key: k})
		if v := m.merge(get(bm, k), get(om, k), get(tm, k), ks, false); v.ok {
			out[k] = v.v
		}
		m.path = m.path[:len(m.path)-1]
	}
	m.enclosing = m.enclosing[:len(m.enclosing)-1]
	return out
}

// clash settles a path that both sides changed differently.
func (m *merger) clash(b, o, t val, s Strategy, inArray bool) val {
	switch s {
	case MergeObjects:
		if oa, ta, ok := arrays(o, t); ok && onlyAppended(b, oa, ta) {
			// Both sides only appended (items.-): keeping both sides'
			// new elements is the one reading of the two writes, as
			// merge-arrays would merge them.
			return val{m.mergeArrays(b, oa, ta, s), true}
		}
		return m.fallback(b, o, t, s, inArray, "merge-objects")
	case MergeArrays:
		if oa, ta, ok := arrays(o, t); ok {
			return val{m.mergeArrays(b, oa, ta, s), true}
		}
		return m.fallback(b, o, t, s, inArray, "merge-arrays")
	}
	return m.settle(b, o, t, s, inArray, "")
}

// fallback applies Options.Fallback to a clash merge-objects or merge-arrays
// could not settle. via names the strategy that gave up, for the reason.
func (m *merger) fallback(b, o, t val, s Strategy, inArray bool, via string) val {
	switch f := m.opts.Fallback; f {
	case LastWriteWins, FirstWriteWins, HigherPriorityWins, Max, Sum:
		return m.settle(b, o, t, f, inArray, via)
	case MergeArrays:
		if oa, ta, ok := arrays(o, t); ok {
			return val{m.mergeArrays(b, oa, ta, s), true}
		}
		return m.conflict(b, o, t, inArray, via+" and merge-arrays cannot settle it: "+clashKind(o, t))
	}
	return m.conflict(b, o, t, inArray, via+" cannot settle it: "+clashKind(o, t))
}

// settle applies one of the strategies that decide between whole values.
func (m *merger) settle(b, o, t val, s Strategy, inArray bool, via string) val {
	switch s {
	case LastWriteWins:
		return m.byTime(o, t, true)
	case FirstWriteWins:
		return m.byTime(o, t, false)
	case HigherPriorityWins:
		if c, ok := m.comparePriority(); ok && c != 0 {
			return pick(o, t, c > 0)
		}
		return m.byTime(o, t, true)
	case Max:
		if c, ok := compareMax(o, t); ok {
			return pick(o, t, c > 0)
		}
		return m.conflict(b, o, t, inArray, "max cannot compare "+kindPair(o, t))
	case Sum:
		if v, ok := sum(b, o, t); ok {
			return v
		}
		return m.conflict(b, o, t, inArray, "sum cannot add "+kindPair(o, t))
	case Manual:
		if via != "" {
			return m.conflict(b, o, t, inArray, via+" cannot settle it: "+clashKind(o, t))
		}
		return m.conflict(b, o, t, inArray, clashKind(o, t))
	}
	return m.conflict(b, o, t, inArray, "unknown strategy "+strconv.Quote(string(s))+": "+clashKind(o, t))
}

func pick(o, t val, ours bool) val {
	if ours {
		return o
	}
	return t
}

// byTime orders the two writes (see writeOrder) and keeps the later one for
// last-write-wins, the earlier one for first-write-wins.
func (m *merger) byTime(o, t val, last bool) val {
	c := m.writeOrder(o, t)
	return pick(o, t, (c > 0) == last)
}

// writeOrder is a total order on the two sides' writes at the current path:
// the data's own time field on the nearest enclosing object that has one,
// when both sides have it; then the sides' clocks (wall, logical, agent id);
// then the canonical bytes of the values, an absent value first. It never
// looks at which side is ours, so swapping the sides flips the sign.
func (m *merger) writeOrder(o, t val) int {
	if ot, tt, ok := m.dataTimes(); ok {
		if c := ot.Compare(tt); c != 0 {
			return c
		}
	}
	if c := m.clocks[0].Compare(m.clocks[1]); c != 0 {
		return c
	}
	return bytes.Compare(canonicalVal(o), canonicalVal(t))
}

// dataTimes finds the innermost enclosing depth where either side's object
// carries a modification time; that depth decides, and only when both sides
// have one there. An outer object's time is not used when an inner one exists
// on one side only, because it usually dates a different, older write.
func (m *merger) dataTimes() (ours, theirs time.Time, ok bool) {
	for i := len(m.enclosing) - 1; i >= 0; i-- {
		p := m.enclosing[i]
		ot, oHas := updatedAt(p.ours)
		tt, tHas := updatedAt(p.theirs)
		if oHas || tHas {
			return ot, tt, oHas && tHas
		}
	}
	return time.Time{}, time.Time{}, false
}

// updatedAt reads the time a record says it was last modified, under the
// names seen in the specs, in this order.
func updatedAt(obj map[string]any) (time.Time, bool) {
	return timeField(obj, "updated_at", "UPDATED-AT", "updatedAt", "lastModified")
}

func timeField(obj map[string]any, names ...string) (time.Time, bool) {
	for _, n := range names {
		if s, ok := obj[n].(string); ok {
			if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
				return t, true
			}
		}
	}
	return time.Time{}, false
}

// comparePriority compares the priority of the innermost enclosing depth
// where either side's object has one; ok is false when only one side has it
// or the two cannot be compared (a number against a name).
func (m *merger) comparePriority() (int, bool) {
	for i := len(m.enclosing) - 1; i >= 0; i-- {
		p := m.enclosing[i]
		op, oHas := priorityOf(p.ours)
		tp, tHas := priorityOf(p.theirs)
		if !oHas && !tHas {
			continue
		}
		if !oHas || !tHas {
			return 0, false
		}
		on, oNum := op.(json.Number)
		tn, tNum := tp.(json.Number)
		if oNum && tNum {
			return compareNumbers(string(on), string(tn))
		}
		or, oRank := op.(int)
		tr, tRank := tp.(int)
		if oRank && tRank {
			return cmpInt(or, tr), true
		}
		return 0, false
	}
	return 0, false
}

// priorityOf returns a json.Number or the int rank of a named priority.
func priorityOf(obj map[string]any) (any, bool) {
	for _, n := range [...]string{"priority", "PRIORITY"} {
		switch p := obj[n].(type) {
		case json.Number:
			if _, _, _, ok := parseDecimal(string(p)); ok {
				return p, true
			}
		case string:
			if r, ok := priorityRank(p); ok {
				return r, true
			}
		}
	}
	return nil, false
}

func cmpInt(a, b int) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// compareMax compares two values for the max strategy; ok is false when they
// are not both numbers, both booleans or both strings. Numbers equal in
// value but written differently (1 and 1.0) are ordered by their text so the
// choice does not depend on the side.
func compareMax(o, t val) (int, bool) {
	if !o.ok || !t.ok {
		return 0, false
	}
	switch ov := o.v.(type) {
	case json.Number:
		tv, ok := t.v.(json.Number)
		if !ok {
			return 0, false
		}
		if c, ok := compareNumbers(string(ov), string(tv)); ok && c != 0 {
			return c, true
		}
		return strings.Compare(string(ov), string(tv)), true
	case bool:
		tv, ok := t.v.(bool)
		if !ok {
			return 0, false
		}
		switch {
		case ov == tv:
			return 0, true
		case ov:
			return 1, true
		}
		return -1, true
	case string:
		tv, ok := t.v.(string)
		if !ok {
			return 0, false
		}
		return strings.Compare(ov, tv), true
	}
	return 0, false
}

// conflict records a clash and keeps ours' value so the document stays whole.
// In an array there is no way to leave a hole, so when ours deleted the
// element the other side's element stays until the conflict is resolved;
// this also keeps the indexes of later elements the same whichever side is
// ours.
func (m *merger) conflict(b, o, t val, inArray bool, reason string) val {
	m.conflicts = append(m.conflicts, Conflict{
		Path:          append(make(verbiage.Path, 0, len(m.path)), m.path...),
		Base:          b.v,
		Ours:          o.v,
		Theirs:        t.v,
		BaseMissing:   !b.ok,
		OursMissing:   !o.ok,
		TheirsMissing: !t.ok,
		Reason:        reason,
	})
	if !o.ok && inArray {
		return t
	}
	return o
}

// clashKind describes a clash without naming a side, so the reason reads the
// same whichever side is ours.
func clashKind(o, t val) string {
	switch {
	case !o.ok || !t.ok:
		return "deleted on one side, changed on the other"
	case kind(o.v) != kind(t.v):
		return "type changed: " + kindPair(o, t)
	}
	return "both sides changed the " + kind(o.v) + " differently"
}

func kindPair(o, t val) string {
	a, b := kindOf(o), kindOf(t)
	if a > b {
		a, b = b, a
	}
	if a == b {
		return "two " + a + "s"
	}
	return a + " and " + b
}

func kindOf(v val) string {
	if !v.ok {
		return "deletion"
	}
	return kind(v.v)
}

func kind(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case map[string]any:
		return "object"
	case []any:
		return "array"
	case string:
		return "string"
	case json.Number, float64, float32, int, int64, int32, uint, uint64, uint32:
		return "number"
	case bool:
		return "boolean"
	}
	return "value"
}

// onlyAppended reports whether both arrays are the base array (absent
// counts as empty) with elements added at its end, and nothing else
// changed.
func onlyAppended(b val, oa, ta []any) bool {
	var ba []any
	if b.ok {
		var ok bool
		if ba, ok = b.v.([]any); !ok {
			return false
		}
	}
	extends := func(arr []any) bool {
		if len(arr) < len(ba) {
			return false
		}
		for i := range ba {
			if !equal(ba[i], arr[i]) {
				return false
			}
		}
		return true
	}
	return extends(oa) && extends(ta)
}

func arrays(o, t val) ([]any, []any, bool) {
	if !o.ok || !t.ok {
		return nil, nil, false
	}
	oa, ok1 := o.v.([]any)
	ta, ok2 := t.v.([]any)
	return oa, ta, ok1 && ok2
}

func same(a, b val) bool {
	return a.ok == b.ok && (!a.ok || equal(a.v, b.v))
}

// sameMap reports whether two maps are one and the same, which makes a
// merge of a document with itself cost nothing.
func sameMap(a, b map[string]any) bool {
	return reflect.ValueOf(a).UnsafePointer() == reflect.ValueOf(b).UnsafePointer()
}

// equal compares decoded JSON values. Numbers are equal when their literals
// are: the stored form is canonical text, and 1 and 1.0 are different bytes
// in a file.
func equal(a, b any) bool {
	switch av := a.(type) {
	case nil:
		return b == nil
	case string:
		bv, ok := b.(string)
		return ok && av == bv
	case json.Number:
		bv, ok := b.(json.Number)
		return ok && av == bv
	case bool:
		bv, ok := b.(bool)
		return ok && av == bv
	case map[string]any:
		bv, ok := b.(map[string]any)
		if !ok || len(av) != len(bv) {
			return false
		}
		if sameMap(av, bv) {
			return true
		}
		for k, x := range av {
			y, ok := bv[k]
			if !ok || !equal(x, y) {
				return false
			}
		}
		return true
	case []any:
		bv, ok := b.([]any)
		if !ok || len(av) != len(bv) {
			return false
		}
		for i := range av {
			if !equal(av[i], bv[i]) {
				return false
			}
		}
		return true
	}
	return reflect.DeepEqual(a, b)
}

// canonicalVal is the canonical bytes of a value, empty for an absent one.
func canonicalVal(v val) []byte {
	if !v.ok {
		return nil
	}
	return appendCanonical(nil, v.v)
}

// appendCanonical writes compact JSON with object keys in byte order and
// numbers as their literal: one spelling per value, for tie-breaks and
// element identity.
func appendCanonical(b []byte, v any) []byte {
	switch x := v.(type) {
	case nil:
		return append(b, "null"...)
	case bool:
		return strconv.AppendBool(b, x)
	case json.Number:
		return append(b, x...)
	case string:
		return appendString(b, x)
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		b = append(b, '{')
		for i, k := range keys {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendString(b, k)
			b = append(b, ':')
			b = appendCanonical(b, x[k])
		}
		return append(b, '}')
	case []any:
		b = append(b, '[')
		for i, e := range x {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendCanonical(b, e)
		}
		return append(b, ']')
	}
	enc, err := json.Marshal(v)
	if err != nil {
		return append(b, "null"...)
	}
	return append(b, enc...)
}

func appendString(b []byte, s string) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == '"' || c == '\\':
			b = append(b, '\\', c)
		case c < 0x20:
			b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
		case c < utf8.RuneSelf:
			b = append(b, c)
		default:
			r, size := utf8.DecodeRuneInString(s[i:])
			if r == utf8.RuneError && size == 1 {
				// Not UTF-8 (never the case after decoding); escaped so
				// the bytes stay distinct from a real U+FFFD.
				b = append(b, '\\', 'x', hex[c>>4], hex[c&0xf])
			} else {
				b = append(b, s[i:i+size]...)
			}
			i += size
			continue
		}
		i++
	}
	return append(b, '"')
}

// parseDecimal reads a JSON number literal as sign, significant digits and a
// decimal exponent: the value is 0.DIGITS × 10^exp, digits without leading or
// trailing zeros (empty for zero). Exponents saturate far beyond float64 so
// absurd literals cost nothing and still order correctly against sane ones.
func parseDecimal(s string) (neg bool, digits string, exp int64, ok bool) {
	i := 0
	if i < len(s) && s[i] == '-' {
		neg = true
		i++
	}
	start := i
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	intPart := s[start:i]
	var frac string
	if i < len(s) && s[i] == '.' {
		i++
		fs := i
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
		frac = s[fs:i]
		if frac == "" {
			return false, "", 0, false
		}
	}
	if intPart == "" {
		return false, "", 0, false
	}
	var e10 int64
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		eneg := false
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			eneg = s[i] == '-'
			i++
		}
		es := i
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			if e10 < 1<<40 {
				e10 = e10*10 + int64(s[i]-'0')
			}
			i++
		}
		if i == es {
			return false, "", 0, false
		}
		if eneg {
			e10 = -e10
		}
	}
	if i != len(s) {
		return false, "", 0, false
	}
	all := intPart + frac
	exp = int64(len(intPart)) + e10
	lead := 0
	for lead < len(all) && all[lead] == '0' {
		lead++
	}
	all = all[lead:]
	exp -= int64(lead)
	all = strings.TrimRight(all, "0")
	if all == "" {
		return false, "", 0, true
	}
	return neg, all, exp, true
}

// compareNumbers compares two JSON number literals exactly, however many
// digits they have; ok is false when either is not a number literal.
func compareNumbers(a, b string) (int, bool) {
	an, ad, ae, ok1 := parseDecimal(a)
	bn, bd, be, ok2 := parseDecimal(b)
	if !ok1 || !ok2 {
		return 0, false
	}
	sign := func(neg bool, digits string) int {
		switch {
		case digits == "":
			return 0
		case neg:
			return -1
		}
		return 1
	}
	as, bs := sign(an, ad), sign(bn, bd)
	if as != bs || as == 0 {
		return cmpInt(as, bs), true
	}
	c := 0
	switch {
	case ae < be:
		c = -1
	case ae > be:
		c = 1
	default:
		c = strings.Compare(ad, bd)
	}
	return c * as, true
}
