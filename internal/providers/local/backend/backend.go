// Package backend is the interface between the local provider's controllers and what runs the workload
// clusters. The `process` backend runs, for each control plane machine, a real etcd member and
// kube-apiserver as child processes behind a load balancer on the cluster's endpoint; a `memory` backend
// (no processes, for scale tests) can implement the same interface.
//
// A backend is driven by reconciles: every call is idempotent and returns quickly, reporting the current
// state rather than waiting for it; the backend tells the controllers when a cluster's state changes (see
// OnChange), so they do not have to poll.
package backend

import (
	"context"
	"crypto"
	"errors"
	"io/fs"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/capstan-dev/capstan/internal/kubeconfig"
)

// ErrClusterNotReady is returned by machine operations while the cluster cannot take them: it does not
// run (for example just after the provider restarted, before its LocalCluster was reconciled), or a
// worker's Node must wait for a control plane machine's API server to be ready.
var ErrClusterNotReady = errors.New("the cluster's API server is not ready")

// Certificates are a workload cluster's certificate authorities and service account key, from the
// Cluster's Secrets `<cluster>-ca`, `<cluster>-etcd`, `<cluster>-proxy` and `<cluster>-sa` (as Cluster
// API's kubeadm providers create them).
type Certificates struct {
	// CA signs the API servers' serving certificates and the clients they trust (kubeconfigs, kubelets).
	CA *kubeconfig.CA
	// EtcdCA signs etcd's serving and peer certificates and the clients etcd trusts (mTLS only).
	EtcdCA *kubeconfig.CA
	// FrontProxyCA signs the API servers' front proxy client certificate.
	FrontProxyCA *kubeconfig.CA
	// ServiceAccountKey signs service account tokens.
	ServiceAccountKey crypto.Signer
}

// Cluster is what a backend needs to run one workload cluster's endpoint.
type Cluster struct {
	// Key identifies the cluster: the namespace and name of its LocalCluster.
	Key types.NamespacedName
	// ClusterName is the name of the Cluster that owns the LocalCluster; the API servers' serving
	// certificates are valid for it.
	ClusterName string
	// Port is the port the endpoint must serve on; 0 lets the backend choose one (and keep it).
	Port int32
	// Certificates are the cluster's CAs and keys.
	Certificates Certificates
	// DataDir is where the cluster's data was kept when the LocalCluster was last run (its
	// local.infrastructure.cluster.x-k8s.io/data-dir annotation), empty when unknown. When it is not where
	// this backend keeps the cluster and holds data, the LocalCluster was moved from another management
	// cluster of this machine: the backend takes the data over from there.
	DataDir string
}

// ClusterStatus is what a backend observed of a workload cluster.
type ClusterStatus struct {
	// Host and Port are the endpoint.
	Host string
	Port int32
	// Ready is true while the endpoint (the load balancer) listens.
	Ready bool
	// Reason and Message explain why the cluster is not ready (CamelCase reason, capitalised message).
	Reason, Message string
	// DataDir is the absolute path of the directory that holds the cluster's data, once the backend runs
	// the cluster from it; the LocalCluster records it.
	DataDir string
	// APIServers is how many control plane machines' API servers are ready behind the endpoint.
	APIServers int
}

// Machine is a machine to run in a workload cluster: a simulated Node, and for a control plane machine
// an etcd member and a kube-apiserver.
type Machine struct {
	// Name is the Machine's name; it identifies the machine in the backend.
	Name string
	// NodeName is the Node's name (nodeRegistration.name, else the Machine's name).
	NodeName string
	// ProviderID is the Node's spec.providerID.
	ProviderID string
	// Version is the Machine's Kubernetes version: the kubelet version the Node reports and the version of
	// the control plane it runs.
	Version string
	// FailureDomain, when set, is the Node's topology.kubernetes.io/zone label.
	FailureDomain string
	// Labels are extra labels for the Node (kubelet's --node-labels).
	Labels map[string]string
	// Ready is the status of the Node's Ready condition: "" or "True" (healthy), "False" (the kubelet
	// reports NotReady) or "Unknown" (the kubelet stopped reporting: no heartbeat).
	Ready string
	// Taints are the Node's taints; with DefaultTaints, a control plane Node also gets kubeadm's
	// node-role.kubernetes.io/control-plane:NoSchedule taint.
	Taints        []corev1.Taint
	DefaultTaints bool
	// ControlPlane, when set, makes the machine a control plane machine.
	ControlPlane *ControlPlane
}

// ControlPlane is the configuration of a control plane machine's processes, from the kubeadm
// ClusterConfiguration of its bootstrap data.
type ControlPlane struct {
	// APIServerArgs and EtcdArgs are extra arguments, overriding the backend's defaults (name without
	// dashes, value).
	APIServerArgs, EtcdArgs []Arg
	// APIServerVolumes map paths of the API server's "container" to paths of the node (extraVolumes).
	APIServerVolumes []Volume
	// Files are written on the node before the processes start; arguments may name them.
	Files []File
	// ClusterConfiguration, set for the machine that initialises the control plane (kubeadm init), is the
	// kubeadm ClusterConfiguration document the backend uploads to the workload cluster's
	// kube-system/kubeadm-config ConfigMap once its API server is ready, as kubeadm init does; machines
	// that join read it from there (see Backend.ClusterConfiguration).
	ClusterConfiguration []byte
	// KeepConfiguration says the arguments above are unknown: the machine joins with kubeadm join and no
	// API server of the cluster answers to read its kubeadm-config (every control plane machine stopped:
	// capstan down, a provider restart, a power cut; one of them may be needed for etcd quorum). A machine
	// that ran before starts again with the arguments it last ran with, as a node's static Pod manifests
	// stay on its disk; one that never ran waits (ErrClusterNotReady-like status).
	KeepConfiguration bool
	// Certificates are how the machine's own certificates (the API server's, etcd's, their clients') are
	// issued: the kubeadm ClusterConfiguration's encryptionAlgorithm and certificateValidityPeriod.
	Certificates CertificateSettings
}

