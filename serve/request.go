package serve

import (
	"encoding/binary"
	"fmt"
	"syscall"
)

// Request is what a client sends: the command line and the parts of its
// process a command may depend on.
type Request struct {
	Version int
	Args    []string // as os.Args: the program's name first
	Dir     string   // the client's working directory
	Env     []string // the client's environment, KEY=VALUE
	// Target is what the client resolved the command to act on (for
	// aiwg-state, the store's directory), for the server to check that it
	// is what it serves.
	Target string
	// Umask is the client's file mode creation mask.
	Umask int
	// Terminal: the client's standard output is a terminal (a command
	// may colour its output).
	Terminal bool
}

// Getenv returns the value of key in the request's environment.
func (r *Request) Getenv(key string) string {
	v, _ := r.LookupEnv(key)
	return v
}

// LookupEnv returns the value of key in the request's environment and
// whether it is set there (the first of repeated keys, as os.Getenv and
// the C library's getenv see an environment).
func (r *Request) LookupEnv(key string) (string, bool) {
	for _, kv := range r.Env {
		if k, v, ok := cut(kv, '='); ok && k == key {
			return v, true
		}
	}
	return "", false
}

// Umask is this process's file mode creation mask, for Request.Umask.
// (No call only reads it: it is set and set back.)
func Umask() int {
	m := syscall.Umask(0)
	syscall.Umask(m)
	return m
}

func cut(s string, sep byte) (string, string, bool) {
	for i := 0; i < len(s); i++ {
		if s[i] == sep {
			return s[:i], s[i+1:], true
		}
	}
	return s, "", false
}

// The request's encoding: uvarints and length-prefixed strings, in a
// fixed order (version, flags, umask, directory, target, arguments,
// environment). Not
// JSON: encoding/json's reflection and type caches were a tenth of the
// client's start.

func (r *Request) encode() []byte {
	b := binary.AppendUvarint(nil, uint64(r.Version))
	var flags uint64
	if r.Terminal {
		flags |= 1
	}
	b = binary.AppendUvarint(b, flags)
	b = binary.AppendUvarint(b, uint64(r.Umask&0o777))
	b = appendString(b, r.Dir)
	b = appendString(b, r.Target)
	for _, list := range [][]string{r.Args, r.Env} {
		b = binary.AppendUvarint(b, uint64(len(list)))
		for _, s := range list {
			b = appendString(b, s)
		}
	}
	return b
}

func appendString(b []byte, s string) []byte {
	return append(binary.AppendUvarint(b, uint64(len(s))), s...)
}

// decodeRequest reads an encoded request; every length is checked against
// what is left, so no input makes it allocate more than the payload.
func decodeRequest(p []byte) (Request, error) {
	var r Request
	d := decoder{p: p}
	version := d.uvarint()
	flags := d.uvarint()
	r.Version, r.Terminal = int(min(version, 1<<31)), flags&1 != 0
	r.Umask = int(d.uvarint() & 0o777)
	r.Dir = d.string()
	r.Target = d.string()
	for _, list := range []*[]string{&r.Args, &r.Env} {
		n := d.uvarint()
		if n > uint64(len(d.p)) { // each string takes a byte at least
			d.fail()
			break
		}
		*list = make([]string, 0, n)
		for i := uint64(0); i < n && d.err == nil; i++ {
			*list = append(*list, d.string())
		}
	}
	if d.err == nil && len(d.p) != 0 {
		d.err = fmt.Errorf("%w: %d bytes after the request", ErrProtocol, len(d.p))
	}
	return r, d.err
}

type decoder struct {
	p   []byte
	err error
}

func (d *decoder) fail() {
	if d.err == nil {
		d.err = fmt.Errorf("%w: a truncated or malformed request", ErrProtocol)
	}
}

func (d *decoder) uvarint() uint64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Uvarint(d.p)
	if n <= 0 {
		d.fail()
		return 0
	}
	d.p = d.p[n:]
	return v
}

func (d *decoder) string() string {
	n := d.uvarint()
	if d.err != nil {
		return ""
	}
	if n > uint64(len(d.p)) {
		d.fail()
		return ""
	}
	s := string(d.p[:n])
	d.p = d.p[n:]
	return s
}
