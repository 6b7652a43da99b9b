package v1alpha1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// IPAddressSpec is the desired state of an IPAddress. It cannot change once created.
// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="IPAddress spec is immutable: delete the IPAddress and create a new one"
// +kubebuilder:validation:XValidation:rule="!isIP(self.address) || self.prefix <= (ip(self.address).family() == 4 ? 32 : 128)",message="prefix is too large for the address (at most 32 for IPv4, 128 for IPv6)",fieldPath=".prefix"
type IPAddressSpec struct {
	// claimRef is the IPAddressClaim this address was allocated for.
	// +required
	ClaimRef corev1.LocalObjectReference `json:"claimRef"`

	// poolRef is the pool the address was allocated from; it must name the pool's API group.
	// +required
	// +kubebuilder:validation:XValidation:rule="has(self.apiGroup)",message="the pool reference needs to contain a group (apiGroup)"
	PoolRef corev1.TypedLocalObjectReference `json:"poolRef"`

	// address is the IP address.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=39
	// +kubebuilder:validation:XValidation:rule="isIP(self)",message="not a valid IP address"
	Address string `json:"address"`

	// prefix is the length of the network prefix of the address.
	// +required
	// +kubebuilder:validation:XValidation:rule="self >= 0",message="prefix cannot be negative"
	Prefix int `json:"prefix"`

	// gateway is the gateway of the address's network.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=39
	// +kubebuilder:validation:XValidation:rule="isIP(self)",message="not a valid IP address"
	Gateway string `json:"gateway,omitempty"`
}

// +kubebuilder:object:root=true
// +kubebuilder:resource:path=ipaddresses,scope=Namespaced,categories=cluster-api
// +kubebuilder:printcolumn:name="Address",type="string",JSONPath=".spec.address",description="Address"
// +kubebuilder:printcolumn:name="Pool Name",type="string",JSONPath=".spec.poolRef.name",description="Name of the pool the address is from"
// +kubebuilder:printcolumn:name="Pool Kind",type="string",JSONPath=".spec.poolRef.kind",description="Kind of the pool the address is from"
// +kubebuilder:printcolumn:name="Age",type="date",JSONPath=".metadata.creationTimestamp",description="Time duration since creation of IPAdress"

// IPAddress is an address an IPAM provider allocated for an IPAddressClaim; it has the claim's name and is
// owned by it.
type IPAddress struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec is the desired state of the IPAddress.
	// +optional
	Spec IPAddressSpec `json:"spec,omitempty"`
}

// +kubebuilder:object:root=true

// IPAddressList is a list of IPAddresses.
type IPAddressList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	// items are the IPAddresses.
	Items []IPAddress `json:"items"`
}
