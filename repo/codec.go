package repo

import (
	"bytes"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
)

// The commit and tag codecs. They were go-git's plumbing/object, whose
// package initialisation (OpenPGP, its elliptic curves and their tables,
// gob through the config reader) cost every CLI command more than a
// millisecond before it did anything, for a format of a dozen lines. The
// decoders follow git's parse_commit_buffer and parse_tag_buffer: required
// headers first, unknown headers (and their continuation lines) skipped,
// the message kept byte for byte.

// ErrMalformedObject is a commit or tag object git's rules reject.
var ErrMalformedObject = errors.New("malformed object")

// Signature is a commit's author or committer, or a tag's tagger.
type Signature struct {
	Name  string
	Email string
	When  time.Time
}

// String is "Name <email>", as git shows an identity.
func (s Signature) String() string { return s.Name + " <" + s.Email + ">" }

// appendTo writes "Name <email> seconds +hhmm".
func (s Signature) appendTo(b []byte) []byte {
	b = append(b, s.Name...)
	b = append(b, " <"...)
	b = append(b, s.Email...)
	b = append(b, "> "...)
	b = strconv.AppendInt(b, max(s.When.Unix(), 0), 10)
	b = append(b, ' ')
	return s.When.AppendFormat(b, "-0700")
}

// parseSignature reads what appendTo writes. Like git it is lenient: the
// identity is what the last '<' and '>' enclose, and a time or zone it
// cannot read is left zero (UTC) rather than failing the whole object.
func parseSignature(b []byte) Signature {
	var s Signature
	open, close := bytes.LastIndexByte(b, '<'), bytes.LastIndexByte(b, '>')
	if open < 0 || close < open {
		s.Name = string(bytes.TrimSpace(b))
		return s
	}
	s.Name = string(bytes.TrimSpace(b[:open]))
	s.Email = string(b[open+1 : close])
	secs, zone, _ := bytes.Cut(bytes.TrimSpace(b[close+1:]), []byte{' '})
	ts, err := strconv.ParseInt(string(secs), 10, 64)
	if err != nil {
		return s
	}
	s.When = time.Unix(ts, 0).UTC()
	if len(zone) != 5 || (zone[0] != '+' && zone[0] != '-') {
		return s
	}
	hh, err1 := strconv.Atoi(string(zone[1:3]))
	mm, err2 := strconv.Atoi(string(zone[3:5]))
	if err1 != nil || err2 != nil {
		return s
	}
	off := hh*3600 + mm*60
	if zone[0] == '-' {
		off = -off
	}
	s.When = s.When.In(time.FixedZone("", off))
	return s
}

// header is one header line of a commit or tag, its continuation lines
// (those starting with a space) joined to it with newlines.
type header struct {
	key   string
	value []byte
}

// splitHeaders returns the headers and the message: everything after the
// first empty line, byte for byte.
func splitHeaders(body []byte) ([]header, []byte) {
	var hs []header
	for len(body) > 0 {
		line, rest, found := bytes.Cut(body, []byte{'\n'})
		if len(line) == 0 {
			return hs, rest
		}
		if line[0] == ' ' && len(hs) > 0 {
			last := &hs[len(hs)-1]
			last.value = append(append(last.value, '\n'), line[1:]...)
		} else {
			k, v, _ := bytes.Cut(line, []byte{' '})
			// Capacity capped at the line: a continuation appended
			// later copies the value rather than writing over the body.
			hs = append(hs, header{key: string(k), value: v[:len(v):len(v)]})
		}
		body = rest
		if !found {
			break
		}
	}
	return hs, nil
}

// parseHash reads a hex object name, in either case as git does.
func parseHash(v []byte, what string) (plumbing.Hash, error) {
	var h plumbing.Hash
	if len(v) != 40 {
		return h, fmt.Errorf("%w: bad %s %q", ErrMalformedObject, what, v)
	}
	if _, err := hex.Decode(h[:], v); err != nil {
		return h, fmt.Errorf("%w: bad %s %q", ErrMalformedObject, what, v)
	}
	return h, nil
}

