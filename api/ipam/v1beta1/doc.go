// Package v1beta1 holds the ipam.cluster.x-k8s.io/v1beta1 API: IPAddressClaim and IPAddress, the contract
// between infrastructure providers, which claim addresses, and IPAM providers, which allocate them. The
// schemas match upstream Cluster API v1.10 field for field; the validation upstream does in admission
// webhooks is expressed here as CEL rules where it needs no other object.
//
// +kubebuilder:object:generate=true
// +groupName=ipam.cluster.x-k8s.io
package v1beta1
