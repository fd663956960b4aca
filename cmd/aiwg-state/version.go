package main

import (
	"runtime/debug"

	"github.com/urfave/cli/v2"
)

func init() {
	// --version only: -v reads as "verbose" to many, and no command
	// should have to work around a global short flag.
	cli.VersionFlag = &cli.BoolFlag{Name: "version", Usage: "print the version (module version and source revision) and exit"}
}

// buildVersion is what --version prints: the module's version ("(devel)"
// for a build from a checkout) and, when the binary was built from a git
// checkout, the revision, "-dirty" if it had local changes, and the
// revision's time. Computed only for the root command (help, --version):
// a command that names its verb does not pay for reading the build info.
func buildVersion() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "unknown (built without module support)"
	}
	v := bi.Main.Version
	if v == "" {
		v = "(devel)"
	}
	var rev, when string
	dirty := false
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.time":
			when = s.Value
		case "vcs.modified":
			dirty = s.Value == "true"
		}
	}
	if rev == "" {
		return v
	}
	if len(rev) > 12 {
		rev = rev[:12]
	}
	if dirty {
		rev += "-dirty"
	}
	if when != "" {
		rev += ", " + when
	}
	return v + " (" + rev + ")"
}
