package topology

import (
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
)

// Blueprint is a ClusterClass and the templates it references.
type Blueprint struct {
	// ClusterClass is the class of the Cluster.
	ClusterClass *clusterv1.ClusterClass
	// InfrastructureClusterTemplate is referenced by spec.infrastructure.
	InfrastructureClusterTemplate *unstructured.Unstructured
	// ControlPlaneTemplate is referenced by spec.controlPlane.
	ControlPlaneTemplate *unstructured.Unstructured
	// ControlPlaneMachineInfrastructureTemplate is referenced by spec.controlPlane.machineInfrastructure;
	// nil when the class has none.
	ControlPlaneMachineInfrastructureTemplate *unstructured.Unstructured
	// MachineDeployments are the templates of each MachineDeployment class, by class name.
	MachineDeployments map[string]MachineDeploymentTemplates
}

// MachineDeploymentTemplates are the templates of one MachineDeployment class.
type MachineDeploymentTemplates struct {
	BootstrapTemplate             *unstructured.Unstructured
	InfrastructureMachineTemplate *unstructured.Unstructured
}

// Current is the current state of a Cluster's topology: the Cluster (with spec.topology) and the objects
// the topology controller manages, when they exist.
type Current struct {
	Cluster               *clusterv1.Cluster
	InfrastructureCluster *unstructured.Unstructured
	ControlPlane          ControlPlaneState
	// MachineDeployments are the topology-owned MachineDeployments, by topology name
	// (label topology.cluster.x-k8s.io/deployment-name).
	MachineDeployments map[string]*MachineDeploymentState
	// AfterControlPlaneUpgradePending says the AfterControlPlaneUpgrade hook still has to answer for the
	// current upgrade (the caller tracks it).
	AfterControlPlaneUpgradePending bool
}

// ControlPlaneState is the control plane object, its machine infrastructure template and health check.
type ControlPlaneState struct {
	Object                        *unstructured.Unstructured
	InfrastructureMachineTemplate *unstructured.Unstructured
	MachineHealthCheck            *clusterv1.MachineHealthCheck
}

// MachineDeploymentState is a MachineDeployment, its templates and health check.
type MachineDeploymentState struct {
	Object                        *clusterv1.MachineDeployment
	BootstrapTemplate             *unstructured.Unstructured
	InfrastructureMachineTemplate *unstructured.Unstructured
	MachineHealthCheck            *clusterv1.MachineHealthCheck
	// Upgrading (current state only) says that some Machines of the MachineDeployment do not run its
	// version yet; the caller derives it from the Machines.
	Upgrading bool
}

// Desired is the desired state of a Cluster's topology.
type Desired struct {
	// Cluster is the Cluster with its infrastructureRef and controlPlaneRef set and the topology labels.
	Cluster               *clusterv1.Cluster
	InfrastructureCluster *unstructured.Unstructured
	ControlPlane          ControlPlaneState
	// MachineDeployments are the MachineDeployments to create or update, by topology name. A topology
	// MachineDeployment that must wait (see Upgrade.MachineDeploymentsPendingCreate) is not in the map;
	// current topology-owned MachineDeployments whose name is not in the topology are to be deleted.
	MachineDeployments map[string]*MachineDeploymentState
	// Upgrade says where the rollout of spec.topology.version stands.
	Upgrade UpgradeStatus
}

// UpgradeStatus records where the rollout of a new Kubernetes version stands, for the TopologyReconciled
// condition.
type UpgradeStatus struct {
	// ControlPlaneProvisioning: the control plane is being created.
	ControlPlaneProvisioning bool
	// ControlPlaneUpgrading: the control plane is rolling out a version.
	ControlPlaneUpgrading bool
	// ControlPlaneScaling: the control plane is changing its number of replicas.
	ControlPlaneScaling bool
	// ControlPlanePendingUpgrade: the control plane does not have spec.topology.version yet.
	ControlPlanePendingUpgrade bool
	// ControlPlaneStartingUpgrade: this computation moves the control plane to spec.topology.version.
	ControlPlaneStartingUpgrade bool
	// MachineDeploymentsPendingCreate are topology names of MachineDeployments that wait for the control
	// plane before they are created.
	MachineDeploymentsPendingCreate []string
	// MachineDeploymentsPendingUpgrade are names of MachineDeployments that do not have the version yet.
	MachineDeploymentsPendingUpgrade []string
	// MachineDeploymentsDeferred are names of MachineDeployments held by defer-upgrade or
	// hold-upgrade-sequence.
	MachineDeploymentsDeferred []string
	// MachineDeploymentsUpgrading are names of MachineDeployments rolling out a version.
	MachineDeploymentsUpgrading []string
	// BlockingHook names the lifecycle hook that holds the upgrade, if any, and HookMessage says why.
	BlockingHook string
	HookMessage  string
	// HookRetryAfter is when the blocking hook asks to be called again.
	HookRetryAfter time.Duration
}
