package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/aiwg/aiwg-state/objects"
	"github.com/aiwg/aiwg-state/store"
)

// value reads a VALUE argument as JSON bytes, honouring --string and "-".
func (s *session) value(arg string) ([]byte, error) {
	data, err := readValue(s.c, arg)
	if err != nil {
		return nil, err
	}
	if s.c.Bool("string") {
		if arg == "-" {
			data = bytes.TrimSuffix(data, []byte("\n"))
		}
		return json.Marshal(string(data))
	}
	return data, nil
}

// printValue prints a read value: canonical JSON as is, a string bare with
// --raw, or with --json an object naming what was read.
func (s *session) printValue(file, key string, v []byte) error {
	if s.json {
		return printJSON(s.out, map[string]any{"file": file, "key": key, "at": s.c.String("at"), "value": json.RawMessage(bytes.TrimSpace(v))})
	}
	if s.c.Bool("raw") {
		var str string
		if json.Unmarshal(v, &str) == nil {
			fmt.Fprintln(s.out, str)
			return nil
		}
	}
	_, err := s.out.Write(v)
	if len(v) > 0 && v[len(v)-1] != '\n' {
		fmt.Fprintln(s.out)
	}
	return err
}

// report prints the outcome of a write.
func (s *session) report(m *store.Mutation, err error) error {
	if errors.Is(err, store.ErrNoChange) {
		if s.json {
			return printJSON(s.out, map[string]any{"no_change": true})
		}
		fmt.Fprintln(s.out, "no change: the store already holds that; no commit written")
		return nil
	}
	if err != nil {
		return err
	}
	return s.done(m, "%s %s %s", shortHash(m.Commit), m.MutationID, m.Subject)
}

// bareTextHint adds to a value's JSON error the two ways to write text,
// when the value given on the command line reads as unquoted text: the
// shell ate the quotes of '"high"', or none were written.
func bareTextHint(err error, arg string) error {
	if err == nil || arg == "-" || !errors.Is(err, objects.ErrInvalidJSON) {
		return err
	}
	r, _ := utf8.DecodeRuneInString(arg)
	if !unicode.IsLetter(r) {
		return err
	}
	if strings.ContainsAny(arg, `'"\`) {
		return fmt.Errorf("%w (text is a JSON string: for this one, use --string)", err)
	}
	return fmt.Errorf("%w (text is a JSON string: '\"%s\"' in the shell, or --string)", err, arg)
}
