package verbiage

import (
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"
)

// ErrInvalidName is wrapped by errors for a variable name that breaks the
// identifier rule of the RLM state specification. Callers map it to the usage exit code.
var ErrInvalidName = errors.New("invalid name")

// MaxIdentifierLen bounds a variable name. Names become file names in the
// store (global/variables/<name>.json), so the bound stays well under the
// 255-byte segment limit of common file systems.
const MaxIdentifierLen = 128

// Special variable names of the RLM state specification: Final signals completion and prompt
// holds the original input. Their spelling is fixed by the spec, so naming
// advice leaves them alone.
const (
	NameFinal  = "Final"
	NamePrompt = "prompt"
)

// ValidIdentifier checks a variable name against ^[a-zA-Z_][a-zA-Z0-9_]*$
// and MaxIdentifierLen; the error says which rule the name breaks.
func ValidIdentifier(name string) error {
	switch {
	case name == "":
		return fmt.Errorf("%w: name is empty", ErrInvalidName)
	case len(name) > MaxIdentifierLen:
		return fmt.Errorf("%w %s: name is %d bytes long, at most %d are allowed",
			ErrInvalidName, quoteShort(name), len(name), MaxIdentifierLen)
	case name[0] >= '0' && name[0] <= '9':
		return fmt.Errorf("%w %q: name starts with a digit (names start with a letter or underscore)", ErrInvalidName, name)
	}
	for i, r := range name {
		if !isIdentByte(r) {
			what := fmt.Sprintf("character %q", r)
			if r == utf8.RuneError && !utf8.ValidString(name[i:]) {
				what = fmt.Sprintf("byte %#x (invalid UTF-8)", name[i])
			}
			return fmt.Errorf("%w %q: %s at position %d is not allowed (names hold ASCII letters, digits and underscores)",
				ErrInvalidName, name, what, utf8.RuneCountInString(name[:i]))
		}
	}
	return nil
}

func isIdentByte(r rune) bool {
	return r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_'
}

// isCommonShort lists short names that are whole words or abbreviations every
// reader knows; the specification allows abbreviations that are common.
func isCommonShort(w string) bool {
	switch w {
	case "id", "ids", "db", "io", "ip", "ui", "os", "url", "uri", "api", "sql", "ttl",
		"cpu", "gpu", "jwt", "csv", "pdf", "xml", "utc", "uid", "gid", "pid", "sha", "md",
		"dns", "tls", "ssh", "rss", "llm", "mcp", "pr", "cwd", "env", "rpc", "tcp", "udp",
		"css", "svg", "png", "gif", "yml", "cli", "crc":
		return true
	}
	return false
}

// isDigitWord reports names that end in digits without numbering anything.
func isDigitWord(w string) bool {
	switch w {
	case "sha1", "sha256", "sha512", "md5", "base32", "base64", "utf8", "utf16", "ipv4",
		"ipv6", "http2", "http3", "oauth2", "s3", "ec2", "x509", "p50", "p90", "p95", "p99",
		"l1", "l2", "h264", "mp3", "mp4", "ed25519", "int8", "int16", "int32", "int64",
		"float32", "float64", "k8s", "i18n", "top10":
		return true
	}
	return false
}

// NamingAdvice returns advisory warnings for a valid variable name, from the
// naming conventions of the RLM state specification (snake_case, descriptive, no unclear
// abbreviations, no numbered variables). It never refuses a name: the
// conventions are advice, and a name the user chose must stay usable. Invalid
// names (see ValidIdentifier) and the special names Final and prompt get none.
func NamingAdvice(name string) []string {
	if name == NameFinal || name == NamePrompt || ValidIdentifier(name) != nil {
		return nil
	}
	var advice []string
	words := splitWords(name)
	lower := strings.ToLower(name)
	switch {
	case len(strings.Trim(name, "_")) <= 1:
		advice = append(advice, fmt.Sprintf(
			"%q is not descriptive: name what the value holds, e.g. \"risk_count\"", name))
	case len(words) == 1 && isUnclearAbbreviation(lower):
		advice = append(advice, fmt.Sprintf(
			"%q may be an unclear abbreviation: spell it out, e.g. \"doc_summary\"", name))
	}
	if last := words[len(words)-1]; isNumbered(last) && len(strings.Trim(name, "_")) > 1 {
		advice = append(advice, fmt.Sprintf(
			"%q looks like a numbered variable: name what sets it apart instead of counting", name))
	}
	if snake := strings.Join(words, "_"); snake != "" && snake != name {
		advice = append(advice, fmt.Sprintf("%q is not snake_case: prefer %q", name, snake))
	}
	return advice
}

// isUnclearAbbreviation flags two- or three-letter names without a vowel
// ("ds", "cfg"): those are abbreviations rather than words, and the ones
// everybody knows are listed in isCommonShort.
func isUnclearAbbreviation(w string) bool {
	if len(w) < 2 || len(w) > 3 || isCommonShort(w) {
		return false
	}
	for i := 0; i < len(w); i++ {
		c := w[i]
		if c < 'a' || c > 'z' {
			return false
		}
		if strings.IndexByte("aeiouy", c) >= 0 {
			return false
		}
	}
	return true
}

// isNumbered reports a word that ends in digits it does not need, as in
// data1 or the 2 of result_2; version tags (v2) and terms like sha256 pass.
func isNumbered(w string) bool {
	end := len(w)
	for end > 0 && w[end-1] >= '0' && w[end-1] <= '9' {
		end--
	}
	if end == len(w) || isDigitWord(w) {
		return false
	}
	return !(end == 1 && w[0] == 'v')
}

// splitWords splits an identifier into lowercase words at underscores and at
// case changes (riskCount, HTTPServer, RISK_COUNT), which is how snake_case
// spells the same name.
func splitWords(name string) []string {
	var words []string
	for _, part := range strings.Split(name, "_") {
		start := 0
		for i := 1; i < len(part); i++ {
			prev, c := part[i-1], part[i]
			upper := c >= 'A' && c <= 'Z'
			prevUpper := prev >= 'A' && prev <= 'Z'
			nextLower := i+1 < len(part) && part[i+1] >= 'a' && part[i+1] <= 'z'
			if upper && (!prevUpper || nextLower) {
				words = append(words, strings.ToLower(part[start:i]))
				start = i
			}
		}
		if start < len(part) {
			words = append(words, strings.ToLower(part[start:]))
		}
	}
	if len(words) == 0 {
		words = []string{""}
	}
	return words
}

// Prefixes of the generated ids of the specifications (state-a1b2c3d4 and so on).
const (
	PrefixState      = "state"
	PrefixMutation   = "mut"
	PrefixCheckpoint = "ckpt"
	PrefixTrajectory = "traj"
	PrefixTree       = "tree"
	PrefixTask       = "task"
	PrefixAlert      = "alert"
	// PrefixMessage names a queue message (the tiered state specification's coordination tier).
	PrefixMessage = "msg"
)

// ValidID reports whether id is prefix, a dash and eight lowercase hex
// digits, the form every generated id of the specifications takes.
func ValidID(prefix, id string) bool {
	if prefix == "" || len(id) != len(prefix)+9 || !strings.HasPrefix(id, prefix) || id[len(prefix)] != '-' {
		return false
	}
	for i := len(prefix) + 1; i < len(id); i++ {
		c := id[i]
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}
