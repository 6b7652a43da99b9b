// Package initialize implements `clusterctl init` and its subcommand `init list-images`, which lists the
// container images an init needs. The provider flags are persistent, so that subcommands share them.
// (The package is not named init: Go reserves that name for functions.)
package initialize

import (
	"errors"

	"github.com/spf13/cobra"

	clusterctlcli "github.com/capstan-dev/capstan/internal/cli/clusterctl"
	"github.com/capstan-dev/capstan/internal/cli/iostreams"
	"github.com/capstan-dev/capstan/internal/clusterctl/client"
	"github.com/capstan-dev/capstan/internal/clusterctl/cluster"
)

// options are init's flags.
type options struct {
	kubeconfig        string
	kubeconfigContext string
	core              string
	bootstrap         []string
	controlPlane      []string
	infrastructure    []string
	ipam              []string
	runtimeExtension  []string
	addon             []string
	targetNamespace   string
}

func (o *options) initOptions() client.InitOptions {
	return client.InitOptions{
		CoreProvider:              o.core,
		BootstrapProviders:        o.bootstrap,
		ControlPlaneProviders:     o.controlPlane,
		InfrastructureProviders:   o.infrastructure,
		IPAMProviders:             o.ipam,
		RuntimeExtensionProviders: o.runtimeExtension,
		AddonProviders:            o.addon,
	}
}

func (o *options) kubeconfigFlags() *cluster.Kubeconfig {
	return &cluster.Kubeconfig{Path: o.kubeconfig, Context: o.kubeconfigContext}
}

// NewCommand returns the `init` command.
func NewCommand(streams iostreams.Streams, deps *clusterctlcli.Deps) *cobra.Command {
	o := &options{}
	cmd := &cobra.Command{
		Use:   "init",
		Short: "Initialize a management cluster",
		Long: `Initialize a management cluster.

Installs Cluster API core components, the kubeadm bootstrap provider, and the selected bootstrap and
infrastructure providers.

The management cluster must be an existing Kubernetes cluster; the first time init runs, it adds the
cluster-api core provider, the kubeadm bootstrap provider and the kubeadm control plane provider unless
given ("-" as a provider name opts out of one).`,
		Example: `  # Initialize a management cluster with the aws infrastructure provider.
  clusterctl init --infrastructure aws

  # List the images this would install.
  clusterctl init list-images --infrastructure aws`,
		Args: cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			// TODO(cluster client): installing providers needs the cluster client of a later issue.
			return errors.New("this clusterctl cannot install providers yet: use 'clusterctl generate provider' to see the components init would install, or 'clusterctl init list-images' for their images")
		},
	}
	pf := cmd.PersistentFlags()
	pf.StringVar(&o.kubeconfig, "kubeconfig", "", "Path to the kubeconfig for the management cluster. If unspecified, default discovery rules apply.")
	pf.StringVar(&o.kubeconfigContext, "kubeconfig-context", "", "Context to be used within the kubeconfig file. If empty, current context will be used.")
	pf.StringVar(&o.core, "core", "", "Core provider version (e.g. cluster-api:v1.1.5) to add to the management cluster. If unspecified, Cluster API's latest release is used.")
	pf.StringSliceVarP(&o.infrastructure, "infrastructure", "i", nil, "Infrastructure providers and versions (e.g. aws:v0.5.0) to add to the management cluster.")
	pf.StringSliceVarP(&o.bootstrap, "bootstrap", "b", nil, "Bootstrap providers and versions (e.g. kubeadm:v1.1.5) to add to the management cluster. If unspecified, Kubeadm bootstrap provider's latest release is used.")
	pf.StringSliceVarP(&o.controlPlane, "control-plane", "c", nil, "Control plane providers and versions (e.g. kubeadm:v1.1.5) to add to the management cluster. If unspecified, the Kubeadm control plane provider's latest release is used.")
	pf.StringSliceVar(&o.ipam, "ipam", nil, "IPAM providers and versions (e.g. infoblox:v0.0.1) to add to the management cluster.")
	pf.StringSliceVar(&o.runtimeExtension, "runtime-extension", nil, "Runtime extension providers and versions (e.g. my-extension:v0.0.1) to add to the management cluster.")
	pf.StringSliceVar(&o.addon, "addon", nil, "Add-on providers and versions (e.g. helm:v0.1.0) to add to the management cluster.")
	cmd.Flags().StringVarP(&o.targetNamespace, "target-namespace", "n", "", "The target namespace where the providers should be deployed. If unspecified, the provider components' default namespace is used.")

	cmd.AddCommand(newListImagesCommand(streams, deps, o))
	return cmd
}
