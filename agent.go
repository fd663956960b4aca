package aiwgstate

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"

	gitconfig "github.com/go-git/go-git/v5/plumbing/format/config"

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
	path := filepath.Join(s.Dir(), "config")
	fi, err := os.Stat(path)
	if err != nil {
		return ""
	}
	c := &s.agent
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.read && fi.ModTime().Equal(c.mod) && fi.Size() == c.size {
		return c.name // unchanged: no need to decode it again (BenchmarkDefaultAgent)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	name := ""
	cfg := gitconfig.New()
	if err := gitconfig.NewDecoder(bytes.NewReader(data)).Decode(cfg); err == nil {
		section, key, _ := strings.Cut(AgentConfigKey, ".")
		name = strings.TrimSpace(cfg.Section(section).Options.Get(key))
	}
	c.read, c.mod, c.size, c.name = true, fi.ModTime(), fi.Size(), name
	return name
}

// agentCache is the default agent as last read from the store's config,
// and the config file's time and size then.
type agentCache struct {
	mu   sync.Mutex
	read bool
	mod  time.Time
	size int64
	name string
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

// agentName is the agent of a write whose options name agent ("" for
// none), as AgentFor settles it with this process's environment.
func (s *Store) agentName(agent string) string {
	a, _ := s.AgentFor(agent, os.Getenv)
	return a
}
