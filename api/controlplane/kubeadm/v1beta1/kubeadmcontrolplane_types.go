package v1beta1

import (
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	bootstrapv1 "github.com/capstan-dev/capstan/api/bootstrap/kubeadm/v1beta1"
	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
)

// RolloutStrategyType is how a KubeadmControlPlane replaces its Machines.
// +kubebuilder:validation:Enum=RollingUpdate
type RolloutStrategyType string

const (
	// RollingUpdateStrategyType replaces Machines one at a time, creating the new one before or after
	// deleting the old one as rollingUpdate.maxSurge says.
	RollingUpdateStrategyType RolloutStrategyType = "RollingUpdate"
)

// Finalizers, annotations and defaults of the kubeadm control plane provider, as upstream's.
const (
	// KubeadmControlPlaneFinalizer keeps a KubeadmControlPlane until its Machines are gone.
	KubeadmControlPlaneFinalizer = "kubeadm.controlplane.cluster.x-k8s.io"

	// SkipCoreDNSAnnotation on a KubeadmControlPlane stops the provider from managing CoreDNS.
	SkipCoreDNSAnnotation = "controlplane.cluster.x-k8s.io/skip-coredns"

	// SkipKubeProxyAnnotation on a KubeadmControlPlane stops the provider from managing kube-proxy.
	SkipKubeProxyAnnotation = "controlplane.cluster.x-k8s.io/skip-kube-proxy"

	// KubeadmClusterConfigurationAnnotation on a control plane Machine holds the JSON ClusterConfiguration
	// it was created with, so that a change of it rolls the Machine out.
	KubeadmClusterConfigurationAnnotation = "controlplane.cluster.x-k8s.io/kubeadm-cluster-configuration"

	// RemediationInProgressAnnotation on a KubeadmControlPlane records a remediation between the deletion of
	// the unhealthy Machine and the creation of its replacement.
	RemediationInProgressAnnotation = "controlplane.cluster.x-k8s.io/remediation-in-progress"

	// RemediationForAnnotation on a Machine links it to the unhealthy Machine it replaces (the first of a
	// chain of retries).
	RemediationForAnnotation = "controlplane.cluster.x-k8s.io/remediation-for"

	// PreTerminateHookCleanupAnnotation is the pre-terminate hook the provider sets on its Machines, so that
	// it removes the Machine's etcd member before the infrastructure is deleted.
	PreTerminateHookCleanupAnnotation = clusterv1.PreTerminateDeleteHookAnnotationPrefix + "/kcp-cleanup"

	// DefaultMinHealthyPeriod is remediationStrategy.minHealthyPeriod's default.
	DefaultMinHealthyPeriod = 1 * time.Hour
)

