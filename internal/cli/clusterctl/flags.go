package clusterctl

import (
	"github.com/spf13/pflag"

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
