package v1alpha2

import (
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// ControllerManagerConfiguration holds the settings of a controller manager that map to its flags.
type ControllerManagerConfiguration struct {
	// syncPeriod sets --sync-period, how often every watched object is reconciled.
	// +optional
	SyncPeriod *metav1.Duration `json:"syncPeriod,omitempty"`

	// leaderElection sets the --leader-elect flags.
	// +optional
	LeaderElection *LeaderElectionConfiguration `json:"leaderElection,omitempty"`

	// cacheNamespace sets --namespace, the only namespace the manager watches.
	// +optional
	CacheNamespace string `json:"cacheNamespace,omitempty"`

	// gracefulShutDown is how long the manager's controllers and servers get to stop
	// (--graceful-shutdown-timeout, which capstan's managers have): 0 does not wait, a negative duration
	// waits as long as they take.
	// +optional
	GracefulShutdownTimeout *metav1.Duration `json:"gracefulShutDown,omitempty"`

	// controller holds settings of the manager's controllers.
	// +optional
	Controller *ControllerConfigurationSpec `json:"controller,omitempty"`

	// metrics sets the metrics and diagnostics flags.
	// +optional
	Metrics ControllerMetrics `json:"metrics,omitempty"`

	// health sets the health probe flags.
	// +optional
	Health ControllerHealth `json:"health,omitempty"`

	// webhook sets the webhook server flags.
	// +optional
	Webhook ControllerWebhook `json:"webhook,omitempty"`
}

// LeaderElectionConfiguration is Kubernetes' component-base leader election configuration.
type LeaderElectionConfiguration struct {
	// leaderElect sets --leader-elect.
	LeaderElect *bool `json:"leaderElect"`
	// leaseDuration sets --leader-elect-lease-duration.
	LeaseDuration metav1.Duration `json:"leaseDuration"`
	// renewDeadline sets --leader-elect-renew-deadline.
	RenewDeadline metav1.Duration `json:"renewDeadline"`
	// retryPeriod sets --leader-elect-retry-period.
	RetryPeriod metav1.Duration `json:"retryPeriod"`
	// resourceLock is the kind of lock; Cluster API managers always use Leases ("leases" or empty).
	ResourceLock string `json:"resourceLock"`
	// resourceName sets the name of the lock: --leader-election-id=<resourceNamespace>/<resourceName>,
	// or --leader-election-id=<resourceName> without resourceNamespace.
	ResourceName string `json:"resourceName"`
	// resourceNamespace sets the namespace of the lock (with resourceName, see there; alone,
	// --leader-election-namespace).
	ResourceNamespace string `json:"resourceNamespace"`
}

// ControllerConfigurationSpec holds settings of a manager's controllers.
type ControllerConfigurationSpec struct {
	// groupKindConcurrency sets the concurrency of the controller of each kind, as --<kind>-concurrency
	// (the key is Kind or Kind.group, for example "Cluster.cluster.x-k8s.io").
	// +optional
	GroupKindConcurrency map[string]int `json:"groupKindConcurrency,omitempty"`

	// cacheSyncTimeout has no flag in Cluster API managers: capstan refuses it at admission.
	// +optional
	CacheSyncTimeout *time.Duration `json:"cacheSyncTimeout,omitempty"`

	// recoverPanic has no flag in Cluster API managers: capstan refuses it at admission.
	// +optional
	RecoverPanic *bool `json:"recoverPanic,omitempty"`
}

// ControllerMetrics sets the metrics and diagnostics flags.
type ControllerMetrics struct {
	// bindAddress sets --metrics-bind-addr (deprecated in favour of diagnosticsAddress).
	// +optional
	BindAddress string `json:"bindAddress,omitempty"`

	// diagnosticsAddress sets --diagnostics-address.
	// +optional
	DiagnosticsAddress string `json:"diagnosticsAddress,omitempty"`

	// insecureDiagnostics sets --insecure-diagnostics.
	// +optional
	InsecureDiagnostics bool `json:"insecureDiagnostics,omitempty"`
}

// ControllerHealth sets the health probe flags.
type ControllerHealth struct {
	// healthProbeBindAddress sets --health-addr.
	// +optional
	HealthProbeBindAddress string `json:"healthProbeBindAddress,omitempty"`

	// readinessEndpointName is the path of the readiness probe, readyz or below it (readyz/ping); readyz
	// when empty. Managers serve their probes at /readyz and /healthz only: other paths are refused.
	// +optional
	ReadinessEndpointName string `json:"readinessEndpointName,omitempty"`

	// livenessEndpointName is the path of the liveness probe, healthz or below it; healthz when empty.
	// +optional
	LivenessEndpointName string `json:"livenessEndpointName,omitempty"`
}

// ControllerWebhook sets the webhook server flags.
type ControllerWebhook struct {
	// port sets --webhook-port.
	// +optional
	Port *int `json:"port,omitempty"`

	// host sets --webhook-host.
	// +optional
	Host string `json:"host,omitempty"`

	// certDir sets --webhook-cert-dir.
	// +optional
	CertDir string `json:"certDir,omitempty"`
}
