// Package sibling finds the programs of the aiwg-state suite from one
// another: `go install ./cmd/...` puts them in one directory, so a program
// looks beside itself first, then on $PATH. It imports only the standard
// library, so the small client can use it too.
package sibling

import (
	"os"
	"path/filepath"
)

// Find returns the path of the executable file name beside this program,
// else in an absolute directory of $PATH (a relative one would depend on
// the working directory); "" when there is none.
func Find(name string) string {
	if self, err := os.Executable(); err == nil {
		if p := filepath.Join(filepath.Dir(self), name); executable(p) {
			return p
		}
	}
	for _, dir := range filepath.SplitList(os.Getenv("PATH")) {
		if p := filepath.Join(dir, name); filepath.IsAbs(dir) && executable(p) {
			return p
		}
	}
	return ""
}

func executable(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0
}
