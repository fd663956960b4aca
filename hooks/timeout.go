package hooks

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"time"

	"github.com/aiwg/aiwg-state/repo"
)

// TimeoutConfig is the server's git configuration key bounding how long
// the pre-receive hook may check one push (a Go duration: "90s", "10m").
const TimeoutConfig = "aiwg.hookTimeout"

// DefaultTimeout bounds a push's check when TimeoutConfig is not set:
// far beyond what a push of thousands of commits costs, short enough that
// a push built to burn the server's CPU does not hold it for long.
const DefaultTimeout = 5 * time.Minute

// defaultTimeoutText is DefaultTimeout as hooks install writes it.
const defaultTimeoutText = "5m"

// ErrTimeout: the check of a push ran out of time. The push is refused
// (fail closed): the error also wraps ErrRefused.
var ErrTimeout = errors.New("the check ran out of time")

// Timeout is how long the hook may check a push on the server at gitDir:
// its TimeoutConfig, else DefaultTimeout. A value that is not a positive
// duration is an error, so a mistyped setting refuses pushes with a clear
// message rather than letting any run unbounded.
func Timeout(ctx context.Context, gitDir string) (time.Duration, error) {
	// Read from the repository's config file when it settles the answer
	// (hooks install writes the key there): a git process less per push.
	v, ok := repo.LocalConfig(gitDir, TimeoutConfig, os.Environ())
	if !ok {
		out, err := exec.CommandContext(ctx, "git", "--git-dir", gitDir, "config", "--get", TimeoutConfig).Output()
		var exit *exec.ExitError
		switch {
		case errors.As(err, &exit) && exit.ExitCode() == 1: // not set
			return DefaultTimeout, nil
		case err != nil:
			return 0, fmt.Errorf("git config %s: %w", TimeoutConfig, err)
		}
		v = string(out)
	}
	v = strings.TrimSpace(v)
	d, err := time.ParseDuration(v)
	if err != nil || d <= 0 {
		return 0, fmt.Errorf("git config %s is %q: want a positive duration such as 5m or 90s", TimeoutConfig, v)
	}
	return d, nil
}

// CheckWithin is Check under a deadline of d: a check that runs out of
// time refuses the push with ErrTimeout (and ErrRefused), saying what to
// do, whatever it had found by then.
func CheckWithin(ctx context.Context, d time.Duration, gitDir string, updates []Update, opts Options) error {
	ctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	err := Check(ctx, gitDir, updates, opts)
	var re *RefusedError
	if errors.Is(ctx.Err(), context.DeadlineExceeded) && !errors.As(err, &re) {
		// A check cut short may have skipped what it had no time for:
		// it accepts nothing.
		return fmt.Errorf("%w: %w after %s (git config %s on the server): push fewer commits at a time, or ask the administrator to raise it",
			ErrRefused, ErrTimeout, d, TimeoutConfig)
	}
	return err
}
