package repo

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"syscall"
)

// remoteConfig caches the repository's remote.* configuration as git
// reads it. Every fetch and push looks up its remote's URL, which is every
// agent's every sync: a `git config` process each time would be two processes a
// sync. git answers once; the answer stands while the configuration files
// git reads (the repository's, the user's and the system's) keep their
// inode, size, modification and change times, and the GIT_CONFIG* variables of
// the environment stay as they were. A configuration with include
// directives is asked of git every time: an included file may change
// without any of these.
type remoteConfig struct {
	mu      sync.Mutex
	stamp   string     // what the entries were read under; "" none
	entries []configKV // remote.* keys and values, in git's order
}

type configKV struct {
	key, value string
	noValue    bool // "[remote \"x\"] url" with no '=': git's true
}

// remoteEntries returns the remote.* entries of the configuration.
func (r *Repo) remoteEntries(ctx context.Context) ([]configKV, error) {
	c := &r.remotes
	c.mu.Lock()
	defer c.mu.Unlock()
	stamp, files, cacheable := configStamp(r.dir, os.Environ())
	if cacheable && c.stamp != "" && stamp == c.stamp {
		return c.entries, nil
	}
	// Read again: whether the files include others is read once per
	// version of them.
	for _, f := range files {
		cacheable = cacheable && !mentionsInclude(f)
	}
	out, err := r.git(ctx, nil, "config", "-z", "--get-regexp", `^remote\.`)
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee) && ee.ExitCode() == 1: // no match: no remotes
		out = nil
	case err != nil:
		return nil, err
	}
	entries := parseConfigZ(out)
	c.stamp, c.entries = "", entries
	if cacheable {
		// The stamp was taken before git ran: a change made meanwhile
		// gives the next call another stamp, and it asks again.
		c.stamp = stamp
	}
	return entries, nil
}

// forgetRemotes drops the cached configuration (this process changed it;
// the stamp would tell too, unless the change kept the file's size within
// one tick of its modification time).
func (r *Repo) forgetRemotes() {
	r.remotes.mu.Lock()
	r.remotes.stamp, r.remotes.entries = "", nil
	r.remotes.mu.Unlock()
}

// parseConfigZ reads `git config -z` output: each entry is its key, a
// newline and its value, or the key alone (a key with no value), ended by
// a NUL.
func parseConfigZ(out []byte) []configKV {
	var kvs []configKV
	for _, e := range bytes.Split(out, []byte{0}) {
		if len(e) == 0 {
			continue
		}
		k, v, ok := bytes.Cut(e, []byte{'\n'})
		kvs = append(kvs, configKV{key: string(k), value: string(v), noValue: !ok})
	}
	return kvs
}

// systemConfigs are where git reads its system-wide configuration, as
// distributions (/etc) and installs from source or package managers under
// a prefix build it; without GIT_CONFIG_SYSTEM git reads one of them.
var systemConfigs = []string{"/etc/gitconfig", "/usr/local/etc/gitconfig", "/opt/homebrew/etc/gitconfig"}

