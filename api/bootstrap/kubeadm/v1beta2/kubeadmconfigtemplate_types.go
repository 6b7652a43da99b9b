package v1beta2

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta2"
)

// KubeadmConfigTemplateSpec is the desired state of a KubeadmConfigTemplate.
type KubeadmConfigTemplateSpec struct {
	// template is what every KubeadmConfig cloned from this template starts from.
	// +required
	Template KubeadmConfigTemplateResource `json:"template,omitempty,omitzero"`
}

// KubeadmConfigTemplateResource is the KubeadmConfig a template describes.
// +kubebuilder:validation:MinProperties=1
type KubeadmConfigTemplateResource struct {
	// metadata holds the labels and annotations of the KubeadmConfigs cloned from the template.
	// +optional
	ObjectMeta clusterv1.ObjectMeta `json:"metadata,omitempty,omitzero"`

	// spec of the KubeadmConfigs cloned from the template.
	// +optional
	Spec KubeadmConfigSpec `json:"spec,omitempty,omitzero"`
}

// +kubebuilder:object:root=true
// +kubebuilder:resource:path=kubeadmconfigtemplates,scope=Namespaced,categories=cluster-api
// +kubebuilder:printcolumn:name="ClusterClass",type="string",JSONPath=`.metadata.ownerReferences[?(@.kind=="ClusterClass")].name`,description="Name of the ClusterClass owning this template"
// +kubebuilder:printcolumn:name="Cluster",type="string",JSONPath=`.metadata.ownerReferences[?(@.kind=="Cluster")].name`,description="Name of the Cluster owning this template"
// +kubebuilder:printcolumn:name="Age",type="date",JSONPath=".metadata.creationTimestamp",description="Time duration since creation of KubeadmConfigTemplate"

// KubeadmConfigTemplate is the template MachineDeployments, MachineSets and MachinePools clone a
// KubeadmConfig from for each of their Machines.
type KubeadmConfigTemplate struct {
	metav1.TypeMeta `json:",inline"`
	// metadata of the KubeadmConfigTemplate.
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec is the desired state of the KubeadmConfigTemplate.
	// +optional
	Spec KubeadmConfigTemplateSpec `json:"spec,omitempty,omitzero"`
}

// +kubebuilder:object:root=true

// KubeadmConfigTemplateList is a list of KubeadmConfigTemplates.
type KubeadmConfigTemplateList struct {
	metav1.TypeMeta `json:",inline"`
	// +optional
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []KubeadmConfigTemplate `json:"items"`
}
