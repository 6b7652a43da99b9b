// Package upgrade implements `clusterctl upgrade plan`, which shows the releases the providers of a
// management cluster can be upgraded to, and `clusterctl upgrade apply`, which upgrades them.
package upgrade

import (
	"github.com/spf13/cobra"

	clusterctlcli "github.com/capstan-dev/capstan/internal/cli/clusterctl"
	"github.com/capstan-dev/capstan/internal/cli/iostreams"
	"github.com/capstan-dev/capstan/internal/clusterctl/cluster"
)

// NewCommand returns the `upgrade` command and its subcommands.
func NewCommand(streams iostreams.Streams, deps *clusterctlcli.Deps) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "upgrade",
		Short: "Upgrade core and provider components in a management cluster",
		Long:  `Upgrades Cluster API core and providers components in a management cluster.`,
		Args:  cobra.NoArgs,
	}
	cmd.AddCommand(newPlanCommand(streams, deps))
	cmd.AddCommand(newApplyCommand(streams, deps))
	return cmd
}

// kubeconfigFlags are the flags that name the management cluster.
type kubeconfigFlags struct {
	path    string
	context string
}

func (k *kubeconfigFlags) add(cmd *cobra.Command) {
	cmd.Flags().StringVar(&k.path, "kubeconfig", "", "Path to the kubeconfig file to use for accessing the management cluster. If unspecified, default discovery rules apply.")
	cmd.Flags().StringVar(&k.context, "kubeconfig-context", "", "Context to be used within the kubeconfig file. If empty, current context will be used.")
}

func (k *kubeconfigFlags) kubeconfig() *cluster.Kubeconfig {
	return &cluster.Kubeconfig{Path: k.path, Context: k.context}
}
