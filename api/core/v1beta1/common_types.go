package v1beta1

import (
	"fmt"
	"net"

	corev1 "k8s.io/api/core/v1"
)

// Labels that Cluster API sets and reads.
const (
	// ClusterNameLabel is the label on every object that belongs to a Cluster; its value is the Cluster name.
	ClusterNameLabel = "cluster.x-k8s.io/cluster-name"

	// ClusterTopologyOwnedLabel marks objects created and managed by the topology controller.
	ClusterTopologyOwnedLabel = "topology.cluster.x-k8s.io/owned"

	// ClusterTopologyUpgradeStepAnnotation is set by the topology controller on a Cluster while it upgrades
	// (upstream v1.12's chained upgrades): the version of the current step, the control plane's. The
	// control plane and MachineSets then allow creating Machines at that version although it is not
	// spec.topology.version yet.
	ClusterTopologyUpgradeStepAnnotation = "topology.internal.cluster.x-k8s.io/upgrade-step"

	// ClusterTopologyMachineDeploymentNameLabel holds the topology name of the MachineDeployment an object belongs to.
	ClusterTopologyMachineDeploymentNameLabel = "topology.cluster.x-k8s.io/deployment-name"

	// ClusterTopologyMachinePoolNameLabel holds the topology name of the MachinePool an object belongs to.
	ClusterTopologyMachinePoolNameLabel = "topology.cluster.x-k8s.io/pool-name"

	// ProviderNameLabel is set on every object that clusterctl installs for a provider; its value is the
	// provider's manifest label (for example infrastructure-local or cluster-api).
	ProviderNameLabel = "cluster.x-k8s.io/provider"

	// WatchLabel restricts a controller started with --watch-filter=<value> to objects carrying this label
	// with that value.
	WatchLabel = "cluster.x-k8s.io/watch-filter"

	// MachineControlPlaneLabel marks Machines that are part of the control plane.
	MachineControlPlaneLabel = "cluster.x-k8s.io/control-plane"

	// MachineControlPlaneNameLabel holds the name of the control plane object that owns a Machine.
	MachineControlPlaneNameLabel = "cluster.x-k8s.io/control-plane-name"

	// MachineSetNameLabel holds the name of the MachineSet that owns a Machine.
	MachineSetNameLabel = "cluster.x-k8s.io/set-name"

	// MachineDeploymentNameLabel holds the name of the MachineDeployment a MachineSet or Machine belongs to.
	MachineDeploymentNameLabel = "cluster.x-k8s.io/deployment-name"

	// MachinePoolNameLabel holds the name of the MachinePool a Machine belongs to.
	MachinePoolNameLabel = "cluster.x-k8s.io/pool-name"

	// MachineDeploymentUniqueLabel distinguishes the MachineSets of a MachineDeployment; its value is a
	// hash of the Machine template.
	MachineDeploymentUniqueLabel = "machine-template-hash"

	// NodeRoleLabelPrefix is the prefix of node role labels, which the Machine controller syncs to Nodes.
	NodeRoleLabelPrefix = "node-role.kubernetes.io"

	// NodeRestrictionLabelDomain is the domain of labels a kubelet may not set itself, synced to Nodes.
	NodeRestrictionLabelDomain = "node-restriction.kubernetes.io"

	// ManagedNodeLabelDomain is the domain of labels that the Machine controller syncs to Nodes.
	ManagedNodeLabelDomain = "node.cluster.x-k8s.io"

	// ProviderLabelName is a legacy name of ProviderNameLabel.
	ProviderLabelName = ProviderNameLabel
)

