package v1alpha1

import clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"

// Conditions of a LocalCluster. Each is reported both as a v1beta1 condition (status.conditions) and as a
// v1beta2 condition (status.v1beta2.conditions) of the same type; Paused is only a v1beta2 condition, as in
// upstream providers of the v1beta1 contract.
const (
	// ProcessesRunningCondition says whether the workload cluster's endpoint (the load balancer in front of
	// its control plane machines' API servers) listens.
	ProcessesRunningCondition clusterv1.ConditionType = "ProcessesRunning"

	// ProcessesRunningReason: the endpoint listens.
	ProcessesRunningReason = "ProcessesRunning"

	// ProcessesStartingReason: the processes are starting, or the API server is not ready yet.
	ProcessesStartingReason = "ProcessesStarting"

	// ProcessesFailedReason: a process exited or cannot start (for example its port is taken); the
	// provider keeps restarting it with a back-off.
	ProcessesFailedReason = "ProcessesFailed"

	// DataInUseReason: the cluster's data directory is held by another instance of the provider, which
	// still runs the cluster: the one a move is handing the cluster over from, or one that runs a
	// LocalCluster of the same namespace and name over the same data directory.
	DataInUseReason = "DataInUse"

	// WaitingForCertificateAuthorityReason: the cluster's <cluster>-ca Secret cannot be read or created.
	WaitingForCertificateAuthorityReason = "WaitingForCertificateAuthority"

	// InvalidConfigurationReason: the spec cannot work (see status.failureReason).
	InvalidConfigurationReason = "InvalidConfiguration"
)

// Conditions of a LocalMachine.
const (
	// NodeRegisteredCondition says whether the machine's Node is registered and heartbeating in the
	// workload cluster.
	NodeRegisteredCondition clusterv1.ConditionType = "NodeRegistered"

	// NodeRegisteredReason: the Node is registered and its lease is renewed.
	NodeRegisteredReason = "NodeRegistered"

	// WaitingForClusterInfrastructureReason: the Cluster's infrastructure is not ready yet.
	WaitingForClusterInfrastructureReason = "WaitingForClusterInfrastructure"

	// WaitingForBootstrapDataReason: the Machine has no bootstrap data secret yet.
	WaitingForBootstrapDataReason = "WaitingForBootstrapData"

	// StartingUpReason: the simulated machine is booting (spec.startupDelay has not elapsed).
	StartingUpReason = "StartingUp"

	// WaitingForControlPlaneReason: the LocalCluster's kube-apiserver is not ready to register the Node.
	WaitingForControlPlaneReason = "WaitingForControlPlane"

	// NodeRegistrationFailedReason: registering or updating the Node failed; the provider retries.
	NodeRegistrationFailedReason = "NodeRegistrationFailed"

	// BootstrapDataInvalidReason: the Machine's bootstrap data cannot be read (it is not cloud-config or
	// Ignition in the format of the kubeadm bootstrap provider, or asks for what the local provider cannot
	// do); the message says why. A node given the same data would not boot either.
	BootstrapDataInvalidReason = "BootstrapDataInvalid"

	// ControlPlaneRunningCondition says, for a control plane machine, whether its etcd member and
	// kube-apiserver run and the API server answers /readyz.
	ControlPlaneRunningCondition clusterv1.ConditionType = "ControlPlaneRunning"

	// ControlPlaneRunningReason: the machine's etcd member and kube-apiserver run and are ready.
	ControlPlaneRunningReason = "ControlPlaneRunning"

	// ControlPlaneStartingReason: the machine's etcd member or kube-apiserver is starting.
	ControlPlaneStartingReason = "ControlPlaneStarting"

	// LeftEndpointReason: the machine's Machine is being deleted; its kube-apiserver left the cluster's
	// endpoint and stopped, so that its clients moved to the other API servers before its etcd member is
	// removed.
	LeftEndpointReason = "LeftEndpoint"

	// WaitingForEtcdReason: the machine's etcd member cannot be added to the cluster yet (no healthy
	// member answers, or another member is joining).
	WaitingForEtcdReason = "WaitingForEtcd"

	// KubernetesVersionAvailableCondition says whether the machine's kube-apiserver is of the Machine's
	// minor version. It is not part of the Ready summary.
	KubernetesVersionAvailableCondition clusterv1.ConditionType = "KubernetesVersionAvailable"

	// KubernetesVersionAvailableReason: the API server runs the Machine's minor version.
	KubernetesVersionAvailableReason = "KubernetesVersionAvailable"

	// KubernetesVersionFallbackReason: the provider has no kube-apiserver of the Machine's minor version;
	// the machine runs the provider's default one (the message says which).
	KubernetesVersionFallbackReason = "KubernetesVersionFallback"
)

// Conditions of a LocalMachinePool.
const (
	// NodesRegisteredCondition says whether every instance of the pool has a registered Node.
	NodesRegisteredCondition clusterv1.ConditionType = "NodesRegistered"

	// NodesRegisteredReason: every instance's Node is registered.
	NodesRegisteredReason = "NodesRegistered"
)
