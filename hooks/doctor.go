package hooks

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/aiwg/aiwg-state/internal/errkind"
	"github.com/aiwg/aiwg-state/policy"
	"github.com/aiwg/aiwg-state/repo"
)

// ErrUnhealthy: a server repository's check found something to fix.
var ErrUnhealthy = errors.New("server needs attention")

// ServerHealth is what Doctor found in a server's bare repository.
type ServerHealth struct {
	Dir string `json:"dir"`
	// Objects are git count-objects' figures.
	LooseObjects  int64 `json:"loose_objects"`
	LooseKiB      int64 `json:"loose_kib"`
	PackedObjects int64 `json:"packed_objects"`
	Packs         int64 `json:"packs"`
	PackKiB       int64 `json:"pack_kib"`
	Garbage       int64 `json:"garbage"`
	// Branches counts the branches, AgentBranches those under agents/.
	Branches      int `json:"branches"`
	AgentBranches int `json:"agent_branches"`
	// Hook is the pre-receive hook: installed by aiwg-state, and the
	// binary it runs.
	Hook struct {
		Installed bool   `json:"installed"`
		Binary    string `json:"binary,omitempty"`
		Runnable  bool   `json:"runnable"`
		// RunError is why the binary did not run, when it did not.
		RunError string `json:"run_error,omitempty"`
		// Form is "direct" (the kernel starts the binary) or "shell"
		// (a shell script execs it: hooks install before the direct
		// form, or a binary path the first line cannot carry).
		Form string `json:"form,omitempty"`
	} `json:"hook"`
	// Config is each setting hooks install makes, as the repository has it.
	Config []ConfigCheck `json:"config"`
	// Policy is the access policy on the default branch.
	Policy struct {
		Branch string `json:"branch"`
		Found  bool   `json:"found"`
		Valid  bool   `json:"valid"`
		Error  string `json:"error,omitempty"`
	} `json:"policy"`
	// Problems say what to fix; none when the server is healthy.
	Problems []string `json:"problems"`
}

// ConfigCheck is one git setting of the server.
type ConfigCheck struct {
	Key  string `json:"key"`
	Want string `json:"want"`
	Got  string `json:"got"`
	OK   bool   `json:"ok"`
}

// Loose objects above this many, or packs above this many, are a problem
// (gc.auto and twice gc.autoPackLimit, the points where git gc --auto
// should have repacked).
const (
	doctorMaxLoose = 6700
	doctorMaxPacks = 100
)

// Doctor reports the health of the server's bare repository at gitDir: its
// objects (loose ones and packs: a swarm's pushes pile up without
// maintenance), the hook, the settings hooks install makes, and the access
// policy of its default branch. It only reads.
func Doctor(ctx context.Context, gitDir string) (*ServerHealth, error) {
	if fi, err := os.Stat(filepath.Join(gitDir, "objects")); err != nil || !fi.IsDir() {
		return nil, errkind.Errorf(repo.ErrNotStore, "%s is not a git repository (name the server's bare repository)", gitDir)
	}
	h := &ServerHealth{Dir: gitDir, Problems: []string{}}
	git := func(args ...string) (string, error) {
		out, err := exec.CommandContext(ctx, "git", append([]string{"--git-dir", gitDir}, args...)...).Output()
		return strings.TrimSpace(string(out)), err
	}
	out, err := git("count-objects", "-v")
	if err != nil {
		return nil, fmt.Errorf("git count-objects: %w", err)
	}
	for _, line := range strings.Split(out, "\n") {
		k, v, _ := strings.Cut(line, ": ")
		n, _ := strconv.ParseInt(v, 10, 64)
		switch k {
		case "count":
			h.LooseObjects = n
		case "size":
			h.LooseKiB = n
		case "in-pack":
			h.PackedObjects = n
		case "packs":
			h.Packs = n
		case "size-pack":
			h.PackKiB = n
		case "garbage":
			h.Garbage = n
		}
	}
	if out, err := git("for-each-ref", "--format=%(refname)", "refs/heads/"); err == nil && out != "" {
		for _, r := range strings.Split(out, "\n") {
			h.Branches++
			if strings.HasPrefix(r, "refs/heads/agents/") {
				h.AgentBranches++
			}
		}
	}
	// The hook.
	if script, err := os.ReadFile(filepath.Join(gitDir, "hooks", "pre-receive")); err == nil && bytes.Contains(script, []byte(hookMarker)) {
		h.Hook.Installed = true
		var direct bool
		h.Hook.Binary, direct = hookBinary(script)
		h.Hook.Form = "shell"
		if direct {
			h.Hook.Form = "direct"
		}
		h.Hook.Runnable, h.Hook.RunError = runs(ctx, h.Hook.Binary)
	}
	switch {
	case !h.Hook.Installed:
		h.Problems = append(h.Problems, "no aiwg-state pre-receive hook: pushes are not checked (aiwg-state hooks install --server "+gitDir+")")
	case !h.Hook.Runnable:
		h.Problems = append(h.Problems, "the hook runs "+h.Hook.Binary+", which does not run ("+h.Hook.RunError+"): every push is refused (install a working aiwg-state and run hooks install --server again)")
	}
	for _, kv := range serverConfig {
		got, _ := git("config", "--get", kv[0])
		ok := got == kv[1]
		h.Config = append(h.Config, ConfigCheck{Key: kv[0], Want: kv[1], Got: got, OK: ok})
		if !ok {
			h.Problems = append(h.Problems, fmt.Sprintf("git config %s is %q, not %q (hooks install sets it)", kv[0], got, kv[1]))
		}
	}
	if h.LooseObjects > doctorMaxLoose {
		h.Problems = append(h.Problems, fmt.Sprintf("%d loose objects: pushes were unpacked and never repacked (git gc on the server)", h.LooseObjects))
	}
	if h.Packs > doctorMaxPacks {
		h.Problems = append(h.Problems, fmt.Sprintf("%d packs: git gc --auto has not repacked them (git gc on the server)", h.Packs))
	}
	// The policy of the default branch, as the hook reads it.
	branch := "refs/heads/main"
	if head, err := git("symbolic-ref", "HEAD"); err == nil {
		if _, err := git("rev-parse", "--verify", "--quiet", head+"^{commit}"); err == nil {
			branch = head
		}
	}
	h.Policy.Branch = strings.TrimPrefix(branch, "refs/heads/")
	if body, err := exec.CommandContext(ctx, "git", "--git-dir", gitDir, "cat-file", "blob", branch+":"+policy.Path).Output(); err == nil {
		h.Policy.Found = true
		if _, err := policy.Parse(body); err != nil {
			h.Policy.Error = err.Error()
			h.Problems = append(h.Problems, "the policy on "+h.Policy.Branch+" does not parse: "+err.Error())
		} else {
			h.Policy.Valid = true
		}
	}
	return h, nil
}

// runs tells whether the kernel starts bin, as the hook would start it: a
// file with the right mode can still be a build for another machine,
// empty, or half copied, which only starting it tells. It is started with
// --version; how it exits does not matter, only that it ran.
func runs(ctx context.Context, bin string) (bool, string) {
	if fi, err := os.Stat(bin); err != nil || fi.IsDir() || fi.Mode()&0o111 == 0 {
		return false, "not an executable file"
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	var exit *exec.ExitError
	if err := exec.CommandContext(ctx, bin, "--version").Run(); err != nil && !errors.As(err, &exit) {
		return false, err.Error()
	}
	return true, ""
}
