// Package snapshot keeps snapshots of any of a store's state (documents,
// directories, or the whole store) as annotated git tags, and restores
// them as one new commit.
//
// A snapshot named N is the tag refs/tags/snapshots/N: an annotated tag
// object on the commit the branch was at, whose tagger is the agent and
// the time, and whose message carries the swarm shared state
// specification's fields: the snapshot id (snap-xxxxxxxx), the reason
// (scheduled, manual or recovery), the scope (the paths it covers, "."
// for the whole store) and the description. A plain git user sees them
// with `git tag -l 'snapshots/*'` and `git show snapshots/N`.
//
// The rules of the format (this file) know no store: names, the message,
// and Check, which the server's hook applies to a pushed snapshot tag as
// the store applies it to its own. Snapshots (store.go) is the handle
// st.Snapshots(): create, list, show, diff, restore and prune; the CLI is
// cmd/aiwg-state/cmd_snapshot.go.
package snapshot

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/aiwg/aiwg-state/repo"
	"github.com/aiwg/aiwg-state/verbiage"
)

// RefPrefix is where snapshot tags live.
const RefPrefix = "refs/tags/snapshots/"

// IDPrefix starts a snapshot's id: snap- and eight hex digits.
const IDPrefix = "snap"

// Whole is the scope of a snapshot of the whole store.
const Whole = "."

// MaxSnapshots is the most snapshot tags a store (and a server) keeps:
// past it, old ones are pruned first. It bounds what an agent can pile
// onto a shared server.
const MaxSnapshots = 1000

// MaxScope is the most paths one snapshot names.
const MaxScope = 100

// Trailer keys of a snapshot tag's message.
const (
	TrailerSnapshot = "Snapshot"
	TrailerReason   = "Reason"
	TrailerScope    = "Scope"
)

// Reasons are the specification's reasons for a snapshot.
var Reasons = []string{"manual", "scheduled", "recovery"}

// Sentinel errors; the handle wraps them in the store's for exit codes.
var (
	// ErrInvalid: a name, reason, scope or tag message that is not a
	// snapshot's.
	ErrInvalid = errors.New("invalid snapshot")
)

// Ref is the tag ref of snapshot name.
func Ref(name string) string { return RefPrefix + name }

// CheckName refuses a name that is not one git and every shell take as
// is: letters, digits, '.', '_' and '-', starting with a letter or digit,
// at most 100 bytes, no "..", not ending in ".lock".
func CheckName(name string) error {
	bad := func(why string) error {
		return fmt.Errorf("%w: snapshot name %q: %s", verbiage.ErrInvalidName, name, why)
	}
	switch {
	case name == "":
		return bad("empty")
	case len(name) > 100:
		return bad("over 100 bytes")
	case strings.Contains(name, ".."), strings.HasSuffix(name, ".lock"):
		return bad(`".." and a ".lock" ending are not allowed in a git ref`)
	}
	for i, r := range name {
		ok := r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || (i > 0 && (r == '.' || r == '_' || r == '-'))
		if !ok {
			return bad("letters, digits, '.', '_' and '-' only, starting with a letter or digit")
		}
	}
	return nil
}

// CheckReason refuses a reason the specification does not name.
func CheckReason(reason string) error {
	if !slices.Contains(Reasons, reason) {
		return fmt.Errorf("%w: reason %q (manual, scheduled or recovery)", ErrInvalid, reason)
	}
	return nil
}

