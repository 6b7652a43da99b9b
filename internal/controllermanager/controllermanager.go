// Package controllermanager builds a controller-runtime manager from the flags every capstan provider
// shares (--kubeconfig, leader election, --namespace, --watch-filter, API client rate limits, sync period,
// health address, the diagnostics endpoint and TLS settings, feature gates, logging), and their cache and
// client (what is read from the cache, see cache.go), with upstream Cluster
// API's names and defaults.
package controllermanager

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/pflag"
	uberzap "go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
	"k8s.io/component-base/logs"
	"k8s.io/klog/v2"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/capstan-dev/capstan/internal/feature"
	"github.com/capstan-dev/capstan/internal/localnet"
)

// Options are the flags shared by capstan's controller managers.
type Options struct {
	// Name identifies the manager, for example "capi-controller-manager"; it names the leader election lease.
	Name string

	// Kubeconfig is the path of the management cluster's kubeconfig (see RESTConfig).
	Kubeconfig string

	LeaderElect bool
	// LeaderElectionID names the leader election Lease, "name" or "namespace/name" (the namespace then
	// replaces LeaderElectionNamespace); <Name>-leader-election when empty.
	LeaderElectionID         string
	LeaderElectionNamespace  string
	LeaderElectLeaseDuration time.Duration
	LeaderElectRenewDeadline time.Duration
	LeaderElectRetryPeriod   time.Duration
	// LeaderElectionIdentity, when set, is the identity the manager holds the lease as; the host name and
	// a random suffix when empty, as controller-runtime makes it. A command that runs managers one after
	// another in one process sets it to tell its own holders from another instance's (LeaseHolder).
	LeaderElectionIdentity string
	Namespace              string
	WatchFilter            string
	KubeAPIQPS             float32
	KubeAPIBurst           int
	SyncPeriod             time.Duration
	HealthAddr             string
	FeatureGates           *feature.Gates

	// MaxConcurrentReconciles, when positive, is the concurrency of every controller of the manager
	// whose own --<kind>-concurrency flag is not given (--max-concurrent-reconciles).
	MaxConcurrentReconciles int
	// GracefulShutdownTimeout is how long the manager's controllers and servers get to stop once the
	// manager is told to (--graceful-shutdown-timeout): 0 does not wait, a negative duration waits as long
	// as they take.
	GracefulShutdownTimeout time.Duration

	// DiagnosticsAddress and InsecureDiagnostics are --diagnostics-address and --insecure-diagnostics (see
	// docs/diagnostics.md); MetricsBindAddr is the deprecated --metrics-bind-addr, which replaces the
	// diagnostics endpoint with plain HTTP metrics when set.
	DiagnosticsAddress  string
	InsecureDiagnostics bool
	MetricsBindAddr     string
	// TLSMinVersion and TLSCipherSuites configure the diagnostics endpoint and the webhook server
	// (TLSOptions).
	TLSMinVersion   string
	TLSCipherSuites []string
	// ProfilerAddress serves pprof over plain HTTP when set (--profiler-address).
	ProfilerAddress string

	// Verbosity is the log level of -v; Zap the controller-runtime --zap-* flags, which take precedence.
	Verbosity int
	Zap       zap.Options

	// level is the logger's level, which PUT /debug/flags/v changes; set by SetupLogging.
	level *uberzap.AtomicLevel
	// again says that the process built a manager before (RunAcrossLeaseLoss): its controllers' names are
	// taken, which controller-runtime otherwise refuses.
	again bool
	// flags are the flags AddFlags registered, which New completes with --max-concurrent-reconciles.
	flags *pflag.FlagSet
}

