package jsondiff

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/aiwg/aiwg-state/internal/testutil"
)

// rfcApply is a strict, deliberately plain RFC 6902 applier (add, remove,
// replace, move) used as a second oracle. evanphx/json-patch v5.9.11 reads
// an empty reference token in the middle of a pointer ("//a") as the parent
// itself rather than the member named "", so documents with "" keys are
// checked against this one instead.
func rfcApply(doc any, patchJSON []byte) (any, error) {
	var ops []struct {
		Op    string          `json:"op"`
		Path  *string         `json:"path"`
		From  *string         `json:"from"`
		Value json.RawMessage `json:"value"`
	}
	if err := json.Unmarshal(patchJSON, &ops); err != nil {
		return nil, err
	}
	for n, op := range ops {
		if op.Path == nil {
			return nil, fmt.Errorf("op %d: no path", n)
		}
		var err error
		switch op.Op {
		case "add", "replace":
			if op.Value == nil {
				return nil, fmt.Errorf("op %d: no value", n)
			}
			var v any
			v, err = testutil.TryDecodeJSON(op.Value)
			if err == nil {
				doc, err = ptrSet(doc, *op.Path, v, op.Op == "replace")
			}
		case "remove":
			doc, _, err = ptrRemove(doc, *op.Path)
		case "move":
			if op.From == nil {
				return nil, fmt.Errorf("op %d: no from", n)
			}
			if strings.HasPrefix(*op.Path, *op.From+"/") {
				return nil, fmt.Errorf("op %d: move into own child", n)
			}
			var v any
			doc, v, err = ptrRemove(doc, *op.From)
			if err == nil {
				doc, err = ptrSet(doc, *op.Path, v, false)
			}
		default:
			err = fmt.Errorf("unsupported op %q", op.Op)
		}
		if err != nil {
			return nil, fmt.Errorf("op %d (%s %s): %w", n, op.Op, *op.Path, err)
		}
	}
	return doc, nil
}

func splitPointer(p string) ([]string, error) {
	if p == "" {
		return nil, nil
	}
	if p[0] != '/' {
		return nil, fmt.Errorf("pointer %q does not start with /", p)
	}
	toks := strings.Split(p[1:], "/")
	for i, t := range toks {
		toks[i] = strings.ReplaceAll(strings.ReplaceAll(t, "~1", "/"), "~0", "~")
	}
	return toks, nil
}

func arrayIndex(tok string, n int, allowEnd bool) (int, error) {
	if allowEnd && tok == "-" {
		return n, nil
	}
	if tok == "" || (len(tok) > 1 && tok[0] == '0') {
		return 0, fmt.Errorf("bad index %q", tok)
	}
	i, err := strconv.Atoi(tok)
	if err != nil || i < 0 || (allowEnd && i > n) || (!allowEnd && i >= n) || tok[0] == '+' {
		return 0, fmt.Errorf("index %q out of range (len %d)", tok, n)
	}
	return i, nil
}

// ptrEdit walks to the parent of the pointer's last token and calls edit on
// it, rebuilding the containers on the way back (arrays change length).
func ptrEdit(doc any, toks []string, edit func(parent any, last string) (any, error)) (any, error) {
	if len(toks) == 1 {
		return edit(doc, toks[0])
	}
	switch t := doc.(type) {
	case map[string]any:
		c, ok := t[toks[0]]
		if !ok {
			return nil, fmt.Errorf("no member %q", toks[0])
		}
		nc, err := ptrEdit(c, toks[1:], edit)
		if err != nil {
			return nil, err
		}
		t[toks[0]] = nc
		return t, nil
	case []any:
		i, err := arrayIndex(toks[0], len(t), false)
		if err != nil {
			return nil, err
		}
		nc, err := ptrEdit(t[i], toks[1:], edit)
		if err != nil {
			return nil, err
		}
		t[i] = nc
		return t, nil
	}
	return nil, fmt.Errorf("cannot descend into %T", doc)
}

func ptrSet(doc any, p string, v any, mustExist bool) (any, error) {
	toks, err := splitPointer(p)
	if err != nil {
		return nil, err
	}
	if len(toks) == 0 {
		return v, nil
	}
	return ptrEdit(doc, toks, func(parent any, last string) (any, error) {
		switch t := parent.(type) {
		case map[string]any:
			if _, ok := t[last]; mustExist && !ok {
				return nil, fmt.Errorf("replace of missing member %q", last)
			}
			t[last] = v
			return t, nil
		case []any:
			if mustExist {
				i, err := arrayIndex(last, len(t), false)
				if err != nil {
					return nil, err
				}
				t[i] = v
				return t, nil
			}
			i, err := arrayIndex(last, len(t), true)
			if err != nil {
				return nil, err
			}
			out := make([]any, 0, len(t)+1)
			out = append(out, t[:i]...)
			out = append(out, v)
			return append(out, t[i:]...), nil
		}
		return nil, fmt.Errorf("cannot set in %T", parent)
	})
}

func ptrRemove(doc any, p string) (any, any, error) {
	toks, err := splitPointer(p)
	if err != nil {
		return nil, nil, err
	}
	if len(toks) == 0 {
		return nil, nil, fmt.Errorf("remove of the root")
	}
	var removed any
	out, err := ptrEdit(doc, toks, func(parent any, last string) (any, error) {
		switch t := parent.(type) {
		case map[string]any:
			v, ok := t[last]
			if !ok {
				return nil, fmt.Errorf("remove of missing member %q", last)
			}
			removed = v
			delete(t, last)
			return t, nil
		case []any:
			i, err := arrayIndex(last, len(t), false)
			if err != nil {
				return nil, err
			}
			removed = t[i]
			out := make([]any, 0, len(t)-1)
			out = append(out, t[:i]...)
			return append(out, t[i+1:]...), nil
		}
		return nil, fmt.Errorf("cannot remove from %T", parent)
	})
	return out, removed, err
}

// hasEmptyKey reports whether any object in v has the member "".
func hasEmptyKey(v any) bool {
	switch t := v.(type) {
	case map[string]any:
		if _, ok := t[""]; ok {
			return true
		}
		for _, c := range t {
			if hasEmptyKey(c) {
				return true
			}
		}
	case []any:
		for _, c := range t {
			if hasEmptyKey(c) {
				return true
			}
		}
	}
	return false
}