// KubeadmControlPlaneSpec is the desired state of a KubeadmControlPlane.
//
// The rules below are the ones upstream's admission webhook enforces; the provider treats an unset replicas
// as 1, as upstream's webhook defaults it.
// +kubebuilder:validation:XValidation:rule="!has(self.replicas) || self.replicas > 0",message="cannot be less than or equal to 0",fieldPath=".replicas"
// +kubebuilder:validation:XValidation:rule="!has(self.replicas) || self.replicas % 2 == 1 || (has(self.kubeadmConfigSpec.clusterConfiguration) && has(self.kubeadmConfigSpec.clusterConfiguration.etcd) && has(self.kubeadmConfigSpec.clusterConfiguration.etcd.external))",message="cannot be an even number when etcd is stacked",fieldPath=".replicas"
// +kubebuilder:validation:XValidation:rule=`self.version.matches(r"^v?(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)([-0-9a-zA-Z_\.+]*)?$")`,message="must be a valid semantic version",fieldPath=".version"
// +kubebuilder:validation:XValidation:rule="has(self.machineTemplate.infrastructureRef.apiVersion) && size(self.machineTemplate.infrastructureRef.apiVersion) > 0 && has(self.machineTemplate.infrastructureRef.kind) && size(self.machineTemplate.infrastructureRef.kind) > 0 && has(self.machineTemplate.infrastructureRef.name) && size(self.machineTemplate.infrastructureRef.name) > 0",message="apiVersion, kind and name cannot be empty",fieldPath=".machineTemplate.infrastructureRef"
// +kubebuilder:validation:XValidation:rule="!has(self.rolloutStrategy) || !has(self.rolloutStrategy.rollingUpdate) || !has(self.rolloutStrategy.rollingUpdate.maxSurge) || !(self.rolloutStrategy.rollingUpdate.maxSurge == 0 || self.rolloutStrategy.rollingUpdate.maxSurge == '0') || (has(self.replicas) && self.replicas >= 3)",message="when KubeadmControlPlane is configured to scale-in, replica count needs to be at least 3",fieldPath=".rolloutStrategy.rollingUpdate"
// +kubebuilder:validation:XValidation:rule=`!self.version.matches(r"^v?(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)([-0-9a-zA-Z_\.+]*)?$") || !oldSelf.version.matches(r"^v?(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)([-0-9a-zA-Z_\.+]*)?$") || int(self.version.split('.')[0].replace('v', "")) < int(oldSelf.version.split('.')[0].replace('v', "")) || (int(self.version.split('.')[0].replace('v', "")) == int(oldSelf.version.split('.')[0].replace('v', "")) && int(self.version.split('.')[1]) < int(oldSelf.version.split('.')[1]) + 2)`,messageExpression="'cannot update Kubernetes version from ' + oldSelf.version + ' to ' + self.version",fieldPath=".version"
// +kubebuilder:validation:XValidation:rule="(has(self.kubeadmConfigSpec.clusterConfiguration) && has(self.kubeadmConfigSpec.clusterConfiguration.networking) && has(self.kubeadmConfigSpec.clusterConfiguration.networking.serviceSubnet)) == (has(oldSelf.kubeadmConfigSpec.clusterConfiguration) && has(oldSelf.kubeadmConfigSpec.clusterConfiguration.networking) && has(oldSelf.kubeadmConfigSpec.clusterConfiguration.networking.serviceSubnet)) && (!(has(self.kubeadmConfigSpec.clusterConfiguration) && has(self.kubeadmConfigSpec.clusterConfiguration.networking) && has(self.kubeadmConfigSpec.clusterConfiguration.networking.serviceSubnet)) || self.kubeadmConfigSpec.clusterConfiguration.networking.serviceSubnet == oldSelf.kubeadmConfigSpec.clusterConfiguration.networking.serviceSubnet)",message="is immutable",fieldPath=".kubeadmConfigSpec.clusterConfiguration.networking.serviceSubnet"
// +kubebuilder:validation:XValidation:rule="(has(self.kubeadmConfigSpec.clusterConfiguration) && has(self.kubeadmConfigSpec.clusterConfiguration.networking) && has(self.kubeadmConfigSpec.clusterConfiguration.networking.podSubnet)) == (has(oldSelf.kubeadmConfigSpec.clusterConfiguration) && has(oldSelf.kubeadmConfigSpec.clusterConfiguration.networking) && has(oldSelf.kubeadmConfigSpec.clusterConfiguration.networking.podSubnet)) && (!(has(self.kubeadmConfigSpec.clusterConfiguration) && has(self.kubeadmConfigSpec.clusterConfiguration.networking) && has(self.kubeadmConfigSpec.clusterConfiguration.networking.podSubnet)) || self.kubeadmConfigSpec.clusterConfiguration.networking.podSubnet == oldSelf.kubeadmConfigSpec.clusterConfiguration.networking.podSubnet)",message="is immutable",fieldPath=".kubeadmConfigSpec.clusterConfiguration.networking.podSubnet"
// +kubebuilder:validation:XValidation:rule="(has(self.kubeadmConfigSpec.clusterConfiguration) && has(self.kubeadmConfigSpec.clusterConfiguration.networking) && has(self.kubeadmConfigSpec.clusterConfiguration.networking.dnsDomain)) == (has(oldSelf.kubeadmConfigSpec.clusterConfiguration) && has(oldSelf.kubeadmConfigSpec.clusterConfiguration.networking) && has(oldSelf.kubeadmConfigSpec.clusterConfiguration.networking.dnsDomain)) && (!(has(self.kubeadmConfigSpec.clusterConfiguration) && has(self.kubeadmConfigSpec.clusterConfiguration.networking) && has(self.kubeadmConfigSpec.clusterConfiguration.networking.dnsDomain)) || self.kubeadmConfigSpec.clusterConfiguration.networking.dnsDomain == oldSelf.kubeadmConfigSpec.clusterConfiguration.networking.dnsDomain)",message="is immutable",fieldPath=".kubeadmConfigSpec.clusterConfiguration.networking.dnsDomain"
// +kubebuilder:validation:XValidation:rule="(has(self.kubeadmConfigSpec.clusterConfiguration) && has(self.kubeadmConfigSpec.clusterConfiguration.kubernetesVersion)) == (has(oldSelf.kubeadmConfigSpec.clusterConfiguration) && has(oldSelf.kubeadmConfigSpec.clusterConfiguration.kubernetesVersion)) && (!(has(self.kubeadmConfigSpec.clusterConfiguration) && has(self.kubeadmConfigSpec.clusterConfiguration.kubernetesVersion)) || self.kubeadmConfigSpec.clusterConfiguration.kubernetesVersion == oldSelf.kubeadmConfigSpec.clusterConfiguration.kubernetesVersion)",message="is immutable",fieldPath=".kubeadmConfigSpec.clusterConfiguration.kubernetesVersion"
// +kubebuilder:validation:XValidation:rule="(has(self.kubeadmConfigSpec.clusterConfiguration) && has(self.kubeadmConfigSpec.clusterConfiguration.controlPlaneEndpoint)) == (has(oldSelf.kubeadmConfigSpec.clusterConfiguration) && has(oldSelf.kubeadmConfigSpec.clusterConfiguration.controlPlaneEndpoint)) && (!(has(self.kubeadmConfigSpec.clusterConfiguration) && has(self.kubeadmConfigSpec.clusterConfiguration.controlPlaneEndpoint)) || self.kubeadmConfigSpec.clusterConfiguration.controlPlaneEndpoint == oldSelf.kubeadmConfigSpec.clusterConfiguration.controlPlaneEndpoint)",message="is immutable",fieldPath=".kubeadmConfigSpec.clusterConfiguration.controlPlaneEndpoint"
// +kubebuilder:validation:XValidation:rule="(has(self.kubeadmConfigSpec.clusterConfiguration) && has(self.kubeadmConfigSpec.clusterConfiguration.certificatesDir)) == (has(oldSelf.kubeadmConfigSpec.clusterConfiguration) && has(oldSelf.kubeadmConfigSpec.clusterConfiguration.certificatesDir)) && (!(has(self.kubeadmConfigSpec.clusterConfiguration) && has(self.kubeadmConfigSpec.clusterConfiguration.certificatesDir)) || self.kubeadmConfigSpec.clusterConfiguration.certificatesDir == oldSelf.kubeadmConfigSpec.clusterConfiguration.certificatesDir)",message="is immutable",fieldPath=".kubeadmConfigSpec.clusterConfiguration.certificatesDir"
// +kubebuilder:validation:XValidation:rule="(has(self.kubeadmConfigSpec.clusterConfiguration) && has(self.kubeadmConfigSpec.clusterConfiguration.clusterName)) == (has(oldSelf.kubeadmConfigSpec.clusterConfiguration) && has(oldSelf.kubeadmConfigSpec.clusterConfiguration.clusterName)) && (!(has(self.kubeadmConfigSpec.clusterConfiguration) && has(self.kubeadmConfigSpec.clusterConfiguration.clusterName)) || self.kubeadmConfigSpec.clusterConfiguration.clusterName == oldSelf.kubeadmConfigSpec.clusterConfiguration.clusterName)",message="is immutable",fieldPath=".kubeadmConfigSpec.clusterConfiguration.clusterName"
// +kubebuilder:validation:XValidation:rule="!((has(self.kubeadmConfigSpec.clusterConfiguration) && has(self.kubeadmConfigSpec.clusterConfiguration.etcd) && has(self.kubeadmConfigSpec.clusterConfiguration.etcd.external)) && (has(oldSelf.kubeadmConfigSpec.clusterConfiguration) && has(oldSelf.kubeadmConfigSpec.clusterConfiguration.etcd) && has(oldSelf.kubeadmConfigSpec.clusterConfiguration.etcd.local))) && !((has(self.kubeadmConfigSpec.clusterConfiguration) && has(self.kubeadmConfigSpec.clusterConfiguration.etcd) && has(self.kubeadmConfigSpec.clusterConfiguration.etcd.local)) && (has(oldSelf.kubeadmConfigSpec.clusterConfiguration) && has(oldSelf.kubeadmConfigSpec.clusterConfiguration.etcd) && has(oldSelf.kubeadmConfigSpec.clusterConfiguration.etcd.external)))",message="cannot change between external and local etcd",fieldPath=".kubeadmConfigSpec.clusterConfiguration.etcd"
type KubeadmControlPlaneSpec struct {
	// replicas is the number of control plane Machines; 1 when unset. With stacked etcd it must be odd.
	// +optional
	Replicas *int32 `json:"replicas,omitempty"`

	// version is the Kubernetes version of the control plane. An update may move it by at most one minor
	// version.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=256
	Version string `json:"version"`

	// machineTemplate shapes the control plane Machines.
	// +required
	MachineTemplate KubeadmControlPlaneMachineTemplate `json:"machineTemplate"`

	// kubeadmConfigSpec is the KubeadmConfig of the control plane Machines: the first one runs `kubeadm
	// init` with its clusterConfiguration and initConfiguration, the others `kubeadm join` with its
	// joinConfiguration.
	// +required
	KubeadmConfigSpec bootstrapv1.KubeadmConfigSpec `json:"kubeadmConfigSpec"`

	// rolloutBefore rolls Machines out when its criteria are met.
	// +optional
	RolloutBefore *RolloutBefore `json:"rolloutBefore,omitempty"`

	// rolloutAfter rolls every Machine out once this time has passed (RFC 3339, for example
	// "2023-03-09T09:00:00Z"), even when nothing else changed.
	// +optional
	RolloutAfter *metav1.Time `json:"rolloutAfter,omitempty"`

	// rolloutStrategy is how Machines are replaced.
	// +optional
	// +kubebuilder:default={type: "RollingUpdate", rollingUpdate: {maxSurge: 1}}
	RolloutStrategy *RolloutStrategy `json:"rolloutStrategy,omitempty"`

	// remediationStrategy limits the remediation of unhealthy control plane Machines.
	// +optional
	RemediationStrategy *RemediationStrategy `json:"remediationStrategy,omitempty"`

	// machineNamingStrategy names the Machines; their InfraMachines and KubeadmConfigs get the same names.
	// +optional
	MachineNamingStrategy *MachineNamingStrategy `json:"machineNamingStrategy,omitempty"`
}

