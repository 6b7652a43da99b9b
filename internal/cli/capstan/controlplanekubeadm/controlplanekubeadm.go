// Package controlplanekubeadm is the `capstan controlplane-kubeadm` command: the controller manager of
// capstan's kubeadm control plane provider (control-plane-kubeadm), upstream's
// capi-kubeadm-control-plane-controller-manager.
package controlplanekubeadm

import (
	"context"

	"github.com/spf13/cobra"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/capstan-dev/capstan/internal/cli/iostreams"
	"github.com/capstan-dev/capstan/internal/controllermanager"
	"github.com/capstan-dev/capstan/internal/conversion"
	"github.com/capstan-dev/capstan/internal/providers/kubeadm/controlplane"
	"github.com/capstan-dev/capstan/internal/webhooks"
	kubeadmwebhooks "github.com/capstan-dev/capstan/internal/webhooks/kubeadm"
)

// ManagerName names the provider's manager (and its leader election lease), as its Deployment is named.
const ManagerName = "capi-kubeadm-control-plane-controller-manager"

// Options are the flags of `capstan controlplane-kubeadm`.
type Options struct {
	Manager  *controllermanager.Options
	Provider controlplane.Options
	// Webhooks are the flags of the webhook server, which converts the provider's kinds between the
	// versions their CRDs serve (package internal/webhooks/kubeadm).
	Webhooks webhooks.Options
}

// NewCommand returns `capstan controlplane-kubeadm`.
func NewCommand(streams iostreams.Streams) *cobra.Command {
	o := &Options{Manager: controllermanager.DefaultOptions(ManagerName), Provider: controlplane.DefaultOptions(), Webhooks: webhooks.DefaultOptions()}
	cmd := o.Manager.Command(&cobra.Command{
		Use:   "controlplane-kubeadm",
		Short: "Run the kubeadm control plane provider (KubeadmControlPlane)",
		Long: `Run the controller of capstan's kubeadm control plane provider, control-plane-kubeadm.

It manages the control plane Machines of KubeadmControlPlanes: their certificates and kubeconfig, one
KubeadmConfig and InfraMachine per Machine, scaling and rollouts one Machine at a time, and the etcd
members of the workload cluster, which it reaches through port-forwards of the workload API server.`,
	}, streams.ErrOut, o.Run)
	o.Provider.AddFlags(cmd.Flags())
	o.Webhooks.AddFlags(cmd.Flags())
	return cmd
}

// Run starts the provider and blocks until ctx is done.
func (o *Options) Run(ctx context.Context) error {
	if err := o.Provider.Validate(); err != nil {
		return err
	}
	p := o.Provider
	p.WatchFilter = o.Manager.WatchFilter
	p.FeatureGates = o.Manager.FeatureGates
	return o.Manager.Run(ctx, "kubeadm control plane provider", controlplane.NewScheme, func(mgr ctrl.Manager) error {
		if err := controlplane.Setup(ctx, mgr, p); err != nil {
			return err
		}
		return o.Manager.SetupWebhooks(mgr, kubeadmwebhooks.ControlPlane(conversion.ContractAPIVersions(mgr.GetClient())), o.Webhooks)
	})
}
