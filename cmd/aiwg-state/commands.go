package main

import "github.com/urfave/cli/v2"

// The commands, by group, in the order help lists them. Each command is
// built by its cmd_<name>.go file (a group's commands share one); a command
// line builds only its command's group (see newAppFor).

func storeCommands() []*cli.Command {
	return []*cli.Command{
		newInitCommand(),
		newGcCommand(),
		newFsckCommand(),
		newConfigCommand(),
		newQuickstartCommand(),
		newMcpCommand(),
		newSQLCommand(),
		newTableCommand(),
		newCompletionCommand(),
	}
}

func documentCommands() []*cli.Command {
	return []*cli.Command{
		newGetCommand(),
		newCatCommand(),
		newLsCommand(),
		newSetCommand(),
		newPutCommand(),
		newDelCommand(),
		newMvCommand(),
		newApplyCommand(),
		newIncrCommand(),
	}
}

func historyCommands() []*cli.Command {
	return []*cli.Command{
		newLogCommand(),
		newWatchCommand(),
		newBlameCommand(),
		newBisectCommand(),
		newReindexCommand(),
		newDiffCommand(),
		newShowCommand(),
		newReviewCommand(),
		newUICommand(),
	}
}

func mergeCommands() []*cli.Command {
	return []*cli.Command{
		newBranchCommand(),
		newSwitchCommand(),
		newMergeCommand(),
		newConflictsCommand(),
		newResolveCommand(),
		newMergeFileCommand(),
		newInstallDriversCommand(),
	}
}

func remoteCommands() []*cli.Command {
	return []*cli.Command{
		newRemoteCommand(),
		newFetchCommand(),
		newPushCommand(),
		newPullCommand(),
		newCloneCommand(),
		newAgentCommand(),
		newSyncCommand(),
		newIntegrateCommand(),
		hooksCommand(),
		policyCommand(),
		newDoctorCommand(),
	}
}

func rlmCommands() []*cli.Command {
	return []*cli.Command{
		stateCommand(),
		varCommand(),
		finalCommand(),
		checkpointCommand(),
		rollbackCommand(),
		trustCommand(),
	}
}

func stateDocCommands() []*cli.Command { return leavesTakeAnyArgument(stateDocCommandList()) }

// leavesTakeAnyArgument stops urfave/cli from reading a first argument
// "h" or "help" of a leaf command as its help subcommand: a goal may be
// titled "help".
func leavesTakeAnyArgument(cmds []*cli.Command) []*cli.Command {
	for _, c := range cmds {
		if len(c.Subcommands) == 0 {
			c.HideHelpCommand = true
		}
		leavesTakeAnyArgument(c.Subcommands)
	}
	return cmds
}

func trajCommands() []*cli.Command {
	return []*cli.Command{
		newTrajCommand(),
	}
}

func leaseCommands() []*cli.Command {
	return []*cli.Command{
		newLeaseCommand(),
	}
}

func memoryCommands() []*cli.Command {
	return []*cli.Command{
		newMemoryCommand(),
	}
}

func queueCommands() []*cli.Command {
	return []*cli.Command{
		newQueueCommand(),
	}
}

func schemaCommands() []*cli.Command {
	return []*cli.Command{
		newSchemaCommand(),
	}
}

func strategyCommands() []*cli.Command {
	return []*cli.Command{
		newStrategyCommand(),
	}
}

func snapshotCommands() []*cli.Command {
	return []*cli.Command{
		snapshotCommand(),
	}
}

func tierCommands() []*cli.Command {
	return []*cli.Command{
		newFrameCommand(),
		newCacheCommand(),
	}
}
