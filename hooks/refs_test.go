package hooks

import (
	"strings"
	"testing"
)

func TestTagHeaders(t *testing.T) {
	const obj = "object 0123456789abcdef0123456789abcdef01234567\n"
	const name = "checkpoints/state-0123abcd/ck"
	for _, tc := range []struct {
		body, want string // want "" = a checkpoint's headers
	}{
		{obj + "type commit\ntag " + name + "\ntagger a <a@x> 1 +0000\n\nmsg\n", ""},
		{obj + "type commit\ntag " + name + "\ntagger a <a@x> 1 +0000\ntagger b <b@x> 1 +0000\n\nmsg\n", "once each"},
		{obj + "type commit\ntag " + name + "\ntagger a <a@x> 1 +0000\nencoding x\n\nmsg\n", "once each"},
		{obj + "type tree\ntag " + name + "\ntagger a <a@x> 1 +0000\n\nmsg\n", "not a tree"},
		{obj + "type commit\ntag other\ntagger a <a@x> 1 +0000\n\nmsg\n", `named "other"`},
		{"object nothex\ntype commit\ntag " + name + "\ntagger a <a@x> 1 +0000\n\n", "no object id"},
		{obj + "type commit\ntagger a <a@x> 1 +0000\ntag " + name + "\n\n", "once each"},
		{obj + "type commit\ntag " + name + "\n", "once each"},
	} {
		got := tagHeaders([]byte(tc.body), name)
		if (tc.want == "") != (got == "") || !strings.Contains(got, tc.want) {
			t.Errorf("tagHeaders(%q) = %q, want %q", tc.body, got, tc.want)
		}
	}
}

func FuzzTagHeaders(f *testing.F) {
	f.Add([]byte("object 0123456789abcdef0123456789abcdef01234567\ntype commit\ntag n\ntagger a <a@x> 1 +0000\n\nmsg\n"))
	f.Add([]byte("object x\ntype commit\n\n"))
	f.Fuzz(func(t *testing.T, body []byte) {
		if tagHeaders(body, "n") != "" {
			return
		}
		// Accepted: exactly the four headers, in order, the name given.
		head, _, _ := strings.Cut(string(body), "\n\n")
		lines := strings.Split(head, "\n")
		if len(lines) != 4 || lines[2] != "tag n" || lines[1] != "type commit" || !strings.HasPrefix(lines[3], "tagger ") {
			t.Fatalf("accepted %q", body)
		}
	})
}

func TestSignerOf(t *testing.T) {
	for _, tc := range []struct{ out, want string }{
		{`Good "git" signature for alice@agents.invalid with ED25519 key SHA256:abc` + "\n", "alice@agents.invalid"},
		{`Good "git" signature for * with ED25519 key SHA256:abc`, "*"},
		{"[GNUPG:] NEWSIG\n[GNUPG:] KEY_CONSIDERED ABC 0\n[GNUPG:] GOODSIG 0123456789ABCDEF Alice Example <alice@example.com>\n[GNUPG:] VALIDSIG ...\n", "Alice Example <alice@example.com>"},
		{"gpg: Good signature\n", ""},
		{"", ""},
	} {
		if got := signerOf(tc.out); got != tc.want {
			t.Errorf("signerOf(%q) = %q, want %q", tc.out, got, tc.want)
		}
	}
}

func TestSigns(t *testing.T) {
	for _, tc := range []struct {
		who, agent string
		want       bool
	}{
		{"alice", "alice", true},
		{"alice@agents.invalid", "alice", true},
		{"Alice Example <alice@example.com>", "alice", true},
		{"alice <mallory@example.com>", "alice", true}, // the user id's name part, as the server's keyring has it
		{"mallory@agents.invalid", "alice", false},
		{"*", "alice", false},
		{"*@agents.invalid", "alice", false},
		{"alice.smith@x", "alice", false},
		{"", "alice", false},
		{"@alice", "alice", false},
	} {
		if got := signs(tc.who, tc.agent); got != tc.want {
			t.Errorf("signs(%q, %q) = %v, want %v", tc.who, tc.agent, got, tc.want)
		}
	}
}

func FuzzSignerOf(f *testing.F) {
	f.Add(`Good "git" signature for alice with ED25519 key SHA256:abc`, "alice")
	f.Add("[GNUPG:] GOODSIG 0123 Alice <alice@x>\n", "alice")
	f.Fuzz(func(t *testing.T, out, agent string) {
		who := signerOf(out)
		if who != "" && !strings.Contains(out, who) {
			t.Fatalf("signerOf(%q) = %q, not in the output", out, who)
		}
		// A wildcard signs for no agent but one of that very name.
		if signs("*", agent) && agent != "*" {
			t.Fatalf("* signs for %q", agent)
		}
	})
}
