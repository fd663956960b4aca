package repo

// Remotes run through the git CLI, not go-git's transports, on purpose:
//
//   - the git binary speaks every transport users have (ssh with their agent,
//     keys, ~/.ssh/config and known_hosts; smart HTTP(S) with credential
//     helpers; git://; file:// and plain paths) exactly as their own git does;
//     go-git's ssh and credential handling is a known source of friction
//     (git-bug #1156, #934);
//   - git negotiates what the other side has, so an incremental push or fetch
//     sends only the new objects (go-git re-sends history unless it fetched
//     first), and the server alone does the compare-and-swap of its refs;
//   - server-side hooks run where a C git receives the push, which is where
//     the store's validation lives (package hooks).
//
// The store writes its objects as ordinary packs and its refs with git's
// lockfile protocol, so git reads and updates the same repository safely.

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/aiwg/aiwg-state/internal/errkind"
)

var (
	// ErrRejected: the remote refused a pushed ref. A *PushError says which
	// and why; a non-fast-forward also matches ErrStale.
	ErrRejected = errors.New("push rejected")
	// ErrRemote: the remote could not be reached or spoke no git (the
	// transport failed); the message carries git's own explanation.
	ErrRemote = errors.New("remote failed")
)

// Remote is a remote repository configured in the store.
type Remote struct {
	Name string `json:"name"`
	URL  string `json:"url"`
}

// DefaultRemote is the remote used when none is named.
const DefaultRemote = "origin"

// ValidNamePart reports whether s may be one part of a ref name (a remote,
// an agent id, a branch name between slashes) under rules narrower than
// git's: letters, digits, '.', '_' and '-', not starting with '.' or '-',
// no "..", no ".lock" ending. Such a part never reads as a flag, breaks a
// refspec or needs quoting. (Written out rather than as a regular
// expression: a package-level one is compiled in every process's start.)
func ValidNamePart(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		word := c == '_' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
		if !word && (i == 0 || c != '.' && c != '-') {
			return false
		}
	}
	return s != "" && !strings.Contains(s, "..") && !strings.HasSuffix(s, ".lock")
}

// CheckRemoteName refuses names git or a refspec would misread.
func CheckRemoteName(name string) error {
	if !ValidNamePart(name) {
		return fmt.Errorf("%w: remote name %q (letters, digits, '.', '_', '-')", ErrInvalidName, name)
	}
	return nil
}

// Remotes lists the configured remotes, sorted by name.
func (r *Repo) Remotes(ctx context.Context) ([]Remote, error) {
	entries, err := r.remoteEntries(ctx)
	if err != nil {
		return nil, err
	}
	var rs []Remote
	for _, e := range entries {
		if name, ok := remoteKey(e.key, "url"); ok && !e.noValue {
			rs = append(rs, Remote{Name: name, URL: e.value})
		}
	}
	sort.SliceStable(rs, func(i, j int) bool { return rs[i].Name < rs[j].Name })
	return rs, nil
}

// remoteKey returns the remote a key "remote.NAME.<name>" is of.
func remoteKey(key, name string) (string, bool) {
	rest, ok := strings.CutPrefix(key, "remote.")
	if !ok {
		return "", false
	}
	remote, ok := strings.CutSuffix(rest, "."+name)
	return remote, ok && remote != ""
}

// RemoteURL returns a remote's URL.
func (r *Repo) RemoteURL(ctx context.Context, name string) (string, error) {
	rs, err := r.Remotes(ctx)
	if err != nil {
		return "", err
	}
	for _, rm := range rs {
		if rm.Name == name {
			return rm.URL, nil
		}
	}
	return "", &RemoteMissingError{Name: name}
}

