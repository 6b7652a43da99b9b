// Package adopt is the `capstan adopt` command: it moves a management cluster's core and kubeadm
// providers between upstream Cluster API's releases and capstan's, keeping every object.
package adopt

import (
	"context"
	"time"

	"github.com/spf13/cobra"

	clusterctlcli "github.com/capstan-dev/capstan/internal/cli/clusterctl"
	"github.com/capstan-dev/capstan/internal/cli/iostreams"
	"github.com/capstan-dev/capstan/internal/clusterctl/client"
	"github.com/capstan-dev/capstan/internal/clusterctl/cluster"
)

// NewCommand returns `capstan adopt`; deps are clusterctl's (tests replace them).
func NewCommand(streams iostreams.Streams, deps *clusterctlcli.Deps) *cobra.Command {
	var (
		kubeconfig cluster.Kubeconfig
		o          client.AdoptOptions
		timeout    time.Duration
	)
	cmd := &cobra.Command{
		Use:   "adopt",
		Short: "Take a management cluster's core and kubeadm providers over from upstream Cluster API, or hand them back",
		Long: `Replace the core provider (cluster-api) and the kubeadm bootstrap and control plane providers of a
management cluster with the releases of another implementation, keeping every object: no Cluster, Machine
or any other object is changed, no Machine is replaced.

Without provider flags, every installed one of the three moves to the newest release of the repository
clusterctl's configuration names for it: capstan's releases, unless --config points elsewhere. This takes
over a management cluster that upstream Cluster API v1.10 to v1.14 runs. With --config naming upstream's
repositories and the flags naming upstream's releases, the same command hands the cluster back.

Everything is checked before anything changes: the releases exist and follow the v1beta1 or v1beta2
contract, their CRDs serve every version the objects are stored in. Then, as 'clusterctl upgrade apply'
does, the providers are marked in clusterctl's inventory, their Deployments scaled down and their
components replaced (CRDs, Namespaces and objects stay); cert-manager is installed when a new release
needs it and kept otherwise. Last, once the new Deployments are available, the objects stored in another
version are written again in the new storage version. If it stops, running the same command again
finishes it.`,
		Example: `  # Take over a management cluster of upstream Cluster API with capstan's newest releases.
  capstan adopt --kubeconfig mgmt.kubeconfig

  # Take it over with given releases.
  capstan adopt --core cluster-api:v0.1.0 --bootstrap kubeadm:v0.1.0 --control-plane kubeadm:v0.1.0

  # Hand it back to upstream Cluster API v1.14.0 (upstream.yaml names upstream's repositories).
  capstan adopt --config upstream.yaml --core cluster-api:v1.14.0 --bootstrap kubeadm:v1.14.0 --control-plane kubeadm:v1.14.0`,
		Args: cobra.NoArgs,
		RunE: deps.RunE(streams, &kubeconfig, func(ctx context.Context, c *client.Client) error {
			o.WaitProviderTimeout = timeout
			return c.Adopt(ctx, o)
		}),
	}
	f := cmd.Flags()
	cmd.PreRun = clusterctlcli.AddGlobalFlags(f, deps)
	clusterctlcli.AddKubeconfigFlags(f, &kubeconfig, "")
	f.StringVar(&o.CoreProvider, "core", "", "Core provider release to move to (e.g. cluster-api:v0.1.0; cluster-api for the newest)")
	f.StringSliceVarP(&o.BootstrapProviders, "bootstrap", "b", nil, "Bootstrap provider release to move to (kubeadm:v0.1.0; kubeadm for the newest)")
	f.StringSliceVarP(&o.ControlPlaneProviders, "control-plane", "c", nil, "Control plane provider release to move to (kubeadm:v0.1.0; kubeadm for the newest)")
	clusterctlcli.AddWaitTimeoutFlag(f, &timeout, "Wait timeout per provider in seconds: how long to wait for each provider's Deployments to be available before migrating its objects")
	return cmd
}