// KubeadmControlPlaneMachineTemplate shapes the Machines of a KubeadmControlPlane.
type KubeadmControlPlaneMachineTemplate struct {
	// metadata holds the labels and annotations of the Machines.
	// +optional
	ObjectMeta clusterv1.ObjectMeta `json:"metadata,omitempty"`

	// infrastructureRef is the InfraMachine template the Machines' InfraMachines are cloned from; it must be
	// in the KubeadmControlPlane's namespace.
	// +required
	InfrastructureRef corev1.ObjectReference `json:"infrastructureRef"`

	// readinessGates are extra conditions of a Machine's Ready condition (v1beta2 conditions only). The
	// provider always adds APIServerPodHealthy, SchedulerPodHealthy, ControllerManagerPodHealthy and, with
	// stacked etcd, EtcdPodHealthy and EtcdMemberHealthy.
	// +optional
	// +listType=map
	// +listMapKey=conditionType
	// +kubebuilder:validation:MaxItems=32
	ReadinessGates []clusterv1.MachineReadinessGate `json:"readinessGates,omitempty"`

	// nodeDrainTimeout is the longest time spent draining a Node; no limit when unset or 0.
	// +optional
	NodeDrainTimeout *metav1.Duration `json:"nodeDrainTimeout,omitempty"`

	// nodeVolumeDetachTimeout is the longest time spent waiting for a Node's volumes to detach; no limit
	// when unset or 0.
	// +optional
	NodeVolumeDetachTimeout *metav1.Duration `json:"nodeVolumeDetachTimeout,omitempty"`

	// nodeDeletionTimeout is how long the Machine controller tries to delete a deleted Machine's Node; 0
	// retries forever, unset uses the Machine's default.
	// +optional
	NodeDeletionTimeout *metav1.Duration `json:"nodeDeletionTimeout,omitempty"`

	// taints are put on the Nodes of the control plane Machines (see a Machine's spec.taints); they change in
	// place, without a rollout. Upstream v1.14's v1beta1 field.
	// +optional
	// +listType=map
	// +listMapKey=key
	// +listMapKey=effect
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=64
	Taints []clusterv1.MachineTaint `json:"taints,omitempty"`
}

