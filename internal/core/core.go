// Package core wires the Cluster API core controllers — Cluster, Machine, MachineSet, MachineDeployment,
// MachineHealthCheck, MachinePool, ClusterResourceSet and ClusterResourceSetBinding, ExtensionConfig behind
// the RuntimeSDK feature gate, and with the ClusterTopology feature gate ClusterClass and the Cluster topology —
// and the workload cluster cache into a controller-runtime manager. `capstan manager` runs it; tests and
// benchmarks use it to run the core in-process.
package core

import (
	"context"
	"errors"
	"fmt"

	"github.com/spf13/pflag"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"

	addonsv1 "github.com/capstan-dev/capstan/api/addons/v1beta1"
	addonsv1beta2 "github.com/capstan-dev/capstan/api/addons/v1beta2"
	clusterctlv1 "github.com/capstan-dev/capstan/api/clusterctl/v1alpha3"
	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
	clusterv1beta2 "github.com/capstan-dev/capstan/api/core/v1beta2"
	ipamv1alpha1 "github.com/capstan-dev/capstan/api/ipam/v1alpha1"
	ipamv1 "github.com/capstan-dev/capstan/api/ipam/v1beta1"
	ipamv1beta2 "github.com/capstan-dev/capstan/api/ipam/v1beta2"
	runtimev1 "github.com/capstan-dev/capstan/api/runtime/v1alpha1"
	runtimev1beta2 "github.com/capstan-dev/capstan/api/runtime/v1beta2"
	"github.com/capstan-dev/capstan/internal/clustercache"
	"github.com/capstan-dev/capstan/internal/contract"
	clustercontroller "github.com/capstan-dev/capstan/internal/controllers/cluster"
	clusterclasscontroller "github.com/capstan-dev/capstan/internal/controllers/clusterclass"
	crscontroller "github.com/capstan-dev/capstan/internal/controllers/clusterresourceset"
	crsbcontroller "github.com/capstan-dev/capstan/internal/controllers/clusterresourcesetbinding"
	extensionconfigcontroller "github.com/capstan-dev/capstan/internal/controllers/extensionconfig"
	machinecontroller "github.com/capstan-dev/capstan/internal/controllers/machine"
	mdcontroller "github.com/capstan-dev/capstan/internal/controllers/machinedeployment"
	mhccontroller "github.com/capstan-dev/capstan/internal/controllers/machinehealthcheck"
	mpcontroller "github.com/capstan-dev/capstan/internal/controllers/machinepool"
	mscontroller "github.com/capstan-dev/capstan/internal/controllers/machineset"
	topologycontroller "github.com/capstan-dev/capstan/internal/controllers/topology"
	"github.com/capstan-dev/capstan/internal/controllers/topologymachineset"
	"github.com/capstan-dev/capstan/internal/feature"
	"github.com/capstan-dev/capstan/internal/httpclient"
	"github.com/capstan-dev/capstan/internal/localnet"
	"github.com/capstan-dev/capstan/internal/reconciler"
	runtimeclient "github.com/capstan-dev/capstan/internal/runtime/client"
	"github.com/capstan-dev/capstan/internal/runtime/inplace"
	"github.com/capstan-dev/capstan/internal/runtime/lifecycle"
	"github.com/capstan-dev/capstan/internal/runtime/mutation"
	"github.com/capstan-dev/capstan/internal/runtime/registry"
	"github.com/capstan-dev/capstan/internal/topology"
)

// Concurrency is how many objects of each kind are reconciled at the same time.
type Concurrency struct {
	Cluster, Machine, MachineSet, MachineDeployment, MachineHealthCheck, MachinePool, ClusterResourceSet, ExtensionConfig int
	// ClusterClass and ClusterTopology are the ClusterClass and topology controllers' (upstream's
	// --clusterclass-concurrency and --clustertopology-concurrency).
	ClusterClass, ClusterTopology int
}

// DefaultConcurrency returns upstream's current defaults.
func DefaultConcurrency() Concurrency {
	return Concurrency{Cluster: 50, Machine: 100, MachineSet: 50, MachineDeployment: 50, MachineHealthCheck: 10,
		MachinePool: 10, ClusterResourceSet: 10, ExtensionConfig: 10, ClusterClass: 10, ClusterTopology: 10}
}

