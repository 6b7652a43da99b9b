package v1beta2

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	bootstrapv1 "github.com/capstan-dev/capstan/api/bootstrap/kubeadm/v1beta2"
	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta2"
)

// KubeadmControlPlaneRolloutStrategyType is how the control plane Machines are replaced.
// +kubebuilder:validation:Enum=RollingUpdate
type KubeadmControlPlaneRolloutStrategyType string

// RollingUpdateStrategyType replaces the control plane Machines one by one.
const RollingUpdateStrategyType KubeadmControlPlaneRolloutStrategyType = "RollingUpdate"

// KubeadmControlPlaneStatusError is the kind of a KubeadmControlPlane's terminal failure (v1beta1).
type KubeadmControlPlaneStatusError string

// KubeadmControlPlaneSpec is the desired state of a KubeadmControlPlane.
// +kubebuilder:validation:XValidation:rule="!has(self.replicas) || self.replicas > 0",message="cannot be less than or equal to 0",fieldPath=".replicas"
// +kubebuilder:validation:XValidation:rule="!has(self.replicas) || self.replicas % 2 == 1 || (has(self.kubeadmConfigSpec) && has(self.kubeadmConfigSpec.clusterConfiguration) && has(self.kubeadmConfigSpec.clusterConfiguration.etcd) && has(self.kubeadmConfigSpec.clusterConfiguration.etcd.external))",message="cannot be an even number when etcd is stacked",fieldPath=".replicas"
// +kubebuilder:validation:XValidation:rule=`!has(self.version) || self.version.matches(r"^v(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)(-(0|[1-9][0-9]*|[0-9]*[a-zA-Z-][0-9a-zA-Z-]*)(\.(0|[1-9][0-9]*|[0-9]*[a-zA-Z-][0-9a-zA-Z-]*))*)?(\+[0-9a-zA-Z-]+(\.[0-9a-zA-Z-]+)*)?$")`,message="must be a valid semantic version",fieldPath=".version"
// +kubebuilder:validation:XValidation:rule="!has(self.rollout) || !has(self.rollout.strategy) || !has(self.rollout.strategy.rollingUpdate) || !has(self.rollout.strategy.rollingUpdate.maxSurge) || !(self.rollout.strategy.rollingUpdate.maxSurge == 0 || self.rollout.strategy.rollingUpdate.maxSurge == '0') || (has(self.replicas) && self.replicas >= 3)",message="when KubeadmControlPlane is configured to scale-in, replica count needs to be at least 3",fieldPath=".rollout.strategy.rollingUpdate"
// +kubebuilder:validation:XValidation:rule=`!has(self.version) || !has(oldSelf.version) || !self.version.matches(r"^v?(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)([-0-9a-zA-Z_\.+]*)?$") || !oldSelf.version.matches(r"^v?(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)([-0-9a-zA-Z_\.+]*)?$") || int(self.version.split('.')[0].replace('v', "")) < int(oldSelf.version.split('.')[0].replace('v', "")) || (int(self.version.split('.')[0].replace('v', "")) == int(oldSelf.version.split('.')[0].replace('v', "")) && int(self.version.split('.')[1]) < int(oldSelf.version.split('.')[1]) + 2)`,messageExpression="'cannot update Kubernetes version from ' + oldSelf.version + ' to ' + self.version",fieldPath=".version"
// +kubebuilder:validation:XValidation:rule="(has(self.kubeadmConfigSpec) && has(self.kubeadmConfigSpec.clusterConfiguration) && has(self.kubeadmConfigSpec.clusterConfiguration.controlPlaneEndpoint)) == (has(oldSelf.kubeadmConfigSpec) && has(oldSelf.kubeadmConfigSpec.clusterConfiguration) && has(oldSelf.kubeadmConfigSpec.clusterConfiguration.controlPlaneEndpoint)) && (!(has(self.kubeadmConfigSpec) && has(self.kubeadmConfigSpec.clusterConfiguration) && has(self.kubeadmConfigSpec.clusterConfiguration.controlPlaneEndpoint)) || self.kubeadmConfigSpec.clusterConfiguration.controlPlaneEndpoint == oldSelf.kubeadmConfigSpec.clusterConfiguration.controlPlaneEndpoint)",message="is immutable",fieldPath=".kubeadmConfigSpec.clusterConfiguration.controlPlaneEndpoint"
// +kubebuilder:validation:XValidation:rule="(has(self.kubeadmConfigSpec) && has(self.kubeadmConfigSpec.clusterConfiguration) && has(self.kubeadmConfigSpec.clusterConfiguration.certificatesDir)) == (has(oldSelf.kubeadmConfigSpec) && has(oldSelf.kubeadmConfigSpec.clusterConfiguration) && has(oldSelf.kubeadmConfigSpec.clusterConfiguration.certificatesDir)) && (!(has(self.kubeadmConfigSpec) && has(self.kubeadmConfigSpec.clusterConfiguration) && has(self.kubeadmConfigSpec.clusterConfiguration.certificatesDir)) || self.kubeadmConfigSpec.clusterConfiguration.certificatesDir == oldSelf.kubeadmConfigSpec.clusterConfiguration.certificatesDir)",message="is immutable",fieldPath=".kubeadmConfigSpec.clusterConfiguration.certificatesDir"
// +kubebuilder:validation:XValidation:rule="(has(self.kubeadmConfigSpec) && has(self.kubeadmConfigSpec.clusterConfiguration) && has(self.kubeadmConfigSpec.clusterConfiguration.etcd) && has(self.kubeadmConfigSpec.clusterConfiguration.etcd.external)) == (has(oldSelf.kubeadmConfigSpec) && has(oldSelf.kubeadmConfigSpec.clusterConfiguration) && has(oldSelf.kubeadmConfigSpec.clusterConfiguration.etcd) && has(oldSelf.kubeadmConfigSpec.clusterConfiguration.etcd.external))",message="cannot change between external and local etcd",fieldPath=".kubeadmConfigSpec.clusterConfiguration.etcd"
type KubeadmControlPlaneSpec struct {
	// replicas is the number of control plane Machines; 1 when unset. With stacked etcd it must be odd.
	// +optional
	Replicas *int32 `json:"replicas,omitempty"`

	// version is the Kubernetes version of the control plane. An update may move it by at most one minor
	// version.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=256
	Version string `json:"version,omitempty"`

	// machineTemplate shapes the control plane Machines.
	// +required
	MachineTemplate KubeadmControlPlaneMachineTemplate `json:"machineTemplate,omitempty,omitzero"`

	// kubeadmConfigSpec is the KubeadmConfig of the control plane Machines: the first one runs `kubeadm
	// init` with its clusterConfiguration and initConfiguration, the others `kubeadm join` with its
	// joinConfiguration.
	// +optional
	KubeadmConfigSpec bootstrapv1.KubeadmConfigSpec `json:"kubeadmConfigSpec,omitempty,omitzero"`

	// rollout says when the control plane Machines are replaced.
	// +optional
	Rollout KubeadmControlPlaneRolloutSpec `json:"rollout,omitempty,omitzero"`

	// remediation says when and how unhealthy Machines are remediated.
	// +optional
	Remediation KubeadmControlPlaneRemediationSpec `json:"remediation,omitempty,omitzero"`

	// machineNaming says how the Machines are named.
	// +optional
	MachineNaming MachineNamingSpec `json:"machineNaming,omitempty,omitzero"`
}