// RolloutBefore rolls Machines out when its criteria are met.
// +kubebuilder:validation:XValidation:rule="!has(self.certificatesExpiryDays) || self.certificatesExpiryDays >= 7",message="must be greater than or equal to 7",fieldPath=".certificatesExpiryDays"
type RolloutBefore struct {
	// certificatesExpiryDays rolls a Machine out when its certificates expire within this many days (at
	// least 7).
	// +optional
	CertificatesExpiryDays *int32 `json:"certificatesExpiryDays,omitempty"`
}

// RolloutStrategy is how Machines are replaced.
type RolloutStrategy struct {
	// type of rollout; RollingUpdate, the only one, when empty.
	// +optional
	Type RolloutStrategyType `json:"type,omitempty"`

	// rollingUpdate configures the RollingUpdate strategy.
	// +optional
	RollingUpdate *RollingUpdate `json:"rollingUpdate,omitempty"`
}

// RollingUpdate configures the RollingUpdate strategy.
// +kubebuilder:validation:XValidation:rule="!has(self.maxSurge) || self.maxSurge == 0 || self.maxSurge == 1 || self.maxSurge == '0' || self.maxSurge == '1'",message="value must be 1 or 0",fieldPath=".maxSurge"
type RollingUpdate struct {
	// maxSurge is how many Machines may exist above the desired replicas during a rollout: 1 (the
	// default) creates the new Machine first, 0 deletes the old one first (which needs at least 3
	// replicas).
	// +optional
	MaxSurge *intstr.IntOrString `json:"maxSurge,omitempty"`
}

