// Package benchutil holds what the benchmark programs under bench/ share:
// building the CLI as users install it, the machine's git, and the median
// of timings.
package benchutil

import (
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"
	"time"
)

// CLITags builds the CLI as the README installs it: without urfave/cli's
// man-page generator, whose package initialisation runs in every command.
const CLITags = "urfave_cli_no_docs"

// BuildCLI builds pkgs (./cmd/aiwg-state when none) with CLITags into out:
// the binary for one package, the directory of the binaries for several.
// It runs from the repository root; when the build fails it says so and
// ends the program.
func BuildCLI(out string, pkgs ...string) {
	if len(pkgs) == 0 {
		pkgs = []string{"./cmd/aiwg-state"}
	}
	args := append([]string{"build", "-tags", CLITags, "-o", out}, pkgs...)
	if msg, err := exec.Command("go", args...).CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "build (run from the repository root): %v\n%s", err, msg)
		os.Exit(1)
	}
}

// GitVersion is what `git version` says, for the figures' heading.
func GitVersion() string {
	out, _ := exec.Command("git", "version").Output()
	return strings.TrimSpace(string(out))
}

// Median is the middle of ds, the upper one of an even count; ds is left
// as it is.
func Median(ds []time.Duration) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2]
}

// Git runs git on the repository at gitDir and returns its output; when
// git fails it says so and ends the program.
func Git(gitDir string, args ...string) string {
	out, err := exec.Command("git", append([]string{"--git-dir", gitDir}, args...)...).Output()
	if err != nil {
		fmt.Fprintf(os.Stderr, "git %s: %v\n", strings.Join(args, " "), err)
		os.Exit(1)
	}
	return string(out)
}