// AddRemote configures a remote whose branches are fetched to
// refs/remotes/NAME/*.
func (r *Repo) AddRemote(ctx context.Context, name, rawURL string) error {
	if err := CheckRemoteName(name); err != nil {
		return err
	}
	if rawURL == "" || strings.HasPrefix(rawURL, "-") {
		return fmt.Errorf("%w: remote URL %q", ErrInvalidName, rawURL)
	}
	if _, err := r.RemoteURL(ctx, name); err == nil {
		return fmt.Errorf("remote %q already exists: %w", name, os.ErrExist)
	}
	if localPath(rawURL) && !filepath.IsAbs(rawURL) {
		// As git clone records it: relative to where it was given, not to
		// wherever a later fetch happens to run.
		abs, err := filepath.Abs(rawURL)
		if err != nil {
			return err
		}
		rawURL = abs
	}
	defer r.forgetRemotes()
	if _, err := r.git(ctx, nil, "config", "remote."+name+".url", rawURL); err != nil {
		return err
	}
	_, err := r.git(ctx, nil, "config", "remote."+name+".fetch", "+refs/heads/*:refs/remotes/"+name+"/*")
	return err
}

// localPath reports whether a remote URL is a path on this machine: no
// scheme (file://, https://) and not git's scp-like host:path form, whose
// colon comes before any slash.
func localPath(u string) bool {
	if strings.Contains(u, "://") {
		return false
	}
	colon := strings.IndexByte(u, ':')
	slash := strings.IndexByte(u, '/')
	return colon < 0 || (slash >= 0 && slash < colon)
}

// RemoveRemote drops a remote and its remote-tracking refs.
func (r *Repo) RemoveRemote(ctx context.Context, name string) error {
	if _, err := r.RemoteURL(ctx, name); err != nil {
		return err
	}
	defer r.forgetRemotes()
	_, err := r.git(ctx, nil, "remote", "remove", name)
	return err
}

// RefUpdate is a ref a fetch moved; a zero Old is a new ref.
type RefUpdate struct {
	Ref string        `json:"ref"`
	Old plumbing.Hash `json:"old"`
	New plumbing.Hash `json:"new"`
}

// FetchOptions tune Fetch.
type FetchOptions struct {
	// Refspecs replace the remote's configured ones when set.
	Refspecs []string
	// NoTags fetches no tags, not even those git would follow to the
	// commits fetched (--no-tags): the remote then advertises only the
	// refs the refspecs name (protocol v2 ref prefixes), which keeps an
	// agent's fetch independent of how many refs the server holds. By
	// default every tag of the remote comes along (checkpoints are tags).
	NoTags bool
	// MissingOK drops, rather than fails on, a refspec naming one exact
	// remote ref the remote does not have (an agent's branch before its
	// first push, main on an empty server).
	MissingOK bool
	// Prune drops remote-tracking refs whose branch is gone.
	Prune bool
	// Deepen, in a shallow clone, fetches that many more commits of
	// history below the shallow boundary.
	Deepen int
	// Unshallow fetches all the history a shallow clone lacks.
	Unshallow bool
}

