package backend

import (
	"fmt"
	"path"
	"slices"
	"strings"
)

// The local provider runs kube-apiserver and etcd as processes of this machine, as the provider's user:
// whoever can write a KubeadmControlPlane (or a KubeadmConfig, or a bootstrap data Secret) decides their
// arguments. So only the extra arguments below are allowed: each changes how the workload cluster's own
// API server or etcd behaves, and none reads or writes a file of the machine, listens on an address,
// calls out to another server, or weakens how the API server authenticates and authorizes its clients
// (any local user can reach it on 127.0.0.1). docs/providers/local.md lists them; a test keeps that list
// true.

// The arguments a user cannot override through the kubeadm configuration's extraArgs: a backend sets
// them to run a machine on its ports, with the cluster's certificates and the machine's data.
var (
	reservedAPIServerArgs = []string{"advertise-address", "bind-address", "secure-port", "etcd-servers", "etcd-cafile",
		"etcd-certfile", "etcd-keyfile", "tls-cert-file", "tls-private-key-file", "client-ca-file",
		"kubelet-client-certificate", "kubelet-client-key", "kubelet-certificate-authority",
		"service-account-key-file", "service-account-signing-key-file", "proxy-client-cert-file",
		"proxy-client-key-file", "requestheader-client-ca-file"}
	reservedEtcdArgs = []string{"name", "data-dir", "listen-client-urls", "advertise-client-urls", "listen-peer-urls",
		"initial-advertise-peer-urls", "initial-cluster", "initial-cluster-state", "cert-file", "key-file",
		"trusted-ca-file", "client-cert-auth", "peer-cert-file", "peer-key-file", "peer-trusted-ca-file",
		"peer-client-cert-auth"}
)

// AllowedAPIServerArgs are the kube-apiserver extra arguments the local provider passes on, whatever their
// value.
var AllowedAPIServerArgs = []string{
	"aggregator-reject-forwarding-redirect", "allow-metric-labels", "allow-privileged", "anonymous-auth", "api-audiences",
	"audit-log-batch-buffer-size", "audit-log-batch-max-size", "audit-log-batch-max-wait", "audit-log-batch-throttle-burst",
	"audit-log-batch-throttle-enable", "audit-log-batch-throttle-qps", "audit-log-compress", "audit-log-format",
	"audit-log-maxage", "audit-log-maxbackup", "audit-log-maxsize", "audit-log-mode", "audit-log-truncate-enabled",
	"audit-log-truncate-max-batch-size", "audit-log-truncate-max-event-size", "audit-log-version",
	"contention-profiling", "cors-allowed-origins", "default-not-ready-toleration-seconds",
	"default-unreachable-toleration-seconds", "delete-collection-workers", "disable-admission-plugins",
	"disable-http2-serving", "disabled-metrics", "enable-admission-plugins", "enable-garbage-collector",
	"enable-priority-and-fairness", "encryption-provider-config-automatic-reload", "etcd-compaction-interval",
	"etcd-count-metric-poll-period", "etcd-db-metric-poll-interval", "etcd-healthcheck-timeout", "etcd-prefix",
	"etcd-readycheck-timeout", "event-ttl", "feature-gates", "goaway-chance", "http2-max-streams-per-connection",
	"kubelet-timeout", "lease-reuse-duration-seconds", "livez-grace-period", "log-flush-frequency", "logging-format",
	"max-mutating-requests-inflight", "max-requests-inflight", "min-request-timeout", "profiling", "request-timeout",
	"runtime-config", "service-account-extend-token-expiration", "service-account-issuer", "service-account-jwks-uri",
	"service-account-lookup", "service-account-max-token-expiration", "service-cluster-ip-range",
	"service-node-port-range", "show-hidden-metrics-for-version", "shutdown-delay-duration", "shutdown-send-retry-after",
	"shutdown-watch-termination-grace-period", "storage-media-type", "strict-transport-security-directives",
	"tls-cipher-suites", "tls-curve-preferences", "tls-min-version", "v", "vmodule", "watch-cache", "watch-cache-sizes",
}

// AllowedAPIServerFileArgs are the kube-apiserver extra arguments that name a file: allowed when the file
// is one the bootstrap data writes (its files, seen through apiServer.extraVolumes), never another file
// of the machine.
var AllowedAPIServerFileArgs = []string{"admission-control-config-file", "audit-policy-file", "encryption-provider-config"}

// AllowedAPIServerStdoutArgs are the kube-apiserver extra arguments allowed only with the value "-"
// (standard output, which goes to the process's log).
var AllowedAPIServerStdoutArgs = []string{"audit-log-path"}