// DefaultOptions returns upstream Cluster API's defaults.
func DefaultOptions(name string) *Options {
	return &Options{
		Name: name,
		// Outside a Pod (the embedded cluster's local runtime) the namespace comes from POD_NAMESPACE, as
		// the downward API would give it.
		LeaderElectionNamespace:  os.Getenv("POD_NAMESPACE"),
		LeaderElectLeaseDuration: 15 * time.Second,
		LeaderElectRenewDeadline: 10 * time.Second,
		LeaderElectRetryPeriod:   2 * time.Second,
		KubeAPIQPS:               100,
		KubeAPIBurst:             200,
		SyncPeriod:               10 * time.Minute,
		GracefulShutdownTimeout:  30 * time.Second,
		// Upstream's ports on every address, what a Pod needs; on 127.0.0.1 only in the embedded cluster.
		HealthAddr:         net.JoinHostPort(localnet.ListenHost(), "9440"),
		DiagnosticsAddress: net.JoinHostPort(localnet.ListenHost(), "8443"),
		TLSMinVersion:      "VersionTLS12",
		FeatureGates:       &feature.Gates{},
	}
}

// AddFlags registers the shared flags.
func (o *Options) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.Kubeconfig, "kubeconfig", o.Kubeconfig, "Path to the management cluster's kubeconfig; in-cluster configuration or $KUBECONFIG when empty.")
	o.flags = fs
	fs.BoolVar(&o.LeaderElect, "leader-elect", o.LeaderElect, "Enable leader election, so that only one replica of the manager is active.")
	fs.StringVar(&o.LeaderElectionID, "leader-election-id", o.LeaderElectionID, "Name of the leader election lease, as name or namespace/name (the namespace then replaces --leader-election-namespace); "+o.Name+"-leader-election when empty.")
	fs.StringVar(&o.LeaderElectionNamespace, "leader-election-namespace", o.LeaderElectionNamespace, "Namespace of the leader election lease; the namespace the manager runs in when empty.")
	fs.DurationVar(&o.LeaderElectLeaseDuration, "leader-elect-lease-duration", o.LeaderElectLeaseDuration, "How long non-leaders wait before trying to take over leadership.")
	fs.DurationVar(&o.LeaderElectRenewDeadline, "leader-elect-renew-deadline", o.LeaderElectRenewDeadline, "How long the leader keeps trying to renew its lease before giving up.")
	fs.DurationVar(&o.LeaderElectRetryPeriod, "leader-elect-retry-period", o.LeaderElectRetryPeriod, "How long to wait between leader election attempts.")
	fs.StringVar(&o.Namespace, "namespace", o.Namespace, "Only watch and reconcile objects in this namespace; every namespace when empty.")
	fs.StringVar(&o.WatchFilter, "watch-filter", o.WatchFilter, "Only reconcile objects whose cluster.x-k8s.io/watch-filter label has this value; every object when empty.")
	fs.Float32Var(&o.KubeAPIQPS, "kube-api-qps", o.KubeAPIQPS, "Maximum queries per second from the manager to the API server.")
	fs.IntVar(&o.KubeAPIBurst, "kube-api-burst", o.KubeAPIBurst, "Maximum burst of queries from the manager to the API server.")
	fs.DurationVar(&o.SyncPeriod, "sync-period", o.SyncPeriod, "How often every watched object is reconciled even without changes.")
	fs.StringVar(&o.HealthAddr, "health-addr", o.HealthAddr, "Address of the /healthz and /readyz endpoints.")
	fs.IntVar(&o.MaxConcurrentReconciles, "max-concurrent-reconciles", o.MaxConcurrentReconciles, "When positive, the number of objects every controller of the manager reconciles at the same time; a --<kind>-concurrency flag given too wins for its controller.")
	fs.DurationVar(&o.GracefulShutdownTimeout, "graceful-shutdown-timeout", o.GracefulShutdownTimeout, "How long the controllers and servers get to stop when the manager stops; 0 does not wait, a negative duration waits as long as they take.")
	o.addDiagnosticsFlags(fs)
	fs.Var(o.FeatureGates, "feature-gates", "Comma-separated Gate=true|false pairs of upstream Cluster API's feature gates ("+strings.Join(feature.Known(), ", ")+"); an unknown gate is an error.")
	fs.IntVarP(&o.Verbosity, "v", "v", o.Verbosity, "Log verbosity: 0 logs the essentials, higher numbers log more.")
	zapFlags := flag.NewFlagSet("zap", flag.ContinueOnError)
	o.Zap.BindFlags(zapFlags)
	fs.AddGoFlagSet(zapFlags)
}

