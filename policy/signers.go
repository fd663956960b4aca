package policy

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"path"
	"sort"
	"strings"

	"golang.org/x/crypto/ssh"

	"github.com/aiwg/aiwg-state/signing"
)

// Requirement is "require_signed": false or absent (no one), true
// (every agent), or a list of subjects: agent ids, glob patterns over ids
// as in rules, and "role:NAME" for a role's members.
type Requirement struct {
	All      bool
	Subjects []string
}

// RolePrefix marks a role among require_signed's subjects.
const RolePrefix = "role:"

// IsZero reports whether no one is required to sign.
func (r Requirement) IsZero() bool { return !r.All && len(r.Subjects) == 0 }

// UnmarshalJSON reads a boolean or a list of strings; anything else is
// refused, as an unknown field is.
func (r *Requirement) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	switch {
	case string(b) == "true":
		*r = Requirement{All: true}
		return nil
	case string(b) == "false", string(b) == "null": // null: as the boolean field took it
		*r = Requirement{}
		return nil
	case len(b) > 0 && b[0] == '[':
		var subs []string
		if err := json.Unmarshal(b, &subs); err != nil {
			return errors.New("require_signed: want true, false or a list of agents and \"role:NAME\"")
		}
		if len(subs) == 0 {
			return errors.New("require_signed: an empty list requires no one; write false")
		}
		*r = Requirement{Subjects: subs}
		return nil
	}
	return errors.New("require_signed: want true, false or a list of agents and \"role:NAME\"")
}

// MarshalJSON writes what UnmarshalJSON reads.
func (r Requirement) MarshalJSON() ([]byte, error) {
	if len(r.Subjects) > 0 {
		return json.Marshal(r.Subjects)
	}
	return json.Marshal(r.All)
}

// signerKeys are the parsed keys of "signers", by agent, and the agent
// each key belongs to.
type signerKeys struct {
	byAgent map[string][]ssh.PublicKey
	owner   map[string]string // key wire form -> agent
}

func (p *Policy) compileSigning() error {
	for _, s := range p.RequireSigned.Subjects {
		if role, ok := strings.CutPrefix(s, RolePrefix); ok {
			if _, known := p.Roles[role]; !known {
				return fmt.Errorf("require_signed: unknown role %q", role)
			}
			continue
		}
		if err := checkSubject(s); err != nil {
			return fmt.Errorf("require_signed: %v", err)
		}
	}
	p.keys = signerKeys{byAgent: map[string][]ssh.PublicKey{}, owner: map[string]string{}}
	names := make([]string, 0, len(p.Signers))
	for a := range p.Signers {
		names = append(names, a)
	}
	sort.Strings(names) // the same error for the same file
	for _, agent := range names {
		// A key signs for one agent, named exactly: a pattern would let
		// one key stand for agents that do not exist yet.
		if agent == "" || strings.ContainsAny(agent, "*?[]\\<>\n") {
			return fmt.Errorf("signers: %q is not an agent id (no patterns: a key signs for one agent)", agent)
		}
		if len(p.Signers[agent]) == 0 {
			return fmt.Errorf("signers: %q lists no keys", agent)
		}
		for _, line := range p.Signers[agent] {
			k, err := signing.ParsePublicKey(line)
			if err != nil {
				return fmt.Errorf("signers: %q: %v", agent, errors.Unwrap(err))
			}
			w := string(k.Marshal())
			if other, dup := p.keys.owner[w]; dup {
				if other == agent {
					return fmt.Errorf("signers: %q lists the key %s twice", agent, signing.Fingerprint(k))
				}
				return fmt.Errorf("signers: the key %s is listed for both %q and %q; a key signs for one agent", signing.Fingerprint(k), other, agent)
			}
			p.keys.owner[w] = agent
			p.keys.byAgent[agent] = append(p.keys.byAgent[agent], k)
		}
	}
	return nil
}

// SignatureRequired reports whether agent's commits must be signed.
func (p *Policy) SignatureRequired(agent string) bool {
	if p == nil {
		return false
	}
	if p.RequireSigned.All {
		return true
	}
	for _, s := range p.RequireSigned.Subjects {
		if role, ok := strings.CutPrefix(s, RolePrefix); ok {
			for _, m := range p.Roles[role] {
				if ok, _ := path.Match(m, agent); ok {
					return true
				}
			}
		} else if ok, _ := path.Match(s, agent); ok {
			return true
		}
	}
	return false
}

// HasSigners reports whether the policy lists signing keys: then SSH
// signatures are verified against them, in-process; without, a required
// signature is left to git verify-commit and the receiving git's keys.
func (p *Policy) HasSigners() bool { return p != nil && len(p.Signers) > 0 }

// SignerKeys are the keys agent's commits may be signed with.
func (p *Policy) SignerKeys(agent string) []ssh.PublicKey {
	if p == nil {
		return nil
	}
	return p.keys.byAgent[agent]
}

// Verdict is what a commit's signature shows against a policy.
type Verdict struct {
	Status signing.Status `json:"status"`
	// Signer is the agent whose listed key made the signature ("" when
	// the key is no one's in the policy); Key its fingerprint.
	Signer string `json:"signer,omitempty"`
	Key    string `json:"key,omitempty"`
	Detail string `json:"detail,omitempty"`
}

// VerifySignature judges the signature sig of payload (a commit split
// with repo.SplitSigned) as agent's: good only when it verifies with a
// key the policy lists for agent. A key listed for another agent is
// unknown-key too, naming that agent. OpenPGP and X.509 signatures are
// "unverified": git verify-commit checks those. A nil policy lists no keys.
func (p *Policy) VerifySignature(agent string, payload, sig []byte) Verdict {
	if len(sig) == 0 {
		return Verdict{Status: signing.None, Detail: "not signed"}
	}
	if !signing.IsSSH(sig) {
		return Verdict{Status: signing.Unverified, Detail: "an OpenPGP or X.509 signature (git verify-commit checks it)"}
	}
	k, err := signing.Verify(payload, sig, p.SignerKeys(agent))
	v := Verdict{}
	if k != nil {
		v.Key = signing.Fingerprint(k)
		if p != nil {
			v.Signer = p.keys.owner[string(k.Marshal())]
		}
	}
	switch {
	case err == nil:
		v.Status = signing.Good
	case errors.Is(err, signing.ErrUnknownKey):
		v.Status = signing.UnknownKey
		switch {
		case v.Signer != "":
			v.Detail = fmt.Sprintf("signed with %s, the key of %q, not of %q", v.Key, v.Signer, agent)
		default:
			v.Detail = fmt.Sprintf("signed with %s, which the policy does not list for %q", v.Key, agent)
		}
	default:
		v.Status, v.Signer = signing.Bad, ""
		v.Detail = "the signature does not match the commit: " + strings.TrimPrefix(err.Error(), signing.ErrSignature.Error()+": ")
	}
	return v
}
