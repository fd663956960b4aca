package hooks

import (
	"os"
	"strings"
)

// gitEnv is the environment of the git processes the checks run: the
// hook's own (inside pre-receive it points git at the push's quarantined
// objects), with replace refs and grafts turned off. aiwg-state reads
// commits as they are written; git would otherwise show, and the checks
// judge, a history that refs/replace/ or info/grafts rewrites, which is
// not the one the store serves.
func gitEnv() []string {
	env := os.Environ()
	out := make([]string, 0, len(env)+2)
	for _, kv := range env {
		if !strings.HasPrefix(kv, "GIT_NO_REPLACE_OBJECTS=") && !strings.HasPrefix(kv, "GIT_GRAFT_FILE=") {
			out = append(out, kv)
		}
	}
	// A graft file that does not exist: git reads no grafts, and says
	// nothing about it.
	return append(out, "GIT_NO_REPLACE_OBJECTS=1", "GIT_GRAFT_FILE="+os.DevNull+".aiwg-no-grafts")
}

// objectIDRef says why a branch or tag may not be named as a full object
// id: git reads such a name as the object, not the ref, so the pushed
// name would not mean what the pusher says it does.
func objectIDRef(ref string) string {
	var short string
	switch {
	case strings.HasPrefix(ref, "refs/heads/"):
		short = strings.TrimPrefix(ref, "refs/heads/")
	case strings.HasPrefix(ref, "refs/tags/"):
		short = strings.TrimPrefix(ref, "refs/tags/")
	default:
		return ""
	}
	if len(short) != 40 || strings.Trim(strings.ToLower(short), "0123456789abcdef") != "" {
		return ""
	}
	return "a branch or tag named as a full commit id is read as that commit, not the ref: pick another name"
}
