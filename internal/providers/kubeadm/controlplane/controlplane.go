// Package controlplane wires capstan's kubeadm control plane provider (control-plane-kubeadm) into a
// controller-runtime manager: the KubeadmControlPlane controller over a workload cluster cache. `capstan
// controlplane-kubeadm` runs it; tests use it to run the provider in-process.
package controlplane

import (
	"context"
	"fmt"
	"time"

	"github.com/spf13/pflag"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/controller"

	bootstrapv1 "github.com/capstan-dev/capstan/api/bootstrap/kubeadm/v1beta1"
	controlplanev1 "github.com/capstan-dev/capstan/api/controlplane/kubeadm/v1beta1"
	controlplanev1beta2 "github.com/capstan-dev/capstan/api/controlplane/kubeadm/v1beta2"
	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
	"github.com/capstan-dev/capstan/internal/clustercache"
	"github.com/capstan-dev/capstan/internal/providers/kubeadm/controlplane/controllers/kubeadmcontrolplane"
	"github.com/capstan-dev/capstan/internal/providers/kubeadm/controlplane/etcd"
)

// Options are the provider's own flags (the shared manager flags are controllermanager's).
type Options struct {
	// WatchFilter restricts the controller to objects with this cluster.x-k8s.io/watch-filter label value.
	WatchFilter string
	// Concurrency is how many KubeadmControlPlanes are reconciled at the same time.
	Concurrency int
	// EtcdDialTimeout and EtcdCallTimeout bound the connections and calls to etcd.
	EtcdDialTimeout, EtcdCallTimeout time.Duration
	// HealthInterval is how often the health of a ready, healthy control plane is read again besides
	// Machine and workload connection events (--control-plane-health-interval, a capstan flag).
	HealthInterval time.Duration
	// ClusterCache tunes the workload cluster cache; zero values take its defaults.
	ClusterCache clustercache.Options
	// InPlaceUpdates is the InPlaceUpdates feature gate; with InPlaceUpdateChecker (the CanUpdateMachine
	// caller), rollouts update Machines in place when the extension can.
	InPlaceUpdates       bool
	InPlaceUpdateChecker kubeadmcontrolplane.InPlaceUpdateChecker
}

// DefaultOptions returns upstream's defaults.
func DefaultOptions() Options {
	return Options{Concurrency: 10, EtcdDialTimeout: etcd.DefaultDialTimeout, EtcdCallTimeout: etcd.DefaultCallTimeout,
		HealthInterval: kubeadmcontrolplane.DefaultHealthInterval}
}

// AddFlags registers the flags of upstream's capi-kubeadm-control-plane-controller-manager that are the
// provider's own.
func (o *Options) AddFlags(fs *pflag.FlagSet) {
	fs.IntVar(&o.Concurrency, "kubeadmcontrolplane-concurrency", o.Concurrency, "Number of KubeadmControlPlanes to reconcile at the same time.")
	fs.DurationVar(&o.EtcdDialTimeout, "etcd-dial-timeout-duration", o.EtcdDialTimeout, "Duration that the etcd client waits at most to establish a connection with etcd.")
	fs.DurationVar(&o.EtcdCallTimeout, "etcd-call-timeout-duration", o.EtcdCallTimeout, "Duration that the etcd client waits at most for read and write operations to etcd.")
	fs.DurationVar(&o.HealthInterval, "control-plane-health-interval", o.HealthInterval, "How often the health (Pods, Nodes, etcd members) of a ready, healthy control plane is read again besides Machine events; a control plane that is not ready or not healthy is read again every 20s.")
	fs.IntVar(&o.ClusterCache.Concurrency, "clustercache-concurrency", 100, "Number of Clusters whose workload cluster connection is reconciled at the same time.")
	fs.Float32Var(&o.ClusterCache.ClientQPS, "clustercache-client-qps", 20, "Maximum queries per second from the controller's workload cluster clients.")
	fs.IntVar(&o.ClusterCache.ClientBurst, "clustercache-client-burst", 30, "Maximum burst of queries from the controller's workload cluster clients.")
}

// Validate checks the options.
func (o Options) Validate() error {
	if o.EtcdDialTimeout <= 0 || o.EtcdCallTimeout <= 0 {
		return fmt.Errorf("--etcd-dial-timeout-duration and --etcd-call-timeout-duration must be greater than 0")
	}
	if o.Concurrency <= 0 {
		return fmt.Errorf("--kubeadmcontrolplane-concurrency must be greater than 0")
	}
	if o.HealthInterval <= 0 {
		return fmt.Errorf("--control-plane-health-interval must be greater than 0, got %s", o.HealthInterval)
	}
	return nil
}

// NewScheme returns the scheme of the provider's manager: Kubernetes built-in types, apiextensions, the
// Cluster API core types, KubeadmConfig and KubeadmControlPlane (every version served).
func NewScheme() (*runtime.Scheme, error) {
	scheme := runtime.NewScheme()
	add := runtime.NewSchemeBuilder(clientgoscheme.AddToScheme, apiextensionsv1.AddToScheme, clusterv1.AddToScheme, bootstrapv1.AddToScheme,
		controlplanev1.AddToScheme, controlplanev1beta2.AddToScheme)
	if err := add.AddToScheme(scheme); err != nil {
		return nil, err
	}
	return scheme, nil
}

// Setup adds the workload cluster cache and the KubeadmControlPlane controller to mgr.
func Setup(ctx context.Context, mgr ctrl.Manager, o Options) error {
	def := DefaultOptions()
	if o.Concurrency == 0 {
		o.Concurrency = def.Concurrency
	}
	if o.EtcdDialTimeout == 0 {
		o.EtcdDialTimeout = def.EtcdDialTimeout
	}
	if o.EtcdCallTimeout == 0 {
		o.EtcdCallTimeout = def.EtcdCallTimeout
	}
	if o.HealthInterval == 0 {
		o.HealthInterval = def.HealthInterval
	}
	if err := o.Validate(); err != nil {
		return err
	}
	cacheOpts := o.ClusterCache
	cacheOpts.WatchFilter = o.WatchFilter
	if cacheOpts.UserAgent == "" {
		cacheOpts.UserAgent = "capi-kubeadmcontrolplane-cluster-cache"
	}
	cache, err := clustercache.New(mgr, cacheOpts)
	if err != nil {
		return fmt.Errorf("creating the workload cluster cache: %w", err)
	}
	if err := (&kubeadmcontrolplane.Reconciler{
		Client: mgr.GetClient(), APIReader: mgr.GetAPIReader(), ClusterCache: cache, WatchFilter: o.WatchFilter,
		EtcdDialTimeout: o.EtcdDialTimeout, EtcdCallTimeout: o.EtcdCallTimeout, HealthInterval: o.HealthInterval,
		InPlaceUpdates: o.InPlaceUpdates, InPlaceUpdateChecker: o.InPlaceUpdateChecker,
	}).SetupWithManager(ctx, mgr, controller.Options{MaxConcurrentReconciles: o.Concurrency}); err != nil {
		return fmt.Errorf("setting up the KubeadmControlPlane controller: %w", err)
	}
	return nil
}
