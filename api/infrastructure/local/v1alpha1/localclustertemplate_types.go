package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
)

// LocalClusterTemplateSpec is the desired state of a LocalClusterTemplate.
type LocalClusterTemplateSpec struct {
	// template is what LocalClusters created from this template look like.
	Template LocalClusterTemplateResource `json:"template"`
}

// LocalClusterTemplateResource is the metadata and spec of the LocalClusters created from a template.
type LocalClusterTemplateResource struct {
	// metadata holds the labels and annotations given to the LocalClusters created from the template.
	// +optional
	ObjectMeta clusterv1.ObjectMeta `json:"metadata,omitempty"`

	// spec is the spec of the LocalClusters created from the template. Leave controlPlaneEndpoint empty:
	// each LocalCluster gets its own port.
	Spec LocalClusterSpec `json:"spec"`
}

// +kubebuilder:object:root=true
// +kubebuilder:resource:path=localclustertemplates,scope=Namespaced,categories=cluster-api
// +kubebuilder:storageversion
// +kubebuilder:metadata:labels="cluster.x-k8s.io/v1beta1=v1alpha1"
// +kubebuilder:printcolumn:name="Age",type="date",JSONPath=".metadata.creationTimestamp",description="Time since the LocalClusterTemplate was created"

// LocalClusterTemplate is a template for LocalClusters, used by ClusterClasses.
type LocalClusterTemplate struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec is the desired state of the LocalClusterTemplate.
	// +optional
	Spec LocalClusterTemplateSpec `json:"spec,omitempty"`
}

// +kubebuilder:object:root=true

// LocalClusterTemplateList is a list of LocalClusterTemplates.
type LocalClusterTemplateList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []LocalClusterTemplate `json:"items"`
}
