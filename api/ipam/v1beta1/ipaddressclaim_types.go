package v1beta1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
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
	// +kubebuilder:validation:XValidation:rule="has(self.apiGroup)",message="the pool reference needs to contain a group (apiGroup)"
	PoolRef corev1.TypedLocalObjectReference `json:"poolRef"`
}

// IPAddressClaimStatus is the observed state of an IPAddressClaim.
type IPAddressClaimStatus struct {
	// addressRef names the IPAddress allocated for the claim; empty until the claim is bound.
	// +optional
	AddressRef corev1.LocalObjectReference `json:"addressRef,omitempty"`

	// conditions are the v1beta1 conditions of the claim, set by the IPAM provider.
	// +optional
	Conditions clusterv1.Conditions `json:"conditions,omitempty"`

	// v1beta2 holds the fields of the v1beta2 API.
	// +optional
	V1Beta2 *IPAddressClaimV1Beta2Status `json:"v1beta2,omitempty"`
}

// IPAddressClaimV1Beta2Status holds the status fields of the v1beta2 API.
type IPAddressClaimV1Beta2Status struct {
	// conditions are the v1beta2 conditions of the claim, set by the IPAM provider.
	// +optional
	// +listType=map
	// +listMapKey=type
	// +kubebuilder:validation:MaxItems=32
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// The reasons an IPAM provider gives in a claim's False Ready condition.
const (
	// AllocationFailedReason is used when allocating an address failed.
	AllocationFailedReason = "AllocationFailed"
	// PoolNotReadyReason is used when the pool is not ready.
	PoolNotReadyReason = "PoolNotReady"
	// PoolExhaustedReason is used when the pool has no free address.
	PoolExhaustedReason = "PoolExhausted"
)

// +kubebuilder:object:root=true
// +kubebuilder:resource:path=ipaddressclaims,scope=Namespaced,categories=cluster-api
// +kubebuilder:subresource:status
// +kubebuilder:storageversion
// +kubebuilder:metadata:labels="cluster.x-k8s.io/v1beta1=v1beta1"
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

// IsBound reports whether an IPAddress was allocated for the claim.
func (c *IPAddressClaim) IsBound() bool { return c.Status.AddressRef.Name != "" }

// GetConditions returns the v1beta1 conditions.
func (c *IPAddressClaim) GetConditions() clusterv1.Conditions { return c.Status.Conditions }

// SetConditions sets the v1beta1 conditions.
func (c *IPAddressClaim) SetConditions(conditions clusterv1.Conditions) {
	c.Status.Conditions = conditions
}

// GetV1Beta2Conditions returns the v1beta2 conditions.
func (c *IPAddressClaim) GetV1Beta2Conditions() []metav1.Condition {
	if c.Status.V1Beta2 == nil {
		return nil
	}
	return c.Status.V1Beta2.Conditions
}

// SetV1Beta2Conditions sets the v1beta2 conditions.
func (c *IPAddressClaim) SetV1Beta2Conditions(conditions []metav1.Condition) {
	if c.Status.V1Beta2 == nil {
		c.Status.V1Beta2 = &IPAddressClaimV1Beta2Status{}
	}
	c.Status.V1Beta2.Conditions = conditions
}

// +kubebuilder:object:root=true

// IPAddressClaimList is a list of IPAddressClaims.
type IPAddressClaimList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	// items are the IPAddressClaims.
	Items []IPAddressClaim `json:"items"`
}