// Fetch fetches from a remote and reports which refs moved.
func (r *Repo) Fetch(ctx context.Context, remote string, opts FetchOptions) ([]RefUpdate, error) {
	rawURL, err := r.RemoteURL(ctx, remote)
	if err != nil {
		return nil, err
	}
	before, err := r.trackedRefs(remote)
	if err != nil {
		return nil, err
	}
	// Not --quiet: it also hides why a ref was rejected ("would clobber
	// existing tag"), leaving only git's exit status to report. No
	// maintenance.auto: the store runs its own maintenance (the pack a
	// fetch adds counts, see packAdded), and git's would start a process
	// at every fetch, which is every agent's every sync.
	args := []string{"-c", "maintenance.auto=false", "fetch", "--no-progress"}
	if opts.NoTags {
		args = append(args, "--no-tags")
	} else {
		args = append(args, "--tags")
	}
	if opts.Prune {
		args = append(args, "--prune")
	}
	if opts.Deepen > 0 || opts.Unshallow {
		if !r.IsShallow() {
			return nil, fmt.Errorf("%w: deepening applies to a shallow clone; this store has all its history", ErrInvalidName)
		}
		if opts.Unshallow {
			args = append(args, "--unshallow")
		} else {
			args = append(args, "--deepen="+strconv.Itoa(opts.Deepen))
		}
	}
	args = append(args, "--", remote)
	refspecs := opts.Refspecs
	if len(refspecs) == 0 {
		// A clone made by git with --single-branch or --depth (which
		// implies it) fetches one branch, or, bare, none at all: sync
		// would never see the branches it merges. Fetch them all, as a
		// store's own clone does (a configured pattern is left alone). A
		// mirror's +refs/*:refs/* would overwrite the store's own
		// branches with the remote's, unpushed writes and all.
		entries, err := r.remoteEntries(ctx)
		if err != nil {
			return nil, err
		}
		pattern, mirror := false, false
		for _, e := range entries {
			if name, ok := remoteKey(e.key, "fetch"); ok && name == remote {
				pattern = pattern || strings.Contains(e.value, "*")
			}
			if name, ok := remoteKey(e.key, "mirror"); ok && name == remote {
				mirror = mirror || gitTrue(e.value)
			}
		}
		if !pattern || mirror {
			refspecs = []string{"+refs/heads/*:refs/remotes/" + remote + "/*"}
		}
	}
	for {
		_, err = r.gitRemote(ctx, rawURL, append(args[:len(args):len(args)], refspecs...)...)
		if err == nil || !opts.MissingOK {
			break
		}
		// git names the first remote ref it could not find; drop that
		// refspec and fetch the rest (one round trip per missing ref,
		// which only a first sync or an empty server meets).
		left := dropMissing(refspecs, err)
		if len(left) == len(refspecs) {
			break
		}
		if refspecs = left; len(refspecs) == 0 {
			err = nil
			break
		}
	}
	r.forgetShallow() // a fetch may deepen a shallow clone, or make one
	if err != nil {
		return nil, err
	}
	after, err := r.trackedRefs(remote)
	if err != nil {
		return nil, err
	}
	var ups []RefUpdate
	for name, h := range after {
		if before[name] != h {
			ups = append(ups, RefUpdate{Ref: name, Old: before[name], New: h})
		}
	}
	for name, h := range before {
		if _, ok := after[name]; !ok {
			ups = append(ups, RefUpdate{Ref: name, Old: h})
		}
	}
	sort.Slice(ups, func(i, j int) bool { return ups[i].Ref < ups[j].Ref })
	if len(ups) > 0 {
		r.packAdded.Store(true) // git fetch may have added a pack
	}
	return ups, nil
}

func (r *Repo) trackedRefs(remote string) (map[string]plumbing.Hash, error) {
	out, _, err := r.Refs("refs/remotes/" + remote + "/")
	if err != nil {
		return nil, err
	}
	tags, _, err := r.Refs("refs/tags/")
	if err != nil {
		return nil, err
	}
	for k, v := range tags {
		out[k] = v
	}
	return out, nil
}

// PushOptions tune Push.
type PushOptions struct {
	// Refspecs to push ("refs/heads/main:refs/heads/main").
	Refspecs []string
	// Tags pushes every tag too.
	Tags bool
	// Atomic asks the server to take all refs or none.
	Atomic bool
}

// PushResult is the server's answer for one ref.
type PushResult struct {
	Src string `json:"src"`
	Dst string `json:"dst"`
	// Status: "ok", "new", "up-to-date", "deleted", "forced" or
	// "rejected".
	Status string `json:"status"`
	// Summary is git's summary of the update ("abc..def", "[rejected]").
	Summary string `json:"summary"`
	// Reason says why a ref was rejected ("non-fast-forward",
	// "pre-receive hook declined").
	Reason string `json:"reason,omitempty"`
}

// PushError is a push the remote refused, in part or in whole.
type PushError struct {
	Remote string
	// Rejected are the refused refs.
	Rejected []PushResult
	// Messages are what the server said ("remote: ..." lines), e.g. why
	// a hook refused.
	Messages []string
}

// NonFastForward reports whether a ref was refused because the remote
// moved on: pull, then push again.
func (e *PushError) NonFastForward() bool {
	for _, r := range e.Rejected {
		if isNonFastForward(r.Reason) {
			return true
		}
	}
	return false
}

