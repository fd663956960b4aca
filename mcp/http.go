package mcp

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"net/http"
	"os"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/auth"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/aiwg/aiwg-state/repo"
	"github.com/aiwg/aiwg-state/store"
)

// Tokens are the bearer tokens an HTTP server takes, each naming the
// agent whose writes it authors. They are kept by their SHA-256, so that
// looking one up takes the same time whatever its first bytes.
type Tokens struct {
	agents map[[32]byte]string
}

// ParseTokens reads a tokens file: one "AGENT TOKEN" a line; blank lines
// and lines starting with # are skipped. A token is at least 16
// characters; an agent is a name the store takes as an author; no token
// appears twice.
func ParseTokens(data []byte) (*Tokens, error) {
	t := &Tokens{agents: map[[32]byte]string{}}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		f := strings.Fields(line)
		if len(f) != 2 {
			return nil, fmt.Errorf("tokens line %d: want AGENT TOKEN", n)
		}
		agent, token := f[0], f[1]
		if repo.IdentityName(agent) != agent {
			return nil, fmt.Errorf("tokens line %d: agent %q: an agent id holds no <, > or control character", n, agent)
		}
		if len(token) < 16 {
			return nil, fmt.Errorf("tokens line %d: the token of %s is shorter than 16 characters: make one with aiwg-state mcp token %s", n, agent, agent)
		}
		h := sha256.Sum256([]byte(token))
		if _, dup := t.agents[h]; dup {
			return nil, fmt.Errorf("tokens line %d: a token given twice", n)
		}
		t.agents[h] = agent
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("tokens: %w", err)
	}
	if len(t.agents) == 0 {
		return nil, fmt.Errorf("tokens: none given: add a line AGENT TOKEN (aiwg-state mcp token AGENT makes one)")
	}
	return t, nil
}

// ReadTokens reads a tokens file, which must be readable by its owner
// only: the tokens are the agents' passwords.
func ReadTokens(path string) (*Tokens, error) {
	fi, err := os.Stat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("no tokens file %s: %w", path, store.ErrNotFound)
	}
	if err != nil {
		return nil, err
	}
	if fi.Mode().Perm()&0o077 != 0 {
		return nil, fmt.Errorf("%s is readable by others (mode %v): chmod 600 it: %w", path, fi.Mode().Perm(), fs.ErrPermission)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	t, err := ParseTokens(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return t, nil
}

// NewToken makes a random token.
func NewToken() string { return "aiwg_" + hex.EncodeToString(randomBytes(24)) }

func randomBytes(n int) []byte {
	b := make([]byte, n)
	rand.Read(b) // never fails (crypto/rand)
	return b
}

// Agent is the agent token names, "" if none.
func (t *Tokens) Agent(token string) string { return t.agents[sha256.Sum256([]byte(token))] }

// HTTPHandler serves MCP's streamable HTTP transport to clients that
// present one of tokens as a bearer token; each request acts as the
// token's agent. A request without a known token gets 401 and reaches
// nothing: no anonymous reads or writes over HTTP.
func (s *Server) HTTPHandler(tokens *Tokens) http.Handler {
	s.tokens = tokens
	h := sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return s.sdk }, &sdk.StreamableHTTPOptions{})
	verify := func(ctx context.Context, token string, _ *http.Request) (*auth.TokenInfo, error) {
		agent := tokens.Agent(token)
		if agent == "" {
			return nil, fmt.Errorf("%w: unknown bearer token", auth.ErrInvalidToken)
		}
		// UserID ties a session to its agent: another token cannot take
		// over a session by its id.
		return &auth.TokenInfo{UserID: agent}, nil
	}
	return auth.RequireBearerToken(verify, &auth.RequireBearerTokenOptions{AllowMissingExpiration: true})(h)
}

// ServeHTTP serves ln until ctx ends.
func (s *Server) ServeHTTP(ctx context.Context, ln net.Listener, tokens *Tokens) error {
	defer s.stopWatches()
	srv := &http.Server{Handler: s.HTTPHandler(tokens)}
	go func() {
		<-ctx.Done()
		srv.Close()
	}()
	err := srv.Serve(ln)
	if ctx.Err() != nil {
		return nil
	}
	return err
}

// Loopback reports whether addr (host:port) binds only this machine.
func Loopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
