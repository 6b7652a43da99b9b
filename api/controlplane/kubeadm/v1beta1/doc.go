// Package v1beta1 holds the controlplane.cluster.x-k8s.io/v1beta1 API of the kubeadm control plane
// provider: KubeadmControlPlane and KubeadmControlPlaneTemplate. The schemas match upstream Cluster API
// v1.10 field for field, so existing manifests are accepted unchanged; validation that upstream does in
// admission webhooks is expressed here as OpenAPI and CEL rules where the rule needs nothing but the object
// itself.
//
// +kubebuilder:object:generate=true
// +k8s:conversion-gen=github.com/capstan-dev/capstan/api/controlplane/kubeadm/v1beta2
// +groupName=controlplane.cluster.x-k8s.io
package v1beta1
