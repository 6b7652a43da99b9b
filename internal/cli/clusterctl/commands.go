package clusterctl

import "github.com/spf13/cobra"

// GroupCommand returns a command that only groups its subcommands (`generate`, `get`, `upgrade`, ...): it
// takes no arguments and, run alone, prints its help.
func GroupCommand(use, short, long string, subcommands ...*cobra.Command) *cobra.Command {
	cmd := &cobra.Command{Use: use, Short: short, Long: long, Args: cobra.NoArgs}
	cmd.AddCommand(subcommands...)
	return cmd
}
