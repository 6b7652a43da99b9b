// Package controlplane wires capstan's kubeadm control plane provider (control-plane-kubeadm) into a
// controller-runtime manager: the KubeadmControlPlane controller over a workload cluster cache. `capstan
// controlplane-kubeadm` runs it; tests use it to run the provider in-process.
package controlplane

import (
	"context"
	"errors"
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
	runtimev1 "github.com/capstan-dev/capstan/api/runtime/v1alpha1"
	"github.com/capstan-dev/capstan/internal/clustercache"
	"github.com/capstan-dev/capstan/internal/feature"
	"github.com/capstan-dev/capstan/internal/localnet"
	"github.com/capstan-dev/capstan/internal/providers/kubeadm/controlplane/controllers/kubeadmcontrolplane"
	"github.com/capstan-dev/capstan/internal/providers/kubeadm/controlplane/etcd"
	runtimeclient "github.com/capstan-dev/capstan/internal/runtime/client"
	"github.com/capstan-dev/capstan/internal/runtime/inplace"
	"github.com/capstan-dev/capstan/internal/runtime/registry"
	"github.com/capstan-dev/capstan/internal/runtime/registry/follow"
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
	// FeatureGates are the manager's --feature-gates (the defaults when nil). With InPlaceUpdates, the
	// manager calls the CanUpdateMachine hook: it has a Runtime SDK client and a registry of its own, filled
	// from the ExtensionConfigs the core discovered (a read-only ExtensionConfig controller), as upstream's.
	FeatureGates *feature.Gates
	// RuntimeExtensionClientCertFile and RuntimeExtensionClientKeyFile are the client certificate presented
	// to Runtime Extensions (--runtime-extension-client-cert-file, --runtime-extension-client-key-file).
	RuntimeExtensionClientCertFile, RuntimeExtensionClientKeyFile string
	// RuntimeDial dials Runtime Extension servers; when nil, as the core's (localnet.ForEnvironment).
	RuntimeDial localnet.DialFunc
	// InPlaceUpdates turns in-place updates on as the gate does, and InPlaceUpdateChecker replaces the
	// CanUpdateMachine caller built with the gate (tests).
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
	fs.StringVar(&o.RuntimeExtensionClientCertFile, "runtime-extension-client-cert-file", "",
		"Path of the PEM-encoded client certificate to be used when calling runtime extensions (with the InPlaceUpdates feature gate).")
	fs.StringVar(&o.RuntimeExtensionClientKeyFile, "runtime-extension-client-key-file", "",
		"Path of the PEM-encoded client key to be used when calling runtime extensions (with the InPlaceUpdates feature gate).")
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
		controlplanev1.AddToScheme, controlplanev1beta2.AddToScheme, runtimev1.AddToScheme)
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
	inPlace, checker := o.InPlaceUpdates || o.FeatureGates.Enabled(feature.InPlaceUpdates), o.InPlaceUpdateChecker
	if inPlace && checker == nil {
		rc, err := o.runtimeClient(mgr)
		if err != nil {
			return err
		}
		checker = &inplace.Updater{Runtime: rc}
	}
	if err := (&kubeadmcontrolplane.Reconciler{
		Client: mgr.GetClient(), APIReader: mgr.GetAPIReader(), ClusterCache: cache, WatchFilter: o.WatchFilter,
		EtcdDialTimeout: o.EtcdDialTimeout, EtcdCallTimeout: o.EtcdCallTimeout, HealthInterval: o.HealthInterval,
		InPlaceUpdates: inPlace, InPlaceUpdateChecker: checker,
	}).SetupWithManager(ctx, mgr, controller.Options{MaxConcurrentReconciles: o.Concurrency}); err != nil {
		return fmt.Errorf("setting up the KubeadmControlPlane controller: %w", err)
	}
	return nil
}

// runtimeClient returns the manager's Runtime SDK client, its registry filled by a read-only ExtensionConfig
// controller (upstream's KCP manager does the same with InPlaceUpdates).
func (o Options) runtimeClient(mgr ctrl.Manager) (*runtimeclient.Client, error) {
	if (o.RuntimeExtensionClientCertFile == "") != (o.RuntimeExtensionClientKeyFile == "") {
		return nil, errors.New("--runtime-extension-client-cert-file and --runtime-extension-client-key-file go together: set both or neither")
	}
	dial := o.RuntimeDial
	if dial == nil {
		dial = localnet.ForEnvironment(mgr.GetAPIReader())
	}
	rc := &runtimeclient.Client{Registry: registry.New(), Namespaces: mgr.GetClient(), Dial: dial,
		CertFile: o.RuntimeExtensionClientCertFile, KeyFile: o.RuntimeExtensionClientKeyFile}
	if err := follow.Setup(mgr, rc.Registry, o.WatchFilter, controller.Options{MaxConcurrentReconciles: 10}); err != nil {
		return nil, fmt.Errorf("setting up the ExtensionConfig controller: %w", err)
	}
	return rc, nil
}
