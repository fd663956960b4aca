package main

import "github.com/urfave/cli/v2"

func stateDocCommands() []*cli.Command { return nil }