// SetupLogging sends controller-runtime's and klog's logs to w, at the level of -v unless a --zap-* flag
// says otherwise. The level can then be changed with PUT /debug/flags/v on the diagnostics endpoint.
func (o *Options) SetupLogging(w io.Writer) {
	level, ok := o.Zap.Level.(uberzap.AtomicLevel) // what --zap-log-level sets
	if !ok {
		level = uberzap.NewAtomicLevelAt(zapcore.Level(-o.Verbosity))
		o.Zap.Level = level
	}
	o.level = &level
	// klog checks its own verbosity before handing a message to its logger: give it the same level.
	if v := -int(level.Level()); v > 0 {
		_, _ = logs.GlogSetter(strconv.Itoa(v))
	}
	ctrl.SetLogger(zap.New(zap.UseFlagOptions(&o.Zap), zap.WriteTo(w)))
	klog.SetLogger(ctrl.Log)
}

// RESTConfig loads the management cluster's API server configuration from --kubeconfig, or as
// controller-runtime does (in-cluster, then $KUBECONFIG, then ~/.kube/config) when it is empty.
func (o *Options) RESTConfig() (*rest.Config, error) {
	if o.Kubeconfig == "" {
		return ctrl.GetConfig()
	}
	return clientcmd.BuildConfigFromFlags("", o.Kubeconfig)
}

// leaderElection returns the namespace and name of the leader election Lease.
func (o *Options) leaderElection() (namespace, name string, err error) {
	namespace, name = o.LeaderElectionNamespace, o.LeaderElectionID
	if name == "" {
		return namespace, o.Name + "-leader-election", nil
	}
	if ns, n, ok := strings.Cut(name, "/"); ok {
		namespace, name = ns, n
	}
	if errs := validation.IsDNS1123Subdomain(name); len(errs) > 0 || (namespace != "" && len(validation.IsDNS1123Label(namespace)) > 0) {
		return "", "", fmt.Errorf("--leader-election-id %q is not a Lease name or namespace/name", o.LeaderElectionID)
	}
	return namespace, name, nil
}

// maxConcurrentReconciles sets, when --max-concurrent-reconciles is positive, every concurrency flag that
// was not given (--concurrency and every --<kind>-concurrency) to it.
func (o *Options) maxConcurrentReconciles() error {
	if o.MaxConcurrentReconciles <= 0 || o.flags == nil {
		return nil
	}
	var errs []error
	o.flags.VisitAll(func(f *pflag.Flag) {
		if f.Changed || (f.Name != "concurrency" && !strings.HasSuffix(f.Name, "-concurrency")) || f.Deprecated != "" {
			return
		}
		if err := f.Value.Set(strconv.Itoa(o.MaxConcurrentReconciles)); err != nil {
			errs = append(errs, fmt.Errorf("--max-concurrent-reconciles: setting --%s: %w", f.Name, err))
		}
	})
	return errors.Join(errs...)
}

