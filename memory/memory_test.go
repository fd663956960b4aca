package memory

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/aiwg/aiwg-state/objects"
)

var t0 = time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)

func TestKeyCheck(t *testing.T) {
	for _, tc := range []struct {
		key Key
		ok  bool
	}{
		{Key{"session", "context", "ctx1"}, true},
		{Key{"daily_log", "entries", "2026-11-24"}, true},
		{Key{"long_term", "user", "user:42"}, true},
		{Key{"long-term", "user", "x"}, false}, // not an identifier
		{Key{"session", "", "x"}, false},
		{Key{"session", "a", ""}, false},
		{Key{"session", "a", "b/c"}, false},
		{Key{"session", "a", ".."}, true}, // the file is ...json
		{Key{"session", "a", `a\b`}, false},
		{Key{"session", "a", strings.Repeat("x", 300)}, false},
		{Key{"session", "a", "x\x00"}, false},
	} {
		err := tc.key.Check()
		if (err == nil) != tc.ok {
			t.Errorf("%q: %v", tc.key, err)
		}
		if err != nil && !errors.Is(err, ErrInvalid) {
			t.Errorf("%q: %v is not ErrInvalid", tc.key, err)
		}
		if k, ok := KeyOf(tc.key.File()); tc.ok && (!ok || k != tc.key) {
			t.Errorf("KeyOf(%s) = %v %v", tc.key.File(), k, ok)
		}
	}
	for _, f := range []string{"memory/a/b.json", "memory/a/b/c/d.json", "other/a/b/c.json", "memory/a/b/c.txt"} {
		if _, ok := KeyOf(f); ok {
			t.Errorf("KeyOf(%s) took it for a record", f)
		}
	}
}

// TestPutAndAppend: timestamps, time to live, and lists.
func TestPutAndAppend(t *testing.T) {
	k := Key{"session", "context", "c"}
	r1, err := Put(nil, k, []byte(`{"b": 1, "a": [1, 2]}`), time.Minute, t0)
	if err != nil {
		t.Fatal(err)
	}
	if string(r1.Payload) != `{"a":[1,2],"b":1}` || !r1.CreatedAt.Equal(t0) || r1.TTLSeconds != 60 || !r1.ExpiresAt.Equal(t0.Add(time.Minute)) {
		t.Fatalf("put: %+v", r1)
	}
	r2, _ := Put(r1, k, []byte(`2`), 0, t0.Add(time.Second))
	if !r2.CreatedAt.Equal(t0) || !r2.UpdatedAt.Equal(t0.Add(time.Second)) || r2.ExpiresAt != nil || r2.TTLSeconds != 0 {
		t.Errorf("an update keeps created_at and takes the put's (absent) ttl: %+v", r2)
	}
	r3, _ := Put(r1, k, []byte(`3`), 0, t0.Add(time.Hour))
	if !r3.CreatedAt.Equal(t0.Add(time.Hour)) {
		t.Errorf("a put over an expired record creates it anew: %+v", r3)
	}
	if _, err := Put(nil, k, []byte(`1`), 1500*time.Millisecond, t0); !errors.Is(err, ErrInvalid) {
		t.Errorf("a ttl of 1.5s: %v", err)
	}
	if _, err := Put(nil, k, []byte(`{`), 0, t0); !errors.Is(err, objects.ErrInvalidJSON) {
		t.Errorf("bad JSON: %v", err)
	}
	if _, err := Append(r1, k, []byte(`1`), 0, t0); !errors.Is(err, ErrNotList) {
		t.Errorf("append to an object: %v", err)
	}
	l1, err := Append(nil, k, []byte(`"a"`), time.Minute, t0)
	if err != nil {
		t.Fatal(err)
	}
	l2, err := Append(l1, k, []byte(`{"b":1}`), 0, t0.Add(time.Second))
	if err != nil || string(l2.Payload) != `["a",{"b":1}]` || l2.TTLSeconds != 60 || !l2.ExpiresAt.Equal(t0.Add(time.Second+time.Minute)) {
		t.Errorf("append keeps the ttl, from now: %+v %v", l2, err)
	}
	empty, _ := Put(nil, k, []byte(`[]`), 0, t0)
	if l, err := Append(empty, k, []byte(`1`), 0, t0); err != nil || string(l.Payload) != `[1]` {
		t.Errorf("append to an empty list: %+v %v", l, err)
	}
}

func TestDecodeChecksItsKey(t *testing.T) {
	r, _ := Put(nil, Key{"session", "a", "b"}, []byte(`1`), 0, t0)
	b, _ := json.Marshal(r)
	if _, err := Decode("memory/session/a/b.json", b); err != nil {
		t.Fatal(err)
	}
	if _, err := Decode("memory/session/a/c.json", b); !errors.Is(err, ErrInvalid) {
		t.Errorf("a record under another's name: %v", err)
	}
	bad := *r
	bad.TTLSeconds = 5
	if err := bad.Check(); !errors.Is(err, ErrInvalid) {
		t.Errorf("ttl without expiry: %v", err)
	}
}

// FuzzDecode: whatever a record file holds, Decode returns an error or a
// record that passes for its file and encodes to what decodes again.
func FuzzDecode(f *testing.F) {
	f.Add([]byte(`{"namespace":"session","record_kind":"a","record_id":"b","payload":{"x":1},"created_at":"2026-11-24T12:00:00Z","updated_at":"2026-11-24T12:00:00Z"}`))
	f.Add([]byte(`{"namespace":"session","record_kind":"a","record_id":"b","payload":[1,"2"],"created_at":"2026-11-24T12:00:00Z","updated_at":"2026-11-24T12:00:01Z","ttl_seconds":5,"expires_at":"2026-11-24T12:00:06Z"}`))
	f.Add([]byte(`{"namespace":"session","record_kind":"a","record_id":"b"}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := Decode("memory/session/a/b.json", data)
		if err != nil {
			return
		}
		b, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		back, err := Decode("memory/session/a/b.json", b)
		if err != nil {
			t.Fatalf("does not decode again: %v\n%s", err, b)
		}
		if b2, _ := json.Marshal(back); string(b2) != string(b) {
			t.Fatalf("not stable:\n%s\n%s", b, b2)
		}
		Append(r, r.Key, []byte(`1`), 0, t0)
	})
}

// FuzzReadLines: any input reads to an error or to records that each pass
// Check.
func FuzzReadLines(f *testing.F) {
	f.Add([]byte(`{"namespace":"session","record_kind":"a","record_id":"b","payload":1,"created_at":"2026-11-24T12:00:00Z","updated_at":"2026-11-24T12:00:00Z"}` + "\n\n"))
	f.Add([]byte(`{"namespace":"session","record_kind":"a","record_id":"b","payload":1,"created_at":"2026-11-24T12:00:00Z","updated_at":"2026-11-24T12:00:00Z"} {}`))
	f.Add([]byte("{\"extra\":1}\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		recs, err := ReadLines(bytes.NewReader(data))
		if err != nil {
			if !errors.Is(err, ErrInvalid) && !errors.Is(err, objects.ErrInvalidJSON) {
				t.Fatalf("an error of no kind: %v", err)
			}
			return
		}
		for _, r := range recs {
			if err := r.Check(); err != nil {
				t.Fatalf("read a record that fails Check: %v", err)
			}
		}
	})
}
