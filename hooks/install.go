package hooks

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/aiwg/aiwg-state/internal/errkind"
	"github.com/aiwg/aiwg-state/repo"
)

// ErrHookExists: the repository already has a hook aiwg-state did not write.
var ErrHookExists = errors.New("a hook is already installed")

// hookMarker identifies the hooks Install writes, so a re-install replaces
// its own hook and never someone else's.
const hookMarker = "# installed by aiwg-state hooks install --server"

// InstallOptions tune Install.
type InstallOptions struct {
	// Binary is the aiwg-state executable the hook runs (absolute path).
	Binary string
	// Force replaces a pre-receive hook aiwg-state did not write.
	Force bool
}

// Install writes the pre-receive hook into the bare repository at gitDir,
// and sets its git configuration so that git checks every pushed object
// as git fsck --strict does (receive.fsckObjects).
func Install(gitDir string, opts InstallOptions) (string, error) {
	if fi, err := os.Stat(filepath.Join(gitDir, "objects")); err != nil || !fi.IsDir() {
		return "", errkind.Errorf(repo.ErrNotStore, "%s is not a git repository (install the hook into the server's bare repository)", gitDir)
	}
	bin, err := filepath.Abs(opts.Binary)
	if err != nil || opts.Binary == "" {
		return "", fmt.Errorf("hook binary %q: need the path of aiwg-state", opts.Binary)
	}
	if fi, err := os.Stat(bin); err != nil || fi.IsDir() || fi.Mode()&0o111 == 0 {
		return "", fmt.Errorf("hook binary %s is not an executable file", bin)
	}
	dir := filepath.Join(gitDir, "hooks")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	path := filepath.Join(dir, "pre-receive")
	if old, err := os.ReadFile(path); err == nil && !bytes.Contains(old, []byte(hookMarker)) && !opts.Force {
		return "", fmt.Errorf("%s: %w", path, ErrHookExists)
	}
	script := hookScript(bin)
	tmp := path + ".aiwg-tmp"
	if err := os.WriteFile(tmp, []byte(script), 0o755); err != nil {
		return "", err
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return "", err
	}
	if err := configureServer(context.Background(), gitDir); err != nil {
		return "", err
	}
	if err := writeTimeout(gitDir); err != nil {
		return "", err
	}
	if err := headOnMain(gitDir); err != nil {
		return "", err
	}
	return path, nil
}

// DirectArg is the argument a hook installed in the direct form passes
// aiwg-state: its first line is "#!BINARY DirectArg", so the kernel runs
// BINARY with DirectArg and the hook's path as arguments, and aiwg-state
// runs the pre-receive check as `hooks run pre-receive` does.
const DirectArg = "hooks-run-pre-receive"

// maxShebang is the longest first line written as "#!BINARY DirectArg":
// older Linux kernels read 128 bytes of it (newer 256), and a line cut
// short would name another program.
const maxShebang = 127

// hookScript is the pre-receive hook that runs bin. In the direct form
// the kernel starts bin itself: no shell starts at each push (a process,
// and a millisecond of the server's CPU per push of every agent's every
// sync). Missing or not executable, bin fails the exec, and git refuses
// the push as it does when a hook fails. A path the first line cannot
// carry (spaces, too long) or a bin that is itself a script (which
// macOS does not run as an interpreter) gets the shell form, which
// execs bin.
func hookScript(bin string) string {
	comment := "# Every pushed commit is checked (canonical JSON, store paths, limits,\n" +
		"# conflicts, access policy); a refusal leaves the server's refs unchanged.\n"
	if first := "#!" + bin + " " + DirectArg; len(first) <= maxShebang && !strings.ContainsAny(bin, " \t\n\r\x00") && !isScript(bin) {
		return first + "\n" + hookMarker + "\n" + comment +
			"# The line above runs aiwg-state itself (as `aiwg-state hooks run pre-receive`).\n" +
			// Only a shell reads this line: when the kernel cannot start
			// bin (a build for another machine, an empty or half-copied
			// file), git runs the hook with /bin/sh instead, and the
			// comments alone would pass every push unchecked.
			cannotRun(bin) + "\n"
	}
	return "#!/bin/sh\n" + hookMarker + "\n" + comment +
		// sh runs an empty file as a script that succeeds.
		"[ -s " + shellQuote(bin) + " ] || { " + cannotRun(bin) + " }\n" +
		"exec " + shellQuote(bin) + " hooks run pre-receive\n"
}

// cannotRun is the shell that refuses a push because bin could not run,
// in the words git shows the pusher.
func cannotRun(bin string) string {
	return "echo " + shellQuote("aiwg-state: the server cannot run "+bin+": push refused (install a working aiwg-state and run hooks install --server again)") + " >&2; exit 1;"
}

// isScript reports whether the file at path starts with "#!" (or cannot
// be read to tell).
func isScript(path string) bool {
	f, err := os.Open(path)
	if err != nil {
		return true
	}
	defer f.Close()
	var head [2]byte
	n, _ := f.Read(head[:])
	return n == 2 && string(head[:]) == "#!"
}

// hookBinary is the aiwg-state a hook Install wrote runs ("" when the
// script names none), and whether it runs it directly (the kernel starts
// it) or through the shell form of older installs.
func hookBinary(script []byte) (bin string, direct bool) {
	lines := strings.Split(string(script), "\n")
	if first, ok := strings.CutPrefix(lines[0], "#!"); ok {
		if b, ok := strings.CutSuffix(first, " "+DirectArg); ok {
			return b, true
		}
	}
	for _, line := range lines {
		if rest, ok := strings.CutPrefix(line, "exec "); ok {
			if b, _, ok := strings.Cut(rest, " hooks run"); ok {
				return strings.ReplaceAll(strings.Trim(b, "'"), `'\''`, "'"), false
			}
		}
	}
	return "", false
}

// writeTimeout writes the default deadline of a push's check into the
// repository's config when no configuration sets one: the hook then reads
// it from that file at each push rather than starting git to ask (see
// Timeout). A setting of the administrator's, in any file, stays.
func writeTimeout(gitDir string) error {
	err := exec.Command("git", "--git-dir", gitDir, "config", "--get", TimeoutConfig).Run()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 1 {
		return nil // set (or git could not tell: the hook will ask it again)
	}
	if out, err := exec.Command("git", "--git-dir", gitDir, "config", TimeoutConfig, defaultTimeoutText).CombinedOutput(); err != nil {
		return fmt.Errorf("git config %s %s: %s: %w", TimeoutConfig, defaultTimeoutText, strings.TrimSpace(string(out)), err)
	}
	return nil
}

func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// headOnMain points the server's HEAD at main while HEAD names a branch
// with no commit (git init --bare names master): the hook reads the
// policy from HEAD's branch once it has a commit, and main is the branch
// a store pushes; a HEAD on a branch that has commits is the
// administrator's choice and stays.
func headOnMain(gitDir string) error {
	if exec.Command("git", "--git-dir", gitDir, "rev-parse", "--verify", "--quiet", "HEAD^{commit}").Run() == nil {
		return nil
	}
	if out, err := exec.Command("git", "--git-dir", gitDir, "symbolic-ref", "HEAD", "refs/heads/main").CombinedOutput(); err != nil {
		return fmt.Errorf("git symbolic-ref HEAD refs/heads/main: %s: %w", strings.TrimSpace(string(out)), err)
	}
	return nil
}
