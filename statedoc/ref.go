package statedoc

import (
	"fmt"
	"path"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/aiwg/aiwg-state/objects"
	"github.com/aiwg/aiwg-state/verbiage"
)

// RefPrefix starts every shard reference.
const RefPrefix = "ref file://"

// Ref is a parsed shard reference.
type Ref struct {
	// Path is the file path as written after "file://", relative to the
	// directory of the file holding the ref.
	Path string
	// Init is the raw init payload after the path, when the ref was given
	// in its init form; HasInit tells an empty payload from none.
	Init    string
	HasInit bool
}

// String is the canonical ref: the init payload is never stored.
func (r Ref) String() string { return RefPrefix + r.Path }

// IsRef reports whether s is meant as a ref (starts with RefPrefix), valid
// or not.
func IsRef(s string) bool { return strings.HasPrefix(s, RefPrefix) }

// ParseRef parses a string value. ok is false for a string that is not a
// ref at all. The path ends at the first white space; what follows is the
// init payload. The path itself is checked for what can be checked without
// knowing where the ref sits: not empty, not absolute, a .json file, valid
// UTF-8, no control characters or backslashes.
func ParseRef(s string) (ref Ref, ok bool, err error) {
	if !IsRef(s) {
		return Ref{}, false, nil
	}
	rest := s[len(RefPrefix):]
	uri, payload := rest, ""
	if i := strings.IndexFunc(rest, unicode.IsSpace); i >= 0 {
		uri = rest[:i]
		payload = rest[i:]
		ref.HasInit = true
		ref.Init = strings.TrimSpace(payload)
	}
	ref.Path = uri
	if err := checkRefPath(s, uri); err != nil {
		return ref, true, err
	}
	if ref.HasInit && ref.Init == "" {
		return ref, true, refError(s, "white space after the path (an init payload must follow it, and paths may not hold white space)")
	}
	return ref, true, nil
}

func refError(s, why string) error {
	const max = 120
	if len(s) > max {
		s = s[:max] + "…"
	}
	return fmt.Errorf("%w: ref %q: %s", verbiage.ErrInvalidPath, s, why)
}

func checkRefPath(s, uri string) error {
	switch {
	case uri == "":
		return refError(s, "names no file")
	case !utf8.ValidString(uri):
		return refError(s, "path is not valid UTF-8")
	case strings.HasPrefix(uri, "/"):
		return refError(s, "absolute paths leave the store (write the path relative to the referring document)")
	case strings.ContainsRune(uri, '\\'):
		return refError(s, "backslash in the path (paths are separated by '/')")
	case !strings.HasSuffix(uri, ".json"):
		return refError(s, "a ref names a .json file")
	}
	for _, r := range uri {
		if unicode.IsControl(r) {
			return refError(s, fmt.Sprintf("control character %q in the path", r))
		}
	}
	return nil
}

// Target is the store path a ref written in file from points to: relative
// to from's directory, with the specification's state/ rule. A path that climbs out
// of the store, or into its .aiwg/ directory, is refused with
// verbiage.ErrInvalidPath.
func Target(from, refPath string) (string, error) {
	dir := path.Dir(from)
	if dir == "." {
		dir = ""
	}
	if strings.HasPrefix(refPath, "state/") && path.Base(dir) == "state" {
		dir = path.Dir(dir)
		if dir == "." {
			dir = ""
		}
	}
	var segs []string
	if dir != "" {
		segs = strings.Split(dir, "/")
	}
	for seg := range strings.SplitSeq(refPath, "/") {
		switch seg {
		case "", ".":
			if seg == "" {
				return "", refError(RefPrefix+refPath, "empty path segment")
			}
		case "..":
			if len(segs) == 0 {
				return "", refError(RefPrefix+refPath, fmt.Sprintf("leaves the store (from %s)", from))
			}
			segs = segs[:len(segs)-1]
		default:
			segs = append(segs, seg)
		}
	}
	clean, err := verbiage.CleanStorePath(strings.Join(segs, "/"))
	if err != nil {
		return "", fmt.Errorf("ref %q from %s: %w", RefPrefix+refPath, from, err)
	}
	if clean == ".aiwg" || strings.HasPrefix(clean, ".aiwg/") {
		return "", refError(RefPrefix+refPath, "points into the store's own .aiwg/ directory")
	}
	return clean, nil
}

// InitValue decodes an init payload: JSON when it parses, else the text
// itself as a string. Object keys are normalized to verbiage keys.
func InitValue(payload string) (any, error) {
	v, err := objects.Decode([]byte(payload))
	if err != nil {
		return payload, nil
	}
	return verbiage.NormalizeKeys(v)
}
