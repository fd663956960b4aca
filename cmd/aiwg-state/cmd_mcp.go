package main

import (
	"errors"
	"fmt"
	"os"
	"syscall"

	"github.com/urfave/cli/v2"

	"github.com/aiwg/aiwg-state/internal/sibling"
)

// newMcpCommand hands over to aiwg-state-mcp, the MCP server. It is a
// program of its own: linked here, the MCP SDK's packages would be
// initialised by every aiwg-state command, which would start about 0.7 ms
// (9%) slower for a server few of them run (docs/mcp.md has the figures).
func newMcpCommand() *cli.Command {
	return &cli.Command{
		Name:      "mcp",
		Usage:     "serve the store to MCP hosts (agents' tools), over stdio or HTTP",
		ArgsUsage: "[--agent NAME] | --http HOST:PORT | token AGENT",
		Description: `Runs aiwg-state-mcp (beside this program or on $PATH) with these
arguments: every capability of the store as a typed MCP tool, documents
as resources (aiwg://BRANCH/PATH) a client may subscribe to, and prompts.
docs/mcp.md shows a host's configuration.

Flags (aiwg-state-mcp's):
   --store DIR       the store (default: the nearest .aiwg/state.git)
   --agent NAME      stdio: the agent writes are authored by
                     (default: $AIWG_AGENT, the store's agent, $USER)
   --http HOST:PORT  serve MCP's streamable HTTP instead of stdio; each
                     client presents a bearer token naming its agent
   --tokens FILE     HTTP: the tokens, one "AGENT TOKEN" a line, mode 600
                     (default: aiwg/mcp-tokens in the store's git directory)
   --allow-remote    HTTP: allow an address other than loopback
   --no-sync         skip fsync

Examples:
   aiwg-state mcp --agent planner             # stdio, for a host that starts it
   aiwg-state mcp token planner               # a bearer token for HTTP
   aiwg-state mcp --http 127.0.0.1:8765       # streamable HTTP, loopback only`,
		SkipFlagParsing: true,
		Action: func(c *cli.Context) error {
			if a := c.Args().First(); a == "--help" || a == "-h" || a == "help" {
				return cli.ShowCommandHelp(c.Lineage()[1], "mcp")
			}
			if invocationOf(c).client != nil {
				return usagef("mcp runs in its own process: run aiwg-state mcp, not through a server")
			}
			bin, err := findProgram("aiwg-state-mcp")
			if err != nil {
				return err
			}
			// In this process's place: the host's pipes, signals and exit
			// status are the server's.
			err = syscall.Exec(bin, append([]string{"aiwg-state-mcp"}, c.Args().Slice()...), os.Environ())
			return fmt.Errorf("running %s: %w", bin, err)
		},
	}
}

// findProgram finds a program of this suite (see package sibling).
func findProgram(name string) (string, error) {
	if p := sibling.Find(name); p != "" {
		return p, nil
	}
	return "", errors.New(name + " is neither beside aiwg-state nor on $PATH: install it with go install github.com/aiwg/aiwg-state/cmd/" + name + "@latest (or go install ./cmd/...)")
}
