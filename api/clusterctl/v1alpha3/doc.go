// Package v1alpha3 holds the clusterctl.cluster.x-k8s.io/v1alpha3 API: Provider, the inventory object that
// clusterctl creates for each installed provider, and Metadata, the type of a provider's metadata.yaml.
//
// +kubebuilder:object:generate=true
// +groupName=clusterctl.cluster.x-k8s.io
package v1alpha3
