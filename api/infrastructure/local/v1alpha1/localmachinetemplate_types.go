package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
)

// LocalMachineTemplateSpec is the desired state of a LocalMachineTemplate.
type LocalMachineTemplateSpec struct {
	// template is what LocalMachines created from this template look like.
	Template LocalMachineTemplateResource `json:"template"`
}

// LocalMachineTemplateResource is the metadata and spec of the LocalMachines created from a template.
type LocalMachineTemplateResource struct {
	// metadata holds the labels and annotations given to the LocalMachines created from the template.
	// +optional
	ObjectMeta clusterv1.ObjectMeta `json:"metadata,omitempty"`

	// spec is the spec of the LocalMachines created from the template. Leave providerID empty.
	Spec LocalMachineSpec `json:"spec"`
}

// +kubebuilder:object:root=true
// +kubebuilder:resource:path=localmachinetemplates,scope=Namespaced,categories=cluster-api
// +kubebuilder:storageversion
// +kubebuilder:metadata:labels="cluster.x-k8s.io/v1beta1=v1alpha1"
// +kubebuilder:printcolumn:name="Age",type="date",JSONPath=".metadata.creationTimestamp",description="Time since the LocalMachineTemplate was created"

// LocalMachineTemplate is a template for LocalMachines, used by MachineDeployments, MachineSets and
// ClusterClasses.
type LocalMachineTemplate struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec is the desired state of the LocalMachineTemplate.
	// +optional
	Spec LocalMachineTemplateSpec `json:"spec,omitempty"`
}

// +kubebuilder:object:root=true

// LocalMachineTemplateList is a list of LocalMachineTemplates.
type LocalMachineTemplateList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []LocalMachineTemplate `json:"items"`
}
