package main

import "github.com/urfave/cli/v2"

func remoteCommands() []*cli.Command { return nil }
