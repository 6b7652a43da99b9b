package topology

import (
	"context"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
)

// FieldManager is the server-side apply field manager of the objects the topology controller manages.
// The engine reads it in the managed fields of a current template: the fields it owns there are the
// fields the engine set.
const FieldManager = "capi-topology"

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
	// MachinePools are the templates of each MachinePool class, by class name.
	MachinePools map[string]MachinePoolTemplates
}

// MachineDeploymentTemplates are the templates of one MachineDeployment class.
type MachineDeploymentTemplates struct {
	BootstrapTemplate             *unstructured.Unstructured
	InfrastructureMachineTemplate *unstructured.Unstructured
}

// MachinePoolTemplates are the templates of one MachinePool class: a bootstrap config template (for
// example a KubeadmConfigTemplate) and an InfraMachinePool template (for example a
// LocalMachinePoolTemplate), from whose spec.template the MachinePool's objects are made.
type MachinePoolTemplates struct {
	BootstrapTemplate                 *unstructured.Unstructured
	InfrastructureMachinePoolTemplate *unstructured.Unstructured
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
	// MachinePools are the topology-owned MachinePools, by topology name (label
	// topology.cluster.x-k8s.io/pool-name).
	MachinePools map[string]*MachinePoolState
	// HookResponses are the answers of the lifecycle hooks that the caller called for this computation
	// (see Desired.Hooks.Call), by hook name.
	HookResponses map[string]HookResponse
}

// ControlPlaneState is the control plane object, its machine infrastructure template and health check.
type ControlPlaneState struct {
	Object                        *unstructured.Unstructured
	InfrastructureMachineTemplate *unstructured.Unstructured
	MachineHealthCheck            *clusterv1.MachineHealthCheck
	// Held (desired state only): the control plane waits for an upgrade; the caller leaves it and its
	// machine template as they are (no other change reaches it before it picks up the version, so that
	// its Machines are not rolled out twice). Its MachineHealthCheck is applied.
	Held bool
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
	// Held (desired state only): the MachineDeployment waits for an upgrade; the caller leaves it and its
	// templates as they are. Its MachineHealthCheck is applied.
	Held bool
}

// MachinePoolState is a MachinePool, its bootstrap config and InfraMachinePool.
type MachinePoolState struct {
	Object                          *clusterv1.MachinePool
	BootstrapObject                 *unstructured.Unstructured
	InfrastructureMachinePoolObject *unstructured.Unstructured
	// Upgrading (current state only) says that some Nodes of the MachinePool do not run its version yet;
	// the caller derives it from the Nodes of status.nodeRefs.
	Upgrading bool
	// Held (desired state only): the MachinePool waits for an upgrade; the caller leaves it and its
	// objects as they are.
	Held bool
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
	// MachinePools are the MachinePools to create or update, by topology name, as MachineDeployments.
	MachinePools map[string]*MachinePoolState
	// Upgrade says where the rollout of spec.topology.version stands.
	Upgrade UpgradeStatus
	// Hooks are what the caller does about the lifecycle hooks of the Runtime SDK.
	Hooks HookActions
	// HoldCreate: nothing may be created yet (BeforeClusterCreate has not let the creation start).
	HoldCreate bool
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
	// ControlPlanePlan are the versions the control plane still goes through to spec.topology.version, in
	// order (the upgrade plan); empty when it runs that version or has no object yet.
	ControlPlanePlan []string
	// WorkersPlan are the versions the MachineDeployments and MachinePools still go through; empty when
	// there are none or they all run spec.topology.version.
	WorkersPlan []string
	// PlanComputed: the plan was computed (the control plane exists), so ControlPlanePlan and WorkersPlan
	// are what the Cluster's status shows.
	PlanComputed bool
	// MinWorkersVersion is the lowest version of the current MachineDeployments and MachinePools ("" without
	// one).
	MinWorkersVersion string
	// ControlPlaneWaitingForWorkers: the workers take the control plane's version before it goes on.
	ControlPlaneWaitingForWorkers bool
	// ControlPlaneWaitingFor, while the control plane waits for a new version, names what has to pick up
	// its current version first (MachineDeployments and MachinePools behind it), as the version check of
	// admission says it.
	ControlPlaneWaitingFor string
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
	// MachinePoolsPendingCreate, MachinePoolsPendingUpgrade, MachinePoolsDeferred and MachinePoolsUpgrading
	// are the same for MachinePools.
	MachinePoolsPendingCreate  []string
	MachinePoolsPendingUpgrade []string
	MachinePoolsDeferred       []string
	MachinePoolsUpgrading      []string
	// BlockingHook names the lifecycle hook that holds the Cluster, if any, and HookMessage says why.
	BlockingHook string
	HookMessage  string
	// HookRetryAfter is when the blocking hook asks to be called again.
	HookRetryAfter time.Duration
}