// AddFlags registers the --<kind>-concurrency flags.
func (c *Concurrency) AddFlags(fs *pflag.FlagSet) {
	fs.IntVar(&c.Cluster, "cluster-concurrency", c.Cluster, "Number of Clusters to reconcile at the same time.")
	fs.IntVar(&c.Machine, "machine-concurrency", c.Machine, "Number of Machines to reconcile at the same time.")
	fs.IntVar(&c.MachineSet, "machineset-concurrency", c.MachineSet, "Number of MachineSets to reconcile at the same time.")
	fs.IntVar(&c.MachineDeployment, "machinedeployment-concurrency", c.MachineDeployment, "Number of MachineDeployments to reconcile at the same time.")
	fs.IntVar(&c.MachineHealthCheck, "machinehealthcheck-concurrency", c.MachineHealthCheck, "Number of MachineHealthChecks to reconcile at the same time.")
	fs.IntVar(&c.ClusterClass, "clusterclass-concurrency", c.ClusterClass, "Number of ClusterClasses to reconcile at the same time.")
	fs.IntVar(&c.ClusterTopology, "clustertopology-concurrency", c.ClusterTopology, "Number of Clusters with a topology to reconcile at the same time.")
	fs.IntVar(&c.MachinePool, "machinepool-concurrency", c.MachinePool, "Number of MachinePools to reconcile at the same time (with the MachinePool feature gate).")
	fs.IntVar(&c.ClusterResourceSet, "clusterresourceset-concurrency", c.ClusterResourceSet, "Number of ClusterResourceSets and ClusterResourceSetBindings to reconcile at the same time (with the ClusterResourceSet feature gate).")
	fs.IntVar(&c.ExtensionConfig, "extensionconfig-concurrency", c.ExtensionConfig, "Number of ExtensionConfigs to reconcile at the same time (with the RuntimeSDK feature gate).")
}

func concurrency(n, def int) int {
	if n <= 0 {
		return def
	}
	return n
}

// Options configure the core controllers.
type Options struct {
	// WatchFilter restricts the controllers to objects with this cluster.x-k8s.io/watch-filter label value.
	WatchFilter string
	Concurrency Concurrency
	// FeatureGates are the manager's --feature-gates; the defaults when nil.
	FeatureGates *feature.Gates
	// MachineSetPreflightChecks are the checks of --machineset-preflight-checks; every check when nil.
	MachineSetPreflightChecks []clusterv1.MachineSetPreflightCheck
	// ClusterCache tunes the workload cluster cache; zero values take its defaults.
	ClusterCache clustercache.Options
	// RuntimeDial dials Runtime Extension servers; when nil, the embedded management cluster's Service
	// routing (package localnet) where the manager runs in it, and a plain dialer elsewhere.
	RuntimeDial localnet.DialFunc
	// RuntimeExtensionClientCertFile and RuntimeExtensionClientKeyFile are the client certificate presented
	// to Runtime Extensions (--runtime-extension-client-cert-file, --runtime-extension-client-key-file).
	RuntimeExtensionClientCertFile, RuntimeExtensionClientKeyFile string
	// RuntimeExtensionLimits bound the connection and response size of Runtime Extension calls
	// (runtimeclient.DefaultLimits for zero fields).
	RuntimeExtensionLimits httpclient.Limits
	// ExternalPatcher runs the external patches of ClusterClasses (Runtime SDK); ClusterClasses with
	// external patches are reported as not reconcilable without one.
	ExternalPatcher topology.ExternalPatcher
	// TopologyHooks are the lifecycle hooks of managed topologies (Runtime SDK); none when nil.
	TopologyHooks topologycontroller.Hooks
}

// NewScheme returns the scheme of the core manager: Kubernetes built-in types, apiextensions, and the
// Cluster API (core, addons, IPAM and runtime, every version served) and clusterctl types.
func NewScheme() (*runtime.Scheme, error) {
	scheme := runtime.NewScheme()
	add := runtime.NewSchemeBuilder(clientgoscheme.AddToScheme, apiextensionsv1.AddToScheme, clusterv1.AddToScheme, clusterv1beta2.AddToScheme,
		clusterctlv1.AddToScheme, addonsv1.AddToScheme, addonsv1beta2.AddToScheme, ipamv1.AddToScheme, ipamv1alpha1.AddToScheme,
		ipamv1beta2.AddToScheme, runtimev1.AddToScheme, runtimev1beta2.AddToScheme)
	if err := add.AddToScheme(scheme); err != nil {
		return nil, err
	}
	return scheme, nil
}