// Annotations that Cluster API sets and reads.
const (
	// PausedAnnotation on an object stops its reconciliation, as Cluster.spec.paused does for a whole Cluster.
	PausedAnnotation = "cluster.x-k8s.io/paused"

	// DisableMachineCreateAnnotation stops a MachineSet from creating Machines.
	DisableMachineCreateAnnotation = "cluster.x-k8s.io/disable-machine-create"

	// DeleteMachineAnnotation marks a Machine to be deleted first when its MachineSet scales down.
	DeleteMachineAnnotation = "cluster.x-k8s.io/delete-machine"

	// TemplateClonedFromNameAnnotation holds the name of the template an object was cloned from.
	TemplateClonedFromNameAnnotation = "cluster.x-k8s.io/cloned-from-name"

	// TemplateClonedFromGroupKindAnnotation holds the group and kind of the template an object was cloned from.
	TemplateClonedFromGroupKindAnnotation = "cluster.x-k8s.io/cloned-from-groupkind"

	// MachineSkipRemediationAnnotation stops MachineHealthCheck from remediating a Machine.
	MachineSkipRemediationAnnotation = "cluster.x-k8s.io/skip-remediation"

	// RemediateMachineAnnotation asks the owner of a Machine to remediate it.
	RemediateMachineAnnotation = "cluster.x-k8s.io/remediate-machine"

	// ManagedByAnnotation on an infrastructure object says that something other than its provider manages
	// it; the provider then neither reconciles it nor touches its status.
	ManagedByAnnotation = "cluster.x-k8s.io/managed-by"

	// ReplicasManagedByAnnotation says that the replicas of a MachineDeployment, MachineSet or MachinePool
	// are managed by an external system such as the cluster autoscaler.
	ReplicasManagedByAnnotation = "cluster.x-k8s.io/replicas-managed-by"

	// AutoscalerMinSizeAnnotation and AutoscalerMaxSizeAnnotation hold the cluster autoscaler limits.
	AutoscalerMinSizeAnnotation = "cluster.x-k8s.io/cluster-api-autoscaler-node-group-min-size"
	// AutoscalerMaxSizeAnnotation holds the cluster autoscaler's upper limit.
	AutoscalerMaxSizeAnnotation = "cluster.x-k8s.io/cluster-api-autoscaler-node-group-max-size"

	// ClusterNameAnnotation, ClusterNamespaceAnnotation and MachineAnnotation are set on Nodes to link them to
	// their Machine.
	ClusterNameAnnotation = "cluster.x-k8s.io/cluster-name"
	// ClusterNamespaceAnnotation holds the namespace of the Cluster of a Node's Machine.
	ClusterNamespaceAnnotation = "cluster.x-k8s.io/cluster-namespace"
	// MachineAnnotation holds the name of a Node's Machine.
	MachineAnnotation = "cluster.x-k8s.io/machine"
	// OwnerKindAnnotation holds the kind of the owner of a Node's Machine.
	OwnerKindAnnotation = "cluster.x-k8s.io/owner-kind"
	// OwnerNameAnnotation holds the name of the owner of a Node's Machine.
	OwnerNameAnnotation = "cluster.x-k8s.io/owner-name"
	// LabelsFromMachineAnnotation lists the labels the Machine controller last synced to a Node.
	LabelsFromMachineAnnotation = "cluster.x-k8s.io/labels-from-machine"

	// TaintsFromMachineAnnotation lists the Always taints ("key:effect", comma-separated) the Machine
	// controller last put on a Node; its presence says the Node's OnInitialization taints were put.
	TaintsFromMachineAnnotation = "cluster.x-k8s.io/taints-from-machine"

	// ExcludeNodeDrainingAnnotation on a Machine skips draining its Node on deletion.
	ExcludeNodeDrainingAnnotation = "machine.cluster.x-k8s.io/exclude-node-draining"

	// ExcludeWaitForNodeVolumeDetachAnnotation on a Machine skips waiting for volumes to detach on deletion.
	ExcludeWaitForNodeVolumeDetachAnnotation = "machine.cluster.x-k8s.io/exclude-wait-for-node-volume-detach"

	// UpdateInProgressAnnotation is an internal annotation (upstream v1.12's in-place updates): the
	// controller owning a Machine sets it on the Machine, its InfraMachine and its bootstrap config when it
	// starts an in-place update; the Machine controller removes it once the UpdateMachine hook completed.
	UpdateInProgressAnnotation = "in-place-updates.internal.cluster.x-k8s.io/update-in-progress"

	// PreDrainDeleteHookAnnotationPrefix is the prefix of annotations that hold a Machine's deletion before
	// its Node is drained.
	PreDrainDeleteHookAnnotationPrefix = "pre-drain.delete.hook.machine.cluster.x-k8s.io"

	// PreTerminateDeleteHookAnnotationPrefix is the prefix of annotations that hold a Machine's deletion
	// before its infrastructure is deleted.
	PreTerminateDeleteHookAnnotationPrefix = "pre-terminate.delete.hook.machine.cluster.x-k8s.io"

	// MachineSetSkipPreflightChecksAnnotation lists MachineSet preflight checks to skip.
	MachineSetSkipPreflightChecksAnnotation = "machineset.cluster.x-k8s.io/skip-preflight-checks"

	// ClusterTopologyHoldUpgradeSequenceAnnotation and ClusterTopologyDeferUpgradeAnnotation tune upgrades
	// of managed topologies.
	ClusterTopologyHoldUpgradeSequenceAnnotation = "topology.cluster.x-k8s.io/hold-upgrade-sequence"
	// ClusterTopologyDeferUpgradeAnnotation defers the upgrade of one MachineDeployment topology.
	ClusterTopologyDeferUpgradeAnnotation = "topology.cluster.x-k8s.io/defer-upgrade"
	// ClusterTopologyUnsafeUpdateVersionAnnotation on a Cluster skips the admission check of a change of
	// spec.topology.version against the state of the Cluster (upstream's escape hatch; the topology
	// controller still refuses a version that skips a minor).
	ClusterTopologyUnsafeUpdateVersionAnnotation = "unsafe.topology.cluster.x-k8s.io/disable-update-version-check"
	// ClusterTopologyUnsafeUpdateClassNameAnnotation on a Cluster lets spec.topology be added to an existing
	// Cluster.
	ClusterTopologyUnsafeUpdateClassNameAnnotation = "unsafe.topology.cluster.x-k8s.io/disable-update-class-name-check"

	// RevisionAnnotation holds the rollout revision of a MachineSet.
	RevisionAnnotation = "machinedeployment.clusters.x-k8s.io/revision"
	// RevisionHistoryAnnotation lists the previous revisions of a MachineSet.
	RevisionHistoryAnnotation = "machinedeployment.clusters.x-k8s.io/revision-history"
	// DesiredReplicasAnnotation holds the replicas of the owning MachineDeployment.
	DesiredReplicasAnnotation = "machinedeployment.clusters.x-k8s.io/desired-replicas"
	// MaxReplicasAnnotation holds the most Machines the owning MachineDeployment may have during a rollout.
	MaxReplicasAnnotation = "machinedeployment.clusters.x-k8s.io/max-replicas"
)

