// Package v1beta1 holds the addons.cluster.x-k8s.io/v1beta1 API: ClusterResourceSet and
// ClusterResourceSetBinding. The schemas match upstream Cluster API v1.10 field for field; the validation
// upstream does in admission webhooks is expressed here as CEL rules.
//
// +kubebuilder:object:generate=true
// +groupName=addons.cluster.x-k8s.io
package v1beta1