// RemediationStrategy limits the remediation of unhealthy control plane Machines.
type RemediationStrategy struct {
	// maxRetry is how many times in a row a Machine may be remediated when the Machine that replaced an
	// unhealthy one fails again (a retry); unlimited when unset.
	// +optional
	MaxRetry *int32 `json:"maxRetry,omitempty"`

	// retryPeriod is how long to wait before remediating a Machine that replaced an unhealthy one; no wait
	// when unset.
	// +optional
	RetryPeriod metav1.Duration `json:"retryPeriod,omitempty"`

	// minHealthyPeriod is how long a replacement Machine must stay healthy before a new failure counts as
	// unrelated to the previous one (and the retry count restarts); 1h when unset.
	// +optional
	MinHealthyPeriod *metav1.Duration `json:"minHealthyPeriod,omitempty"`
}

// MachineNamingStrategy names the Machines of a KubeadmControlPlane.
// +kubebuilder:validation:XValidation:rule="!has(self.template) || self.template.contains('{{ .random }}')",message="invalid template, {{ .random }} is missing",fieldPath=".template"
type MachineNamingStrategy struct {
	// template is a Go template of the Machine names, `{{ .kubeadmControlPlane.name }}-{{ .random }}` when
	// unset. It may use .cluster.name, .kubeadmControlPlane.name and must use .random (5 random
	// alphanumeric characters). A name longer than 63 characters is cut to 58 and gets a random suffix.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=256
	Template string `json:"template,omitempty"`
}

// KubeadmControlPlaneStatusError is a terminal problem of a KubeadmControlPlane (deprecated failureReason).
type KubeadmControlPlaneStatusError string

// The values of failureReason.
const (
	// InvalidConfigurationKubeadmControlPlaneError: the configuration is invalid.
	InvalidConfigurationKubeadmControlPlaneError KubeadmControlPlaneStatusError = "InvalidConfiguration"
	// UnsupportedChangeKubeadmControlPlaneError: the spec changed in a way that cannot be reconciled.
	UnsupportedChangeKubeadmControlPlaneError KubeadmControlPlaneStatusError = "UnsupportedChange"
	// CreateKubeadmControlPlaneError: creating the control plane failed.
	CreateKubeadmControlPlaneError KubeadmControlPlaneStatusError = "CreateError"
	// UpdateKubeadmControlPlaneError: updating the control plane failed.
	UpdateKubeadmControlPlaneError KubeadmControlPlaneStatusError = "UpdateError"
	// DeleteKubeadmControlPlaneError: deleting the control plane failed.
	DeleteKubeadmControlPlaneError KubeadmControlPlaneStatusError = "DeleteError"
)

