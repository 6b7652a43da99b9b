package clusterctl

import (
	"github.com/spf13/pflag"

	"github.com/capstan-dev/capstan/internal/clusterctl/client"
	"github.com/capstan-dev/capstan/internal/clusterctl/cluster"
)

// kubeconfigUsage is the usage of --kubeconfig in most of upstream's commands.
const kubeconfigUsage = "Path to the kubeconfig file to use for accessing the management cluster. If unspecified, default discovery rules apply."

// AddKubeconfigFlags registers --kubeconfig and --kubeconfig-context, the flags that name the management
// cluster, which fill k. usage is the usage of --kubeconfig when the command's wording differs from
// upstream's usual one (empty for the usual one).
func AddKubeconfigFlags(fs *pflag.FlagSet, k *cluster.Kubeconfig, usage string) {
	if usage == "" {
		usage = kubeconfigUsage
	}
	fs.StringVar(&k.Path, "kubeconfig", "", usage)
	fs.StringVar(&k.Context, "kubeconfig-context", "", "Context to be used within the kubeconfig file. If empty, current context will be used.")
}

// ProviderUsages are the usages of the provider flags; their wording differs from command to command, as
// upstream's.
type ProviderUsages struct {
	Core, Infrastructure, Bootstrap, ControlPlane, IPAM, RuntimeExtension, Addon string
}

// AddProviderFlags registers the flags that name providers by type, which fill p: --core,
// --infrastructure (-i), --bootstrap (-b), --control-plane (-c), --ipam, --runtime-extension and --addon.
func AddProviderFlags(fs *pflag.FlagSet, p *client.Providers, u ProviderUsages) {
	fs.StringVar(&p.CoreProvider, "core", "", u.Core)
	fs.StringSliceVarP(&p.InfrastructureProviders, "infrastructure", "i", nil, u.Infrastructure)
	fs.StringSliceVarP(&p.BootstrapProviders, "bootstrap", "b", nil, u.Bootstrap)
	fs.StringSliceVarP(&p.ControlPlaneProviders, "control-plane", "c", nil, u.ControlPlane)
	fs.StringSliceVar(&p.IPAMProviders, "ipam", nil, u.IPAM)
	fs.StringSliceVar(&p.RuntimeExtensionProviders, "runtime-extension", nil, u.RuntimeExtension)
	fs.StringSliceVar(&p.AddonProviders, "addon", nil, u.Addon)
}
