// Package backend is the interface between the local provider's controllers and what runs the workload
// clusters. The `process` backend runs a real etcd and kube-apiserver per cluster as child processes; a
// `memory` backend (no processes, for scale tests) can implement the same interface.
//
// A backend is driven by reconciles: every call is idempotent and returns quickly, reporting the current
// state rather than waiting for it; the backend tells the controllers when a cluster's state changes (see
// OnChange), so they do not have to poll.
package backend

import (
	"context"
	"errors"
	"time"

	"k8s.io/apimachinery/pkg/types"

	"github.com/capstan-dev/capstan/internal/kubeconfig"
)

// ErrClusterNotReady is returned by node operations while the cluster's API server is not running or not
// ready (for example just after the provider restarted, before its LocalCluster was reconciled).
var ErrClusterNotReady = errors.New("the cluster's API server is not ready")

// Cluster is what a backend needs to run one workload cluster.
type Cluster struct {
	// Key identifies the cluster: the namespace and name of its LocalCluster.
	Key types.NamespacedName
	// ClusterName is the name of the Cluster that owns the LocalCluster; the API server's serving
	// certificate is valid for it.
	ClusterName string
	// Port is the port the API server must serve on; 0 lets the backend choose one (and keep it).
	Port int32
	// CA is the cluster's certificate authority (the `<cluster>-ca` Secret): the API server serves with a
	// certificate it signs and trusts the client certificates it signs.
	CA *kubeconfig.CA
	// DataDir is where the cluster's data was kept when the LocalCluster was last run (its
	// local.infrastructure.cluster.x-k8s.io/data-dir annotation), empty when unknown. When it is not where
	// this backend keeps the cluster and holds data, the LocalCluster was moved from another management
	// cluster of this machine: the backend takes the data over from there.
	DataDir string
}

// ClusterStatus is what a backend observed of a workload cluster.
type ClusterStatus struct {
	// Host and Port are where the API server serves.
	Host string
	Port int32
	// Ready is true while every process runs and the API server answers /readyz.
	Ready bool
	// Reason and Message explain why the cluster is not ready (CamelCase reason, capitalised message).
	Reason, Message string
	// DataDir is the absolute path of the directory that holds the cluster's data, once the backend runs
	// the cluster from it; the LocalCluster records it.
	DataDir string
}

// Node is a simulated machine to register in a workload cluster.
type Node struct {
	// Name of the Node.
	Name string
	// ProviderID is the Node's spec.providerID.
	ProviderID string
	// KubeletVersion is reported in status.nodeInfo.kubeletVersion.
	KubeletVersion string
	// ControlPlane marks a control plane node (role label and NoSchedule taint).
	ControlPlane bool
	// FailureDomain, when set, is the Node's topology.kubernetes.io/zone label.
	FailureDomain string
	// Labels are extra labels for the Node.
	Labels map[string]string
	// Ready is the status of the Node's Ready condition: "" or "True" (healthy), "False" (the kubelet
	// reports NotReady) or "Unknown" (the kubelet stopped reporting: no heartbeat).
	Ready string
}

// NodeStatus is what a backend observed of a registered Node.
type NodeStatus struct {
	// Addresses of the Node: InternalIP and Hostname.
	Addresses []NodeAddress
}

// NodeAddress is one address of a Node.
type NodeAddress struct {
	Type, Address string
}

// Backend runs workload clusters and their nodes.
type Backend interface {
	// EnsureCluster starts the cluster's processes when they are not running (reusing the data of an
	// earlier run, after a provider restart) and reports its state.
	EnsureCluster(ctx context.Context, c Cluster) (ClusterStatus, error)
	// StoredCA returns the CA a cluster's data was created with, or nil when there is no data; it lets the
	// provider recreate a `<cluster>-ca` Secret that was lost.
	StoredCA(key types.NamespacedName) (*kubeconfig.CA, error)
	// DeleteCluster stops the cluster's processes and removes its data; it is a no-op for an unknown cluster.
	DeleteCluster(ctx context.Context, key types.NamespacedName) error
	// ReleaseCluster stops running the cluster without tearing anything down, because its LocalCluster left
	// this management cluster (clusterctl move): the processes stop, the data and the Nodes stay, for the
	// provider that runs the LocalCluster now to take over. It is a no-op for an unknown cluster.
	ReleaseCluster(ctx context.Context, key types.NamespacedName) error
	// EnsureNode registers a Node in the cluster (or updates it) and keeps it heartbeating. It returns
	// ErrClusterNotReady while the cluster cannot take it.
	EnsureNode(ctx context.Context, key types.NamespacedName, n Node) (NodeStatus, error)
	// DeleteNode removes a Node and its heartbeat. It is a no-op when the cluster does not run.
	DeleteNode(ctx context.Context, key types.NamespacedName, name string) error
	// OnChange registers a function called (from any goroutine) with the key of a cluster whose state
	// changed, for example when its API server became ready or a process crashed.
	OnChange(func(types.NamespacedName))
}

// RetryInterval is how soon a controller retries when a backend reports a cluster as not ready, in case
// it misses a change notification.
const RetryInterval = 5 * time.Second
