// Package bootstrap wires the kubeadm bootstrap provider (bootstrap-kubeadm) into a controller-runtime
// manager: the KubeadmConfig controller and its workload cluster cache. `capstan bootstrap-kubeadm` runs
// it; tests run it in-process.
package bootstrap

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
	bootstrapv1beta2 "github.com/capstan-dev/capstan/api/bootstrap/kubeadm/v1beta2"
	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
	"github.com/capstan-dev/capstan/internal/clustercache"
	"github.com/capstan-dev/capstan/internal/feature"
	"github.com/capstan-dev/capstan/internal/providers/kubeadm/bootstrap/controllers/kubeadmconfig"
)

// Options configure the provider; their flags are upstream's capi-kubeadm-bootstrap-controller-manager's.
type Options struct {
	// WatchFilter restricts the provider to objects with this cluster.x-k8s.io/watch-filter label value.
	WatchFilter string
	// KubeadmConfigConcurrency is how many KubeadmConfigs are reconciled at once (10).
	KubeadmConfigConcurrency int
	// ClusterConcurrency is accepted for compatibility; upstream deprecated it and it has no effect.
	ClusterConcurrency int
	// TokenTTL is how long bootstrap tokens are valid; they are refreshed until the Machine's Node joins
	// (15m).
	TokenTTL time.Duration
	// ClusterCache tunes the workload cluster cache.
	ClusterCache clustercache.Options
	// FeatureGates are the manager's --feature-gates (KubeadmBootstrapFormatIgnition); the defaults when nil.
	FeatureGates *feature.Gates
}

// DefaultOptions returns upstream's defaults.
func DefaultOptions() Options {
	return Options{KubeadmConfigConcurrency: 10, ClusterConcurrency: 10, TokenTTL: kubeadmconfig.DefaultTokenTTL,
		ClusterCache: clustercache.Options{Concurrency: 100, ClientQPS: 20, ClientBurst: 30, IdleTimeout: DefaultClusterCacheIdleTimeout}}
}

// DefaultClusterCacheIdleTimeout is how long a workload cluster the provider no longer uses stays connected
// (--clustercache-idle-timeout). The provider uses a workload cluster to create the bootstrap tokens of
// joining Machines and to refresh them every --bootstrap-token-ttl/3 (5 minutes by default) until their
// Nodes join, and to rotate the tokens of MachinePools; 10 minutes keeps a cluster connected across two
// of those checks (one may fail) and disconnects it 10 minutes after its last Machine has joined.
const DefaultClusterCacheIdleTimeout = 2 * time.Minute

// AddFlags registers the provider's own flags.
func (o *Options) AddFlags(fs *pflag.FlagSet) {
	fs.IntVar(&o.KubeadmConfigConcurrency, "kubeadmconfig-concurrency", o.KubeadmConfigConcurrency, "Number of KubeadmConfigs to reconcile at the same time.")
	fs.IntVar(&o.ClusterConcurrency, "cluster-concurrency", o.ClusterConcurrency, "Number of Clusters to process at the same time.")
	_ = fs.MarkDeprecated("cluster-concurrency", "it has no effect; use --clustercache-concurrency instead")
	fs.IntVar(&o.ClusterCache.Concurrency, "clustercache-concurrency", o.ClusterCache.Concurrency, "Number of Clusters whose workload cluster connection is reconciled at the same time.")
	fs.Float32Var(&o.ClusterCache.ClientQPS, "clustercache-client-qps", o.ClusterCache.ClientQPS, "Maximum queries per second from the workload cluster clients to each workload API server.")
	fs.IntVar(&o.ClusterCache.ClientBurst, "clustercache-client-burst", o.ClusterCache.ClientBurst, "Maximum burst of queries from the workload cluster clients to each workload API server.")
	fs.DurationVar(&o.ClusterCache.IdleTimeout, "clustercache-idle-timeout", o.ClusterCache.IdleTimeout, "How long a workload cluster the provider no longer uses stays connected: workload clusters are connected when a bootstrap token is created, refreshed or rotated and disconnected after this long without one. 0 connects every workload cluster for as long as it exists, as upstream does.")
	fs.DurationVar(&o.TokenTTL, "bootstrap-token-ttl", o.TokenTTL, "How long the bootstrap token of a joining Machine is valid; it is refreshed until the Machine's Node joins.")
}

// NewScheme returns the provider's scheme: Kubernetes built-in types, apiextensions (the webhook
// certificates' CA bundle goes into its CRDs), the Cluster API types and the kubeadm bootstrap types (every
// version served).
func NewScheme() (*runtime.Scheme, error) {
	scheme := runtime.NewScheme()
	add := runtime.NewSchemeBuilder(clientgoscheme.AddToScheme, apiextensionsv1.AddToScheme, clusterv1.AddToScheme, bootstrapv1.AddToScheme, bootstrapv1beta2.AddToScheme)
	if err := add.AddToScheme(scheme); err != nil {
		return nil, err
	}
	return scheme, nil
}

// Setup adds the provider's controllers to mgr.
func Setup(ctx context.Context, mgr ctrl.Manager, o Options) error {
	if o.TokenTTL <= 0 {
		return fmt.Errorf("--bootstrap-token-ttl must be positive, got %s", o.TokenTTL)
	}
	if o.ClusterCache.IdleTimeout < 0 {
		return fmt.Errorf("--clustercache-idle-timeout must not be negative, got %s", o.ClusterCache.IdleTimeout)
	}
	cacheOpts := o.ClusterCache
	cacheOpts.WatchFilter = o.WatchFilter
	cache, err := clustercache.New(mgr, cacheOpts)
	if err != nil {
		return fmt.Errorf("creating the workload cluster cache: %w", err)
	}
	r := &kubeadmconfig.Reconciler{Client: mgr.GetClient(), APIReader: mgr.GetAPIReader(), SecretCache: mgr.GetCache(), ClusterCache: cache, WatchFilter: o.WatchFilter, TokenTTL: o.TokenTTL,
		FeatureGates: o.FeatureGates}
	if err := r.SetupWithManager(ctx, mgr, controller.Options{MaxConcurrentReconciles: o.KubeadmConfigConcurrency}); err != nil {
		return fmt.Errorf("setting up the KubeadmConfig controller: %w", err)
	}
	return nil
}
