package verbiage

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// Limits of a store path. Git itself accepts longer paths, but checkouts on
// common file systems do not (PATH_MAX, NAME_MAX), and a store must be
// clonable everywhere. MaxStoreDepth bounds the segments of a path (64:
// 63 directories and a file), far beyond any layout the store writes, so
// that a server checking a pushed path walks a bounded number of trees.
const (
	MaxStorePathLen    = 4096
	MaxStoreSegmentLen = 255
	MaxStoreDepth      = 64
)

// CleanStorePath checks a file path inside the store's tree and returns it in
// its one canonical spelling: relative, '/'-separated, without a leading
// "./". It refuses, with ErrInvalidPath, what git or a checkout could read
// differently from what the store wrote: absolute paths, empty segments, "."
// and "..", a ".git" segment in any spelling git's fsck refuses (any letter
// case, trailing dots or spaces, the NTFS short name "git~1", characters HFS+
// ignores), backslashes, control characters, invalid UTF-8, a trailing slash,
// paths or segments over MaxStorePathLen / MaxStoreSegmentLen bytes, and
// paths of more than MaxStoreDepth segments.
func CleanStorePath(p string) (string, error) {
	c := strings.TrimPrefix(p, "./")
	if c == "" {
		return "", storePathError(p, "path is empty")
	}
	if strings.HasSuffix(c, "/") {
		return "", storePathError(p, "path ends with a slash (a file path names a file, not a directory)")
	}
	if err := checkStorePath(p, c); err != nil {
		return "", err
	}
	return c, nil
}

// CleanStoreDir is CleanStorePath for a directory: "", "." and "./" name the
// store's root and come back as "", and one trailing slash is allowed and
// dropped.
func CleanStoreDir(p string) (string, error) {
	c := strings.TrimPrefix(p, "./")
	if c == "" || c == "." {
		return "", nil
	}
	if trimmed := strings.TrimSuffix(c, "/"); trimmed != "" {
		c = trimmed
	}
	if err := checkStorePath(p, c); err != nil {
		return "", err
	}
	return c, nil
}

// checkStorePath applies the rules shared by files and directories to c, the
// cleaned form of p; messages quote p as the caller gave it.
func checkStorePath(p, c string) error {
	if len(c) > MaxStorePathLen {
		return storePathError(p, fmt.Sprintf("path is %d bytes long, at most %d are allowed", len(c), MaxStorePathLen))
	}
	if !utf8.ValidString(c) {
		return storePathError(p, "path is not valid UTF-8")
	}
	if c[0] == '/' {
		return storePathError(p, "path is absolute (store paths are relative to the store's root)")
	}
	for i, r := range c {
		switch {
		case r == '\\':
			return storePathError(p, fmt.Sprintf("backslash at byte %d (store paths are separated by '/')", i))
		case unicode.IsControl(r):
			return storePathError(p, fmt.Sprintf("control character %q at byte %d", r, i))
		}
	}
	if n := strings.Count(c, "/") + 1; n > MaxStoreDepth {
		return storePathError(p, fmt.Sprintf("path has %d segments, at most %d are allowed", n, MaxStoreDepth))
	}
	for seg := range strings.SplitSeq(c, "/") {
		switch {
		case seg == "":
			return storePathError(p, "path has an empty segment (\"//\")")
		case seg == "." || seg == "..":
			return storePathError(p, fmt.Sprintf("segment %q is not allowed", seg))
		case len(seg) > MaxStoreSegmentLen:
			return storePathError(p, fmt.Sprintf("segment of %d bytes, at most %d are allowed", len(seg), MaxStoreSegmentLen))
		case IsDotGit(seg):
			return storePathError(p, fmt.Sprintf("segment %q names git's own directory", seg))
		}
	}
	return nil
}

func storePathError(p, why string) error {
	return fmt.Errorf("%w: store path %s: %s", ErrInvalidPath, quoteShort(p), why)
}

// IsDotGit reports a path segment that some git or some file system takes
// for ".git": git refuses such tree entries (fsck's hasDotgit) because a
// checkout on macOS or Windows would write into the repository's own
// directory. The repo layer refuses the same names in every tree it writes.
func IsDotGit(seg string) bool {
	// HFS+ ignores these code points when it compares names.
	var b strings.Builder
	for _, r := range seg {
		if !hfsIgnorable(r) {
			b.WriteRune(unicode.ToLower(r))
		}
	}
	s := b.String()
	// NTFS: everything after ':' names an alternate data stream of the file
	// before it, and trailing dots and spaces are dropped.
	// A backslash separates components there too.
	if i := strings.IndexAny(s, ":\\"); i >= 0 {
		s = s[:i]
	}
	s = strings.TrimRight(s, ". ")
	return s == ".git" || s == "git~1"
}

// hfsIgnorable lists the code points HFS+ skips in file names (the set git's
// utf8.c is_hfs_dotgit checks).
func hfsIgnorable(r rune) bool {
	switch {
	case r >= 0x200c && r <= 0x200f, r >= 0x202a && r <= 0x202e,
		r >= 0x206a && r <= 0x206f, r == 0xfeff:
		return true
	}
	return false
}

// SameOnCheckout reports whether two different names of one directory
// would become one file on a case-insensitive, normalization-insensitive
// file system (macOS, Windows): equal ignoring letter case, or once both
// are in Unicode NFC ("café" composed and decomposed). Git keeps both; a
// checkout there merges them, and one file's content is lost.
func SameOnCheckout(a, b string) bool {
	if a == b {
		return false
	}
	if strings.EqualFold(a, b) {
		return true
	}
	if isASCII(a) && isASCII(b) {
		return false // NFC leaves ASCII as it is
	}
	return FoldName(a) == FoldName(b)
}

// FoldName is the key under which SameOnCheckout's names are equal: NFC,
// then every rune replaced by the least of its case-folding orbit (K, k
// and the Kelvin sign are all K), so that names strings.EqualFold calls
// equal share a key, as a map of keys must agree with a scan by
// SameOnCheckout.
func FoldName(s string) string {
	if isASCII(s) {
		return strings.ToUpper(s) // the least of an ASCII letter's orbit
	}
	s = norm.NFC.String(s)
	var b strings.Builder
	b.Grow(len(s))
	for _, r := range s {
		least := r
		for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
			least = min(least, f)
		}
		b.WriteRune(least)
	}
	return b.String()
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}