// KubeadmControlPlaneMachineTemplate shapes the Machines of a KubeadmControlPlane.
type KubeadmControlPlaneMachineTemplate struct {
	// metadata holds the labels and annotations of the Machines.
	// +optional
	ObjectMeta clusterv1.ObjectMeta `json:"metadata,omitempty,omitzero"`

	// spec is the part of the Machines' spec the KubeadmControlPlane sets.
	// +required
	Spec KubeadmControlPlaneMachineTemplateSpec `json:"spec,omitempty,omitzero"`
}

// KubeadmControlPlaneMachineTemplateSpec is the part of the control plane Machines' spec the
// KubeadmControlPlane sets.
type KubeadmControlPlaneMachineTemplateSpec struct {
	// infrastructureRef is the InfraMachine template the Machines' InfraMachines are cloned from; it must be
	// in the KubeadmControlPlane's namespace.
	// +required
	InfrastructureRef clusterv1.ContractVersionedObjectReference `json:"infrastructureRef,omitempty,omitzero"`

	// readinessGates are extra conditions of a Machine's Ready condition (v1beta2 conditions only). The
	// provider always adds APIServerPodHealthy, SchedulerPodHealthy, ControllerManagerPodHealthy and, with
	// stacked etcd, EtcdPodHealthy and EtcdMemberHealthy.
	// +optional
	// +listType=map
	// +listMapKey=conditionType
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=32
	ReadinessGates []clusterv1.MachineReadinessGate `json:"readinessGates,omitempty"`

	// deletion holds the timeouts of the control plane Machines' deletion.
	// +optional
	Deletion KubeadmControlPlaneMachineTemplateDeletionSpec `json:"deletion,omitempty,omitzero"`

	// taints are put on the control plane Machines' Nodes.
	// +optional
	// +listType=map
	// +listMapKey=key
	// +listMapKey=effect
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=64
	Taints []clusterv1.MachineTaint `json:"taints,omitempty"`
}

