package objects

import (
	"bytes"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/aiwg/aiwg-state/verbiage"
)

// smallDoc is a typical variable file (~165 bytes canonical).
const smallDoc = `{"name":"plan","scope":"session","type":"string","value":"draft the outline, then review","version":3,"updated_at":"2025-01-02T03:04:05Z"}`

// largeDoc builds a ~10 KB document shaped like a trajectory: nested
// objects, arrays of records, strings that need escaping, odd numbers.
func largeDoc() []byte {
	var b bytes.Buffer
	b.WriteString(`{"task_context":{"goal":"summarize <docs> & report","budget":1.50},"iterations":[`)
	for i := range 36 {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"thought":"step %d: read \"file_%d.md\"\nthen act","action":{"tool":"read","args":{"path":"docs/%d.md","limit":1e3}},"observation":"ok","score":0.%d,"tokens":%d}`, i, i, i, i, 1000+i)
	}
	b.WriteString(`],"outcome":{"status":"success","final":true},"metadata":{"model":"m","ids":[12345678901234567890,1.0,-0]}}`)
	return b.Bytes()
}

func benchInputs(b *testing.B) map[string][]byte {
	canonLarge, err := Canonical(largeDoc())
	if err != nil {
		b.Fatal(err)
	}
	canonSmall, err := Canonical([]byte(smallDoc))
	if err != nil {
		b.Fatal(err)
	}
	return map[string][]byte{"small": canonSmall, "large": canonLarge}
}

func BenchmarkCanonical(b *testing.B) {
	for _, size := range []string{"small", "large"} {
		canon := benchInputs(b)[size]
		var compactBuf bytes.Buffer
		json.Compact(&compactBuf, canon)
		for _, form := range []struct {
			name string
			data []byte
		}{{"canonical", canon}, {"compact", compactBuf.Bytes()}} {
			b.Run(fmt.Sprintf("%s-%dB/%s", size, len(canon), form.name), func(b *testing.B) {
				b.ReportAllocs()
				b.SetBytes(int64(len(form.data)))
				for b.Loop() {
					if _, err := Canonical(form.data); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

func BenchmarkDecode(b *testing.B) {
	for _, size := range []string{"small", "large"} {
		data := benchInputs(b)[size]
		b.Run(size, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(data)))
			for b.Loop() {
				if _, err := Decode(data); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkEncode(b *testing.B) {
	for _, size := range []string{"small", "large"} {
		v, err := Decode(benchInputs(b)[size])
		if err != nil {
			b.Fatal(err)
		}
		b.Run(size, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := Encode(v); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkStdlib is the reference point: encoding/json decoding with
// UseNumber and re-encoding indented (sorted keys, but HTML-escaped and
// without duplicate-key or UTF-8 checks).
func BenchmarkStdlib(b *testing.B) {
	for _, size := range []string{"small", "large"} {
		data := benchInputs(b)[size]
		b.Run(size, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				d := json.NewDecoder(bytes.NewReader(data))
				d.UseNumber()
				var v any
				if err := d.Decode(&v); err != nil {
					b.Fatal(err)
				}
				if _, err := json.MarshalIndent(v, "", "  "); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkGetRaw(b *testing.B) {
	in := benchInputs(b)
	for _, tc := range []struct{ size, path string }{
		{"small", "value"},
		{"large", "iterations.20.action.args"},
	} {
		data := in[tc.size]
		p := verbiage.MustParsePath(tc.path)
		b.Run(tc.size+"/GetRaw", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := GetRaw(data, p); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(tc.size+"/Decode+Get+Encode", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := getRawSlow(data, p); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
