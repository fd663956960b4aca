// Package storedir finds a store on disk as git finds a repository: the
// nearest .aiwg/state.git in a directory or its parents, or the nearest git
// clone of a store. The store and aiwg-state-client (which links neither
// the store nor the CLI, so that it starts fast) both find a store through
// it, so the two never disagree.
package storedir

import (
	"os"
	"path/filepath"
	"strings"
)

// Default is where a store lives under a project.
const Default = ".aiwg/state.git"

// Manifest is the store's settings file in its tree, which a git clone of
// the store checks out.
const Manifest = ".aiwg/store.json"

// CloneGitDir reports whether dir is the work tree of a git clone of a
// store (`git clone` of a store checks its manifest out), and its .git.
func CloneGitDir(dir string) (string, bool) {
	gitDir := filepath.Join(dir, ".git")
	if _, err := os.Stat(filepath.Join(gitDir, "HEAD")); err != nil {
		return "", false
	}
	fi, err := os.Stat(filepath.Join(dir, filepath.FromSlash(Manifest)))
	return gitDir, err == nil && fi.Mode().IsRegular()
}

// Resolve is the git directory that dir names as a store: dir itself, or
// the .git of a git clone's work tree.
func Resolve(dir string) string {
	if _, err := os.Stat(filepath.Join(dir, "HEAD")); err != nil {
		if gitDir, ok := CloneGitDir(dir); ok {
			return gitDir
		}
	}
	return dir
}

// Find is the nearest store in dir (an absolute path) or its parents: a
// .aiwg/state.git, or a git clone of a store; "" when there is none.
func Find(dir string) string {
	for {
		cand := filepath.Join(dir, Default)
		if _, err := os.Stat(filepath.Join(cand, "HEAD")); err == nil {
			return cand
		}
		if gitDir, ok := CloneGitDir(dir); ok {
			return gitDir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return ""
		}
		dir = parent
	}
}

// ForArgs is the store a command line names, found as aiwg-state finds
// it: --store, then $AIWG_STATE_STORE, then the nearest store in wd or
// its parents; "" when there is none (aiwg-state then says so).
func ForArgs(args []string, wd string) string {
	dir := ""
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			break
		}
		name, value, hasValue := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if !strings.HasPrefix(a, "-") || name != "store" {
			continue
		}
		if !hasValue {
			if i+1 >= len(args) {
				return ""
			}
			i++
			value = args[i]
		}
		dir = value
	}
	if dir == "" {
		dir = os.Getenv("AIWG_STATE_STORE")
	}
	if dir != "" {
		if !filepath.IsAbs(dir) {
			dir = filepath.Join(wd, dir)
		}
		return Resolve(dir)
	}
	return Find(wd)
}
