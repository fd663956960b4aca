package testutil

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"testing"
)

// DecodeJSON parses data as one JSON value into the form the store's
// documents take in Go (objects as map[string]any, numbers as
// json.Number), with encoding/json: independent of the store's own
// decoder. t fails when data is not one valid JSON value.
func DecodeJSON[T string | []byte](t testing.TB, data T) any {
	t.Helper()
	v, err := TryDecodeJSON([]byte(data))
	if err != nil {
		t.Fatalf("decode %s: %v", data, err)
	}
	return v
}

// TryDecodeJSON is DecodeJSON returning its error, for generated input
// that may not be JSON.
func TryDecodeJSON(data []byte) (any, error) {
	d := json.NewDecoder(bytes.NewReader(data))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		return nil, err
	}
	if _, err := d.Token(); err != io.EOF {
		return nil, errors.New("trailing data after the value")
	}
	return v, nil
}
