package v1beta1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
)

// KubeadmConfigTemplateSpec is the desired state of a KubeadmConfigTemplate.
type KubeadmConfigTemplateSpec struct {
	// template is what every KubeadmConfig cloned from this template starts from.
	// +required
	Template KubeadmConfigTemplateResource `json:"template"`
}

// KubeadmConfigTemplateResource is the KubeadmConfig a template describes.
type KubeadmConfigTemplateResource struct {
	// metadata holds the labels and annotations of the KubeadmConfigs cloned from the template.
	// +optional
	ObjectMeta clusterv1.ObjectMeta `json:"metadata,omitempty"`

	// spec of the KubeadmConfigs cloned from the template.
	// +optional
	Spec KubeadmConfigSpec `json:"spec,omitempty"`
}

// +kubebuilder:object:root=true
// +kubebuilder:resource:path=kubeadmconfigtemplates,scope=Namespaced,categories=cluster-api
// +kubebuilder:storageversion
// +kubebuilder:metadata:labels="cluster.x-k8s.io/v1beta1=v1beta1"
// +kubebuilder:printcolumn:name="Age",type="date",JSONPath=".metadata.creationTimestamp",description="Time duration since creation of KubeadmConfigTemplate"

// KubeadmConfigTemplate is the template MachineDeployments, MachineSets and MachinePools clone a
// KubeadmConfig from for each of their Machines.
type KubeadmConfigTemplate struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec is the desired state of the KubeadmConfigTemplate.
	// +optional
	Spec KubeadmConfigTemplateSpec `json:"spec,omitempty"`
}

// +kubebuilder:object:root=true

// KubeadmConfigTemplateList is a list of KubeadmConfigTemplates.
type KubeadmConfigTemplateList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []KubeadmConfigTemplate `json:"items"`
}
