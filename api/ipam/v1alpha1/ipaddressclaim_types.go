package v1alpha1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
)

// IPAddressClaimSpec is the desired state of an IPAddressClaim. It cannot change once created. v1alpha1 has
// no clusterName: the claim's Cluster is its cluster.x-k8s.io/cluster-name label.
// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="IPAddressClaim spec is immutable: delete the IPAddressClaim and create a new one"
type IPAddressClaimSpec struct {
	// poolRef is the pool to allocate an address from; it must name the pool's API group.
	// +required
	// +kubebuilder:validation:XValidation:rule="has(self.apiGroup)",message="the pool reference needs to contain a group (apiGroup)"
	PoolRef corev1.TypedLocalObjectReference `json:"poolRef"`
}

// IPAddressClaimStatus is the observed state of an IPAddressClaim.
type IPAddressClaimStatus struct {
	// addressRef names the IPAddress allocated for the claim; empty until the claim is bound.
	// +optional
	AddressRef corev1.LocalObjectReference `json:"addressRef,omitempty"`

	// conditions are the conditions of the claim, set by the IPAM provider.
	// +optional
	Conditions clusterv1.Conditions `json:"conditions,omitempty"`
}

// +kubebuilder:object:root=true
// +kubebuilder:resource:path=ipaddressclaims,scope=Namespaced,categories=cluster-api
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="Pool Name",type="string",JSONPath=".spec.poolRef.name",description="Name of the pool to allocate an address from"
// +kubebuilder:printcolumn:name="Pool Kind",type="string",JSONPath=".spec.poolRef.kind",description="Kind of the pool to allocate an address from"
// +kubebuilder:printcolumn:name="Age",type="date",JSONPath=".metadata.creationTimestamp",description="Time duration since creation of IPAdressClaim"

// IPAddressClaim asks an IPAM provider for an address from a pool; the provider answers with an
// IPAddress of the same name and sets status.addressRef ("bound").
type IPAddressClaim struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec is the desired state of the IPAddressClaim.
	// +optional
	Spec IPAddressClaimSpec `json:"spec,omitempty"`
	// status is the observed state of the IPAddressClaim.
	// +optional
	Status IPAddressClaimStatus `json:"status,omitempty"`
}

// GetConditions returns the conditions.
func (c *IPAddressClaim) GetConditions() clusterv1.Conditions { return c.Status.Conditions }

// SetConditions sets the conditions.
func (c *IPAddressClaim) SetConditions(conditions clusterv1.Conditions) {
	c.Status.Conditions = conditions
}

// +kubebuilder:object:root=true

// IPAddressClaimList is a list of IPAddressClaims.
type IPAddressClaimList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	// items are the IPAddressClaims.
	Items []IPAddressClaim `json:"items"`
}
