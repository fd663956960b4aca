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
// signed rule ("" when it passes). An SSH signature is verified here
// against the keys the policy lists for the author, when it lists
// signers: a signature by another agent's key, or of another body (the
// commit changed after signing), fails. Other signatures (OpenPGP,
// X.509), and SSH ones under a policy without signers, are left to git
// verify-commit and the server's own keys (gpg keyring,
// gpg.ssh.allowedSignersFile).
func (c *checker) checkSignature(h, agent string, body []byte) (string, error) {
	payload, sig := repo.SplitSigned(body)
	if len(sig) == 0 {
		return fmt.Sprintf("the policy requires agent %q's commits to be signed; this one is not signed", agent), nil
	}
	if signing.IsSSH(sig) && c.policy.HasSigners() {
		v := c.policy.VerifySignature(agent, payload, sig)
		if v.Status == signing.Good {
			return "", nil
		}
		return v.Detail, nil
	}
	return c.verifyByGit(context.Background(), h)
}

func (c *checker) verifyByGit(ctx context.Context, h string) (string, error) {
	cmd := exec.CommandContext(ctx, "git", "--git-dir", c.gitDir, "verify-commit", h)
	cmd.Env = gitEnv()
	out, err := cmd.CombinedOutput()
	if err != nil {
		if _, ok := err.(*exec.ExitError); !ok {
			return "", fmt.Errorf("git verify-commit: %w", err)
		}
		return "the signature does not verify: " + strings.Join(strings.Fields(string(out)), " "), nil
	}
	return "", nil
}
