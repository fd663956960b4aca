package serve

import (
	"bytes"
	"slices"
	"testing"
)

// FuzzFrames reads any bytes as a stream of frames: no panic, no frame
// over its bound, and every frame read writes back as the bytes it came
// from.
func FuzzFrames(f *testing.F) {
	f.Add([]byte{frameStarted, 0, 0, 0, 0, frameStdout, 0, 0, 0, 2, 'h', 'i', frameExit, 0, 0, 0, 4, 0, 0, 0, 3})
	f.Add([]byte{frameRequest, 0, 0, 0, 2, '{', '}'})
	f.Add([]byte{frameStdout, 0xff, 0xff, 0xff, 0xff})
	f.Add([]byte{frameExit, 0, 0, 0, 3, 1, 2, 3})
	f.Fuzz(func(t *testing.T, data []byte) {
		r := bytes.NewReader(data)
		var out bytes.Buffer
		for {
			before := len(data) - r.Len()
			typ, payload, err := readFrame(r, 64)
			if err != nil {
				break
			}
			if len(payload) > 64 {
				t.Fatalf("a frame of %d bytes passed a bound of 64", len(payload))
			}
			if typ == frameExit {
				if code, err := parseExit(payload); err == nil && !bytes.Equal(exitPayload(code), payload) {
					t.Fatalf("exit code %d does not round-trip", code)
				}
			}
			writeFrame(&out, typ, payload)
			if got, want := out.Bytes(), data[:len(data)-r.Len()]; !bytes.Equal(got, want) {
				t.Fatalf("frame at %d re-encodes as %x, read from %x", before, got, want)
			}
		}
	})
}

// FuzzDecodeRequest: any payload decodes without a panic or an allocation
// beyond its size, and what decodes survives encoding and decoding again.
// (Not the same bytes: a uvarint may be padded.)
func FuzzDecodeRequest(f *testing.F) {
	f.Add((&Request{Version: 1, Args: []string{"aiwg-state", "set", "a.json", "k", "1"}, Dir: "/w", Target: "/w/.aiwg/state.git", Umask: 0o022, Env: []string{"A=1", "B="}, Terminal: true}).encode())
	f.Add((&Request{}).encode())
	f.Add([]byte{1, 0, 0, 0xff, 0xff, 0xff, 0xff, 0x0f})
	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := decodeRequest(data)
		if err != nil {
			return
		}
		if r2, err := decodeRequest(r.encode()); err != nil || !sameRequest(r, r2) {
			t.Fatalf("%+v does not round-trip: %+v, %v", r, r2, err)
		}
	})
}

func sameRequest(a, b Request) bool {
	return a.Version == b.Version && a.Terminal == b.Terminal && a.Umask == b.Umask && a.Dir == b.Dir && a.Target == b.Target &&
		slices.Equal(a.Args, b.Args) && slices.Equal(a.Env, b.Env)
}
