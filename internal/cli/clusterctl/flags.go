package clusterctl

import (
	"strconv"
	"time"

	"github.com/spf13/cobra"
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

// AddWaitFlags registers --wait-providers and --wait-provider-timeout, which fill wait and timeout (5
// minutes unless given; the flag is in seconds, as upstream's). done says what the command does to the
// providers ("installed", "upgraded"), doing names it ("installation", "upgrade").
func AddWaitFlags(fs *pflag.FlagSet, wait *bool, timeout *time.Duration, done, doing string) {
	fs.BoolVar(wait, "wait-providers", false, "Wait for providers to be "+done+".")
	AddWaitTimeoutFlag(fs, timeout, "Wait timeout per provider "+doing+" in seconds. This value is ignored if --wait-providers is false")
}

// AddWaitTimeoutFlag registers --wait-provider-timeout alone, in seconds as clusterctl's (5 minutes unless
// given), for commands that always wait.
func AddWaitTimeoutFlag(fs *pflag.FlagSet, timeout *time.Duration, usage string) {
	*timeout = 5 * time.Minute
	fs.Var(secondsValue{timeout}, "wait-provider-timeout", usage)
}

// secondsValue is a duration flag given as a whole number of seconds; it reads, prints and reports its
// type as an int flag does.
type secondsValue struct{ d *time.Duration }

func (s secondsValue) String() string {
	if s.d == nil {
		return "0"
	}
	return strconv.FormatInt(int64(*s.d/time.Second), 10)
}

func (s secondsValue) Set(v string) error {
	n, err := strconv.ParseInt(v, 0, 64)
	if err != nil {
		return err
	}
	*s.d = time.Duration(n) * time.Second
	return nil
}

func (s secondsValue) Type() string { return "int" }

// AddGlobalFlags registers clusterctl's global flags, which fill deps: --config, -v and the limits of
// downloads and API calls. The returned function, run before the command (PersistentPreRun), records
// whether -v was given.
func AddGlobalFlags(fs *pflag.FlagSet, deps *Deps) func(*cobra.Command, []string) {
	var verbosity int
	fs.StringVar(&deps.Options.ConfigFile, "config", "", "Path to clusterctl configuration (default is $XDG_CONFIG_HOME/cluster-api/clusterctl.yaml) or to a remote location (i.e. https://example.com/clusterctl.yaml)")
	fs.IntVarP(&verbosity, "v", "v", 0, "Set the log level verbosity. This overrides the CLUSTERCTL_LOG_LEVEL environment variable.")
	deps.HTTP.AddFlags(fs, "http", "the downloads and API calls")
	return func(cmd *cobra.Command, _ []string) {
		deps.Options.Verbosity = -1
		if cmd.Flags().Changed("v") {
			deps.Options.Verbosity = verbosity
		}
	}
}