// KubeadmControlPlaneMachineTemplateDeletionSpec holds the timeouts of the control plane Machines'
// deletion.
// +kubebuilder:validation:MinProperties=1
type KubeadmControlPlaneMachineTemplateDeletionSpec struct {
	// nodeDrainTimeoutSeconds bounds the drain of the Node.
	// +optional
	// +kubebuilder:validation:Minimum=0
	NodeDrainTimeoutSeconds *int32 `json:"nodeDrainTimeoutSeconds,omitempty"`

	// nodeVolumeDetachTimeoutSeconds bounds the wait for the Node's volumes to detach.
	// +optional
	// +kubebuilder:validation:Minimum=0
	NodeVolumeDetachTimeoutSeconds *int32 `json:"nodeVolumeDetachTimeoutSeconds,omitempty"`

	// nodeDeletionTimeoutSeconds bounds the retries of deleting the Node.
	// +optional
	// +kubebuilder:validation:Minimum=0
	NodeDeletionTimeoutSeconds *int32 `json:"nodeDeletionTimeoutSeconds,omitempty"`
}

// KubeadmControlPlaneRolloutSpec says when the control plane Machines are replaced and how.
// +kubebuilder:validation:MinProperties=1
type KubeadmControlPlaneRolloutSpec struct {
	// before replaces a Machine before the conditions it lists are met.
	// +optional
	Before KubeadmControlPlaneRolloutBeforeSpec `json:"before,omitempty,omitzero"`

	// after replaces every control plane Machine created before this time.
	// +optional
	After metav1.Time `json:"after,omitempty,omitzero"`

	// strategy of the rollout.
	// +optional
	Strategy KubeadmControlPlaneRolloutStrategy `json:"strategy,omitempty,omitzero"`
}

// KubeadmControlPlaneRolloutBeforeSpec lists conditions a Machine is replaced before.
// +kubebuilder:validation:MinProperties=1
type KubeadmControlPlaneRolloutBeforeSpec struct {
	// certificatesExpiryDays rolls a Machine out when its certificates expire within this many days (at
	// least 7).
	// +optional
	// +kubebuilder:validation:Minimum=7
	CertificatesExpiryDays int32 `json:"certificatesExpiryDays,omitempty"`
}

// KubeadmControlPlaneRolloutStrategy is how the control plane Machines are replaced.
// +kubebuilder:validation:MinProperties=1
type KubeadmControlPlaneRolloutStrategy struct {
	// type of rollout; RollingUpdate, the only one, when empty.
	// +required
	Type KubeadmControlPlaneRolloutStrategyType `json:"type,omitempty"`

	// rollingUpdate configures the RollingUpdate strategy.
	// +optional
	RollingUpdate KubeadmControlPlaneRolloutStrategyRollingUpdate `json:"rollingUpdate,omitempty,omitzero"`
}

// KubeadmControlPlaneRolloutStrategyRollingUpdate configures the RollingUpdate strategy.
// +kubebuilder:validation:MinProperties=1
// +kubebuilder:validation:XValidation:rule="!has(self.maxSurge) || self.maxSurge == 0 || self.maxSurge == 1 || self.maxSurge == '0' || self.maxSurge == '1'",message="value must be 1 or 0",fieldPath=".maxSurge"
type KubeadmControlPlaneRolloutStrategyRollingUpdate struct {
	// maxSurge is how many Machines may exist above the desired replicas during a rollout: 1 (the
	// default) creates the new Machine first, 0 deletes the old one first (which needs at least 3
	// replicas).
	// +optional
	MaxSurge *intstr.IntOrString `json:"maxSurge,omitempty"`
}

