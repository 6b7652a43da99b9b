package upgrade

import (
	"context"

	"github.com/spf13/cobra"

	clusterctlcli "github.com/capstan-dev/capstan/internal/cli/clusterctl"
	"github.com/capstan-dev/capstan/internal/cli/iostreams"
	"github.com/capstan-dev/capstan/internal/clusterctl/client"
	"github.com/capstan-dev/capstan/internal/clusterctl/cluster"
)

// applyOptions are upgrade apply's flags.
type applyOptions struct {
	kubeconfig cluster.Kubeconfig
	client.ApplyUpgradeOptions
}

func newApplyCommand(streams iostreams.Streams, deps *clusterctlcli.Deps) *cobra.Command {
	o := &applyOptions{}
	cmd := &cobra.Command{
		Use:   "apply",
		Short: "Apply new versions of Cluster API core and providers in a management cluster",
		Long: `The upgrade apply command applies new versions of Cluster API providers as defined by clusterctl upgrade plan.

New version should be applied ensuring all the providers uses the same cluster API version
in order to guarantee the proper functioning of the management cluster.

Everything is checked before anything changes. The upgrade is recorded in clusterctl's inventory as it
goes: if it stops (an error, a lost connection, a killed clusterctl), running the same command again
finishes it.`,
		Example: `  # Upgrades all the providers in the management cluster to the latest version available which is compliant
  # to the v1beta1 API Version of Cluster API (contract).
  clusterctl upgrade apply --contract v1beta1

  # Upgrades only the aws provider to the v2.0.1 version.
  clusterctl upgrade apply --infrastructure aws:v2.0.1`,
		Args: cobra.NoArgs,
		RunE: deps.RunE(streams, &o.kubeconfig, func(ctx context.Context, c *client.Client) error {
			return c.ApplyUpgrade(ctx, o.ApplyUpgradeOptions)
		}),
	}
	f := cmd.Flags()
	clusterctlcli.AddKubeconfigFlags(f, &o.kubeconfig, "")
	f.StringVar(&o.Contract, "contract", "", "The API Version of Cluster API (contract, e.g. v1beta1) the management cluster should upgrade to")
	clusterctlcli.AddProviderFlags(f, &o.Providers, clusterctlcli.ProviderUsages{
		Core:             "Core provider instance version (e.g. cluster-api:v1.1.5) to upgrade to. This flag can be used as alternative to --contract.",
		Infrastructure:   "Infrastructure providers instance and versions (e.g. aws:v2.0.1) to upgrade to. This flag can be used as alternative to --contract.",
		Bootstrap:        "Bootstrap providers instance and versions (e.g. kubeadm:v1.1.5) to upgrade to. This flag can be used as alternative to --contract.",
		ControlPlane:     "ControlPlane providers instance and versions (e.g. kubeadm:v1.1.5) to upgrade to. This flag can be used as alternative to --contract.",
		IPAM:             "IPAM providers and versions (e.g. infoblox:v0.0.1) to upgrade to. This flag can be used as alternative to --contract.",
		RuntimeExtension: "Runtime extension providers and versions (e.g. my-extension:v0.0.1) to upgrade to. This flag can be used as alternative to --contract.",
		Addon:            "Add-on providers and versions (e.g. helm:v0.1.0) to upgrade to. This flag can be used as alternative to --contract.",
	})
	clusterctlcli.AddWaitFlags(f, &o.WaitProviders, &o.WaitProviderTimeout, "upgraded", "upgrade")
	return cmd
}
