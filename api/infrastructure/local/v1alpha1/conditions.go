package v1alpha1

import clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"

// Conditions of a LocalCluster. Each is reported both as a v1beta1 condition (status.conditions) and as a
// v1beta2 condition (status.v1beta2.conditions) of the same type; Paused is only a v1beta2 condition, as in
// upstream providers of the v1beta1 contract.
const (
	// ProcessesRunningCondition says whether the workload cluster's etcd and kube-apiserver are running and
	// the API server answers /readyz.
	ProcessesRunningCondition clusterv1.ConditionType = "ProcessesRunning"

	// ProcessesRunningReason: etcd and kube-apiserver are running and the API server is ready.
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
)