// KubeadmControlPlaneRemediationSpec says when and how often unhealthy control plane Machines are
// remediated.
// +kubebuilder:validation:MinProperties=1
type KubeadmControlPlaneRemediationSpec struct {
	// maxRetry is how many times in a row a Machine may be remediated when the Machine that replaced an
	// unhealthy one fails again (a retry); unlimited when unset.
	// +optional
	MaxRetry *int32 `json:"maxRetry,omitempty"`

	// retryPeriodSeconds is how long a Machine created to replace an unhealthy one must exist before it is
	// remediated in turn (a retry); retries happen at once when unset.
	// +optional
	// +kubebuilder:validation:Minimum=0
	RetryPeriodSeconds *int32 `json:"retryPeriodSeconds,omitempty"`

	// minHealthyPeriodSeconds is how long after a remediation a new failure still counts as a retry of it;
	// after that the retry count restarts from 0. 3600 when unset.
	// +optional
	// +kubebuilder:validation:Minimum=0
	MinHealthyPeriodSeconds *int32 `json:"minHealthyPeriodSeconds,omitempty"`
}

// MachineNamingSpec says how the control plane Machines are named.
// +kubebuilder:validation:MinProperties=1
// +kubebuilder:validation:XValidation:rule="!has(self.template) || self.template.contains('{{ .random }}')",message="invalid template, {{ .random }} is missing",fieldPath=".template"
type MachineNamingSpec struct {
	// template of the names of the Machines (and of their InfraMachines and KubeadmConfigs), with the
	// variables .cluster.name, .kubeadmControlPlane.name and .random (5 random characters, required);
	// "{{ .kubeadmControlPlane.name }}-{{ .random }}" when empty. A name longer than 63 characters is
	// cut to 58 and given a random suffix of 5.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=256
	Template string `json:"template,omitempty"`
}

// KubeadmControlPlaneStatus is the observed state of a KubeadmControlPlane.
// +kubebuilder:validation:MinProperties=1
type KubeadmControlPlaneStatus struct {
	// conditions of the KubeadmControlPlane: Available, CertificatesAvailable, EtcdClusterHealthy,
	// ControlPlaneComponentsHealthy, MachinesReady, MachinesUpToDate, RollingOut, ScalingUp, ScalingDown,
	// Remediating, Deleting, Paused.
	// +optional
	// +listType=map
	// +listMapKey=type
	// +kubebuilder:validation:MaxItems=32
	Conditions []metav1.Condition `json:"conditions,omitempty"`

	// initialization reports the v1beta2 control plane contract's initialization fields.
	// +optional
	Initialization KubeadmControlPlaneInitializationStatus `json:"initialization,omitempty,omitzero"`

	// selector selects the control plane Machines, in label selector string form (for the scale
	// subresource).
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=4096
	Selector string `json:"selector,omitempty"`

	// replicas is the number of control plane Machines that are not being deleted.
	// +optional
	Replicas *int32 `json:"replicas,omitempty"`

	// readyReplicas is the number of Machines whose Ready condition is true.
	// +optional
	ReadyReplicas *int32 `json:"readyReplicas,omitempty"`

	// availableReplicas is the number of Machines whose Available condition is true.
	// +optional
	AvailableReplicas *int32 `json:"availableReplicas,omitempty"`

	// upToDateReplicas is the number of Machines whose UpToDate condition is true.
	// +optional
	UpToDateReplicas *int32 `json:"upToDateReplicas,omitempty"`

	// versions are the Kubernetes versions of the control plane Machines, with their counts.
	// +optional
	// +listType=map
	// +listMapKey=version
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=100
	Versions []clusterv1.StatusVersion `json:"versions,omitempty"`

	// version is the lowest Kubernetes version of the control plane Machines.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=256
	Version string `json:"version,omitempty"`

	// observedGeneration is the generation of the spec the status was computed from.
	// +optional
	// +kubebuilder:validation:Minimum=1
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// lastRemediation describes the last remediation.
	// +optional
	LastRemediation LastRemediationStatus `json:"lastRemediation,omitempty,omitzero"`

	// deprecated groups the status fields that go away with v1beta1.
	// +optional
	Deprecated *KubeadmControlPlaneDeprecatedStatus `json:"deprecated,omitempty"`
}

// KubeadmControlPlaneInitializationStatus is the initialization block of the v1beta2 control plane
// contract.
// +kubebuilder:validation:MinProperties=1
type KubeadmControlPlaneInitializationStatus struct {
	// controlPlaneInitialized is true once the control plane can accept requests.
	// +optional
	ControlPlaneInitialized *bool `json:"controlPlaneInitialized,omitempty"`
}

// KubeadmControlPlaneDeprecatedStatus groups the status fields that go away with v1beta1.
type KubeadmControlPlaneDeprecatedStatus struct {
	// v1beta1 holds the status fields of v1beta1.
	// +optional
	V1Beta1 *KubeadmControlPlaneV1Beta1DeprecatedStatus `json:"v1beta1,omitempty"`
}