// isNonFastForward: the remote moved on. "failed to update ref" is the
// server losing its own compare-and-swap to a push that landed a moment
// earlier (the ref was at another value when it took the lock).
func isNonFastForward(reason string) bool {
	for _, r := range []string{"non-fast-forward", "fetch first", "stale info", "failed to update ref", "cannot lock ref"} {
		if strings.Contains(reason, r) {
			return true
		}
	}
	return false
}

func (e *PushError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "push to %s rejected:", e.Remote)
	for _, r := range e.Rejected {
		fmt.Fprintf(&b, " %s (%s)", r.Dst, r.Reason)
	}
	if e.NonFastForward() {
		b.WriteString("; the remote has commits this store does not: pull, then push again")
	}
	for i, m := range e.Messages {
		if i == 0 {
			b.WriteString("; the server said: ")
		} else {
			b.WriteString("; ")
		}
		// A server running aiwg-state's hook prefixes its lines as a
		// local command would; here they are the server's words.
		b.WriteString(strings.TrimPrefix(m, "aiwg-state: "))
	}
	return b.String()
}

// Unwrap lets a non-fast-forward match ErrStale (a concurrent update, as a
// failed compare-and-swap is locally).
func (e *PushError) Unwrap() []error {
	if e.NonFastForward() {
		return []error{ErrRejected, ErrStale}
	}
	return []error{ErrRejected}
}

// Push pushes refspecs to a remote. The server compares and swaps each ref
// itself; a ref it refuses makes the result a *PushError, with the other
// refs' outcomes in the returned results.
func (r *Repo) Push(ctx context.Context, remote string, opts PushOptions) ([]PushResult, error) {
	rawURL, err := r.RemoteURL(ctx, remote)
	if err != nil {
		return nil, err
	}
	// A clone made with git clone --mirror pushes every ref (and deletes
	// what the store lacks) whatever is asked: push only what is.
	args := []string{"-c", "remote." + remote + ".mirror=false", "push", "--porcelain"}
	if opts.Tags {
		args = append(args, "--tags")
	}
	if opts.Atomic {
		args = append(args, "--atomic")
	}
	args = append(args, "--", remote)
	args = append(args, opts.Refspecs...)
	stdout, stderr, runErr := r.gitRaw(ctx, args...)
	results := parsePorcelain(stdout)
	perr := &PushError{Remote: remote, Messages: remoteMessages(stderr, rawURL)}
	for _, res := range results {
		if res.Status == "rejected" {
			perr.Rejected = append(perr.Rejected, res)
		}
	}
	if len(perr.Rejected) > 0 {
		return results, perr
	}
	if runErr != nil {
		return results, transportError(runErr, stderr, rawURL)
	}
	return results, nil
}

// parsePorcelain reads `git push --porcelain`: one line per ref,
// "<flag>\t<src>:<dst>\t<summary> (<reason>)".
func parsePorcelain(out []byte) []PushResult {
	var res []PushResult
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		f := strings.SplitN(sc.Text(), "\t", 3)
		if len(f) != 3 || len(f[0]) != 1 {
			continue
		}
		src, dst, _ := strings.Cut(f[1], ":")
		summary, reason := f[2], ""
		if i := strings.Index(summary, " ("); i >= 0 && strings.HasSuffix(summary, ")") {
			summary, reason = summary[:i], summary[i+2:len(summary)-1]
		}
		status := map[byte]string{' ': "ok", '*': "new", '=': "up-to-date", '-': "deleted", '+': "forced", '!': "rejected"}[f[0][0]]
		res = append(res, PushResult{Src: src, Dst: dst, Status: status, Summary: summary, Reason: reason})
	}
	return res
}

// remoteMessages keeps the lines the server sent ("remote: ..."), which is
// where a hook says why it refused.
func remoteMessages(stderr []byte, rawURL string) []string {
	var out []string
	for _, line := range strings.Split(string(stderr), "\n") {
		if msg, ok := strings.CutPrefix(line, "remote: "); ok {
			if msg = strings.TrimSpace(msg); msg != "" {
				out = append(out, redact(msg, rawURL))
			}
		}
	}
	return out
}