// AllowedEtcdArgs are the etcd extra arguments the local provider passes on, whatever their value.
var AllowedEtcdArgs = []string{
	"auto-compaction-mode", "auto-compaction-retention", "backend-batch-interval", "backend-batch-limit",
	"backend-bbolt-freelist-type", "bootstrap-defrag-threshold-megabytes", "cipher-suites", "compact-hash-check-time",
	"compaction-batch-limit", "compaction-sleep-interval", "corrupt-check-time", "downgrade-check-time", "election-timeout",
	"enable-grpc-gateway", "enable-pprof", "experimental-bootstrap-defrag-threshold-megabytes",
	"experimental-compact-hash-check-enabled", "experimental-compact-hash-check-time", "experimental-compaction-batch-limit",
	"experimental-compaction-sleep-interval", "experimental-corrupt-check-time", "experimental-downgrade-check-time",
	"experimental-enable-lease-checkpoint", "experimental-enable-lease-checkpoint-persist", "experimental-initial-corrupt-check",
	"experimental-snapshot-catchup-entries", "experimental-stop-grpc-service-on-defrag",
	"experimental-warning-apply-duration", "experimental-warning-unary-request-duration",
	"experimental-watch-progress-notify-interval", "feature-gates", "grpc-keepalive-interval", "grpc-keepalive-min-time",
	"grpc-keepalive-timeout", "heartbeat-interval", "initial-cluster-token", "initial-election-tick-advance", "log-format",
	"log-level", "logger", "max-concurrent-streams", "max-learners", "max-request-bytes", "max-snapshots", "max-txn-ops",
	"max-wals", "metrics", "pre-vote", "quota-backend-bytes", "raft-read-timeout", "raft-write-timeout",
	"snapshot-catchup-entries", "snapshot-count", "strict-reconfig-check", "tls-max-version", "tls-min-version",
	"unsafe-no-fsync", "v2-deprecation", "warning-apply-duration", "warning-unary-request-duration",
	"watch-progress-notify-interval",
}

// Component names the component an extra argument is for, as the kubeadm configuration's field path
// names it.
type Component string

// The components of extra arguments.
const (
	// APIServer is kube-apiserver's.
	APIServer Component = "apiServer.extraArgs"
	// Etcd is etcd's.
	Etcd Component = "etcd.local.extraArgs"
)

// Violation is an extra argument the local provider does not run.
type Violation struct {
	Component   Component
	Name, Value string
	// Reason says why, following the argument's name: ", which is not allowed", ", which the local
	// provider sets itself ...", ` to "/x", which is not a file of the bootstrap data ...`.
	Reason string
}

func (v Violation) Error() string { return fmt.Sprintf("%s sets %s%s", v.Component, v.Name, v.Reason) }

// Explanation says what every Violation is about.
const Explanation = "the local provider runs kube-apiserver and etcd as processes of this machine, shared with other clusters, and passes on " +
	"only the extra arguments that stay inside the workload cluster (no file of the machine, no listening address, no outbound " +
	"call, no weaker authentication or authorization), listed in docs/providers/local.md#extra-arguments"

// Violations returns the extra arguments of cp that the local provider does not run, in order.
func Violations(cp *ControlPlane) []Violation {
	var out []Violation
	for _, a := range cp.APIServerArgs {
		if reason := apiServerArgReason(a, cp); reason != "" {
			out = append(out, Violation{Component: APIServer, Name: a.Name, Value: a.Value, Reason: reason})
		}
	}
	for _, a := range cp.EtcdArgs {
		if reason := etcdArgReason(a); reason != "" {
			out = append(out, Violation{Component: Etcd, Name: a.Name, Value: a.Value, Reason: reason})
		}
	}
	return out
}

const notAllowed = ", which is not allowed"

func apiServerArgReason(a Arg, cp *ControlPlane) string {
	switch {
	case slices.Contains(reservedAPIServerArgs, a.Name):
		return ", which the local provider sets itself to run the API server on its port with the cluster's certificates"
	case slices.Contains(AllowedAPIServerArgs, a.Name):
		return ""
	case slices.Contains(AllowedAPIServerStdoutArgs, a.Name):
		if a.Value == "-" {
			return ""
		}
		return fmt.Sprintf(" to %q: only \"-\" (the process's log) is allowed, not a file of this machine", a.Value)
	case slices.Contains(AllowedAPIServerFileArgs, a.Name):
		if cp.WritesFile(a.Value) {
			return ""
		}
		return fmt.Sprintf(" to %q, which is not a file of the bootstrap data (its files, through apiServer.extraVolumes): "+
			"kube-apiserver may read those only", a.Value)
	}
	return notAllowed
}

func etcdArgReason(a Arg) string {
	switch {
	case slices.Contains(reservedEtcdArgs, a.Name):
		return ", which the local provider sets itself to run the etcd member on its ports with the cluster's certificates"
	case slices.Contains(AllowedEtcdArgs, a.Name):
		return ""
	}
	return notAllowed
}

// WritesFile reports whether value, a path as kube-apiserver sees it, is a file of cp's bootstrap data:
// mapped through the extraVolumes (mountPath to hostPath), it is the path of one of cp.Files.
func (cp *ControlPlane) WritesFile(value string) bool {
	if !strings.HasPrefix(value, "/") {
		return false
	}
	host := path.Clean(value)
	for _, v := range cp.APIServerVolumes {
		mp := path.Clean(v.MountPath)
		if host == mp || strings.HasPrefix(host, mp+"/") {
			host = path.Join(v.HostPath, strings.TrimPrefix(host, mp))
			break
		}
	}
	host = path.Clean("/" + host)
	return slices.ContainsFunc(cp.Files, func(f File) bool { return path.Clean("/"+f.Path) == host })
}

// CheckControlPlane returns an error saying why a control plane configuration cannot run: its extra
// arguments that the local provider does not run (see Violations), each named.
func CheckControlPlane(cp *ControlPlane) error {
	vs := Violations(cp)
	if len(vs) == 0 {
		return nil
	}
	msgs := make([]string, 0, len(vs))
	for _, v := range vs {
		msgs = append(msgs, v.Error())
	}
	return fmt.Errorf("extra arguments refused: %s; %s", strings.Join(msgs, "; "), Explanation)
}
