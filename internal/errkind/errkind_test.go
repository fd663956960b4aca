package errkind

import (
	"errors"
	"io/fs"
	"testing"
)

var errNotFound = errors.New("not found")

func TestErrorf(t *testing.T) {
	for _, tc := range []struct {
		name    string
		err     error
		text    string
		is, not []error
	}{
		{"plain", Errorf(errNotFound, "no store at %s", "/x"), "no store at /x", []error{errNotFound}, []error{fs.ErrExist}},
		{"a cause", Errorf(errNotFound, "branch b: %w", fs.ErrNotExist), "branch b: file does not exist", []error{errNotFound, fs.ErrNotExist}, []error{fs.ErrExist}},
		{"two causes", Errorf(errNotFound, "%w and %w", fs.ErrNotExist, fs.ErrClosed), "file does not exist and file already closed", []error{errNotFound, fs.ErrNotExist, fs.ErrClosed}, nil},
	} {
		if got := tc.err.Error(); got != tc.text {
			t.Errorf("%s: text %q, want %q", tc.name, got, tc.text)
		}
		for _, k := range tc.is {
			if !errors.Is(tc.err, k) {
				t.Errorf("%s: not %v", tc.name, k)
			}
		}
		for _, k := range tc.not {
			if errors.Is(tc.err, k) {
				t.Errorf("%s: is %v", tc.name, k)
			}
		}
	}
}