// KubeadmControlPlaneStatus is the observed state of a KubeadmControlPlane.
type KubeadmControlPlaneStatus struct {
	// selector selects the control plane Machines, in label selector string form (for the scale
	// subresource).
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=4096
	Selector string `json:"selector,omitempty"`

	// replicas is the number of control plane Machines that are not being deleted.
	// +optional
	Replicas int32 `json:"replicas"`

	// version is the lowest Kubernetes version of the control plane Machines.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=256
	Version *string `json:"version,omitempty"`

	// updatedReplicas is the number of control plane Machines, not being deleted, that match the spec.
	// +optional
	UpdatedReplicas int32 `json:"updatedReplicas"`

	// readyReplicas is the number of control plane Machines that are running and ready.
	// +optional
	ReadyReplicas int32 `json:"readyReplicas"`

	// unavailableReplicas is the number of Machines still needed for full capacity: not ready, or not
	// created yet.
	//
	// Deprecated: upstream removes this field in v1beta2.
	// +optional
	UnavailableReplicas int32 `json:"unavailableReplicas"`

	// initialized is true once the first API server accepts requests (the kubeadm-config ConfigMap was
	// uploaded). Part of the ControlPlane contract; never reset afterwards.
	// +optional
	Initialized bool `json:"initialized"`

	// ready is true once an API server was ready to receive requests during the initial provisioning.
	// Part of the ControlPlane contract; never reset afterwards.
	// +optional
	Ready bool `json:"ready"`

	// failureReason is set on a terminal problem.
	//
	// Deprecated: conditions report problems; upstream removes this field in v1beta2.
	// +optional
	FailureReason KubeadmControlPlaneStatusError `json:"failureReason,omitempty"`

	// failureMessage describes failureReason.
	//
	// Deprecated: conditions report problems; upstream removes this field in v1beta2.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=10240
	FailureMessage *string `json:"failureMessage,omitempty"`

	// observedGeneration is the generation of the spec the status was computed from.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// conditions are the v1beta1 conditions.
	// +optional
	Conditions clusterv1.Conditions `json:"conditions,omitempty"`

	// lastRemediation describes the last remediation.
	// +optional
	LastRemediation *LastRemediationStatus `json:"lastRemediation,omitempty"`

	// versions is the aggregated Kubernetes versions in this KubeadmControlPlane.
	// +optional
	// +listType=map
	// +listMapKey=version
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=100
	Versions []clusterv1.StatusVersion `json:"versions,omitempty"`

	// v1beta2 groups the status fields of the v1beta2 API.
	// +optional
	V1Beta2 *KubeadmControlPlaneV1Beta2Status `json:"v1beta2,omitempty"`
}

// KubeadmControlPlaneV1Beta2Status groups the status fields of the v1beta2 API.
type KubeadmControlPlaneV1Beta2Status struct {
	// conditions are the v1beta2 conditions: Available, CertificatesAvailable, EtcdClusterAvailable,
	// MachinesReady, MachinesUpToDate, ScalingUp, ScalingDown, Remediating, Deleting, Paused...
	// +optional
	// +listType=map
	// +listMapKey=type
	// +kubebuilder:validation:MaxItems=32
	Conditions []metav1.Condition `json:"conditions,omitempty"`

	// readyReplicas is the number of Machines whose Ready condition is true.
	// +optional
	ReadyReplicas *int32 `json:"readyReplicas,omitempty"`

	// availableReplicas is the number of Machines whose Available condition is true.
	// +optional
	AvailableReplicas *int32 `json:"availableReplicas,omitempty"`

	// upToDateReplicas is the number of Machines whose UpToDate condition is true.
	// +optional
	UpToDateReplicas *int32 `json:"upToDateReplicas,omitempty"`
}