// CloneOptions tune Clone.
type CloneOptions struct {
	// Remote names the remote the clone comes from (default "origin").
	Remote string
	// Repo options for the opened clone.
	Repo Options
	// Filter makes a partial clone (git clone --filter: "blob:none",
	// "tree:0", "blob:limit=1m"): objects it leaves out are fetched from
	// the remote when first read. The server must allow filters
	// (uploadpack.allowFilter).
	Filter string
	// Depth makes a shallow clone of that many commits of each branch
	// (git clone --depth --no-single-branch).
	Depth int
}

// Clone makes a new store at dir from url: a bare repository with every
// branch and tag of the remote as local branches and tags, the remote's
// branches also as refs/remotes/<remote>/*, and HEAD where the remote's is.
func Clone(ctx context.Context, rawURL, dir string, opts CloneOptions) (*Repo, error) {
	remote := opts.Remote
	if remote == "" {
		remote = DefaultRemote
	}
	if err := CheckRemoteName(remote); err != nil {
		return nil, err
	}
	if _, err := os.Stat(dir); err == nil {
		return nil, fmt.Errorf("clone into %s: %w", dir, os.ErrExist)
	}
	// gc.auto=0 as Init does: the store runs its own maintenance.
	args := []string{"clone", "--bare", "--quiet", "--origin", remote,
		"-c", "remote." + remote + ".fetch=+refs/heads/*:refs/remotes/" + remote + "/*",
		"-c", "gc.auto=0"}
	if opts.Filter != "" {
		if strings.HasPrefix(opts.Filter, "-") || strings.ContainsAny(opts.Filter, " \t\n") {
			return nil, fmt.Errorf("%w: clone filter %q (blob:none, tree:0, blob:limit=SIZE)", ErrInvalidName, opts.Filter)
		}
		args = append(args, "--filter="+opts.Filter)
	}
	if opts.Depth < 0 {
		return nil, fmt.Errorf("%w: clone depth %d", ErrInvalidName, opts.Depth)
	}
	if opts.Depth > 0 {
		// Every branch, as a full clone has: agents branch from main
		// and sync their own branches.
		args = append(args, "--depth="+strconv.Itoa(opts.Depth), "--no-single-branch")
	}
	args = append(args, "--", rawURL, dir)
	cmd := gitCommand(ctx, "", args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		return nil, transportError(err, stderr.Bytes(), rawURL)
	}
	r, err := Open(ctx, dir, opts.Repo)
	if err != nil {
		return nil, err
	}
	// A server whose HEAD names a branch it does not have (a bare
	// repository created with another default branch) leaves the clone's
	// HEAD dangling: put it on main when there is one.
	if head, err := r.Head(); err == nil {
		if _, err := r.Ref(head); errors.Is(err, ErrNotFound) {
			if _, err := r.Ref("refs/heads/main"); err == nil {
				if err := r.SetHead(ctx, "refs/heads/main"); err != nil {
					r.Close()
					return nil, err
				}
			}
		}
	}
	return r, nil
}

// git runs a git command on the repository and returns its standard output.
func (r *Repo) git(ctx context.Context, stdin []byte, args ...string) ([]byte, error) {
	cmd := gitCommand(ctx, r.dir, args...)
	if stdin != nil {
		cmd.Stdin = bytes.NewReader(stdin)
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) && ee.ExitCode() == 1 && stderr.Len() == 0 {
			return nil, err // "no match" of git config; callers check
		}
		return nil, fmt.Errorf("git %s: %s: %w", args[0], oneLine(stderr.String()), err)
	}
	return stdout.Bytes(), nil
}

// gitRemote runs a command that talks to a remote; failures are ErrRemote
// with the credentials of the URL blanked out.
func (r *Repo) gitRemote(ctx context.Context, rawURL string, args ...string) ([]byte, error) {
	stdout, stderr, err := r.gitRaw(ctx, args...)
	if ctx.Err() != nil {
		return stdout, ctx.Err()
	}
	if err != nil {
		return stdout, transportError(err, stderr, rawURL)
	}
	return stdout, nil
}