// Finalizers that Cluster API controllers own.
const (
	// ClusterFinalizer keeps a Cluster until its descendants are deleted.
	ClusterFinalizer = "cluster.cluster.x-k8s.io"

	// MachineFinalizer keeps a Machine until its Node is drained and its infrastructure is deleted.
	MachineFinalizer = "machine.cluster.x-k8s.io"

	// MachineSetTopologyFinalizer and MachineDeploymentTopologyFinalizer keep topology-owned objects until
	// their templates are cleaned up.
	MachineSetTopologyFinalizer = "machineset.topology.cluster.x-k8s.io"
	// MachineDeploymentTopologyFinalizer keeps a topology-owned MachineDeployment until its templates are cleaned up.
	MachineDeploymentTopologyFinalizer = "machinedeployment.topology.cluster.x-k8s.io"
)

// ContractLabelPrefix is the prefix of the label that maps a contract to the CRD versions following it,
// for example `cluster.x-k8s.io/v1beta1: v1beta1` or `cluster.x-k8s.io/v1beta1: v1alpha1_v1alpha2`.
const ContractLabelPrefix = "cluster.x-k8s.io"

// Contract is the Cluster API contract version this API implements.
const Contract = "v1beta1"

// TemplateSuffix is appended to a kind to name its template kind.
const TemplateSuffix = "Template"