// LastRemediationStatus describes the last remediation. When it is lost, the retry count restarts from 0.
type LastRemediationStatus struct {
	// machine is the name of the last remediated Machine.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Machine string `json:"machine"`

	// timestamp is when the remediation happened.
	// +required
	Timestamp metav1.Time `json:"timestamp"`

	// retryCount is the number of retries of the remediation of the last remediated Machine.
	// +required
	RetryCount int32 `json:"retryCount"`
}

// +kubebuilder:object:root=true
// +kubebuilder:resource:path=kubeadmcontrolplanes,shortName=kcp,scope=Namespaced,categories=cluster-api
// +kubebuilder:storageversion
// +kubebuilder:metadata:labels="cluster.x-k8s.io/v1beta1=v1beta1"
// +kubebuilder:subresource:status
// +kubebuilder:subresource:scale:specpath=.spec.replicas,statuspath=.status.replicas,selectorpath=.status.selector
// +kubebuilder:printcolumn:name="Cluster",type="string",JSONPath=".metadata.labels['cluster\\.x-k8s\\.io/cluster-name']",description="Cluster"
// +kubebuilder:printcolumn:name="Initialized",type=boolean,JSONPath=".status.initialized",description="This denotes whether or not the control plane has the uploaded kubeadm-config configmap"
// +kubebuilder:printcolumn:name="API Server Available",type=boolean,JSONPath=".status.ready",description="KubeadmControlPlane API Server is ready to receive requests"
// +kubebuilder:printcolumn:name="Desired",type=integer,JSONPath=".spec.replicas",description="Total number of machines desired by this control plane",priority=10
// +kubebuilder:printcolumn:name="Replicas",type=integer,JSONPath=".status.replicas",description="Total number of non-terminated machines targeted by this control plane"
// +kubebuilder:printcolumn:name="Ready",type=integer,JSONPath=".status.readyReplicas",description="Total number of fully running and ready control plane machines"
// +kubebuilder:printcolumn:name="Updated",type=integer,JSONPath=".status.updatedReplicas",description="Total number of non-terminated machines targeted by this control plane that have the desired template spec"
// +kubebuilder:printcolumn:name="Unavailable",type=integer,JSONPath=".status.unavailableReplicas",description="Total number of unavailable machines targeted by this control plane"
// +kubebuilder:printcolumn:name="Age",type="date",JSONPath=".metadata.creationTimestamp",description="Time duration since creation of KubeadmControlPlane"
// +kubebuilder:printcolumn:name="Version",type=string,JSONPath=".spec.version",description="Kubernetes version associated with this control plane"

// KubeadmControlPlane is a control plane of kubeadm-bootstrapped Machines, each running an API server,
// controller manager, scheduler and (with stacked etcd) an etcd member.
type KubeadmControlPlane struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec is the desired state of the KubeadmControlPlane.
	// +optional
	Spec KubeadmControlPlaneSpec `json:"spec,omitempty"`
	// status is the observed state of the KubeadmControlPlane.
	// +optional
	Status KubeadmControlPlaneStatus `json:"status,omitempty"`
}

// +kubebuilder:object:root=true

// KubeadmControlPlaneList is a list of KubeadmControlPlanes.
type KubeadmControlPlaneList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []KubeadmControlPlane `json:"items"`
}

// GetConditions returns the v1beta1 conditions.
func (in *KubeadmControlPlane) GetConditions() clusterv1.Conditions { return in.Status.Conditions }

// SetConditions sets the v1beta1 conditions.
func (in *KubeadmControlPlane) SetConditions(conditions clusterv1.Conditions) {
	in.Status.Conditions = conditions
}

// GetV1Beta2Conditions returns the v1beta2 conditions.
func (in *KubeadmControlPlane) GetV1Beta2Conditions() []metav1.Condition {
	if in.Status.V1Beta2 == nil {
		return nil
	}
	return in.Status.V1Beta2.Conditions
}

// SetV1Beta2Conditions sets the v1beta2 conditions.
func (in *KubeadmControlPlane) SetV1Beta2Conditions(conditions []metav1.Condition) {
	if in.Status.V1Beta2 == nil {
		in.Status.V1Beta2 = &KubeadmControlPlaneV1Beta2Status{}
	}
	in.Status.V1Beta2.Conditions = conditions
}
