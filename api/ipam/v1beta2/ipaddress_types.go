package v1beta2

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// IPAddressSpec is the desired state of an IPAddress. It cannot change once created.
// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="IPAddress spec is immutable: delete the IPAddress and create a new one"
// +kubebuilder:validation:XValidation:rule="!has(self.address) || !has(self.prefix) || !isIP(self.address) || self.prefix <= (ip(self.address).family() == 4 ? 32 : 128)",message="prefix is too large for the address (at most 32 for IPv4, 128 for IPv6)",fieldPath=".prefix"
type IPAddressSpec struct {
	// claimRef is the IPAddressClaim this address was allocated for.
	// +required
	ClaimRef IPAddressClaimReference `json:"claimRef,omitempty,omitzero"`

	// poolRef is the pool the address was allocated from; it must name the pool's API group.
	// +required
	PoolRef IPPoolReference `json:"poolRef,omitempty,omitzero"`

	// address is the IP address.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=39
	// +kubebuilder:validation:XValidation:rule="isIP(self)",message="not a valid IP address"
	Address string `json:"address,omitempty"`

	// prefix is the length of the network prefix of the address.
	// +required
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=128
	Prefix *int32 `json:"prefix,omitempty"`

	// gateway is the gateway of the address's network.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=39
	// +kubebuilder:validation:XValidation:rule="isIP(self)",message="not a valid IP address"
	Gateway string `json:"gateway,omitempty"`
}

// IPAddressClaimReference names an IPAddressClaim of the same namespace.
type IPAddressClaimReference struct {
	// name of the IPAddressClaim.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`
	Name string `json:"name,omitempty"`
}

// IPPoolReference names an IP pool of the same namespace, with its kind and API group.
type IPPoolReference struct {
	// name of the pool.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`
	Name string `json:"name,omitempty"`

	// kind of the pool.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:Pattern=`^[a-zA-Z]([-a-zA-Z0-9]*[a-zA-Z0-9])?$`
	Kind string `json:"kind,omitempty"`

	// apiGroup of the pool.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`
	APIGroup string `json:"apiGroup,omitempty"`
}

// +kubebuilder:object:root=true
// +kubebuilder:resource:path=ipaddresses,scope=Namespaced,categories=cluster-api
// +kubebuilder:printcolumn:name="Address",type="string",JSONPath=".spec.address",description="Address"
// +kubebuilder:printcolumn:name="Pool Name",type="string",JSONPath=".spec.poolRef.name",description="Name of the pool the address is from"
// +kubebuilder:printcolumn:name="Pool Kind",type="string",JSONPath=".spec.poolRef.kind",description="Kind of the pool the address is from"
// +kubebuilder:printcolumn:name="Age",type="date",JSONPath=".metadata.creationTimestamp",description="Time duration since creation of IPAddress"

// IPAddress is an address an IPAM provider allocated for an IPAddressClaim; it has the claim's name and is
// owned by it.
type IPAddress struct {
	metav1.TypeMeta `json:",inline"`
	// metadata of the IPAddress.
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec is the desired state of the IPAddress.
	// +required
	Spec IPAddressSpec `json:"spec,omitempty,omitzero"`
}

// +kubebuilder:object:root=true

// IPAddressList is a list of IPAddresses.
type IPAddressList struct {
	metav1.TypeMeta `json:",inline"`
	// +optional
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []IPAddress `json:"items"`
}
