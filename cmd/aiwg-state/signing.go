package main

import (
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/aiwg/aiwg-state/policy"
	"github.com/aiwg/aiwg-state/store"
)

func verifyFlag() cli.Flag {
	return &cli.BoolFlag{Name: "verify", Aliases: []string{"show-signature"}, Usage: "verify each mutation's signature against the keys the policy lists for its agent (good, bad, none, unknown-key, unverified)"}
}

// signatures is the verifier of --verify, nil without it. The policy
// whose signers it trusts is the one at --at, else at the branch head.
func (s *session) signatures() (*store.Signatures, error) {
	if !s.c.Bool("verify") {
		return nil, nil
	}
	ro := store.ReadOptions{Branch: s.c.String("branch")}
	if s.c.IsSet("at") {
		ro.At = s.at()
	}
	return s.store.Signatures(ro)
}

func verifyCommit(sigs *store.Signatures, commit string) (*policy.Verdict, error) {
	if sigs == nil || commit == "" {
		return nil, nil
	}
	return sigs.Verify(commit)
}

// sigColumn is the signature column of a log or blame line: empty
// without --verify, else the status (and whose key made it).
func sigColumn(v *policy.Verdict) string {
	if v == nil {
		return ""
	}
	label := string(v.Status)
	if v.Status == "good" {
		label += ":" + v.Signer
	}
	return fmt.Sprintf("  %-18s", label)
}

// signatureLine is show's account of a signature.
func signatureLine(v *policy.Verdict) string {
	out := string(v.Status)
	if v.Signer != "" {
		out += " by " + v.Signer
	}
	if v.Key != "" {
		out += " (" + v.Key + ")"
	}
	if v.Detail != "" && v.Status != "good" {
		out += ": " + v.Detail
	}
	return out
}

func signingKeyFlag() cli.Flag {
	return &cli.StringFlag{Name: "signing-key", Usage: "sign the commit with this SSH private key file (default: the agent's aiwg.<agent>.signingKey in the store's git config)", EnvVars: []string{"AIWG_SIGNING_KEY"}}
}

// signingKey is --signing-key ($AIWG_SIGNING_KEY, read as the invocation
// sees the environment), a path relative to the invocation's directory.
func (s *session) signingKey() string {
	k := s.c.String("signing-key")
	if k == "" {
		k = s.inv.getenv("AIWG_SIGNING_KEY")
	}
	if k == "" {
		return ""
	}
	return s.inv.resolve(k)
}