// KubeadmControlPlaneV1Beta1DeprecatedStatus is the status of v1beta1 that v1beta2 does not have.
type KubeadmControlPlaneV1Beta1DeprecatedStatus struct {
	// conditions are the v1beta1 conditions.
	// +optional
	Conditions clusterv1.Conditions `json:"conditions,omitempty"`

	// failureReason is the kind of a terminal failure.
	// +optional
	FailureReason KubeadmControlPlaneStatusError `json:"failureReason,omitempty"`

	// failureMessage describes a terminal failure.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=10240
	FailureMessage *string `json:"failureMessage,omitempty"`

	// updatedReplicas is the number of control plane Machines, not being deleted, that match the spec.
	// +optional
	UpdatedReplicas int32 `json:"updatedReplicas"`

	// readyReplicas is the number of control plane Machines that are running and ready.
	// +optional
	ReadyReplicas int32 `json:"readyReplicas"`

	// unavailableReplicas is the number of Machines still needed for full capacity: not ready, or not
	// created yet.
	// +optional
	UnavailableReplicas int32 `json:"unavailableReplicas"`
}

// LastRemediationStatus describes the last remediation. When it is lost, the retry count restarts from 0.
type LastRemediationStatus struct {
	// machine is the name of the last remediated Machine.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Machine string `json:"machine,omitempty"`

	// time is when the last remediation happened.
	// +required
	Time metav1.Time `json:"time,omitempty,omitzero"`

	// retryCount is the number of retries of the remediation of the last remediated Machine.
	// +required
	// +kubebuilder:validation:Minimum=0
	RetryCount *int32 `json:"retryCount,omitempty"`
}

// +kubebuilder:object:root=true
// +kubebuilder:resource:path=kubeadmcontrolplanes,shortName=kcp,scope=Namespaced,categories=cluster-api
// +kubebuilder:subresource:status
// +kubebuilder:subresource:scale:specpath=.spec.replicas,statuspath=.status.replicas,selectorpath=.status.selector
// +kubebuilder:printcolumn:name="Cluster",type="string",JSONPath=".metadata.labels['cluster\\.x-k8s\\.io/cluster-name']",description="Cluster"
// +kubebuilder:printcolumn:name="Available",type="string",JSONPath=`.status.conditions[?(@.type=="Available")].status`,description="Cluster pass all availability checks"
// +kubebuilder:printcolumn:name="Desired",type=integer,JSONPath=".spec.replicas",description="The desired number of machines"
// +kubebuilder:printcolumn:name="Current",type="integer",JSONPath=".status.replicas",description="The number of machines"
// +kubebuilder:printcolumn:name="Ready",type="integer",JSONPath=".status.readyReplicas",description="The number of machines with Ready condition true"
// +kubebuilder:printcolumn:name="Available",type=integer,JSONPath=".status.availableReplicas",description="The number of machines with Available condition true"
// +kubebuilder:printcolumn:name="Up-to-date",type=integer,JSONPath=".status.upToDateReplicas",description="The number of machines with UpToDate condition true"
// +kubebuilder:printcolumn:name="Paused",type="string",JSONPath=`.status.conditions[?(@.type=="Paused")].status`,description="Reconciliation paused",priority=10
// +kubebuilder:printcolumn:name="Initialized",type=boolean,JSONPath=".status.initialization.controlPlaneInitialized",description="This denotes whether or not the control plane can accept requests"
// +kubebuilder:printcolumn:name="Age",type="date",JSONPath=".metadata.creationTimestamp",description="Time duration since creation of KubeadmControlPlane"
// +kubebuilder:printcolumn:name="Version",type=string,JSONPath=".spec.version",description="Kubernetes version associated with this control plane"

// KubeadmControlPlane is a control plane of kubeadm-bootstrapped Machines, each running an API server,
// controller manager, scheduler and (with stacked etcd) an etcd member.
type KubeadmControlPlane struct {
	metav1.TypeMeta `json:",inline"`
	// metadata of the KubeadmControlPlane.
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec is the desired state of the KubeadmControlPlane.
	// +required
	Spec KubeadmControlPlaneSpec `json:"spec,omitempty,omitzero"`
	// status is the observed state of the KubeadmControlPlane.
	// +optional
	Status KubeadmControlPlaneStatus `json:"status,omitempty,omitzero"`
}

// +kubebuilder:object:root=true

// KubeadmControlPlaneList is a list of KubeadmControlPlanes.
type KubeadmControlPlaneList struct {
	metav1.TypeMeta `json:",inline"`
	// +optional
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []KubeadmControlPlane `json:"items"`
}
