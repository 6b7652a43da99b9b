// Package v1alpha1 holds the ipam.cluster.x-k8s.io/v1alpha1 API: IPAddressClaim and IPAddress as the first
// IPAM contract had them, before clusterName and the v1beta2 conditions. Upstream Cluster API still serves it
// for IPAM providers written against it; so does capstan. It is not stored: the API server converts every
// v1alpha1 object to the storage version through the core manager's conversion webhook
// (internal/conversion), which keeps what v1alpha1 cannot express. The schemas match upstream Cluster API
// v1.10 field for field; the validation upstream does in admission webhooks is expressed here as CEL rules,
// the same as v1beta1's.
//
// +kubebuilder:object:generate=true
// +groupName=ipam.cluster.x-k8s.io
package v1alpha1