// APIEndpoint is an address where an API server can be reached.
type APIEndpoint struct {
	// host is the hostname on which the API server is serving.
	// +kubebuilder:validation:MaxLength=512
	Host string `json:"host"`

	// port is the port on which the API server is serving.
	Port int32 `json:"port"`
}

// IsZero reports whether both host and port are unset.
func (v APIEndpoint) IsZero() bool { return v.Host == "" && v.Port == 0 }

// IsValid reports whether both host and port are set.
func (v APIEndpoint) IsValid() bool { return v.Host != "" && v.Port != 0 }

// String returns host:port.
func (v APIEndpoint) String() string { return net.JoinHostPort(v.Host, fmt.Sprintf("%d", v.Port)) }

// ObjectMeta is the metadata that templates propagate to the objects they create: labels and annotations.
type ObjectMeta struct {
	// labels is a map of string keys and values that can be used to organize and categorize objects.
	// +optional
	Labels map[string]string `json:"labels,omitempty"`

	// annotations is an unstructured key value map stored with a resource.
	// +optional
	Annotations map[string]string `json:"annotations,omitempty"`
}

// MachineAddressType is the kind of a MachineAddress.
// +kubebuilder:validation:Enum=Hostname;ExternalIP;InternalIP;ExternalDNS;InternalDNS
type MachineAddressType string

// The kinds of Machine address.
const (
	MachineHostName    MachineAddressType = "Hostname"
	MachineExternalIP  MachineAddressType = "ExternalIP"
	MachineInternalIP  MachineAddressType = "InternalIP"
	MachineExternalDNS MachineAddressType = "ExternalDNS"
	MachineInternalDNS MachineAddressType = "InternalDNS"
)

// MachineAddress is one address of a machine.
type MachineAddress struct {
	// type is the kind of address: Hostname, ExternalIP, InternalIP, ExternalDNS or InternalDNS.
	// +required
	Type MachineAddressType `json:"type"`

	// address is the address itself.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=256
	Address string `json:"address"`
}

// MachineAddresses is the list of addresses of a machine.
type MachineAddresses []MachineAddress

// ConditionPolarity says whether a condition is good when True (Positive) or when False (Negative).
// +kubebuilder:validation:Enum=Positive;Negative
type ConditionPolarity string

const (
	// PositivePolarityCondition is a condition that is good when True.
	PositivePolarityCondition ConditionPolarity = "Positive"
	// NegativePolarityCondition is a condition that is good when False.
	NegativePolarityCondition ConditionPolarity = "Negative"
)

// MachineReadinessGate names an extra condition that must hold before a Machine is considered Ready.
type MachineReadinessGate struct {
	// conditionType is the type of a condition in the Machine's status.v1beta2.conditions.
	// +required
	// +kubebuilder:validation:Pattern=`^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])$`
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=316
	ConditionType string `json:"conditionType"`

	// polarity of the condition: Positive (the default) when good means True, Negative when good means False.
	// +optional
	Polarity ConditionPolarity `json:"polarity,omitempty"`
}

// ClusterAvailabilityGate names an extra condition that must hold before a Cluster is considered Available.
type ClusterAvailabilityGate struct {
	// conditionType is the type of a condition in the Cluster's status.v1beta2.conditions.
	// +required
	// +kubebuilder:validation:Pattern=`^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])$`
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=316
	ConditionType string `json:"conditionType"`

	// polarity of the condition: Positive (the default) when good means True, Negative when good means False.
	// +optional
	Polarity ConditionPolarity `json:"polarity,omitempty"`
}

