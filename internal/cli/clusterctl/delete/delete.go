// Package delete implements `clusterctl delete`, which deletes providers from a management cluster.
package delete

import (
	"context"

	"github.com/spf13/cobra"

	clusterctlcli "github.com/capstan-dev/capstan/internal/cli/clusterctl"
	"github.com/capstan-dev/capstan/internal/cli/iostreams"
	"github.com/capstan-dev/capstan/internal/clusterctl/client"
	"github.com/capstan-dev/capstan/internal/clusterctl/cluster"
)

// options are delete's flags.
type options struct {
	kubeconfig cluster.Kubeconfig
	client.DeleteOptions
}

// NewCommand returns the `delete` command.
func NewCommand(streams iostreams.Streams, deps *clusterctlcli.Deps) *cobra.Command {
	o := &options{}
	cmd := &cobra.Command{
		Use:   "delete [providers]",
		Short: "Delete one or more providers from the management cluster",
		Long: `Delete one or more providers from the management cluster.

The providers' components are deleted, except their CRDs (so that the objects of those kinds survive) and
the namespace that hosts them, then their entry in clusterctl's inventory.

--include-crd deletes the CRDs too, and with them every object of their kinds: clusterctl refuses while
such objects exist, naming them, because nothing would be left to clean up what they stand for.
--include-namespace deletes the providers' namespaces, and everything in them.`,
		Example: `  # Deletes the AWS provider
  # Please note that this implies the deletion of all provider components except the hosting namespace
  # and the CRDs.
  clusterctl delete --infrastructure aws

  # Deletes all the providers
  # Important! As a consequence of this operation, all the corresponding resources managed by
  # Cluster API Providers are orphaned and there might be ongoing costs incurred as a result of this.
  clusterctl delete --all

  # Delete the AWS infrastructure provider and Core provider. This will leave behind Bootstrap and Control Plane
  # providers
  # Important! As a consequence of this operation, all the corresponding resources managed by
  # the AWS infrastructure provider and Cluster API Providers are orphaned and there might be
  # ongoing costs incurred as a result of this.
  clusterctl delete --core cluster-api --infrastructure aws

  # Deletes all the providers and their namespaces
  clusterctl delete --all --include-namespace

  # Reset the management cluster to its original state
  # Important! As a consequence of this operation all the corresponding resources on target clouds
  # are "orphaned" and thus there may be ongoing costs incurred as a result of this.
  clusterctl delete --all --include-crd  --include-namespace`,
		Args: cobra.NoArgs,
		RunE: deps.RunE(streams, &o.kubeconfig, func(ctx context.Context, c *client.Client) error {
			return c.Delete(ctx, o.DeleteOptions)
		}),
	}
	f := cmd.Flags()
	clusterctlcli.AddKubeconfigFlags(f, &o.kubeconfig, "")
	f.BoolVar(&o.IncludeNamespace, "include-namespace", false, "Forces the deletion of the namespace where the providers are hosted (and of all the contained objects)")
	f.BoolVar(&o.IncludeCRDs, "include-crd", false, "Forces the deletion of the provider's CRDs (and of all the related objects)")
	clusterctlcli.AddProviderFlags(f, &o.Providers, clusterctlcli.ProviderUsages{
		Core:             "Core provider version (e.g. cluster-api:v1.1.5) to delete from the management cluster",
		Infrastructure:   "Infrastructure providers and versions (e.g. aws:v0.5.0) to delete from the management cluster",
		Bootstrap:        "Bootstrap providers and versions (e.g. kubeadm:v1.1.5) to delete from the management cluster",
		ControlPlane:     "ControlPlane providers and versions (e.g. kubeadm:v1.1.5) to delete from the management cluster",
		IPAM:             "IPAM providers and versions (e.g. infoblox:v0.0.1) to delete from the management cluster",
		RuntimeExtension: "Runtime extension providers and versions (e.g. my-extension:v0.0.1) to delete from the management cluster",
		Addon:            "Add-on providers and versions (e.g. helm:v0.1.0) to delete from the management cluster",
	})
	f.BoolVar(&o.All, "all", false, "Force deletion of all the providers")
	return cmd
}
