package store

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/aiwg/aiwg-state/repo"
)

// AgentConfigKey is the key, in the store's own git config (not in its
// history: it belongs to this copy of the store, as user.name belongs to
// a clone), of the agent that writes are authored by when none is named.
// `agent start` sets it.
const AgentConfigKey = "aiwg.agent"

// Where the agent of a write comes from, as AgentFor reports it.
const (
	AgentFromFlag      = "flag"         // named on the write (--agent)
	AgentFromEnv       = "AIWG_AGENT"   // the environment variable
	AgentFromStore     = AgentConfigKey // the store's config (agent start)
	AgentFromUser      = "USER"         // the login name
	AgentFromAnonymous = "anonymous"    // nothing named one
)

// DefaultAgent is the agent recorded in the store's config (AgentConfigKey),
// "" when none is. A config git cannot read counts as none: git itself
// would refuse to run in the store, and a write must not fail on a setting
// it can do without.
func (s *Store) DefaultAgent() string {
	cfg, err := s.gitConfig() // cached by the file's content
	if err != nil || cfg == nil {
		return ""
	}
	section, key, _ := strings.Cut(AgentConfigKey, ".")
	return strings.TrimSpace(configOption(cfg, section, "", key))
}

// SetDefaultAgent records agent in the store's config as the author of
// writes that name none (see AgentFor). It needs the git CLI, which edits
// the file as it edits any git config.
func (s *Store) SetDefaultAgent(ctx context.Context, agent string) error {
	agent = strings.TrimSpace(agent)
	if agent == "" || repo.IdentityName(agent) != agent {
		return fmt.Errorf("%w: agent %q: an agent id is not empty and holds no <, > or line break", ErrUsage, agent)
	}
	out, err := exec.CommandContext(ctx, "git", "config", "--file", filepath.Join(s.Dir(), "config"), AgentConfigKey, agent).CombinedOutput()
	if err != nil {
		return fmt.Errorf("git config %s: %v: %s", AgentConfigKey, err, strings.TrimSpace(string(out)))
	}
	return nil
}

// AgentFor is the agent a write is authored by, and where that name came
// from: the agent named on the write (flag), else $AIWG_AGENT, else the
// store's default (SetDefaultAgent, which `agent start` sets), else the
// login name ($USER), else "anonymous". getenv reads the environment of
// whoever writes (a server passes its client's).
func (s *Store) AgentFor(flag string, getenv func(string) string) (agent, from string) {
	if a := strings.TrimSpace(flag); a != "" {
		return a, AgentFromFlag
	}
	if a := strings.TrimSpace(getenv("AIWG_AGENT")); a != "" {
		return a, AgentFromEnv
	}
	if a := s.DefaultAgent(); a != "" {
		return a, AgentFromStore
	}
	if a := strings.TrimSpace(getenv("USER")); a != "" {
		return a, AgentFromUser
	}
	return "anonymous", AgentFromAnonymous
}

// Agent is the agent of a write whose options name agent ("" for
// none), as AgentFor settles it with this process's environment.
func (s *Store) Agent(agent string) string {
	a, _ := s.AgentFor(agent, os.Getenv)
	return a
}
