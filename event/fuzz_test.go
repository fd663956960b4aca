package event

import (
	"testing"
)

// FuzzDecode: Decode never panics, and what it accepts encodes back to a
// file it accepts again, at the same path, as the same event.
func FuzzDecode(f *testing.F) {
	f.Add("events/planner/2026-03-04/040607.000000008-evt-0123abcd.json",
		[]byte(`{"correlation_id":"run-1","id":"evt-0123abcd","payload":{"a":1},"source":"planner","target":"coder","time":"2026-03-04T04:06:07.000000008Z","type":"task.created"}`))
	f.Fuzz(func(t *testing.T, file string, data []byte) {
		e, err := Decode(file, data)
		if err != nil {
			return
		}
		b, err := e.Encode()
		if err != nil {
			t.Fatalf("an event decoded from %q does not encode: %v", data, err)
		}
		again, err := Decode(e.File(), b)
		if err != nil {
			t.Fatalf("re-encoded %q does not decode: %v", b, err)
		}
		if e.File() != file || again.File() != file || again.ID != e.ID || again.Type != e.Type || string(again.Payload) != string(e.Payload) {
			t.Fatalf("%q read as %+v, then %+v", data, e, again)
		}
	})
}

// FuzzCheckType: CheckType never panics, and what it accepts is a name an
// event's file and a commit trailer can hold.
func FuzzCheckType(f *testing.F) {
	for _, s := range []string{"task.created", "a..b", "*", "task.*"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if CheckType(s) == nil {
			for _, r := range s {
				if r == '\n' || r == ' ' || r == '/' || r == '*' {
					t.Fatalf("CheckType accepted %q", s)
				}
			}
		}
		_ = CheckPattern(s)
	})
}