// step sets up one controller.
type step struct {
	name  string
	setup func() error
}

// Setup adds the core controllers to mgr: MachinePool with the MachinePool feature gate, ClusterResourceSet
// and ClusterResourceSetBinding with the ClusterResourceSet gate (both on by default, as upstream).
func Setup(ctx context.Context, mgr ctrl.Manager, o Options) error {
	contracts := &contract.Resolver{Client: mgr.GetClient()}
	// The Runtime SDK client, nil when the RuntimeSDK gate is off: no hook is called then.
	var runtimeClient *runtimeclient.Client
	if o.FeatureGates.Enabled(feature.RuntimeSDK) {
		dial := o.RuntimeDial
		if dial == nil {
			dial = localnet.ForEnvironment(mgr.GetAPIReader())
		}
		if (o.RuntimeExtensionClientCertFile == "") != (o.RuntimeExtensionClientKeyFile == "") {
			return errors.New("--runtime-extension-client-cert-file and --runtime-extension-client-key-file go together: set both or neither")
		}
		runtimeClient = &runtimeclient.Client{Registry: registry.New(), Namespaces: mgr.GetClient(), Dial: dial,
			CertFile: o.RuntimeExtensionClientCertFile, KeyFile: o.RuntimeExtensionClientKeyFile, Limits: o.RuntimeExtensionLimits}
	}
	cacheOpts := o.ClusterCache
	cacheOpts.WatchFilter = o.WatchFilter
	cache, err := clustercache.New(mgr, cacheOpts)
	if err != nil {
		return fmt.Errorf("creating the workload cluster cache: %w", err)
	}
	steps := []step{
		{"Cluster", func() error {
			return (&clustercontroller.Reconciler{
				Client: mgr.GetClient(), APIReader: mgr.GetAPIReader(), Contracts: contracts, WatchFilter: o.WatchFilter,
				RuntimeClient: runtimeClient,
			}).SetupWithManager(ctx, mgr, controller.Options{MaxConcurrentReconciles: o.Concurrency.Cluster})
		}},
		{"Machine", func() error {
			r := &machinecontroller.Reconciler{
				Client: mgr.GetClient(), APIReader: mgr.GetAPIReader(), Contracts: contracts, WatchFilter: o.WatchFilter,
				ClusterCache: cache,
			}
			if o.FeatureGates.Enabled(feature.InPlaceUpdates) {
				r.InPlaceUpdater = &inplace.Updater{Runtime: runtimeClient}
			}
			return r.SetupWithManager(ctx, mgr, controller.Options{MaxConcurrentReconciles: o.Concurrency.Machine})
		}},
		{"MachineSet", func() error {
			return (&mscontroller.Reconciler{
				Client: mgr.GetClient(), Contracts: contracts, WatchFilter: o.WatchFilter,
				FeatureGates: o.FeatureGates, PreflightChecks: o.MachineSetPreflightChecks,
			}).SetupWithManager(ctx, mgr, controller.Options{MaxConcurrentReconciles: o.Concurrency.MachineSet})
		}},
		{"MachineDeployment", func() error {
			return (&mdcontroller.Reconciler{
				Client: mgr.GetClient(), Contracts: contracts, WatchFilter: o.WatchFilter,
				TopologyFinalizer: o.FeatureGates.Enabled(feature.ClusterTopology),
			}).SetupWithManager(ctx, mgr, controller.Options{MaxConcurrentReconciles: o.Concurrency.MachineDeployment})
		}},
		{"MachineHealthCheck", func() error {
			return (&mhccontroller.Reconciler{
				Client: mgr.GetClient(), ClusterCache: cache, WatchFilter: o.WatchFilter,
			}).SetupWithManager(ctx, mgr, controller.Options{MaxConcurrentReconciles: concurrency(o.Concurrency.MachineHealthCheck, 10)})
		}},
	}
	if o.FeatureGates.Enabled(feature.ClusterTopology) {
		externalPatcher, topologyHooks := o.ExternalPatcher, o.TopologyHooks
		// Without the Runtime SDK, the planner refuses with upstream's message, so that a Cluster of a class
		// naming an upgrade plan extension says why it does not upgrade.
		upgradePlanner := &lifecycle.Planner{Runtime: runtimeClient}
		if runtimeClient != nil {
			// The topology mutation and lifecycle hooks of the Runtime SDK.
			if externalPatcher == nil {
				externalPatcher = &mutation.Patcher{Runtime: runtimeClient}
			}
			if topologyHooks == nil {
				topologyHooks = &lifecycle.Hooks{Runtime: runtimeClient,
					Recorder: reconciler.EventRecorder(mgr, "topology/cluster")}
			}
		}
		steps = append(steps, step{"ClusterClass", func() error {
			return (&clusterclasscontroller.Reconciler{
				Client: mgr.GetClient(), Contracts: contracts, WatchFilter: o.WatchFilter, RuntimeClient: runtimeClient,
			}).SetupWithManager(ctx, mgr, controller.Options{MaxConcurrentReconciles: concurrency(o.Concurrency.ClusterClass, 10)})
		}}, step{"topology", func() error {
			return (&topologycontroller.Reconciler{
				Client: mgr.GetClient(), APIReader: mgr.GetAPIReader(), WatchFilter: o.WatchFilter,
				ExternalPatcher: externalPatcher, Hooks: topologyHooks, UpgradePlanner: upgradePlanner,
				Workload: func(ctx context.Context, key client.ObjectKey) (client.Reader, error) {
					return cache.GetClient(ctx, key)
				},
			}).SetupWithManager(ctx, mgr, controller.Options{MaxConcurrentReconciles: concurrency(o.Concurrency.ClusterTopology, 10)})
		}}, step{"topology/machineset", func() error {
			return (&topologymachineset.Reconciler{
				Client: mgr.GetClient(), APIReader: mgr.GetAPIReader(), WatchFilter: o.WatchFilter,
			}).SetupWithManager(ctx, mgr, controller.Options{MaxConcurrentReconciles: concurrency(o.Concurrency.ClusterTopology, 10)})
		}})
	}
	if o.FeatureGates.Enabled(feature.MachinePool) {
		steps = append(steps, step{"MachinePool", func() error {
			return (&mpcontroller.Reconciler{
				Client: mgr.GetClient(), APIReader: mgr.GetAPIReader(), Contracts: contracts, WatchFilter: o.WatchFilter,
				ClusterCache: cache,
			}).SetupWithManager(ctx, mgr, controller.Options{MaxConcurrentReconciles: concurrency(o.Concurrency.MachinePool, 10)})
		}})
	}
	if o.FeatureGates.Enabled(feature.ClusterResourceSet) {
		steps = append(steps, step{"ClusterResourceSet", func() error {
			return (&crscontroller.Reconciler{
				Client: mgr.GetClient(), ClusterCache: cache, WatchFilter: o.WatchFilter,
			}).SetupWithManager(ctx, mgr, controller.Options{MaxConcurrentReconciles: concurrency(o.Concurrency.ClusterResourceSet, 10)})
		}}, step{"ClusterResourceSetBinding", func() error {
			return (&crsbcontroller.Reconciler{
				Client: mgr.GetClient(), WatchFilter: o.WatchFilter,
			}).SetupWithManager(ctx, mgr, controller.Options{MaxConcurrentReconciles: concurrency(o.Concurrency.ClusterResourceSet, 10)})
		}})
	}
	if runtimeClient != nil {
		steps = append(steps, step{"ExtensionConfig", func() error {
			return (&extensionconfigcontroller.Reconciler{
				Client: mgr.GetClient(), APIReader: mgr.GetAPIReader(), Runtime: runtimeClient,
				Registry: runtimeClient.Registry, WatchFilter: o.WatchFilter,
			}).SetupWithManager(ctx, mgr, controller.Options{MaxConcurrentReconciles: concurrency(o.Concurrency.ExtensionConfig, 10)})
		}})
	}
	for _, s := range steps {
		if err := s.setup(); err != nil {
			return fmt.Errorf("setting up the %s controller: %w", s.name, err)
		}
	}
	if err := machinecontroller.AddPhaseMetrics(mgr, o.WatchFilter); err != nil {
		return fmt.Errorf("adding the Machine phase metrics: %w", err)
	}
	return nil
}
