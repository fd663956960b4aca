package audit

import (
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"strings"

	"github.com/aiwg/aiwg-state/objects"
	"github.com/aiwg/aiwg-state/verbiage"
)

// ErrPredicate: a bisect predicate that does not parse.
var ErrPredicate = errors.New("invalid predicate")

// Predicate is a condition on the state at a commit, as bisect takes it:
//
//	FILE#KEYPATH OP VALUE    OP one of == != < > <= >=, VALUE a JSON literal
//	FILE#KEYPATH exists      the key exists
//	FILE exists              the document exists
//	! PREDICATE              negation
//
// A comparison with a key that does not exist is false (so != "high" means
// "exists and differs"); < > <= >= compare numbers only.
type Predicate struct {
	File  string
	Key   verbiage.Path
	Op    string // "==", "!=", "<", ">", "<=", ">=" or "exists"
	Value any
	Not   bool
}

var predOps = []string{"==", "!=", "<=", ">=", "<", ">"}

// ParsePredicate reads a predicate.
func ParsePredicate(s string) (*Predicate, error) {
	p := &Predicate{}
	s = strings.TrimSpace(s)
	if rest, ok := strings.CutPrefix(s, "!"); ok && !strings.HasPrefix(rest, "=") {
		p.Not = true
		s = strings.TrimSpace(rest)
	}
	target, rest := s, ""
	if i := strings.IndexAny(s, " \t=!<>"); i >= 0 {
		target, rest = s[:i], strings.TrimSpace(s[i:])
	}
	if target == "" {
		return nil, fmt.Errorf("%w: %q: want FILE#KEYPATH OP VALUE", ErrPredicate, s)
	}
	file, key, _ := strings.Cut(target, "#")
	clean, err := verbiage.CleanStorePath(file)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrPredicate, err)
	}
	p.File = clean
	if p.Key, err = verbiage.ParsePath(key); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrPredicate, err)
	}
	for _, seg := range p.Key {
		if seg.Wildcard {
			return nil, fmt.Errorf("%w: wildcards are not supported in predicates", ErrPredicate)
		}
	}
	if rest == "exists" {
		p.Op = "exists"
		return p, nil
	}
	for _, op := range predOps {
		if v, ok := strings.CutPrefix(rest, op); ok {
			p.Op = op
			lit := strings.TrimSpace(v)
			if lit == "" {
				return nil, fmt.Errorf("%w: %q: %s needs a JSON value", ErrPredicate, s, op)
			}
			if p.Value, err = objects.Decode([]byte(lit)); err != nil {
				return nil, fmt.Errorf("%w: value %s is not JSON (quote strings: \"high\")", ErrPredicate, lit)
			}
			if op != "==" && op != "!=" {
				if _, ok := p.Value.(json.Number); !ok {
					return nil, fmt.Errorf("%w: %s compares numbers, got %s", ErrPredicate, op, lit)
				}
			}
			return p, nil
		}
	}
	return nil, fmt.Errorf("%w: %q: want FILE#KEYPATH followed by ==, !=, <, >, <=, >= and a JSON value, or exists", ErrPredicate, s)
}

// String renders the predicate so that ParsePredicate reads it back.
func (p *Predicate) String() string {
	var b strings.Builder
	if p.Not {
		b.WriteString("! ")
	}
	b.WriteString(p.File)
	if len(p.Key) > 0 {
		b.WriteString("#" + p.Key.String())
	}
	b.WriteString(" " + p.Op)
	if p.Op != "exists" {
		v, _ := objects.Encode(p.Value)
		b.WriteString(" " + strings.TrimSpace(string(v)))
	}
	return b.String()
}

// Eval applies the predicate to a document (ok false: it does not exist).
func (p *Predicate) Eval(doc any, ok bool) bool {
	return p.eval(doc, ok) != p.Not
}

func (p *Predicate) eval(doc any, ok bool) bool {
	if !ok {
		return false
	}
	v, err := objects.Get(doc, p.Key)
	if err != nil {
		return false
	}
	switch p.Op {
	case "exists":
		return true
	case "==":
		return objects.Equal(v, p.Value)
	case "!=":
		return !objects.Equal(v, p.Value)
	}
	a, okA := number(v)
	b, okB := number(p.Value)
	if !okA || !okB {
		return false
	}
	c := a.Cmp(b)
	switch p.Op {
	case "<":
		return c < 0
	case ">":
		return c > 0
	case "<=":
		return c <= 0
	case ">=":
		return c >= 0
	}
	return false
}

// number reads a literal exactly enough for comparisons (512 bits of
// mantissa); big.Rat would be exact, but 1e999999999 would make it build a
// billion-digit integer.
func number(v any) (*big.Float, bool) {
	n, ok := v.(json.Number)
	if !ok {
		return nil, false
	}
	f, _, err := big.ParseFloat(string(n), 10, 512, big.ToNearestEven)
	return f, err == nil
}
