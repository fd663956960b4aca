package store

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/aiwg/aiwg-state/objects"
)

// ReadOps parses JSON Lines of operations, as apply takes them: one Op
// object a line, read as strictly as a value of Set (no duplicate keys,
// nothing after the object, no unknown field); blank lines and lines
// starting with # are skipped. Any bad line fails the whole input, with
// its line number, so nothing is applied.
func ReadOps(r io.Reader) ([]Op, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	var ops []Op
	n := 0
	for sc.Scan() {
		n++
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 || line[0] == '#' {
			continue
		}
		op, err := parseOpLine(line)
		if err != nil {
			return nil, fmt.Errorf("line %d: %w", n, err)
		}
		ops = append(ops, op)
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if len(ops) == 0 {
		return nil, fmt.Errorf("%w: no operations in the input", ErrUsage)
	}
	return ops, nil
}

// parseOpLine reads one operation: strict JSON (the checks of set and put:
// no duplicate keys, nothing after the object), then its fields by name.
func parseOpLine(line []byte) (Op, error) {
	var op Op
	v, err := objects.Decode(line)
	var se *objects.SyntaxError
	if errors.As(err, &se) {
		return op, fmt.Errorf("%w: column %d: %s", objects.ErrInvalidJSON, se.Column, se.Msg)
	}
	if err != nil {
		return op, err
	}
	m, ok := v.(map[string]any)
	if !ok {
		return op, fmt.Errorf("%w: an operation is a JSON object, not %s", objects.ErrInvalidJSON, objects.KindOf(v))
	}
	if p, given := m["path"]; given && (p == nil || p == "") {
		// As an empty KEYPATH argument: most likely a variable that was
		// not set, and it would replace or delete the whole document.
		return op, fmt.Errorf("%w: \"path\" is empty (leave it out to act on the whole document)", ErrUsage)
	}
	dec := json.NewDecoder(bytes.NewReader(line))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&op); err != nil {
		var te *json.UnmarshalTypeError
		switch {
		case errors.As(err, &te):
			want := "a string"
			if te.Field == "if_absent" {
				want = "true or false"
			}
			return op, fmt.Errorf("%w: %q must be %s", objects.ErrInvalidJSON, te.Field, want)
		case strings.HasPrefix(err.Error(), "json: unknown field "):
			return op, fmt.Errorf("%w: unknown field %s (an operation has op, file, path, value, to, if_absent and ttl)", objects.ErrInvalidJSON, strings.TrimPrefix(err.Error(), "json: unknown field "))
		}
		return op, fmt.Errorf("%w: %v", objects.ErrInvalidJSON, err)
	}
	return op, nil
}
