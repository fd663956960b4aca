package hooks

import (
	"context"
	"fmt"
	"os/exec"
	"strings"

	"github.com/aiwg/aiwg-state/repo"
	"github.com/aiwg/aiwg-state/signing"
)

// checkSignature says why a commit whose author must sign fails the
// signed rule ("" when it passes); see verify.
func (c *checker) checkSignature(h, agent string, body []byte) (string, error) {
	payload, sig := repo.SplitSigned(body)
	return c.verify(context.Background(), "commit", h, agent, payload, sig)
}

// verify says why the signature sig of payload, the body of object h (a
// commit or a tag, as kind says), is not agent's ("" when it is).
//
// When the policy lists signers, an SSH signature is verified here
// against the keys it lists for agent: a signature by another agent's
// key, or of another body (the object changed after signing), fails; and
// an OpenPGP or X.509 signature is refused, since the policy's list is
// the one that says whose key is whose and it holds SSH keys only.
//
// Without signers, git verify-commit (verify-tag) checks the signature
// with the server's own keys (gpg.ssh.allowedSignersFile, the gpg
// keyring), and the key must be agent's there too: git's principal for
// an SSH key, or the user id of an OpenPGP or X.509 key, names the agent
// (alice, or an address alice@…; for a user id "Name <address>", either
// part). A key git knows for someone else signs for no one but them.
func (c *checker) verify(ctx context.Context, kind, h, agent string, payload, sig []byte) (string, error) {
	if len(sig) == 0 {
		return fmt.Sprintf("the policy requires agent %q's %ss to be signed; this one is not signed", agent, kind), nil
	}
	if c.policy.HasSigners() {
		if !signing.IsSSH(sig) {
			return fmt.Sprintf("an OpenPGP or X.509 signature: the policy lists its agents' keys (signers), which are SSH keys, so agent %q signs with one of those", agent), nil
		}
		v := c.policy.VerifySignature(agent, payload, sig)
		if v.Status == signing.Good {
			return "", nil
		}
		return v.Detail, nil
	}
	return c.verifyByGit(ctx, kind, h, agent)
}

func (c *checker) verifyByGit(ctx context.Context, kind, h, agent string) (string, error) {
	cmd := exec.CommandContext(ctx, "git", "--git-dir", c.gitDir, "verify-"+kind, "--raw", h)
	cmd.Env = gitEnv()
	out, err := cmd.CombinedOutput()
	if err != nil {
		if _, ok := err.(*exec.ExitError); !ok {
			return "", fmt.Errorf("git verify-%s: %w", kind, err)
		}
		return "the signature does not verify: " + strings.Join(strings.Fields(string(out)), " "), nil
	}
	who := signerOf(string(out))
	switch {
	case who == "":
		return "git verifies the signature but does not say whose key made it, so it cannot be agent " + fmt.Sprintf("%q", agent) + "'s", nil
	case !signs(who, agent):
		return fmt.Sprintf("signed with a key the server's git knows for %q, not for agent %q", who, agent), nil
	}
	return "", nil
}

// signerOf reads, in git verify-commit --raw's output, whose key made a
// good signature: the allowed-signers principal of an SSH signature
// (`Good "git" signature for PRINCIPAL with … key …`), the user id of an
// OpenPGP or X.509 one (`[GNUPG:] GOODSIG KEYID USER ID`); "" when it
// says neither.
func signerOf(out string) string {
	for _, line := range strings.Split(out, "\n") {
		line = strings.TrimSpace(line)
		if rest, ok := strings.CutPrefix(line, "[GNUPG:] GOODSIG "); ok {
			if _, uid, ok := strings.Cut(rest, " "); ok {
				return strings.TrimSpace(uid)
			}
			return ""
		}
		if rest, ok := strings.CutPrefix(line, `Good "git" signature for `); ok {
			if i := strings.LastIndex(rest, " with "); i > 0 {
				return rest[:i]
			}
			return ""
		}
	}
	return ""
}

// signs says whether a signer git names (a principal, an address, a
// user id "Name <address>") is agent: the name itself, or an address
// whose part before the @ is it. A pattern ("*", "*@example.com") is no
// one's name.
func signs(who, agent string) bool {
	names := []string{who}
	if i := strings.LastIndex(who, "<"); i >= 0 && strings.HasSuffix(who, ">") {
		names = []string{strings.TrimSpace(who[:i]), who[i+1 : len(who)-1]}
	}
	for _, n := range names {
		if n == agent {
			return true
		}
		if i := strings.LastIndex(n, "@"); i > 0 && n[:i] == agent {
			return true
		}
	}
	return false
}
