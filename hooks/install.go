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
	script := "#!/bin/sh\n" + hookMarker + "\n" +
		"# Every pushed commit is checked (canonical JSON, store paths, limits,\n" +
		"# conflicts, access policy); a refusal leaves the server's refs unchanged.\n" +
		"exec " + shellQuote(bin) + " hooks run pre-receive\n"
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
	if err := headOnMain(gitDir); err != nil {
		return "", err
	}
	return path, nil
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