func (r *Repo) gitRaw(ctx context.Context, args ...string) ([]byte, []byte, error) {
	cmd := gitCommand(ctx, r.dir, args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	return stdout.Bytes(), stderr.Bytes(), err
}

func transportError(err error, stderr []byte, rawURL string) error {
	// git's own account of the failure, without the lines that report
	// what went well ("From ...", "* [new branch] ...").
	var why []string
	for _, l := range strings.Split(string(stderr), "\n") {
		l = strings.TrimSpace(l)
		if strings.HasPrefix(l, "fatal:") || strings.HasPrefix(l, "error:") || strings.HasPrefix(l, "! ") {
			why = append(why, l)
		}
	}
	msg := oneLine(redact(strings.Join(why, "; "), rawURL))
	if msg == "" {
		msg = oneLine(redact(string(stderr), rawURL))
	}
	if msg == "" {
		msg = err.Error()
	}
	// (git daemon says "no such repository" with --informative-errors,
	// else "access denied or repository not exported", which covers a
	// missing one too; a host's ssh server may say "ERROR: Repository not
	// found." before git's own "fatal: Could not read from remote
	// repository", which an ssh refusal ends with too.)
	hostSays := strings.Contains(strings.ToLower(string(stderr)), "repository not found")
	for _, gone := range []string{"does not exist", "not found", "not appear to be a git repository", "no such repository", "repository not exported"} {
		if strings.Contains(msg, gone) || hostSays {
			// The address names nothing: a mistyped URL or path is the
			// user's to fix (exit 3), not a failure of the transfer.
			return errkind.Errorf(ErrNotFound, "%w: %s", ErrRemote, msg)
		}
	}
	return fmt.Errorf("%w: %s", ErrRemote, msg)
}

// gitCommand builds a git command on gitDir ("" for none). The environment
// is cleaned of what would point git at another repository (as when
// aiwg-state runs inside some other repository's hook), and git never asks
// for a password on a terminal: agents run unattended, and credential
// helpers and ssh agents still work.
func gitCommand(ctx context.Context, gitDir string, args ...string) *exec.Cmd {
	full := args
	if gitDir != "" {
		full = append([]string{"--git-dir", gitDir}, args...)
	}
	cmd := exec.CommandContext(ctx, "git", full...)
	env := make([]string, 0, len(os.Environ())+2)
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		switch k {
		case "GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_OBJECT_DIRECTORY",
			"GIT_ALTERNATE_OBJECT_DIRECTORIES", "GIT_QUARANTINE_PATH", "GIT_NAMESPACE", "GIT_COMMON_DIR":
			continue
		}
		env = append(env, kv)
	}
	// Replace refs off: git reads objects as this package does, as they
	// are written, not as refs/replace/ substitutes them.
	cmd.Env = append(env, "GIT_TERMINAL_PROMPT=0", "LC_ALL=C", "GIT_NO_REPLACE_OBJECTS=1")
	return cmd
}

// redact blanks the password of a URL wherever it appears in s, and any
// user:password@ in URLs git may print, so tokens never reach logs.
func redact(s, rawURL string) string {
	if u, err := url.Parse(rawURL); err == nil && u.User != nil {
		if pw, ok := u.User.Password(); ok && pw != "" {
			s = strings.ReplaceAll(s, pw, "xxxxx")
		} else if name := u.User.Username(); name != "" && (u.Scheme == "http" || u.Scheme == "https") {
			// A token alone in the user part (https://TOKEN@host).
			s = strings.ReplaceAll(s, name+"@", "xxxxx@")
		}
	}
	// Any user:password@ left, in a URL inside the message.
	return regexp.MustCompile(`://[^/@\s:]+:[^/@\s]+@`).ReplaceAllString(s, "://xxxxx@")
}

// RedactURL is a URL fit for messages: its credentials blanked out.
func RedactURL(rawURL string) string { return redact(rawURL, rawURL) }
