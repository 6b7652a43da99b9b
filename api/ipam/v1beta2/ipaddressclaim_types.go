package v1beta2

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta2"
)

// IPAddressClaimSpec is the desired state of an IPAddressClaim. It cannot change once created.
// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="IPAddressClaim spec is immutable: delete the IPAddressClaim and create a new one"
type IPAddressClaimSpec struct {
	// clusterName is the name of the Cluster the claim belongs to (the cluster.x-k8s.io/cluster-name label
	// is read too).
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	ClusterName string `json:"clusterName,omitempty"`

	// poolRef is the pool to allocate an address from; it must name the pool's API group.
	// +required
	PoolRef IPPoolReference `json:"poolRef,omitempty,omitzero"`
}

// IPAddressClaimStatus is the observed state of an IPAddressClaim.
// +kubebuilder:validation:MinProperties=1
type IPAddressClaimStatus struct {
	// conditions of the claim, set by the IPAM provider: Ready.
	// +optional
	// +listType=map
	// +listMapKey=type
	// +kubebuilder:validation:MaxItems=32
	Conditions []metav1.Condition `json:"conditions,omitempty"`

	// addressRef names the IPAddress allocated for the claim; empty until the claim is bound.
	// +optional
	AddressRef IPAddressReference `json:"addressRef,omitempty,omitzero"`

	// deprecated groups the status fields that go away with v1beta1.
	// +optional
	Deprecated *IPAddressClaimDeprecatedStatus `json:"deprecated,omitempty"`
}

// IPAddressReference names an IPAddress of the same namespace.
type IPAddressReference struct {
	// name of the IPAddress.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`
	Name string `json:"name,omitempty"`
}

// IPAddressClaimDeprecatedStatus groups the status fields that go away with v1beta1.
type IPAddressClaimDeprecatedStatus struct {
	// v1beta1 holds the status fields of v1beta1.
	// +optional
	V1Beta1 *IPAddressClaimV1Beta1DeprecatedStatus `json:"v1beta1,omitempty"`
}

// IPAddressClaimV1Beta1DeprecatedStatus is the status of v1beta1 that v1beta2 does not have.
type IPAddressClaimV1Beta1DeprecatedStatus struct {
	// conditions are the v1beta1 conditions.
	// +optional
	Conditions clusterv1.Conditions `json:"conditions,omitempty"`
}

// +kubebuilder:object:root=true
// +kubebuilder:resource:path=ipaddressclaims,scope=Namespaced,categories=cluster-api
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="Pool Name",type="string",JSONPath=".spec.poolRef.name",description="Name of the pool to allocate an address from"
// +kubebuilder:printcolumn:name="Pool Kind",type="string",JSONPath=".spec.poolRef.kind",description="Kind of the pool to allocate an address from"
// +kubebuilder:printcolumn:name="Age",type="date",JSONPath=".metadata.creationTimestamp",description="Time duration since creation of IPAddressClaim"

// IPAddressClaim asks an IPAM provider for an address from a pool; the provider answers with an
// IPAddress of the same name and sets status.addressRef ("bound").
type IPAddressClaim struct {
	metav1.TypeMeta `json:",inline"`
	// metadata of the IPAddressClaim.
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec is the desired state of the IPAddressClaim.
	// +required
	Spec IPAddressClaimSpec `json:"spec,omitempty,omitzero"`
	// status is the observed state of the IPAddressClaim.
	// +optional
	Status IPAddressClaimStatus `json:"status,omitempty,omitzero"`
}

// +kubebuilder:object:root=true

// IPAddressClaimList is a list of IPAddressClaims.
type IPAddressClaimList struct {
	metav1.TypeMeta `json:",inline"`
	// +optional
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []IPAddressClaim `json:"items"`
}
