package hooks

import (
	"context"
	"fmt"
	"os/exec"
	"strings"
)

// serverConfig is the git configuration Install sets on the server's
// repository.
//
// So that git itself refuses malformed objects in a push before the hook
// runs: trees out of order or naming an entry twice, commits with two
// authors, bad identities or dates (receive-pack then checks every object
// as git fsck --strict does: its warnings are errors), and tree entries
// with modes git does not write (an fsck notice, made an error).
//
// So that many pushers do not bury it in loose objects: every push stays
// the pack it arrived as (an unpack limit of 1: git unpacks a push of
// fewer objects than the limit into one file per object, 100 by default,
// which is every push of a swarm's agents), and git gc --auto runs, in
// the background, once gc.autoPackLimit packs have gathered (or gc.auto
// loose objects, from anything else): the hook starts it when the count
// says so (AutoGC), rather than receive-pack after every push
// (receive.autogc), which would start a git process per push to find
// nothing to do nearly every time. And so that an agent may clone
// partially (clone --filter=blob:none).
//
// So that serving a sync costs less CPU: every sync fetches what main
// gained, a pack git builds afresh, and most of the objects in it are
// new versions of the same few documents, whose best delta base is the
// version just before, next to it in git's order. A delta search window
// of 2 rather than git's 10 finds those (the fetch is as small: 418 KB
// against 420 KB for a round of 64 agents) at four fifths of the CPU, and
// a full repack of the server at half of it, for packs 1% larger.
//
// And so that checking a push starts one git process fewer: receive-pack
// checks that a push's objects connect to what the server has (git
// rev-list NEW --not --all --alternate-refs) while they wait in a
// quarantine directory, whose alternate is the repository's own object
// directory; for it git lists the refs of that "alternate" with a git
// for-each-ref of its own, the very refs --all already names. A command
// that lists none (true) makes the check the same, for a third of that
// process's CPU. (A server that borrows objects from another repository
// through objects/info/alternates then advertises none of that
// repository's refs to pushers, who may send objects it already has.)
var serverConfig = [][2]string{
	{"receive.fsckObjects", "true"},
	{"receive.fsck.badFilemode", "error"},
	{"receive.unpackLimit", "1"},
	{"transfer.unpackLimit", "1"},
	{"receive.autogc", "false"},
	{"gc.auto", "6700"},
	{"gc.autoPackLimit", "50"},
	{"gc.autoDetach", "true"},
	{"uploadpack.allowFilter", "true"},
	{"pack.window", "2"},
	{"core.alternateRefsCommand", "true"},
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
