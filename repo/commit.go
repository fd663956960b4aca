package repo

import (
	"fmt"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
)

// Commit is a decoded commit.
type Commit struct {
	Hash      plumbing.Hash
	Tree      plumbing.Hash
	Parents   []plumbing.Hash
	Author    Signature
	Committer Signature
	Message   string
	// PGPSignature is the commit's signature (its gpgsig header): an
	// armored OpenPGP, X.509 or SSH signature, empty when it is not
	// signed. SplitSigned gives the payload it signs.
	PGPSignature string
	// Shallow: the commit is at a shallow clone's boundary. The clone
	// holds it but not its parents, so Parents is empty, as in git's own
	// history walks; the commit object itself names them.
	Shallow bool
}

// Subject is the message's first line.
func (c *Commit) Subject() string {
	s, _, _ := strings.Cut(c.Message, "\n")
	return s
}

// Trailers parses the "Key: value" lines of the message's last paragraph,
// as git interpret-trailers does for the simple form we write.
func (c *Commit) Trailers() Trailers { return ParseTrailers(c.Message) }

// Trailer is one "Key: value" line.
type Trailer struct{ Key, Value string }

// Trailers is a commit's trailers in order; keys may repeat.
type Trailers []Trailer

// Get returns the first value of key ("" when absent); keys compare
// case-insensitively, as git's do.
func (t Trailers) Get(key string) string {
	for _, tr := range t {
		if strings.EqualFold(tr.Key, key) {
			return tr.Value
		}
	}
	return ""
}

// All returns every value of key in order.
func (t Trailers) All(key string) []string {
	var out []string
	for _, tr := range t {
		if strings.EqualFold(tr.Key, key) {
			out = append(out, tr.Value)
		}
	}
	return out
}

// ParseTrailers reads the trailer block of a commit message.
func ParseTrailers(msg string) Trailers {
	msg = strings.TrimRight(msg, "\n")
	i := strings.LastIndex(msg, "\n\n")
	if i < 0 {
		return nil
	}
	var out Trailers
	for _, line := range strings.Split(msg[i+2:], "\n") {
		k, v, ok := strings.Cut(line, ": ")
		if !ok || k == "" || strings.ContainsAny(k, " \t") {
			return nil // not a trailer block
		}
		out = append(out, Trailer{Key: k, Value: v})
	}
	return out
}

// FormatMessage joins a subject, an optional body and trailers. Trailer
// values are kept to one line: a newline would end the trailer block.
func FormatMessage(subject, body string, trailers Trailers) string {
	var b strings.Builder
	b.WriteString(oneLine(subject))
	b.WriteString("\n")
	if body = strings.TrimSpace(body); body != "" {
		b.WriteString("\n")
		b.WriteString(body)
		b.WriteString("\n")
	}
	if len(trailers) > 0 {
		b.WriteString("\n")
		for _, t := range trailers {
			b.WriteString(t.Key)
			b.WriteString(": ")
			b.WriteString(oneLine(t.Value))
			b.WriteString("\n")
		}
	}
	return b.String()
}

func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

// ReadCommit returns a decoded commit. At a shallow clone's boundary it
// has no parents and Shallow set.
func (r *Repo) ReadCommit(h plumbing.Hash) (*Commit, error) {
	c, err := r.readCommit(h)
	if err != nil {
		return nil, err
	}
	if sh := r.shallowSet(); sh != nil && sh[h] {
		cp := *c
		cp.Parents, cp.Shallow = nil, true
		return &cp, nil
	}
	return c, nil
}

// readCommit returns a commit as stored (the cache holds it so: the
// shallow boundary moves when a fetch deepens the clone).
func (r *Repo) readCommit(h plumbing.Hash) (*Commit, error) {
	r.mu.Lock()
	if c, ok := r.cache.get(commitKey(h)); ok {
		r.mu.Unlock()
		return c.(*Commit), nil
	}
	r.mu.Unlock()
	t, body, err := r.ReadObject(h)
	if err != nil {
		return nil, err
	}
	if t == plumbing.TagObject {
		return nil, fmt.Errorf("object %s is a tag, not a commit: %w", h, ErrNotFound)
	}
	if t != plumbing.CommitObject {
		return nil, fmt.Errorf("object %s is a %s, not a commit: %w", h, t, ErrNotFound)
	}
	c, err := ParseCommit(h, body)
	if err != nil {
		return nil, err
	}
	r.mu.Lock()
	r.cache.put(commitKey(h), c)
	r.mu.Unlock()
	return c, nil
}

// commitKey and treeKey keep decoded commits and trees apart from raw
// objects in the one cache: a raw tree is what a lookup scans, a decoded
// one what a write edits, and both stay cached side by side.
func commitKey(h plumbing.Hash) plumbing.Hash {
	h[19] ^= 0xff
	h[0] ^= 0xa5
	return h
}

func treeKey(h plumbing.Hash) plumbing.Hash {
	h[19] ^= 0x5a
	h[1] ^= 0x3c
	return h
}

// NewSignature builds a signature for an agent at a time. Git needs an
// address; agents have none, so they get one under the reserved .invalid
// domain that no one will mistake for a mailbox.
func NewSignature(agent string, when time.Time) Signature {
	return Signature{Name: IdentityName(agent), Email: agentEmail(agent), When: when}
}

// IdentityName is the author name an agent's commits carry: its id, with
// '<', '>' and line breaks, which git does not allow in an identity (and
// git fsck rejects), as '-'.
func IdentityName(agent string) string {
	return strings.Map(func(c rune) rune {
		if c == '<' || c == '>' || c == '\n' {
			return '-'
		}
		return c
	}, agent)
}

func agentEmail(agent string) string {
	return strings.ReplaceAll(IdentityName(agent), " ", "-") + "@agents.invalid"
}
