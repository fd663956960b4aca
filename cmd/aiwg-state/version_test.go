package main

import (
	"bytes"
	"os/exec"
	"strings"
	"testing"
)

// TestVersion: --version prints one line naming the binary and its
// version, exit 0, in-process and from the built binary (which carries
// the module's build information).
func TestVersion(t *testing.T) {
	var o, e bytes.Buffer
	if code := run([]string{"aiwg-state", "--version"}, strings.NewReader(""), &o, &e); code != 0 || !strings.HasPrefix(o.String(), "aiwg-state version ") || e.Len() != 0 {
		t.Fatalf("--version: exit %d, stdout %q, stderr %q", code, o.String(), e.String())
	}
	out, err := exec.Command(bin, "--version").Output()
	if err != nil || !strings.HasPrefix(string(out), "aiwg-state version ") || strings.Count(string(out), "\n") != 1 {
		t.Fatalf("%s --version: %v: %q", bin, err, out)
	}
	o.Reset()
	if code := run([]string{"aiwg-state", "--help"}, strings.NewReader(""), &o, &e); code != 0 || !strings.Contains(o.String(), "--version") {
		t.Fatalf("--help does not list --version: %s", o.String())
	}
}
