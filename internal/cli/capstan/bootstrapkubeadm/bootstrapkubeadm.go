// Package bootstrapkubeadm is the `capstan bootstrap-kubeadm` command: the controller manager of capstan's
// kubeadm bootstrap provider (bootstrap-kubeadm), compatible with upstream's
// capi-kubeadm-bootstrap-controller-manager.
package bootstrapkubeadm

import (
	"context"

	"github.com/spf13/cobra"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/capstan-dev/capstan/internal/cli/iostreams"
	"github.com/capstan-dev/capstan/internal/controllermanager"
	"github.com/capstan-dev/capstan/internal/providers/kubeadm/bootstrap"
	"github.com/capstan-dev/capstan/internal/webhooks"
	kubeadmwebhooks "github.com/capstan-dev/capstan/internal/webhooks/kubeadm"
)

// ManagerName names the provider's manager (and its leader election lease), as its Deployment is named.
const ManagerName = "capi-kubeadm-bootstrap-controller-manager"

// Options are the flags of `capstan bootstrap-kubeadm`.
type Options struct {
	Manager  *controllermanager.Options
	Provider bootstrap.Options
	// Webhooks are the flags of the webhook server, which converts the provider's kinds between the
	// versions their CRDs serve (package internal/webhooks/kubeadm).
	Webhooks webhooks.Options
}

// NewCommand returns `capstan bootstrap-kubeadm`.
func NewCommand(streams iostreams.Streams) *cobra.Command {
	o := &Options{Manager: controllermanager.DefaultOptions(ManagerName), Provider: bootstrap.DefaultOptions(), Webhooks: webhooks.DefaultOptions()}
	cmd := o.Manager.Command(&cobra.Command{
		Use:   "bootstrap-kubeadm",
		Short: "Run the kubeadm bootstrap provider (KubeadmConfig): bootstrap data for kubeadm init and join",
		Long: `Run the controllers of capstan's kubeadm bootstrap provider, bootstrap-kubeadm.

For each Machine whose bootstrap configRef is a KubeadmConfig, it renders the machine's bootstrap data, as
cloud-init #cloud-config or Ignition v3, into the Secret named by the KubeadmConfig's
status.dataSecretName: ` + "`kubeadm init`" + ` for the first control plane Machine, ` + "`kubeadm join`" + ` for the others once
the control plane is initialized, with bootstrap tokens created in the workload cluster.`,
	}, streams.ErrOut, o.Run)
	o.Provider.AddFlags(cmd.Flags())
	o.Webhooks.AddFlags(cmd.Flags())
	return cmd
}

// Run starts the provider and blocks until ctx is done.
func (o *Options) Run(ctx context.Context) error {
	opts := o.Provider
	opts.WatchFilter = o.Manager.WatchFilter
	opts.FeatureGates = o.Manager.FeatureGates
	return o.Manager.Run(ctx, "kubeadm bootstrap provider", bootstrap.NewScheme, func(mgr ctrl.Manager) error {
		if err := bootstrap.Setup(ctx, mgr, opts); err != nil {
			return err
		}
		return o.Manager.SetupWebhooks(mgr, kubeadmwebhooks.Bootstrap(), o.Webhooks)
	}, "bootstrapTokenTTL", opts.TokenTTL.String())
}
