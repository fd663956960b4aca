// Package mcp is the store's Model Context Protocol server: every
// capability of the store as a typed tool an agent's host calls directly
// (documents, history, branches and merges, RLM state and trajectories,
// leases, queues and memory), documents as resources a client may
// subscribe to, and prompts that teach a model the store. It is built on
// the official SDK (github.com/modelcontextprotocol/go-sdk).
//
// Rules: a tool's arguments are the CLI's words; its result is the object
// the CLI's --json prints (a list as the one member of an object), with a
// line of text; a failure is a tool error {"code", "kind", "error", ...}
// whose code is the CLI's exit code (internal/exitcode's table). Every
// write goes through the open store's guards, so the access policy judges
// it as it judges the CLI's; it is authored by the process's agent over
// stdio, by the bearer token's agent over HTTP (ParseTokens),
// and never anonymously over HTTP.
//
// API: New makes the server of an open aiwgstate.Store; ServeStdio and
// ServeHTTP (or HTTPHandler) run it. CLI: the aiwg-state-mcp program
// (cmd/aiwg-state-mcp), which `aiwg-state mcp` hands over to; the
// documentation is docs/mcp.md.
package mcp
