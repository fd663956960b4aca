package hooks

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"github.com/aiwg/aiwg-state/repo"
)

// Server maintenance without a process per push.
//
// receive-pack with receive.autogc starts `git gc --auto` after every
// push, and the push waits for it; nearly always it finds nothing to do
// (a pack more, below gc.autoPackLimit). hooks install turns
// receive.autogc off and the hook, which runs at every push anyway, asks
// git's question itself (AutoGC): more packs than gc.autoPackLimit, or
// more loose objects than gc.auto (counted as git counts them, in
// objects/17), and only then starts `git gc --auto` in the background,
// where git asks again and repacks. It reads the repository before the
// push's objects land, so it may start a push later than git would.

// AutoGC starts `git gc --auto --quiet` on the repository at gitDir,
// detached, when the repository's config turns receive.autogc off and
// gc.auto or gc.autoPackLimit says there is work: the maintenance git
// would have run after the push. A repository whose config file does not
// settle those settings gets the process whatever the count (git decides);
// one where receive.autogc is not off is left to receive-pack. Where the
// config file does not settle receive.autogc, git is asked. It reports
// whether it started gc.
//
// gc starts once the hook's parent, receive-pack, has exited: as git's
// own gc after a push, it then sees the push's refs in place. Started
// while they are not, it could prune an old unreachable object that the
// push's commits name without sending it (which a hostile pusher can
// arrange), and leave the new ref naming a missing object.
func AutoGC(gitDir string) bool {
	return autoGC(gitDir, os.Getppid())
}

// autoGC is AutoGC with gc waiting for the process after (0: none).
func autoGC(gitDir string, after int) bool {
	env := os.Environ()
	v, ok := repo.LocalConfig(gitDir, "receive.autogc", env)
	if !ok {
		// The file does not settle it (an include, settings in the
		// environment as a server run with `git -c` passes them): git
		// does, or receive-pack and this would each leave gc to the other.
		out, err := exec.Command("git", "--git-dir", gitDir, "config", "--get", "receive.autogc").Output()
		if err != nil {
			return false // unset: receive-pack runs gc itself
		}
		v = strings.TrimSpace(string(out))
	}
	if configTrue(v) {
		return false
	}
	auto, ok1 := configInt(gitDir, "gc.auto", 6700, env)
	packs, ok2 := configInt(gitDir, "gc.autoPackLimit", 50, env)
	if ok1 && ok2 && !gcDue(gitDir, auto, packs) {
		return false
	}
	// Out of the quarantine: gc works on the repository, never on the
	// push's objects, and outlives the hook without holding the pipes
	// git reads the hook's output from.
	cmd := exec.Command("git", "--git-dir", gitDir, "gc", "--auto", "--quiet")
	if after > 0 {
		cmd = exec.Command("sh", "-c", `while kill -0 "$0" 2>/dev/null; do sleep 1; done; exec git --git-dir "$1" gc --auto --quiet`, strconv.Itoa(after), gitDir)
	}
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		switch k {
		case "GIT_DIR", "GIT_OBJECT_DIRECTORY", "GIT_ALTERNATE_OBJECT_DIRECTORIES", "GIT_QUARANTINE_PATH":
			continue
		}
		cmd.Env = append(cmd.Env, kv)
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if cmd.Start() != nil {
		return false
	}
	go cmd.Wait() //nolint:errcheck // git reports in gc.log
	return true
}

// gcDue is git gc --auto's question (need_to_gc): more local packs
// without a .keep than packLimit, or, in objects/17, more loose objects
// than auto/256 rounded up. auto <= 0 turns it off.
func gcDue(gitDir string, auto, packLimit int) bool {
	if auto <= 0 {
		return false
	}
	if packLimit > 0 {
		names, _ := os.ReadDir(filepath.Join(gitDir, "objects", "pack"))
		has := map[string]bool{}
		for _, n := range names {
			has[n.Name()] = true
		}
		count := 0
		for name := range has {
			base, ok := strings.CutSuffix(name, ".idx")
			if ok && strings.HasPrefix(base, "pack-") && has[base+".pack"] && !has[base+".keep"] {
				count++
			}
		}
		if count > packLimit {
			return true
		}
	}
	names, _ := os.ReadDir(filepath.Join(gitDir, "objects", "17"))
	limit, loose := (auto+255)/256, 0
	for _, n := range names {
		if name := n.Name(); len(name) == 38 && strings.Trim(name, "0123456789abcdef") == "" {
			if loose++; loose > limit {
				return true
			}
		}
	}
	return false
}

// configInt is an integer setting as git reads it (a k, m or g suffix
// multiplies), def when the config file leaves it unset; ok is false when
// the file does not settle it.
func configInt(gitDir, key string, def int, env []string) (int, bool) {
	v, ok := repo.LocalConfig(gitDir, key, env)
	if !ok {
		// Unset in the file: git's default, unless another file sets it.
		return def, false
	}
	v = strings.ToLower(strings.TrimSpace(v))
	mult := 1
	switch {
	case strings.HasSuffix(v, "k"):
		mult, v = 1<<10, v[:len(v)-1]
	case strings.HasSuffix(v, "m"):
		mult, v = 1<<20, v[:len(v)-1]
	case strings.HasSuffix(v, "g"):
		mult, v = 1<<30, v[:len(v)-1]
	}
	n, err := strconv.Atoi(v)
	if err != nil {
		return def, false
	}
	return n * mult, true
}

// configTrue is git's reading of a boolean setting's value; what git would
// refuse reads as true, which leaves gc to receive-pack.
func configTrue(v string) bool {
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "false", "no", "off", "0", "":
		return false
	}
	return true
}
