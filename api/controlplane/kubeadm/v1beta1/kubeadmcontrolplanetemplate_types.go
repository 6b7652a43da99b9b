package v1beta1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	bootstrapv1 "github.com/capstan-dev/capstan/api/bootstrap/kubeadm/v1beta1"
	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
)

// KubeadmControlPlaneTemplateSpec is the desired state of a KubeadmControlPlaneTemplate.
type KubeadmControlPlaneTemplateSpec struct {
	// template is what every KubeadmControlPlane cloned from this template starts from.
	// +required
	Template KubeadmControlPlaneTemplateResource `json:"template"`
}

// KubeadmControlPlaneTemplateResource is the KubeadmControlPlane a template describes.
type KubeadmControlPlaneTemplateResource struct {
	// metadata holds the labels and annotations of the KubeadmControlPlanes cloned from the template.
	// +optional
	ObjectMeta clusterv1.ObjectMeta `json:"metadata,omitempty"`

	// spec of the KubeadmControlPlanes cloned from the template. It is immutable: create a new template
	// instead.
	// +required
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="KubeadmControlPlaneTemplate spec.template.spec field is immutable. Please create new resource instead"
	Spec KubeadmControlPlaneTemplateResourceSpec `json:"spec"`
}

// KubeadmControlPlaneTemplateResourceSpec is a KubeadmControlPlaneSpec without replicas, version and the
// Machines' infrastructureRef, which the topology controller sets on the KubeadmControlPlanes it creates.
type KubeadmControlPlaneTemplateResourceSpec struct {
	// machineTemplate shapes the control plane Machines.
	// +optional
	MachineTemplate *KubeadmControlPlaneTemplateMachineTemplate `json:"machineTemplate,omitempty"`

	// kubeadmConfigSpec is the KubeadmConfig of the control plane Machines.
	// +required
	KubeadmConfigSpec bootstrapv1.KubeadmConfigSpec `json:"kubeadmConfigSpec"`

	// rolloutBefore rolls Machines out when its criteria are met.
	// +optional
	RolloutBefore *RolloutBefore `json:"rolloutBefore,omitempty"`

	// rolloutAfter rolls every Machine out once this time has passed, even when nothing else changed.
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

// KubeadmControlPlaneTemplateMachineTemplate is a KubeadmControlPlaneMachineTemplate without the
// infrastructureRef, which the topology controller sets.
type KubeadmControlPlaneTemplateMachineTemplate struct {
	// metadata holds the labels and annotations of the Machines.
	// +optional
	ObjectMeta clusterv1.ObjectMeta `json:"metadata,omitempty"`

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

// +kubebuilder:object:root=true
// +kubebuilder:resource:path=kubeadmcontrolplanetemplates,scope=Namespaced,categories=cluster-api
// +kubebuilder:storageversion
// +kubebuilder:metadata:labels="cluster.x-k8s.io/v1beta1=v1beta1"
// +kubebuilder:printcolumn:name="Age",type="date",JSONPath=".metadata.creationTimestamp",description="Time duration since creation of KubeadmControlPlaneTemplate"

// KubeadmControlPlaneTemplate is the template a ClusterClass's control plane is cloned from.
type KubeadmControlPlaneTemplate struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec is the desired state of the KubeadmControlPlaneTemplate.
	// +optional
	Spec KubeadmControlPlaneTemplateSpec `json:"spec,omitempty"`
}

// +kubebuilder:object:root=true

// KubeadmControlPlaneTemplateList is a list of KubeadmControlPlaneTemplates.
type KubeadmControlPlaneTemplateList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []KubeadmControlPlaneTemplate `json:"items"`
}
