// Package v1beta1 holds the bootstrap.cluster.x-k8s.io/v1beta1 API of the kubeadm bootstrap provider:
// KubeadmConfig, KubeadmConfigTemplate and the kubeadm configuration types they embed (ClusterConfiguration,
// InitConfiguration, JoinConfiguration), which the control plane provider's KubeadmControlPlane embeds too.
// The schemas match upstream Cluster API v1.10 field for field, so existing manifests are accepted unchanged;
// validation that upstream does in admission webhooks is expressed here as OpenAPI and CEL rules where the
// rule needs nothing but the object itself.
//
// +kubebuilder:object:generate=true
// +k8s:conversion-gen=github.com/capstan-dev/capstan/api/bootstrap/kubeadm/v1beta2
// +k8s:conversion-gen=github.com/capstan-dev/capstan/api/core/v1beta1
// +groupName=bootstrap.cluster.x-k8s.io
package v1beta1