// CertificateSettings are how a machine's certificates are issued.
type CertificateSettings struct {
	// KeyAlgorithm is a kubeadm encryption algorithm (RSA-2048, RSA-3072, RSA-4096, ECDSA-P256,
	// ECDSA-P384); the backend's default (ECDSA P-256) when empty.
	KeyAlgorithm string `json:"keyAlgorithm,omitempty"`
	// Validity is how long they are valid; the backend's default (a year) when zero.
	Validity time.Duration `json:"validity,omitempty"`
}

// Arg is a command line argument.
type Arg struct{ Name, Value string }

// Volume maps a path seen by a component (MountPath) to a path of the node (HostPath).
type Volume struct{ HostPath, MountPath string }

// File is a file on the node.
type File struct {
	Path    string
	Content []byte
	Mode    fs.FileMode
}

// MachineStatus is what a backend observed of a machine.
type MachineStatus struct {
	// NodeRegistered says the Node is registered (and heartbeating).
	NodeRegistered bool
	// Addresses of the Node: InternalIP and Hostname.
	Addresses []NodeAddress
	// ControlPlaneReady says a control plane machine's etcd member and API server run and are ready;
	// Reason and Message say why not.
	ControlPlaneReady bool
	Reason, Message   string
	// VersionFallback, when set, says the machine's API server runs another version than the Machine's,
	// because the backend has no kube-apiserver of that minor.
	VersionFallback string
}

// NodeAddress is one address of a Node.
type NodeAddress struct {
	Type, Address string
}

// Backend runs workload clusters and their machines.
type Backend interface {
	// EnsureCluster starts the cluster's endpoint when it does not run (reusing the data of an earlier
	// run, after a provider restart) and reports its state.
	EnsureCluster(ctx context.Context, c Cluster) (ClusterStatus, error)
	// StoredCertificates returns the certificates a cluster's data was created with (fields nil when
	// unknown); they let the provider recreate a Secret that was lost.
	StoredCertificates(key types.NamespacedName) (Certificates, error)
	// DeleteCluster stops the cluster's processes and removes its data; it is a no-op for an unknown cluster.
	DeleteCluster(ctx context.Context, key types.NamespacedName) error
	// ReleaseCluster stops running the cluster without tearing anything down, because its LocalCluster left
	// this management cluster (clusterctl move): the processes stop, the data and the Nodes stay, for the
	// provider that runs the LocalCluster now to take over. It is a no-op for an unknown cluster.
	ReleaseCluster(ctx context.Context, key types.NamespacedName) error
	// EnsureMachine starts a machine (its processes, its Node) or updates it, and reports its state. It
	// returns ErrClusterNotReady while the cluster cannot take it.
	EnsureMachine(ctx context.Context, key types.NamespacedName, m Machine) (MachineStatus, error)
	// Machines returns the names of the machines the backend runs or keeps the data of for the cluster,
	// sorted; none for an unknown cluster. The LocalCluster controller deletes those whose Machine is gone
	// without the LocalMachine's deletion having done it (a Machine deleted by force).
	Machines(ctx context.Context, key types.NamespacedName) ([]string, error)
	// DeleteMachine removes a machine: its etcd member when still in the cluster, its processes and data,
	// its Node. It is a no-op for an unknown machine or cluster that has no data. It returns
	// ErrClusterNotReady while the Node cannot be deleted yet.
	DeleteMachine(ctx context.Context, key types.NamespacedName, name string) error
	// ClusterConfiguration returns the kubeadm ClusterConfiguration stored in the workload cluster's
	// kube-system/kubeadm-config ConfigMap, which kubeadm join --control-plane reads; nil when there is
	// none. It returns ErrClusterNotReady while no API server is ready.
	ClusterConfiguration(ctx context.Context, key types.NamespacedName) ([]byte, error)
	// OnChange registers a function called (from any goroutine) with the key of a cluster whose state
	// changed, for example when an API server became ready or a process crashed.
	OnChange(func(types.NamespacedName))
}

// EndpointLeaver is a backend whose control plane machines' API servers have clients to move before an
// etcd member is removed (the process backend; the memory backend serves every API from memory).
type EndpointLeaver interface {
	// LeaveEndpoint takes a control plane machine whose Machine is being deleted out of the cluster's
	// endpoint before its etcd member is removed: the endpoint sends no new connection to its API server,
	// which finishes the requests in flight and sends its clients to the other API servers. It reports
	// whether that is done, true at once when there is nothing to do (a worker, an unknown machine, no other
	// API server to take the clients).
	LeaveEndpoint(ctx context.Context, key types.NamespacedName, name string) (bool, error)
}

// RetryInterval is how soon a controller retries when a backend reports a cluster as not ready, in case
// it misses a change notification.
const RetryInterval = 5 * time.Second