// FailureDomainSpec describes one failure domain of a cluster's infrastructure.
type FailureDomainSpec struct {
	// controlPlane says whether control plane Machines may be placed in this failure domain.
	// +optional
	ControlPlane bool `json:"controlPlane,omitempty"`

	// attributes are provider specific properties of the failure domain.
	// +optional
	Attributes map[string]string `json:"attributes,omitempty"`
}

// FailureDomains maps failure domain names to their description.
type FailureDomains map[string]FailureDomainSpec

// FilterControlPlane returns the failure domains that accept control plane Machines.
func (in FailureDomains) FilterControlPlane() FailureDomains {
	res := FailureDomains{}
	for id, spec := range in {
		if spec.ControlPlane {
			res[id] = spec
		}
	}
	return res
}

// GetIDs returns the names of the failure domains.
func (in FailureDomains) GetIDs() []*string {
	ids := make([]*string, 0, len(in))
	for id := range in {
		ids = append(ids, &id)
	}
	return ids
}

// AggregateToManagerLabel on a ClusterRole adds its rules to the core manager's permissions (the
// capi-aggregated-manager-role): a provider grants the core access to its kinds with it.
const AggregateToManagerLabel = "cluster.x-k8s.io/aggregate-to-manager"

// MachineTaint is a taint that a Machine puts on its Node, with when it is put there.
// +kubebuilder:validation:XValidation:rule="!(self.key in ['node.cluster.x-k8s.io/uninitialized', 'node.cluster.x-k8s.io/outdated-revision'])",message="taint key is not allowed",fieldPath=".key"
// +kubebuilder:validation:XValidation:rule="!self.key.startsWith('node.kubernetes.io/') || self.key == 'node.kubernetes.io/out-of-service'",message="taint key must not have the prefix node.kubernetes.io/, except for node.kubernetes.io/out-of-service",fieldPath=".key"
// +kubebuilder:validation:XValidation:rule="!self.key.startsWith('node.cloudprovider.kubernetes.io/')",message="taint key must not have the prefix node.cloudprovider.kubernetes.io/",fieldPath=".key"
// +kubebuilder:validation:XValidation:rule="self.key != 'node-role.kubernetes.io/master'",message="taint is deprecated since 1.24 and should not be used anymore",fieldPath=".key"
type MachineTaint struct {
	// key of the taint: a qualified name (an optional DNS subdomain prefix and "/", then a name of at most
	// 63 characters).
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=317
	// +kubebuilder:validation:Pattern=^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\/)?([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$
	Key string `json:"key"`

	// value of the taint.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:Pattern=^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$
	Value string `json:"value,omitempty"`

	// effect of the taint: NoSchedule, PreferNoSchedule or NoExecute.
	// +required
	// +kubebuilder:validation:Enum=NoSchedule;PreferNoSchedule;NoExecute
	Effect corev1.TaintEffect `json:"effect"`

	// propagation says when the taint is put on the Node: Always (kept there), or OnInitialization (put
	// once, when the Node is first synced).
	// +required
	Propagation MachineTaintPropagation `json:"propagation"`
}

// MachineTaintPropagation says when a MachineTaint is put on the Node.
// +kubebuilder:validation:Enum=Always;OnInitialization
type MachineTaintPropagation string

const (
	// MachineTaintPropagationAlways keeps the taint on the Node.
	MachineTaintPropagationAlways MachineTaintPropagation = "Always"
	// MachineTaintPropagationOnInitialization puts the taint on the Node once.
	MachineTaintPropagationOnInitialization MachineTaintPropagation = "OnInitialization"
)

// StatusVersion is a Kubernetes version and the number of replicas at it.
type StatusVersion struct {
	// version is the Kubernetes version.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=256
	Version string `json:"version,omitempty"`

	// replicas is the number of replicas at this version.
	// +optional
	// +kubebuilder:validation:Minimum=1
	Replicas int32 `json:"replicas,omitempty"`
}

// StatusUpgradePlanVersion is one step of an upgrade plan.
type StatusUpgradePlanVersion struct {
	// version is a Kubernetes version.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=256
	Version string `json:"version,omitempty"`
}