// ParseCommit decodes a commit object's body. As git requires, the tree
// comes first and the parents right after it; author and committer are the
// first of their headers. A signature (gpgsig) is kept so a policy can ask
// whether the commit is signed.
func ParseCommit(h plumbing.Hash, body []byte) (*Commit, error) {
	hs, msg := splitHeaders(body)
	if len(hs) == 0 || hs[0].key != "tree" {
		return nil, fmt.Errorf("commit %s: %w: no tree header first", h, ErrMalformedObject)
	}
	c := &Commit{Hash: h, Message: string(msg)}
	var err error
	if c.Tree, err = parseHash(hs[0].value, "tree"); err != nil {
		return nil, fmt.Errorf("commit %s: %w", h, err)
	}
	i := 1
	for ; i < len(hs) && hs[i].key == "parent"; i++ {
		p, err := parseHash(hs[i].value, "parent")
		if err != nil {
			return nil, fmt.Errorf("commit %s: %w", h, err)
		}
		c.Parents = append(c.Parents, p)
	}
	var sawAuthor, sawCommitter bool
	for _, hd := range hs[i:] {
		switch {
		case hd.key == "author" && !sawAuthor:
			c.Author, sawAuthor = parseSignature(hd.value), true
		case hd.key == "committer" && !sawCommitter:
			c.Committer, sawCommitter = parseSignature(hd.value), true
		case hd.key == "gpgsig" || hd.key == "gpgsig-sha256":
			c.PGPSignature = string(hd.value) + "\n"
		}
	}
	return c, nil
}

// CheckCommitHeaders says why a commit's headers are ones readers take
// differently (nil when they are not): exactly one author and then one
// committer must follow the parents, as git fsck requires (missingAuthor,
// multipleAuthors) and git writes them, and no encoding header. ParseCommit
// reads the first author, git's log and shortlog another, and a commit
// with an encoding is re-encoded by git's log but read byte for byte here;
// a checker of commits it did not write (a server's pre-receive hook)
// refuses such commits rather than credit the wrong agent. The error wraps
// ErrMalformedObject.
func CheckCommitHeaders(body []byte) error {
	hs, _ := splitHeaders(body)
	authors, committers := 0, 0
	for _, hd := range hs {
		switch hd.key {
		case "author":
			authors++
		case "committer":
			committers++
		case "encoding":
			return fmt.Errorf("%w: an encoding header (%q): git log re-encodes the message and names, readers of the bytes do not", ErrMalformedObject, hd.value)
		}
	}
	if authors > 1 {
		return fmt.Errorf("%w: %d author headers: git log shows one, other readers another", ErrMalformedObject, authors)
	}
	if committers > 1 {
		return fmt.Errorf("%w: %d committer headers: git log shows one, other readers another", ErrMalformedObject, committers)
	}
	i := 0
	if i < len(hs) && hs[i].key == "tree" {
		i++
	}
	for i < len(hs) && hs[i].key == "parent" {
		i++
	}
	if i >= len(hs) || hs[i].key != "author" {
		return fmt.Errorf("%w: no author header after the tree and parents", ErrMalformedObject)
	}
	if i+1 >= len(hs) || hs[i+1].key != "committer" {
		return fmt.Errorf("%w: no committer header right after the author", ErrMalformedObject)
	}
	return nil
}

// encodeCommit writes a commit as git does, unsigned and without an
// encoding header (a signature is added to what it writes: AddSignature).
func encodeCommit(c *Commit) ([]byte, error) {
	if strings.ContainsAny(c.Author.Name+c.Author.Email+c.Committer.Name+c.Committer.Email, "<>\n") {
		return nil, fmt.Errorf("%w: an identity holds '<', '>' or a newline", ErrMalformedObject)
	}
	b := make([]byte, 0, 200+len(c.Message)+48*len(c.Parents))
	b = append(b, "tree "...)
	b = append(b, c.Tree.String()...)
	for _, p := range c.Parents {
		b = append(b, "\nparent "...)
		b = append(b, p.String()...)
	}
	b = append(b, "\nauthor "...)
	b = c.Author.appendTo(b)
	b = append(b, "\ncommitter "...)
	b = c.Committer.appendTo(b)
	b = append(b, "\n\n"...)
	return append(b, c.Message...), nil
}

