// Package alpha implements `clusterctl alpha`, the commands of features in alpha: `alpha rollout restart`,
// `alpha rollout pause` and `alpha rollout resume`, which restart, pause and resume the rollout of a
// MachineDeployment, and `alpha topology plan`, which shows what the topology controller would do for
// Clusters with a ClusterClass, offline or with what the input lacks read from a management cluster.
package alpha

import (
	"time"

	"github.com/spf13/cobra"

	clusterctlcli "github.com/capstan-dev/capstan/internal/cli/clusterctl"
	"github.com/capstan-dev/capstan/internal/cli/iostreams"
)

// NewCommand returns the `alpha` command.
func NewCommand(streams iostreams.Streams, deps *clusterctlcli.Deps) *cobra.Command {
	return newCommand(streams, deps, time.Now)
}

func newCommand(streams iostreams.Streams, deps *clusterctlcli.Deps, now func() time.Time) *cobra.Command {
	return clusterctlcli.GroupCommand("alpha", "Commands for features in alpha.",
		"These commands correspond to alpha features in clusterctl.",
		newRolloutCommand(streams, deps, now), newTopologyCommand(streams, deps))
}
