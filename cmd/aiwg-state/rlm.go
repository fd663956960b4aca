package main

import "github.com/urfave/cli/v2"

func rlmCommands() []*cli.Command { return nil }