// ParseTag decodes an annotated tag object's body as git's
// parse_tag_buffer does: "object" first, "type" (blob, tree, commit or tag)
// second, then an optional "tag" name, and the first "tagger" after them;
// other headers are skipped. A signature at the end of the message (an
// armored OpenPGP, X.509 or SSH block, as `git tag -s` leaves) is split off
// into PGPSignature.
func ParseTag(h plumbing.Hash, body []byte) (*Tag, error) {
	hs, msg := splitHeaders(body)
	if len(hs) < 2 || hs[0].key != "object" || hs[1].key != "type" {
		return nil, fmt.Errorf("tag %s: %w: no object and type headers first", h, ErrMalformedObject)
	}
	t := &Tag{Hash: h}
	var err error
	if t.Target, err = parseHash(hs[0].value, "object"); err != nil {
		return nil, fmt.Errorf("tag %s: %w", h, err)
	}
	switch typ := string(hs[1].value); typ {
	case "blob", "tree", "commit", "tag":
		t.TargetType, _ = plumbing.ParseObjectType(typ)
	default:
		return nil, fmt.Errorf("tag %s: %w: type %q", h, ErrMalformedObject, typ)
	}
	rest := hs[2:]
	if len(rest) > 0 && rest[0].key == "tag" {
		t.Name = string(rest[0].value)
		rest = rest[1:]
	}
	for _, hd := range rest {
		if hd.key == "tagger" {
			t.Tagger = parseSignature(hd.value)
			break
		}
	}
	if i := signatureStart(msg); i >= 0 {
		t.PGPSignature, msg = string(msg[i:]), msg[:i]
	}
	t.Message = string(msg)
	return t, nil
}

// signatureStart is the offset of the last line that opens an armored
// signature, or -1.
func signatureStart(msg []byte) int {
	at := -1
	for off := 0; off < len(msg); {
		line := msg[off:]
		if bytes.HasPrefix(line, []byte("-----BEGIN PGP SIGNATURE-----")) ||
			bytes.HasPrefix(line, []byte("-----BEGIN PGP MESSAGE-----")) ||
			bytes.HasPrefix(line, []byte("-----BEGIN SIGNED MESSAGE-----")) || // X.509
			bytes.HasPrefix(line, []byte("-----BEGIN SSH SIGNATURE-----")) {
			at = off
		}
		nl := bytes.IndexByte(line, '\n')
		if nl < 0 {
			break
		}
		off += nl + 1
	}
	return at
}

// encodeTag writes an annotated tag as git does.
func encodeTag(t *Tag) ([]byte, error) {
	if t.Name == "" || strings.ContainsAny(t.Name, " \n") {
		return nil, fmt.Errorf("%w: tag name %q", ErrMalformedObject, t.Name)
	}
	if strings.ContainsAny(t.Tagger.Name+t.Tagger.Email, "<>\n") {
		return nil, fmt.Errorf("%w: an identity holds '<', '>' or a newline", ErrMalformedObject)
	}
	b := make([]byte, 0, 200+len(t.Message))
	b = append(b, "object "...)
	b = append(b, t.Target.String()...)
	b = append(b, "\ntype "...)
	b = append(b, t.TargetType.String()...)
	b = append(b, "\ntag "...)
	b = append(b, t.Name...)
	b = append(b, "\ntagger "...)
	b = t.Tagger.appendTo(b)
	b = append(b, "\n\n"...)
	return append(b, t.Message...), nil
}
