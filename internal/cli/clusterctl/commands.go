package clusterctl

import (
	"errors"

	"github.com/spf13/cobra"
)

// GroupCommand returns a command that only groups its subcommands (`generate`, `get`, `upgrade`, ...): it
// takes no arguments and, run alone, prints its help.
func GroupCommand(use, short, long string, subcommands ...*cobra.Command) *cobra.Command {
	cmd := &cobra.Command{Use: use, Short: short, Long: long, Args: cobra.NoArgs}
	cmd.AddCommand(subcommands...)
	return cmd
}

// ExactlyOneArg returns the Args of a command that takes one argument, such as a cluster's name: given
// none or more than one, the command fails with message, which says what to give.
func ExactlyOneArg(message string) cobra.PositionalArgs {
	return func(_ *cobra.Command, args []string) error {
		if len(args) != 1 {
			return errors.New(message)
		}
		return nil
	}
}