// configStamp is the state of what git's configuration of the repository
// at dir is read from: the files' inode, size, modification and change times and
// the variables of env that name or add configuration, and the files of
// them that exist. It is not cacheable when a variable includes a file.
func configStamp(dir string, env []string) (stamp string, exist []string, cacheable bool) {
	var b strings.Builder
	get := map[string]string{}
	var vars []string
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		switch {
		case strings.HasPrefix(k, "GIT_CONFIG"):
			// GIT_CONFIG names a file of its own, which is not watched.
			if k == "GIT_CONFIG" && v != "" || strings.Contains(strings.ToLower(v), "include") {
				return "", nil, false
			}
			vars = append(vars, kv)
		case k == "HOME" || k == "XDG_CONFIG_HOME":
			vars = append(vars, kv)
		}
		get[k] = v
	}
	sort.Strings(vars)
	for _, kv := range vars {
		b.WriteString(kv)
		b.WriteByte(0)
	}
	if _, err := os.Stat(filepath.Join(dir, "commondir")); err == nil {
		return "", nil, false // a worktree's: git reads the common dir's config
	}
	files := []string{filepath.Join(dir, "config"), filepath.Join(dir, "config.worktree")}
	if g := get["GIT_CONFIG_GLOBAL"]; g != "" {
		files = append(files, g)
	} else {
		xdg := get["XDG_CONFIG_HOME"]
		if xdg == "" && get["HOME"] != "" {
			xdg = filepath.Join(get["HOME"], ".config")
		}
		if xdg != "" {
			files = append(files, filepath.Join(xdg, "git", "config"))
		}
		if get["HOME"] != "" {
			files = append(files, filepath.Join(get["HOME"], ".gitconfig"))
		}
	}
	if s := get["GIT_CONFIG_SYSTEM"]; s != "" {
		files = append(files, s)
	} else {
		files = append(files, systemConfigs...)
	}
	for _, f := range files {
		fi, err := os.Stat(f)
		if err != nil {
			fmt.Fprintf(&b, "%s:-\x00", f)
			continue
		}
		// The change time too: unlike the modification time, no one can
		// set it back.
		var ino uint64
		var ctime int64
		if st, ok := fi.Sys().(*syscall.Stat_t); ok {
			ino, ctime = uint64(st.Ino), st.Ctim.Nano()
		}
		fmt.Fprintf(&b, "%s:%d:%d:%d:%d\x00", f, ino, fi.Size(), fi.ModTime().UnixNano(), ctime)
		exist = append(exist, f)
	}
	return b.String(), exist, true
}

// mentionsInclude reports whether a configuration file may hold an
// include or includeIf section (or cannot be read to tell).
func mentionsInclude(path string) bool {
	data, err := os.ReadFile(path)
	if err != nil {
		return true
	}
	return bytes.Contains(bytes.ToLower(data), []byte("include"))
}

// LocalConfig returns the value of a configuration key (as git names it:
// "aiwg.hookTimeout") when the repository's own config file settles what
// `git config --get` would answer, without starting git: the file sets
// the key, with a value, and includes no other file, no per-worktree
// file is read after it, and the environment adds no settings (git reads
// those after the file). ok is false when git must be asked: the key is
// not in the file (another scope may set it), or one of those holds.
func LocalConfig(dir, key string, env []string) (value string, ok bool) {
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		if v != "" && (k == "GIT_CONFIG_PARAMETERS" || k == "GIT_CONFIG_COUNT" || k == "GIT_CONFIG") {
			return "", false
		}
	}
	for _, other := range []string{"config.worktree", "commondir"} {
		if _, err := os.Stat(filepath.Join(dir, other)); err == nil {
			return "", false // a worktree's: git reads more, or another file
		}
	}
	data, err := os.ReadFile(filepath.Join(dir, "config"))
	if err != nil || bytes.IndexByte(data, 0) >= 0 {
		return "", false // git ends a value at a NUL, which this parser keeps
	}
	want := canonicalKey(key)
	found, noValue, include := false, false, false
	err = parseGitConfig(data, func(k, v string, nv bool) {
		switch {
		case strings.HasPrefix(k, "include.") || strings.HasPrefix(k, "includeif."):
			include = true
		case k == want:
			found, value, noValue = true, v, nv
		}
	})
	if err != nil || include || !found || noValue {
		return "", false
	}
	return value, true
}

// canonicalKey is a key as git's parser names it: the section and the
// name in lower case, a subsection as written.
func canonicalKey(key string) string {
	first := strings.IndexByte(key, '.')
	last := strings.LastIndexByte(key, '.')
	if first < 0 {
		return strings.ToLower(key)
	}
	return strings.ToLower(key[:first]) + key[first:last] + strings.ToLower(key[last:])
}
