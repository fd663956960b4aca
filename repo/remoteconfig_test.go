package repo

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"
)

// countGitConfig puts a git on $PATH that counts its `config` runs and
// hands every command to the real git; it returns the count so far.
func countGitConfig(t *testing.T) func() int {
	t.Helper()
	real, err := exec.LookPath("git")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	log := filepath.Join(dir, "log")
	script := "#!/bin/sh\nfor a; do [ \"$a\" = config ] && echo >>'" + log + "' && break; done\nexec '" + real + "' \"$@\"\n"
	if err := os.WriteFile(filepath.Join(dir, "git"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", dir+string(os.PathListSeparator)+os.Getenv("PATH"))
	return func() int {
		data, _ := os.ReadFile(log)
		return strings.Count(string(data), "\n")
	}
}

// gitRemotes is git's own list of the remotes' URLs.
func gitRemotes(t *testing.T, dir string) []Remote {
	t.Helper()
	out, err := exec.Command("git", "--git-dir", dir, "config", "-z", "--get-regexp", `^remote\..*\.url$`).Output()
	if err != nil {
		if ee, ok := err.(*exec.ExitError); ok && ee.ExitCode() == 1 {
			return nil
		}
		t.Fatal(err)
	}
	var rs []Remote
	for _, e := range strings.Split(string(out), "\x00") {
		k, v, ok := strings.Cut(e, "\n")
		if !ok {
			continue
		}
		rs = append(rs, Remote{Name: strings.TrimSuffix(strings.TrimPrefix(k, "remote."), ".url"), URL: v})
	}
	sort.SliceStable(rs, func(i, j int) bool { return rs[i].Name < rs[j].Name })
	return rs
}

func sameRemotes(t *testing.T, r *Repo, what string) {
	t.Helper()
	got, err := r.Remotes(context.Background())
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	if want := gitRemotes(t, r.Dir()); !reflect.DeepEqual(got, want) {
		t.Fatalf("%s: Remotes = %q, git says %q", what, got, want)
	}
}

func appendConfig(t *testing.T, path, text string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY|os.O_CREATE, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString(text); err != nil {
		t.Fatal(err)
	}
}

// TestRemotesAsGitReadsThem: the remotes are git's reading of the
// configuration, whoever changes it, with git asked once per version of
// the files rather than at every look-up.
func TestRemotesAsGitReadsThem(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("XDG_CONFIG_HOME", "")
	count := countGitConfig(t)
	ctx := context.Background()
	r := newRepo(t)
	sameRemotes(t, r, "no remote")

	// Several remotes, quoted and escaped values, an old-style section,
	// a remote whose name has a dot, a url with no value (not a remote).
	appendConfig(t, filepath.Join(r.Dir(), "config"), `[remote "origin"]
	url = "git://example.org/a b.git" ; a comment
	fetch = +refs/heads/*:refs/remotes/origin/*
[remote "Up.Stream"]
	url = /srv/with\"quote.git
[remote "none"]
	url
[remote "two"]
	url = https://one.example/x.git
	url = https://two.example/x.git
`)
	sameRemotes(t, r, "several remotes")
	if u, err := r.RemoteURL(ctx, "two"); err != nil || u != "https://one.example/x.git" {
		t.Fatalf("RemoteURL(two) = %q, %v: want git's first", u, err)
	}
	n := count()
	for i := 0; i < 5; i++ {
		sameRemotes(t, r, "again")
	}
	if got := count() - n; got != 5 { // gitRemotes' own, none of Remotes'
		t.Fatalf("%d git config runs for 5 look-ups of an unchanged config and git's own 5", got)
	}

	// Another process changes the config: the next look-up sees it.
	git(t, r.Dir(), "config", "--remove-section", "remote.none")
	sameRemotes(t, r, "a section removed by git")
	git(t, r.Dir(), "config", "remote.late.url", "/srv/late.git")
	sameRemotes(t, r, "a remote added by git")
	git(t, r.Dir(), "remote", "remove", "origin")
	sameRemotes(t, r, "a remote removed by git")
	if err := r.AddRemote(ctx, "mine", "/srv/mine.git"); err != nil {
		t.Fatal(err)
	}
	sameRemotes(t, r, "a remote added here")

	// The user's configuration counts too, as in git.
	appendConfig(t, filepath.Join(home, ".gitconfig"), "[remote \"global\"]\n\turl = /srv/global.git\n")
	sameRemotes(t, r, "a remote in ~/.gitconfig")
	t.Setenv("GIT_CONFIG_COUNT", "1")
	t.Setenv("GIT_CONFIG_KEY_0", "remote.env.url")
	t.Setenv("GIT_CONFIG_VALUE_0", "/srv/env.git")
	sameRemotes(t, r, "a remote in the environment")
	t.Setenv("GIT_CONFIG_VALUE_0", "/srv/env2.git")
	sameRemotes(t, r, "a remote changed in the environment")
}

// TestRemotesThroughIncludes: a configuration that includes another file
// is read by git at every look-up, since the included file may change
// alone.
func TestRemotesThroughIncludes(t *testing.T) {
	t.Setenv("HOME", t.TempDir())
	count := countGitConfig(t)
	r := newRepo(t)
	inc := filepath.Join(t.TempDir(), "remotes.inc")
	appendConfig(t, inc, "[remote \"inc\"]\n\turl = /srv/one.git\n")
	appendConfig(t, filepath.Join(r.Dir(), "config"), "[includeIf \"gitdir:/\"]\n\tpath = "+inc+"\n")
	sameRemotes(t, r, "an included remote")
	// Same size, same modification time: only git's reading tells.
	fi, _ := os.Stat(inc)
	if err := os.WriteFile(inc, []byte("[remote \"inc\"]\n\turl = /srv/two.git\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	os.Chtimes(inc, fi.ModTime(), fi.ModTime())
	n := count()
	sameRemotes(t, r, "an included remote changed")
	if got, _ := r.RemoteURL(context.Background(), "inc"); got != "/srv/two.git" {
		t.Fatalf("included remote = %q", got)
	}
	if got := count() - n; got != 3 {
		t.Fatalf("%d git config runs for 2 look-ups through an include and git's own one", got)
	}
}

// TestFetchPushAskOnce: a sync's fetch and push ask git
// for the configuration once between them.
func TestFetchPushAskOnce(t *testing.T) {
	ctx := context.Background()
	t.Setenv("HOME", t.TempDir())
	root := t.TempDir()
	server := filepath.Join(root, "s.git")
	git(t, "", "init", "-q", "--bare", server)
	r := newRepo(t)
	write(t, r, map[string]string{"a.json": "1\n"})
	if err := r.AddRemote(ctx, "origin", server); err != nil {
		t.Fatal(err)
	}
	count := countGitConfig(t)
	for i := 0; i < 3; i++ {
		if _, err := r.Fetch(ctx, "origin", FetchOptions{}); err != nil {
			t.Fatal(err)
		}
		if _, err := r.Push(ctx, "origin", PushOptions{Refspecs: []string{"refs/heads/main:refs/heads/main"}}); err != nil {
			t.Fatal(err)
		}
	}
	if got := count(); got != 1 {
		t.Fatalf("%d git config runs for 3 fetches and pushes", got)
	}
}

// TestRemotesSeeAnInPlaceRewrite: a config file rewritten in place to the
// same size, its modification time set back, still reads anew (its change
// time moved), so a long-running process never fetches by a URL or a
// mirror setting that is gone.
func TestRemotesSeeAnInPlaceRewrite(t *testing.T) {
	ctx := context.Background()
	t.Setenv("HOME", t.TempDir())
	r := newRepo(t)
	if err := r.AddRemote(ctx, "origin", "https://a.example/x"); err != nil {
		t.Fatal(err)
	}
	if u, err := r.RemoteURL(ctx, "origin"); err != nil || u != "https://a.example/x" {
		t.Fatalf("RemoteURL = %q, %v", u, err)
	}
	cfg := filepath.Join(r.Dir(), "config")
	fi, err := os.Stat(cfg)
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(cfg)
	if err != nil {
		t.Fatal(err)
	}
	data = []byte(strings.Replace(string(data), "https://a.example/x", "https://b.example/x", 1))
	if err := os.WriteFile(cfg, data, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(cfg, fi.ModTime(), fi.ModTime()); err != nil {
		t.Fatal(err)
	}
	if u, err := r.RemoteURL(ctx, "origin"); err != nil || u != "https://b.example/x" {
		t.Fatalf("after the rewrite RemoteURL = %q, %v", u, err)
	}
}

func FuzzParseConfigZ(f *testing.F) {
	f.Add([]byte("remote.a.url\n/srv/a.git\x00remote.a.mirror\x00"))
	f.Add([]byte("remote.a.url\nline\nbreak\x00\x00"))
	f.Fuzz(func(t *testing.T, out []byte) {
		kvs := parseConfigZ(out)
		var b strings.Builder
		for _, kv := range kvs {
			if kv.key == "" && kv.noValue {
				t.Fatalf("an empty entry: %q", out)
			}
			b.WriteString(kv.key)
			if !kv.noValue {
				b.WriteString("\n" + kv.value)
			}
			b.WriteString("\x00")
		}
		if again := parseConfigZ([]byte(b.String())); !reflect.DeepEqual(again, kvs) {
			t.Fatalf("%q reads as %+v, written back as %+v", out, kvs, again)
		}
	})
}

// TestLocalConfigAsGit: where LocalConfig answers, it answers as `git
// config --get` does; where the file alone cannot settle it, it does not.
func TestLocalConfigAsGit(t *testing.T) {
	t.Setenv("HOME", t.TempDir())
	for _, tt := range []struct {
		name, text, key string
		ok              bool
	}{
		{"plain", "[aiwg]\n\thookTimeout = 90s\n", "aiwg.hookTimeout", true},
		{"case and comments", "[AIWG]\n\tHOOKTIMEOUT = \"10m\" ; ten\n", "aiwg.hookTimeout", true},
		{"the last value", "[aiwg]\n\thookTimeout = 1m\n[aiwg]\n\thookTimeout = 2m\n", "aiwg.hookTimeout", true},
		{"a subsection", "[remote \"Up\"]\n\turl = /srv/a\n", "remote.Up.url", true},
		{"another subsection's case", "[remote \"Up\"]\n\turl = /srv/a\n", "remote.up.url", false},
		{"not set", "[core]\n\tbare = true\n", "aiwg.hookTimeout", false},
		{"no value", "[aiwg]\n\thookTimeout\n", "aiwg.hookTimeout", false},
		{"an include", "[aiwg]\n\thookTimeout = 1m\n[include]\n\tpath = /nonexistent\n", "aiwg.hookTimeout", false},
		{"an includeIf", "[includeIf \"gitdir:/\"]\n\tpath = /nonexistent\n[aiwg]\n\thookTimeout = 1m\n", "aiwg.hookTimeout", false},
		// git ends the value at the NUL; the file is left to git.
		{"a NUL in a value", "[aiwg]\n\tpusherVariable = REMOTE_USER\x00X\n", "aiwg.pusherVariable", false},
		// git refuses the file: so must the answer.
		{"a subsection on the next line", "[aiwg\n\"x\"]\n\tpusherVariable = A\n[aiwg]\n\tpusherVariable = B\n", "aiwg.pusherVariable", false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "s.git")
			git(t, "", "init", "-q", "--bare", dir)
			appendConfig(t, filepath.Join(dir, "config"), tt.text)
			v, ok := LocalConfig(dir, tt.key, os.Environ())
			if ok != tt.ok {
				t.Fatalf("LocalConfig = %q, %v", v, ok)
			}
			if ok {
				if want := strings.TrimSuffix(git(t, dir, "config", "--get", tt.key), "\n"); v != want {
					t.Fatalf("LocalConfig = %q, git says %q", v, want)
				}
			}
		})
	}
	dir := filepath.Join(t.TempDir(), "s.git")
	git(t, "", "init", "-q", "--bare", dir)
	appendConfig(t, filepath.Join(dir, "config"), "[aiwg]\n\thookTimeout = 1m\n")
	// Settings of the environment come after the file.
	if v, ok := LocalConfig(dir, "aiwg.hookTimeout", append(os.Environ(), "GIT_CONFIG_COUNT=1", "GIT_CONFIG_KEY_0=aiwg.hookTimeout", "GIT_CONFIG_VALUE_0=2m")); ok {
		t.Fatalf("LocalConfig under GIT_CONFIG_COUNT = %q", v)
	}
	if v, ok := LocalConfig(dir, "aiwg.hookTimeout", append(os.Environ(), "GIT_CONFIG_PARAMETERS='aiwg.hooktimeout'='2m'")); ok {
		t.Fatalf("LocalConfig under GIT_CONFIG_PARAMETERS = %q", v)
	}
	// A worktree's git dir names its common dir, whose config git reads.
	common := filepath.Join(t.TempDir(), "wt")
	if err := os.MkdirAll(common, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "commondir"), []byte(common+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if v, ok := LocalConfig(dir, "aiwg.hookTimeout", os.Environ()); ok {
		t.Fatalf("LocalConfig beside commondir = %q", v)
	}
	os.Remove(filepath.Join(dir, "commondir"))
	// So does a per-worktree file.
	appendConfig(t, filepath.Join(dir, "config.worktree"), "[aiwg]\n\thookTimeout = 3m\n")
	if v, ok := LocalConfig(dir, "aiwg.hookTimeout", os.Environ()); ok {
		t.Fatalf("LocalConfig beside config.worktree = %q", v)
	}
}