// HookActions say what the caller does about the lifecycle hooks: Compute calls none and writes nothing.
type HookActions struct {
	// Call are the blocking hooks whose answer this computation needs and that Current.HookResponses
	// does not hold: the caller calls them, then computes again with their answers. Until then the
	// desired state waits for them (nothing created, no version picked up).
	Call []HookCall
	// CallAfterApply are the hooks to call once the desired state is applied (AfterClusterUpgrade), whose
	// answer changes nothing; each is then marked done.
	CallAfterApply []HookCall
	// MarkDone are the hooks to remove from the Cluster's runtime.cluster.x-k8s.io/pending-hooks
	// annotation (called, and none of their handlers blocks) before the desired state is applied.
	MarkDone []string
	// MarkPending are the hooks to add to it then (the intent to call them once a step of an upgrade is
	// done), after MarkDone: a hook of one step may be done and the same hook of the next step pending.
	MarkPending []string
}

// HookCall is one lifecycle hook to call.
type HookCall struct {
	// Hook is the hook's name, for example BeforeClusterUpgrade.
	Hook string
	// FromVersion and ToVersion are the Kubernetes versions of an upgrade hook (ToVersion alone for
	// AfterControlPlaneUpgrade, AfterWorkersUpgrade and AfterClusterUpgrade): the request's
	// fromKubernetesVersion and toKubernetesVersion, or its kubernetesVersion.
	//   - BeforeClusterUpgrade: the control plane's version, spec.topology.version.
	//   - BeforeControlPlaneUpgrade: the control plane's version, the next step of its plan.
	//   - AfterControlPlaneUpgrade: the control plane's version.
	//   - BeforeWorkersUpgrade: the lowest workers' version, the control plane's version.
	//   - AfterWorkersUpgrade: the control plane's version.
	//   - AfterClusterUpgrade: spec.topology.version.
	FromVersion, ToVersion string
	// ControlPlaneUpgrades and WorkersUpgrades are the steps of the upgrade plan still ahead of the
	// control plane and of the workers, as the requests' controlPlaneUpgrades and workersUpgrades carry
	// them (every upgrade hook but AfterClusterUpgrade).
	ControlPlaneUpgrades, WorkersUpgrades []string
}

// UpgradePlanner asks the GenerateUpgradePlan Runtime Extension that a ClusterClass names in
// spec.upgrade.external.generateUpgradePlanExtension for the upgrade plan of a Cluster. Compute calls it,
// when Options.UpgradePlanner is set, whenever the control plane or the workers do not run
// spec.topology.version; a class with the extension and no UpgradePlanner is an error.
type UpgradePlanner interface {
	// GenerateUpgradePlan returns the control plane's and the workers' steps (the response's
	// controlPlaneUpgrades and workersUpgrades, versions only); an error fails the computation.
	GenerateUpgradePlan(ctx context.Context, req *UpgradePlanRequest) (controlPlane, workers []string, err error)
}

// UpgradePlanRequest is what a GenerateUpgradePlan extension receives.
type UpgradePlanRequest struct {
	// Cluster is the Cluster whose topology is computed.
	Cluster *clusterv1.Cluster
	// Extension is the name of the extension handler (spec.upgrade.external.generateUpgradePlanExtension).
	Extension string
	// FromControlPlaneKubernetesVersion is the control plane's spec.version.
	FromControlPlaneKubernetesVersion string
	// FromWorkersKubernetesVersion is the lowest version of the MachineDeployments and MachinePools
	// ("" without one).
	FromWorkersKubernetesVersion string
	// ToKubernetesVersion is spec.topology.version.
	ToKubernetesVersion string
}
