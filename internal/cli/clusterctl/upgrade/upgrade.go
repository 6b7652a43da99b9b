// Package upgrade implements `clusterctl upgrade plan`, which shows the releases the providers of a
// management cluster can be upgraded to, and `clusterctl upgrade apply`, which upgrades them.
package upgrade

import (
	"github.com/spf13/cobra"

	clusterctlcli "github.com/capstan-dev/capstan/internal/cli/clusterctl"
	"github.com/capstan-dev/capstan/internal/cli/iostreams"
)

// NewCommand returns the `upgrade` command and its subcommands.
func NewCommand(streams iostreams.Streams, deps *clusterctlcli.Deps) *cobra.Command {
	return clusterctlcli.GroupCommand("upgrade", "Upgrade core and provider components in a management cluster",
		"Upgrades Cluster API core and providers components in a management cluster.",
		newPlanCommand(streams, deps), newApplyCommand(streams, deps))
}
