package sysfile

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
)

func TestReadWriteRename(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "f")
	for _, size := range []int{0, 1, 511, 512, 513, 70000} {
		data := bytes.Repeat([]byte{'x'}, size)
		os.Remove(p)
		if err := WriteNew(p, 0o444, true, true, data[:size/2], data[size/2:]); err != nil {
			t.Fatal(err)
		}
		if fi, err := os.Stat(p); err != nil || fi.Mode().Perm() != 0o444 {
			t.Fatalf("mode %v %v", fi.Mode(), err)
		}
		for _, room := range []int{0, 100} {
			got, err := ReadFile(p, room)
			if err != nil || !bytes.Equal(got, data) {
				t.Fatalf("%d bytes, room %d: read %d, %v", size, room, len(got), err)
			}
			if cap(got)-len(got) < room {
				t.Fatalf("%d bytes: room %d, want %d", size, cap(got)-len(got), room)
			}
		}
	}
	// Errors read as the os package's do.
	if err := WriteNew(p, 0o644, false, false); !errors.Is(err, fs.ErrExist) {
		t.Errorf("creating an existing file: %v", err)
	}
	if _, err := ReadFile(filepath.Join(dir, "missing"), 0); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("reading a missing file: %v", err)
	}
	if _, err := ReadFile(dir, 0); err == nil {
		t.Error("read a directory")
	}
	if err := Rename(p, filepath.Join(dir, "g")); err != nil {
		t.Fatal(err)
	}
	if err := Rename(p, filepath.Join(dir, "g")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("renaming a missing file: %v", err)
	}
	f, err := OpenFile(filepath.Join(dir, "log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	f.Write([]byte("a"))
	f.Close()
	f, _ = OpenFile(filepath.Join(dir, "log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	f.Write([]byte("b"))
	f.Close()
	if got, _ := os.ReadFile(filepath.Join(dir, "log")); string(got) != "ab" {
		t.Errorf("appended %q", got)
	}
}
