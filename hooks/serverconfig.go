package hooks

import (
	"context"
	"fmt"
	"os/exec"
	"strings"
)

// serverConfig is the git configuration Install sets on the server's
// repository, so that git itself refuses malformed objects in a push
// before the hook runs: trees out of order or naming an entry twice,
// commits with two authors, bad identities or dates (receive-pack then
// checks every object as git fsck --strict does: its warnings are
// errors), and tree entries with modes git does not write (an fsck
// notice, made an error).
var serverConfig = [][2]string{
	{"receive.fsckObjects", "true"},
	{"receive.fsck.badFilemode", "error"},
}

// configureServer sets serverConfig in the repository at gitDir.
func configureServer(ctx context.Context, gitDir string) error {
	for _, kv := range serverConfig {
		out, err := exec.CommandContext(ctx, "git", "--git-dir", gitDir, "config", kv[0], kv[1]).CombinedOutput()
		if err != nil {
			return fmt.Errorf("git config %s %s: %s: %w", kv[0], kv[1], strings.TrimSpace(string(out)), err)
		}
	}
	return nil
}
