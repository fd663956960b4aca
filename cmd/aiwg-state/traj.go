package main

import "github.com/urfave/cli/v2"

func trajCommands() []*cli.Command { return nil }
