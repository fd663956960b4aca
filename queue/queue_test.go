package queue

import (
	"errors"
	"testing"
	"time"
)

func TestNamesAndFiles(t *testing.T) {
	for _, tc := range []struct {
		name string
		ok   bool
	}{{"alerts", true}, {"inbox/pulse", true}, {"", false}, {"inbox/", false}, {"a-b", false}, {"../x", false}, {"1st", false}} {
		if err := CheckName(tc.name); (err == nil) != tc.ok {
			t.Errorf("%q: %v", tc.name, err)
		}
	}
	m, err := New("inbox/pulse", "msg-0a1b2c3d", 41, []byte(`{"b": 1, "a": 2}`), "conductor", time.Unix(1700000000, 0))
	if err != nil {
		t.Fatal(err)
	}
	if m.Seq != 42 || m.File() != "queues/inbox/pulse/000000000042-msg-0a1b2c3d.json" || string(m.Payload) != `{"a":2,"b":1}` {
		t.Fatalf("%+v %s", m, m.File())
	}
	if seq, ok := IsFile("000000000042-msg-0a1b2c3d.json"); !ok || seq != 42 {
		t.Errorf("IsFile: %d %v", seq, ok)
	}
	for _, f := range []string{"42-msg-0a1b2c3d.json", "000000000042-msg-0a1b2c3d.txt", "000000000042-msg-zzzzzzzz.json", "README.json"} {
		if _, ok := IsFile(f); ok {
			t.Errorf("IsFile(%s) took it for a message", f)
		}
	}
	b, _ := m.Encode()
	back, err := Decode(m.File(), b)
	if err != nil || back.ID != m.ID || string(back.Payload) != string(m.Payload) || !back.EnqueuedAt.Equal(m.EnqueuedAt) {
		t.Errorf("decoded %+v %v", back, err)
	}
	if _, err := Decode("queues/other/000000000042-msg-0a1b2c3d.json", b); !errors.Is(err, ErrInvalid) {
		t.Errorf("a message under another queue's name: %v", err)
	}
	if _, err := New("alerts", "msg-0a1b2c3d", 0, []byte(`{`), "p", time.Now()); err == nil {
		t.Error("a payload that is not JSON was taken")
	}
}

// FuzzDecode: whatever a message file holds, Decode returns an error or a
// message whose file is the one read and that encodes to what decodes
// again.
func FuzzDecode(f *testing.F) {
	const file = "queues/alerts/000000000001-msg-0a1b2c3d.json"
	f.Add([]byte(`{"id":"msg-0a1b2c3d","queue":"alerts","seq":1,"payload":{"x":[1,2]},"producer":"p","enqueued_at":"2026-11-24T12:00:00Z"}`))
	f.Add([]byte(`{"id":"msg-0a1b2c3d","queue":"alerts","seq":1}`))
	f.Add([]byte(`{"id":"msg-0a1b2c3d","queue":"alerts/../x","seq":1}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := Decode(file, data)
		if err != nil {
			return
		}
		if m.File() != file {
			t.Fatalf("decoded a message of %s from %s", m.File(), file)
		}
		b, err := m.Encode()
		if err != nil {
			t.Fatal(err)
		}
		back, err := Decode(file, b)
		if err != nil {
			t.Fatalf("does not decode again: %v\n%s", err, b)
		}
		if b2, _ := back.Encode(); string(b2) != string(b) {
			t.Fatalf("not stable:\n%s\n%s", b, b2)
		}
	})
}
