// Package initialize implements `clusterctl init`, which installs providers in a management cluster, and
// its subcommand `init list-images`, which lists the container images an init needs. The provider flags
// are persistent, so that subcommands share them. (The package is not named init: Go reserves that name
// for functions.)
package initialize

import (
	"context"
	"time"

	"github.com/spf13/cobra"

	clusterctlcli "github.com/capstan-dev/capstan/internal/cli/clusterctl"
	"github.com/capstan-dev/capstan/internal/cli/iostreams"
	"github.com/capstan-dev/capstan/internal/clusterctl/client"
	"github.com/capstan-dev/capstan/internal/clusterctl/cluster"
)

// options are init's flags.
type options struct {
	kubeconfig      cluster.Kubeconfig
	providers       client.Providers
	targetNamespace string
	waitProviders   bool
	// waitProviderTimeout is given in seconds, as upstream's flag.
	waitProviderTimeout time.Duration
	validate            bool
	operator            bool
}

func (o *options) initOptions() client.InitOptions {
	return client.InitOptions{
		Providers:           o.providers,
		TargetNamespace:     o.targetNamespace,
		WaitProviders:       o.waitProviders,
		WaitProviderTimeout: o.waitProviderTimeout,
		SkipValidation:      !o.validate,
		Operator:            o.operator,
	}
}

// NewCommand returns the `init` command.
func NewCommand(streams iostreams.Streams, deps *clusterctlcli.Deps) *cobra.Command {
	o := &options{}
	cmd := &cobra.Command{
		Use:   "init",
		Short: "Initialize a management cluster",
		Long: `Initialize a management cluster.

Installs Cluster API core components and the selected bootstrap, control plane, infrastructure, IPAM,
runtime extension and add-on providers, each recorded in clusterctl's inventory.

The management cluster must be an existing Kubernetes cluster. The first time init runs, it adds the
cluster-api core provider and the kubeadm bootstrap and control plane providers unless given ("-" as a
provider name opts out of a default provider), as upstream. cert-manager is installed only when a
provider's components need it.

Everything is checked before anything changes. Running init again with the same providers changes
nothing; a provider installed at another version is an error that points at 'clusterctl upgrade'.`,
		Example: `  # Initialize a management cluster with the local infrastructure provider.
  clusterctl init --infrastructure local

  # Initialize a management cluster with a specific version of the aws infrastructure provider.
  clusterctl init --infrastructure=aws:v2.8.0

  # Add the vsphere infrastructure provider to an existing management cluster.
  clusterctl init --infrastructure vsphere

  # Install the providers in a namespace of your choice.
  clusterctl init --infrastructure local --target-namespace capstan-system

  # Wait until the providers' controllers are available.
  clusterctl init --infrastructure local --wait-providers

  # Hand the providers to the provider operator (installed first when the cluster has none): one
  # provider object each, with a Secret of the variables this configuration gives them. Providers
  # clusterctl installed already are taken over at their version.
  clusterctl init --operator --infrastructure local

  # List the images this would install.
  clusterctl init list-images --infrastructure aws`,
		Args: cobra.NoArgs,
		RunE: deps.RunE(streams, &o.kubeconfig, func(ctx context.Context, c *client.Client) error {
			_, err := c.Init(ctx, o.initOptions())
			return err
		}),
	}
	pf := cmd.PersistentFlags()
	clusterctlcli.AddKubeconfigFlags(pf, &o.kubeconfig, "Path to the kubeconfig for the management cluster. If unspecified, default discovery rules apply.")
	clusterctlcli.AddProviderFlags(pf, &o.providers, clusterctlcli.ProviderUsages{
		Core:             "Core provider version (e.g. cluster-api:v1.1.5) to add to the management cluster. If unspecified, Cluster API's latest release is used.",
		Infrastructure:   "Infrastructure providers and versions (e.g. aws:v0.5.0) to add to the management cluster.",
		Bootstrap:        "Bootstrap providers and versions (e.g. kubeadm:v1.1.5) to add to the management cluster. If unspecified, Kubeadm bootstrap provider's latest release is used.",
		ControlPlane:     "Control plane providers and versions (e.g. kubeadm:v1.1.5) to add to the management cluster. If unspecified, the Kubeadm control plane provider's latest release is used.",
		IPAM:             "IPAM providers and versions (e.g. infoblox:v0.0.1) to add to the management cluster.",
		RuntimeExtension: "Runtime extension providers and versions (e.g. my-extension:v0.0.1) to add to the management cluster.",
		Addon:            "Add-on providers and versions (e.g. helm:v0.1.0) to add to the management cluster.",
	})
	f := cmd.Flags()
	f.StringVarP(&o.targetNamespace, "target-namespace", "n", "", "The target namespace where the providers should be deployed. If unspecified, the provider components' default namespace is used.")
	clusterctlcli.AddWaitFlags(f, &o.waitProviders, &o.waitProviderTimeout, "installed", "installation")
	f.BoolVar(&o.validate, "validate", true, "If true, clusterctl will validate that the deployments will succeed on the management cluster.")
	f.BoolVar(&o.operator, "operator", false, "Hand the providers to the provider operator instead of installing them: install the operator when the cluster has none (from the core provider's release), then create a provider object for each (CoreProvider, InfrastructureProvider, ...) with a Secret of the variables this configuration gives its components; take over providers clusterctl installed, at their version.")

	cmd.AddCommand(newListImagesCommand(streams, deps, o))
	return cmd
}
