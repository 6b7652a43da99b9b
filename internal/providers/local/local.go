// Package local wires capstan's local infrastructure provider (infrastructure-local) into a
// controller-runtime manager: the LocalCluster and LocalMachine controllers over one backend. `capstan
// infra-local` runs it; tests use it to run the provider in-process.
package local

import (
	"context"
	"fmt"

	"github.com/spf13/pflag"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/controller"

	bootstrapv1 "github.com/capstan-dev/capstan/api/bootstrap/kubeadm/v1beta1"
	controlplanev1 "github.com/capstan-dev/capstan/api/controlplane/kubeadm/v1beta1"
	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
	infrav1 "github.com/capstan-dev/capstan/api/infrastructure/local/v1alpha1"
	"github.com/capstan-dev/capstan/internal/contract"
	"github.com/capstan-dev/capstan/internal/providers/local/backend"
	"github.com/capstan-dev/capstan/internal/providers/local/controllers/localcluster"
	"github.com/capstan-dev/capstan/internal/providers/local/controllers/localmachine"
	"github.com/capstan-dev/capstan/internal/providers/local/controllers/localmachinepool"
)

// Concurrency is how many objects of each kind are reconciled at the same time.
type Concurrency struct {
	LocalCluster, LocalMachine, LocalMachinePool int
}

// DefaultConcurrency returns the defaults of the --local*-concurrency flags (those of upstream's
// development provider).
func DefaultConcurrency() Concurrency {
	return Concurrency{LocalCluster: 10, LocalMachine: 50, LocalMachinePool: 10}
}

// AddFlags registers the --<kind>-concurrency flags.
func (c *Concurrency) AddFlags(fs *pflag.FlagSet) {
	fs.IntVar(&c.LocalCluster, "localcluster-concurrency", c.LocalCluster, "Number of LocalClusters to reconcile at the same time.")
	fs.IntVar(&c.LocalMachine, "localmachine-concurrency", c.LocalMachine, "Number of LocalMachines to reconcile at the same time.")
	fs.IntVar(&c.LocalMachinePool, "localmachinepool-concurrency", c.LocalMachinePool, "Number of LocalMachinePools to reconcile at the same time.")
}

// Options configure the provider's controllers.
type Options struct {
	// WatchFilter restricts the controllers to objects with this cluster.x-k8s.io/watch-filter label value.
	WatchFilter string
	Concurrency Concurrency
	// Backend runs the workload clusters.
	Backend backend.Backend
}

// NewScheme returns the scheme of the provider's manager: Kubernetes built-in types, apiextensions, the
// Cluster API core types (read only), the kubeadm bootstrap and control plane types (for its webhooks) and
// the provider's own types.
func NewScheme() (*runtime.Scheme, error) {
	scheme := runtime.NewScheme()
	add := runtime.NewSchemeBuilder(clientgoscheme.AddToScheme, apiextensionsv1.AddToScheme, clusterv1.AddToScheme, infrav1.AddToScheme,
		// The kubeadm kinds whose extra arguments the provider's webhooks check.
		bootstrapv1.AddToScheme, controlplanev1.AddToScheme)
	if err := add.AddToScheme(scheme); err != nil {
		return nil, err
	}
	return scheme, nil
}

// Setup adds the LocalCluster, LocalMachine and LocalMachinePool controllers to mgr.
func Setup(ctx context.Context, mgr ctrl.Manager, o Options) error {
	if o.Backend == nil {
		return fmt.Errorf("the local provider needs a backend")
	}
	if o.Concurrency == (Concurrency{}) {
		o.Concurrency = DefaultConcurrency()
	}
	contracts := &contract.Resolver{Client: mgr.GetClient()}
	if err := (&localcluster.Reconciler{
		Client: mgr.GetClient(), APIReader: mgr.GetAPIReader(), Contracts: contracts, WatchFilter: o.WatchFilter,
		Backend: o.Backend,
	}).SetupWithManager(ctx, mgr, controller.Options{MaxConcurrentReconciles: o.Concurrency.LocalCluster}); err != nil {
		return fmt.Errorf("setting up the LocalCluster controller: %w", err)
	}
	if err := (&localmachine.Reconciler{
		Client: mgr.GetClient(), Contracts: contracts, WatchFilter: o.WatchFilter,
		Backend: o.Backend,
	}).SetupWithManager(ctx, mgr, controller.Options{MaxConcurrentReconciles: o.Concurrency.LocalMachine}); err != nil {
		return fmt.Errorf("setting up the LocalMachine controller: %w", err)
	}
	if o.Concurrency.LocalMachinePool == 0 {
		o.Concurrency.LocalMachinePool = DefaultConcurrency().LocalMachinePool
	}
	if err := (&localmachinepool.Reconciler{
		Client: mgr.GetClient(), WatchFilter: o.WatchFilter, Backend: o.Backend,
	}).SetupWithManager(ctx, mgr, controller.Options{MaxConcurrentReconciles: o.Concurrency.LocalMachinePool}); err != nil {
		return fmt.Errorf("setting up the LocalMachinePool controller: %w", err)
	}
	return nil
}
