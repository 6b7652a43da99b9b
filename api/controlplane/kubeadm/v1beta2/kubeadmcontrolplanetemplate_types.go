package v1beta2

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	bootstrapv1 "github.com/capstan-dev/capstan/api/bootstrap/kubeadm/v1beta2"
	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta2"
)

// KubeadmControlPlaneTemplateSpec is the desired state of a KubeadmControlPlaneTemplate.
type KubeadmControlPlaneTemplateSpec struct {
	// template is what every KubeadmControlPlane cloned from this template starts from.
	// +required
	Template KubeadmControlPlaneTemplateResource `json:"template,omitempty,omitzero"`
}

// +kubebuilder:object:root=true
// +kubebuilder:resource:path=kubeadmcontrolplanetemplates,scope=Namespaced,categories=cluster-api
// +kubebuilder:printcolumn:name="ClusterClass",type="string",JSONPath=`.metadata.ownerReferences[?(@.kind=="ClusterClass")].name`,description="Name of the ClusterClass owning this template"
// +kubebuilder:printcolumn:name="Age",type="date",JSONPath=".metadata.creationTimestamp",description="Time duration since creation of KubeadmControlPlaneTemplate"

// KubeadmControlPlaneTemplate is the template a ClusterClass's control plane is cloned from.
type KubeadmControlPlaneTemplate struct {
	metav1.TypeMeta `json:",inline"`
	// metadata of the KubeadmControlPlaneTemplate.
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec is the desired state of the KubeadmControlPlaneTemplate.
	// +optional
	Spec KubeadmControlPlaneTemplateSpec `json:"spec,omitempty,omitzero"`
}

// +kubebuilder:object:root=true

// KubeadmControlPlaneTemplateList is a list of KubeadmControlPlaneTemplates.
type KubeadmControlPlaneTemplateList struct {
	metav1.TypeMeta `json:",inline"`
	// +optional
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []KubeadmControlPlaneTemplate `json:"items"`
}

// KubeadmControlPlaneTemplateResource is the KubeadmControlPlane a template describes.
// +kubebuilder:validation:MinProperties=1
type KubeadmControlPlaneTemplateResource struct {
	// metadata holds the labels and annotations of the KubeadmControlPlanes cloned from the template.
	// +optional
	ObjectMeta clusterv1.ObjectMeta `json:"metadata,omitempty,omitzero"`

	// spec of the KubeadmControlPlanes cloned from the template. It is immutable: create a new template
	// instead.
	// +optional
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="KubeadmControlPlaneTemplate spec.template.spec field is immutable. Please create new resource instead"
	Spec KubeadmControlPlaneTemplateResourceSpec `json:"spec,omitempty,omitzero"`
}

// KubeadmControlPlaneTemplateResourceSpec is a KubeadmControlPlaneSpec without replicas, version and the
// Machines' infrastructureRef, which the topology controller sets on the KubeadmControlPlanes it creates.
// +kubebuilder:validation:MinProperties=1
type KubeadmControlPlaneTemplateResourceSpec struct {
	// machineTemplate shapes the control plane Machines.
	// +optional
	MachineTemplate KubeadmControlPlaneTemplateMachineTemplate `json:"machineTemplate,omitempty,omitzero"`

	// kubeadmConfigSpec is the KubeadmConfig of the control plane Machines.
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

// KubeadmControlPlaneTemplateMachineTemplate is a KubeadmControlPlaneMachineTemplate without the
// infrastructureRef, which the topology controller sets.
// +kubebuilder:validation:MinProperties=1
type KubeadmControlPlaneTemplateMachineTemplate struct {
	// metadata holds the labels and annotations of the Machines.
	// +optional
	ObjectMeta clusterv1.ObjectMeta `json:"metadata,omitempty,omitzero"`

	// spec is the part of the Machines' spec the template sets.
	// +optional
	Spec KubeadmControlPlaneTemplateMachineTemplateSpec `json:"spec,omitempty,omitzero"`
}

// KubeadmControlPlaneTemplateMachineTemplateSpec is a KubeadmControlPlaneMachineTemplateSpec without the
// infrastructureRef and readinessGates.
// +kubebuilder:validation:MinProperties=1
type KubeadmControlPlaneTemplateMachineTemplateSpec struct {
	// deletion holds the timeouts of the control plane Machines' deletion.
	// +optional
	Deletion KubeadmControlPlaneTemplateMachineTemplateDeletionSpec `json:"deletion,omitempty,omitzero"`

	// taints are put on the control plane Machines' Nodes.
	// +optional
	// +listType=map
	// +listMapKey=key
	// +listMapKey=effect
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=64
	Taints []clusterv1.MachineTaint `json:"taints,omitempty"`
}

// KubeadmControlPlaneTemplateMachineTemplateDeletionSpec holds the timeouts of the control plane
// Machines' deletion.
// +kubebuilder:validation:MinProperties=1
type KubeadmControlPlaneTemplateMachineTemplateDeletionSpec struct {
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
