// Package manager is the `capstan manager` command: the Cluster API core controller manager
// (capi-controller-manager), with upstream's flags and defaults.
package manager

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	ctrl "sigs.k8s.io/controller-runtime"

	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
	"github.com/capstan-dev/capstan/internal/cli/iostreams"
	"github.com/capstan-dev/capstan/internal/controllermanager"
	"github.com/capstan-dev/capstan/internal/core"
	"github.com/capstan-dev/capstan/internal/httpclient"
	runtimeclient "github.com/capstan-dev/capstan/internal/runtime/client"
	"github.com/capstan-dev/capstan/internal/webhooks"
	corewebhooks "github.com/capstan-dev/capstan/internal/webhooks/core"
)

// Options are the flags of `capstan manager`.
type Options struct {
	Manager     *controllermanager.Options
	Concurrency core.Concurrency
	Webhooks    webhooks.Options
	// PreflightChecks is --machineset-preflight-checks.
	PreflightChecks []string
	// RuntimeExtensionClientCertFile and RuntimeExtensionClientKeyFile are the client certificate presented
	// to Runtime Extensions.
	RuntimeExtensionClientCertFile, RuntimeExtensionClientKeyFile string
	// RuntimeExtensionLimits bound the connection and response size of Runtime Extension calls.
	RuntimeExtensionLimits httpclient.Limits
}

// NewCommand returns `capstan manager`.
func NewCommand(streams iostreams.Streams) *cobra.Command {
	o := &Options{
		Manager:                controllermanager.DefaultOptions("capi-controller-manager"),
		Concurrency:            core.DefaultConcurrency(),
		Webhooks:               webhooks.DefaultOptions(),
		RuntimeExtensionLimits: runtimeclient.DefaultLimits,
	}
	cmd := o.Manager.Command(&cobra.Command{
		Use:   "manager",
		Short: "Run the Cluster API core controllers (Cluster, Machine, MachineSet, MachineDeployment, MachineHealthCheck)",
	}, streams.ErrOut, o.Run)
	fs := cmd.Flags()
	o.Concurrency.AddFlags(fs)
	o.Webhooks.AddFlags(fs)
	fs.StringSliceVar(&o.PreflightChecks, "machineset-preflight-checks", []string{string(clusterv1.MachineSetPreflightCheckAll)},
		"MachineSet preflight checks to run before creating or remediating Machines: All, KubeadmVersionSkew, KubernetesVersionSkew, ControlPlaneIsStable, ControlPlaneVersionSkew (needs the MachineSetPreflightChecks feature gate).")
	fs.StringVar(&o.RuntimeExtensionClientCertFile, "runtime-extension-client-cert-file", "",
		"Filename of the PEM-encoded client certificate to be used when calling runtime extensions.")
	fs.StringVar(&o.RuntimeExtensionClientKeyFile, "runtime-extension-client-key-file", "",
		"Filename of the PEM-encoded client key to be used when calling runtime extensions.")
	fs.DurationVar(&o.RuntimeExtensionLimits.ConnectTimeout, "runtime-extension-connect-timeout", o.RuntimeExtensionLimits.ConnectTimeout,
		"How long the connection (dial and TLS handshake) to a Runtime Extension may take; each call takes at most its handler's timeoutSeconds (10 when unset or 0).")
	httpclient.SizeVar(fs, &o.RuntimeExtensionLimits.MaxResponseBytes, "runtime-extension-max-response-size",
		"The largest Runtime Extension response read, in bytes or with a suffix (Ki, Mi, Gi).")
	return cmd
}

// preflightChecks reads --machineset-preflight-checks, refusing names upstream does not know.
func preflightChecks(names []string) ([]clusterv1.MachineSetPreflightCheck, error) {
	known := []clusterv1.MachineSetPreflightCheck{
		clusterv1.MachineSetPreflightCheckAll, clusterv1.MachineSetPreflightCheckKubeadmVersionSkew,
		clusterv1.MachineSetPreflightCheckKubernetesVersionSkew, clusterv1.MachineSetPreflightCheckControlPlaneIsStable,
		clusterv1.MachineSetPreflightCheckControlPlaneVersionSkew,
	}
	out := []clusterv1.MachineSetPreflightCheck{}
	for _, n := range names {
		c := clusterv1.MachineSetPreflightCheck(strings.TrimSpace(n))
		if c == "" {
			continue
		}
		if !slices.Contains(known, c) {
			return nil, fmt.Errorf("--machineset-preflight-checks: unknown check %q: known checks are %v", c, known)
		}
		out = append(out, c)
	}
	return out, nil
}

// Run starts the manager and blocks until ctx is done.
func (o *Options) Run(ctx context.Context) error {
	checks, err := preflightChecks(o.PreflightChecks)
	if err != nil {
		return err
	}
	return o.Manager.Run(ctx, "core controller manager", core.NewScheme, func(mgr ctrl.Manager) error {
		if err := core.Setup(ctx, mgr, core.Options{
			WatchFilter: o.Manager.WatchFilter, Concurrency: o.Concurrency,
			FeatureGates: o.Manager.FeatureGates, MachineSetPreflightChecks: checks,
			RuntimeExtensionClientCertFile: o.RuntimeExtensionClientCertFile, RuntimeExtensionClientKeyFile: o.RuntimeExtensionClientKeyFile,
			RuntimeExtensionLimits: o.RuntimeExtensionLimits,
		}); err != nil {
			return err
		}
		hooks := corewebhooks.Webhooks(mgr.GetClient(), corewebhooks.Options{FeatureGates: o.Manager.FeatureGates,
			Workload: corewebhooks.KubeconfigWorkload(mgr.GetAPIReader())})
		return o.Manager.SetupWebhooks(mgr, hooks, o.Webhooks)
	})
}
