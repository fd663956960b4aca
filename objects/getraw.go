package objects

import (
	"strings"

	"github.com/tidwall/gjson"

	"github.com/aiwg/aiwg-state/verbiage"
)

// GetRaw returns the canonical encoding of the value at p in the JSON data,
// with the same results and errors as Get on the decoded document. It is the
// read path for stored files: on canonical data it finds the value with
// gjson without decoding the document; other data is decoded (and so must
// be valid).
func GetRaw(data []byte, p verbiage.Path) ([]byte, error) {
	if err := refuseWildcard(p); err != nil {
		return nil, err
	}
	if !isCanonical(data) || !gjsonAddressable(p) {
		return getRawSlow(data, p)
	}
	cur := string(data[:len(data)-1]) // one copy; gjson results slice it
	for i, seg := range p {
		switch cur[0] {
		case '{':
			// Escape every character gjson gives a meaning to ('.', '*',
			// '?', '#', '@', '|', '!', '\\', '[', '{', '=', ...), so the
			// segment is matched as a literal key.
			res := gjson.Get(cur, gjson.Escape(seg.Key))
			if !res.Exists() {
				return nil, notFound(p[:i+1], "")
			}
			cur = res.Raw
		case '[':
			// Only a canonical index reaches gjson: it would read "01" or
			// "#" its own way, where Get finds nothing.
			if _, ok := seg.Index(); !ok {
				return nil, notFound(p[:i+1], "")
			}
			res := gjson.Get(cur, seg.Key)
			if !res.Exists() {
				return nil, notFound(p[:i+1], "")
			}
			cur = res.Raw
		default:
			return nil, notContainerRaw(p, i, cur[0])
		}
	}
	return dedent(cur, len(p)), nil
}

// gjsonAddressable reports whether gjson can address every segment; an empty
// key cannot be written as a gjson path.
func gjsonAddressable(p verbiage.Path) bool {
	for _, s := range p {
		if s.Key == "" {
			return false
		}
	}
	return true
}

func getRawSlow(data []byte, p verbiage.Path) ([]byte, error) {
	doc, err := Decode(data)
	if err != nil {
		return nil, err
	}
	v, err := Get(doc, p)
	if err != nil {
		return nil, err
	}
	return Encode(v)
}

func notContainerRaw(p verbiage.Path, i int, first byte) error {
	var v any
	switch first {
	case '"':
		v = ""
	case 't', 'f':
		v = false
	case 'n':
		v = nil
	default:
		v = 0
	}
	return notContainer(p, i, v)
}

// dedent turns a value found depth levels down in a canonical document into
// its own canonical encoding. Canonical strings hold no raw newline, so
// every newline is followed by the document's indent.
func dedent(raw string, depth int) []byte {
	out := make([]byte, 0, len(raw)+1)
	strip := 2 * depth
	for {
		nl := strings.IndexByte(raw, '\n')
		if nl < 0 {
			break
		}
		out = append(out, raw[:nl+1]...)
		raw = raw[nl+1+strip:]
	}
	out = append(out, raw...)
	return append(out, '\n')
}
