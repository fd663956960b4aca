package repo

import "bytes"

// Signed commits. Git signs a commit's body without its signature
// header and inserts the signature as a header at the end of the headers
// (commit.c: add_header_signature); a verifier takes them apart again
// (parse_buffer_signed_by_header). These follow git line for line, so
// that what is signed here is what git verifies, and the reverse.

// sigHeader is the signature header of a SHA-1 repository; a signature
// for the other object format (gpgsig-sha256) is left out of the payload,
// as git does, and not taken as this commit's signature.
const sigHeader = "gpgsig"

// SplitSigned separates a commit body into the payload its signature
// covers and the signature (nil when it has none), as git's
// parse_signed_commit does for a SHA-1 repository: every gpgsig header
// line and its continuations form the signature (several are joined),
// every other gpgsig* header is dropped, and the rest is the payload.
func SplitSigned(body []byte) (payload, sig []byte) {
	var inSig, other bool
	payload = make([]byte, 0, len(body))
	for line := body; len(line) > 0; {
		n := bytes.IndexByte(line, '\n') + 1
		if n == 0 {
			n = len(line)
		}
		cur := line[:n]
		var s []byte
		switch {
		case inSig && cur[0] == ' ':
			s = cur[1:]
		case bytes.HasPrefix(cur, []byte(sigHeader+" ")):
			s, other = cur[len(sigHeader)+1:], false
		case bytes.HasPrefix(cur, []byte("gpgsig")):
			other = true
		case other && cur[0] != ' ':
			other = false
		}
		if s != nil {
			sig = append(sig, s...)
			inSig = true
		} else {
			if cur[0] == '\n' {
				cur, n = line, len(line) // the message, whole
			}
			if !other {
				payload = append(payload, cur...)
			}
			inSig = false
		}
		line = line[n:]
	}
	return payload, sig
}

// AddSignature inserts sig (an armored signature ending in a newline) as
// the gpgsig header of an unsigned commit body, as git does: after the
// last header, its lines after the first indented by one space.
func AddSignature(body, sig []byte) []byte {
	at := len(body)
	if i := bytes.Index(body, []byte("\n\n")); i >= 0 {
		at = i + 1
	}
	out := make([]byte, 0, len(body)+len(sig)+len(sigHeader)+32)
	out = append(out, body[:at]...)
	out = append(out, sigHeader...)
	for rest := sig; len(rest) > 0; {
		n := bytes.IndexByte(rest, '\n') + 1
		if n == 0 {
			n = len(rest)
		}
		out = append(out, ' ')
		out = append(out, rest[:n]...)
		rest = rest[n:]
	}
	return append(out, body[at:]...)
}