// New builds a manager for cfg with the options. Leader election uses a Lease named after o.Name unless
// --leader-election-id names another; --max-concurrent-reconciles is applied to the concurrency flags not
// given, so New must be called before the controllers read them.
func (o *Options) New(cfg *rest.Config, scheme *runtime.Scheme) (ctrl.Manager, error) {
	if err := o.maxConcurrentReconciles(); err != nil {
		return nil, err
	}
	leaseNamespace, leaseName, err := o.leaderElection()
	if err != nil {
		return nil, err
	}
	cfg = rest.CopyConfig(cfg)
	cfg.QPS, cfg.Burst = o.KubeAPIQPS, o.KubeAPIBurst
	cfg.UserAgent = o.Name

	metricsOpts, err := o.metricsServerOptions()
	if err != nil {
		return nil, err
	}
	cacheOpts := cache.Options{SyncPeriod: ptr.To(o.SyncPeriod)}
	if o.Namespace != "" {
		cacheOpts.DefaultNamespaces = map[string]cache.Config{o.Namespace: {}}
	}
	var lock resourcelock.Interface
	if o.LeaderElect && o.LeaderElectionIdentity != "" {
		if lock, err = o.resourceLock(cfg, leaseNamespace, leaseName); err != nil {
			return nil, err
		}
	}
	mgr, err := ctrl.NewManager(cfg, ManagerOptions(ctrl.Options{
		Scheme:                  scheme,
		LeaderElection:          o.LeaderElect,
		LeaderElectionID:        leaseName,
		LeaderElectionNamespace: leaseNamespace,
		// Set only with LeaderElectionIdentity; controller-runtime builds the lock otherwise.
		LeaderElectionResourceLockInterface: lock,
		GracefulShutdownTimeout:             ptr.To(o.GracefulShutdownTimeout),
		LeaseDuration:                       ptr.To(o.LeaderElectLeaseDuration),
		RenewDeadline:                       ptr.To(o.LeaderElectRenewDeadline),
		RetryPeriod:                         ptr.To(o.LeaderElectRetryPeriod),
		// Stop the controllers before releasing the lease, so a new leader never overlaps with this one.
		LeaderElectionReleaseOnCancel: true,
		HealthProbeBindAddress:        o.HealthAddr,
		Metrics:                       metricsOpts,
		PprofBindAddress:              o.ProfilerAddress,
		// The cache holds the watched objects, the provider objects read as unstructured and the Secrets
		// labelled with a cluster name; NewClient reads them from it (see docs/core.md, "What the managers cache").
		Cache:      cacheOpts,
		Controller: config.Controller{UsePriorityQueue: ptr.To(true), SkipNameValidation: ptr.To(o.again)},
	}))
	if err != nil {
		return nil, fmt.Errorf("creating the controller manager: %w", err)
	}
	if err := mgr.AddHealthzCheck("ping", healthz.Ping); err != nil {
		return nil, err
	}
	if err := mgr.AddReadyzCheck("ping", healthz.Ping); err != nil {
		return nil, err
	}
	return mgr, nil
}

// inClusterNamespace is where a Pod finds its namespace.
const inClusterNamespace = "/var/run/secrets/kubernetes.io/serviceaccount/namespace"

// LeaseNamespace returns the namespace of the leader election Lease: --leader-election-id's or
// --leader-election-namespace's, else the Pod's (POD_NAMESPACE is the default of the flag, then the
// service account's namespace file, as controller-runtime reads it).
func (o *Options) LeaseNamespace() (namespace, name string, err error) {
	namespace, name, err = o.leaderElection()
	if err != nil || namespace != "" {
		return namespace, name, err
	}
	data, err := os.ReadFile(inClusterNamespace)
	if err != nil {
		return "", "", fmt.Errorf("the leader election lease needs a namespace: set --leader-election-namespace (or POD_NAMESPACE): %w", err)
	}
	return strings.TrimSpace(string(data)), name, nil
}

// resourceLock is the Lease lock of the manager as controller-runtime builds it (its clients time out
// within half the renew deadline, so that one hung request does not cost the lease), with the identity
// LeaderElectionIdentity.
func (o *Options) resourceLock(cfg *rest.Config, namespace, name string) (resourcelock.Interface, error) {
	if namespace == "" {
		var err error
		if namespace, _, err = o.LeaseNamespace(); err != nil {
			return nil, err
		}
	}
	lockCfg := rest.AddUserAgent(rest.CopyConfig(cfg), "leader-election")
	return resourcelock.NewFromKubeconfig(resourcelock.LeasesResourceLock, namespace, name,
		resourcelock.ResourceLockConfig{Identity: o.LeaderElectionIdentity}, lockCfg, max(o.LeaderElectRenewDeadline, 2*time.Second))
}
