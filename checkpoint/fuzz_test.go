package checkpoint

import "testing"

// FuzzParseMessage: a message Message wrote parses back to what went in;
// any other message parses or is refused without panicking.
func FuzzParseMessage(f *testing.F) {
	f.Add("before_split", "plan agreed\n\nsecond paragraph", "ckpt-1a2b3c4d", "state-a1b2c3d4")
	f.Add("x", "", "ckpt-00000000", "state-00000000")
	f.Add("n", "Checkpoint: ckpt-ffffffff", "ckpt-12345678", "state-12345678")
	f.Fuzz(func(t *testing.T, name, desc, id, state string) {
		ParseMessage(desc)
		c := &Checkpoint{Name: name, Description: desc, ID: id, State: state}
		gotID, gotState, _, ok := ParseMessage(Message(c))
		if !ok {
			return // ids that are not ckpt-/state- ids are refused
		}
		if gotID != id || gotState != state {
			t.Fatalf("parsed %q %q, wrote %q %q", gotID, gotState, id, state)
		}
	})
}