// CleanScope checks and normalizes the paths a snapshot covers: store
// paths of files or directories, outside the store's own settings (.aiwg/,
// .gitattributes), without repeats or a path inside another one given;
// none is the whole store (Whole).
func CleanScope(paths []string) ([]string, error) {
	if len(paths) == 0 || (len(paths) == 1 && paths[0] == Whole) {
		return []string{Whole}, nil
	}
	if len(paths) > MaxScope {
		return nil, fmt.Errorf("%w: %d paths, at most %d", ErrInvalid, len(paths), MaxScope)
	}
	var out []string
	for _, p := range paths {
		if p == Whole {
			return nil, fmt.Errorf("%w: %q is the whole store, and other paths were given", ErrInvalid, Whole)
		}
		clean, err := verbiage.CleanStorePath(strings.TrimSuffix(p, "/"))
		if err != nil {
			return nil, err
		}
		if clean == ".aiwg" || strings.HasPrefix(clean, ".aiwg/") || clean == ".gitattributes" {
			return nil, fmt.Errorf("%w: %s is the store's own settings, not state a snapshot covers", ErrInvalid, clean)
		}
		out = append(out, clean)
	}
	slices.Sort(out)
	out = slices.Compact(out)
	for i := 1; i < len(out); i++ {
		for j := 0; j < i; j++ {
			if strings.HasPrefix(out[i], out[j]+"/") {
				return nil, fmt.Errorf("%w: %s is inside %s, given too", ErrInvalid, out[i], out[j])
			}
		}
	}
	return out, nil
}

// Covers reports whether a snapshot of scope covers path.
func Covers(scope []string, path string) bool {
	for _, s := range scope {
		if s == Whole || path == s || strings.HasPrefix(path, s+"/") {
			return true
		}
	}
	return false
}

// Message renders a snapshot tag's message: a subject naming it, the
// description, and the trailers.
func Message(name, id, reason, description string, scope []string) string {
	t := repo.Trailers{{Key: TrailerSnapshot, Value: id}, {Key: TrailerReason, Value: reason}}
	for _, s := range scope {
		t = append(t, repo.Trailer{Key: TrailerScope, Value: s})
	}
	return repo.FormatMessage("snapshot "+name, description, t)
}

// Fields are what a snapshot tag's message says.
type Fields struct {
	ID          string
	Reason      string
	Scope       []string
	Description string
}

// ParseMessage reads a snapshot tag's message back, refusing one that is
// not a snapshot's as Message writes it: the subject naming it, an id,
// a reason, one or more scope paths (as CleanScope leaves them), and no
// other trailer.
func ParseMessage(name, msg string) (*Fields, error) {
	bad := func(format string, a ...any) (*Fields, error) {
		return nil, fmt.Errorf("%w: "+format, append([]any{ErrInvalid}, a...)...)
	}
	subject, _, _ := strings.Cut(msg, "\n")
	if subject != "snapshot "+name {
		return bad("the tag's subject is %q, not %q", subject, "snapshot "+name)
	}
	f := &Fields{}
	for _, t := range repo.ParseTrailers(msg) {
		switch t.Key {
		case TrailerSnapshot:
			if f.ID != "" {
				return bad("two %s trailers", TrailerSnapshot)
			}
			f.ID = t.Value
		case TrailerReason:
			if f.Reason != "" {
				return bad("two %s trailers", TrailerReason)
			}
			f.Reason = t.Value
		case TrailerScope:
			f.Scope = append(f.Scope, t.Value)
		default:
			return bad("a snapshot tag has the trailers %s, %s and %s, not %s", TrailerSnapshot, TrailerReason, TrailerScope, t.Key)
		}
	}
	if !verbiage.ValidID(IDPrefix, f.ID) {
		return bad("the %s trailer is %q, not snap- and 8 hex digits", TrailerSnapshot, f.ID)
	}
	if err := CheckReason(f.Reason); err != nil {
		return nil, err
	}
	if len(f.Scope) == 0 {
		return bad("no %s trailer: a snapshot names the paths it covers (%q for the whole store)", TrailerScope, Whole)
	}
	scope, err := CleanScope(f.Scope)
	if err != nil {
		return nil, err
	}
	if !slices.Equal(scope, f.Scope) {
		return bad("the scope %q is not as the store writes it (%q)", f.Scope, scope)
	}
	body := strings.TrimRight(msg, "\n")
	if i := strings.LastIndex(body, "\n\n"); i >= 0 {
		body = body[:i]
	} else {
		body = ""
	}
	if _, rest, found := strings.Cut(body, "\n\n"); found {
		f.Description = strings.TrimSpace(rest)
	}
	return f, nil
}
