package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
)

// BeforeClusterCreateRequest is the request of the BeforeClusterCreate hook, called before the objects of
// a Cluster's topology are created.
// +kubebuilder:object:root=true
type BeforeClusterCreateRequest struct {
	metav1.TypeMeta `json:",inline"`

	// CommonRequest contains fields common to all request types.
	CommonRequest `json:",inline"`

	// cluster is the cluster object the lifecycle hook corresponds to.
	// +required
	Cluster clusterv1.Cluster `json:"cluster"`
}

var _ RetryResponseObject = &BeforeClusterCreateResponse{}

// BeforeClusterCreateResponse is the response of the BeforeClusterCreate hook; a non-zero
// retryAfterSeconds holds the creation of the topology.
// +kubebuilder:object:root=true
type BeforeClusterCreateResponse struct {
	metav1.TypeMeta `json:",inline"`

	// CommonRetryResponse contains Status, Message and RetryAfterSeconds fields.
	CommonRetryResponse `json:",inline"`
}

// AfterControlPlaneInitializedRequest is the request of the AfterControlPlaneInitialized hook, called once
// after the control plane of a Cluster is initialized.
// +kubebuilder:object:root=true
type AfterControlPlaneInitializedRequest struct {
	metav1.TypeMeta `json:",inline"`

	// CommonRequest contains fields common to all request types.
	CommonRequest `json:",inline"`

	// cluster is the cluster object the lifecycle hook corresponds to.
	// +required
	Cluster clusterv1.Cluster `json:"cluster"`
}

var _ ResponseObject = &AfterControlPlaneInitializedResponse{}

// AfterControlPlaneInitializedResponse is the response of the AfterControlPlaneInitialized hook, which
// does not block.
// +kubebuilder:object:root=true
type AfterControlPlaneInitializedResponse struct {
	metav1.TypeMeta `json:",inline"`

	// CommonResponse contains Status and Message fields common to all response types.
	CommonResponse `json:",inline"`
}

// BeforeClusterUpgradeRequest is the request of the BeforeClusterUpgrade hook, called before a new
// spec.topology.version is propagated to the control plane.
// +kubebuilder:object:root=true
type BeforeClusterUpgradeRequest struct {
	metav1.TypeMeta `json:",inline"`

	// CommonRequest contains fields common to all request types.
	CommonRequest `json:",inline"`

	// cluster is the cluster object the lifecycle hook corresponds to.
	// +required
	Cluster clusterv1.Cluster `json:"cluster"`

	// fromKubernetesVersion is the current Kubernetes version of the cluster.
	// +required
	FromKubernetesVersion string `json:"fromKubernetesVersion"`

	// toKubernetesVersion is the target Kubernetes version of the upgrade.
	// +required
	ToKubernetesVersion string `json:"toKubernetesVersion"`
}

var _ RetryResponseObject = &BeforeClusterUpgradeResponse{}

// BeforeClusterUpgradeResponse is the response of the BeforeClusterUpgrade hook; a non-zero
// retryAfterSeconds holds the upgrade.
// +kubebuilder:object:root=true
type BeforeClusterUpgradeResponse struct {
	metav1.TypeMeta `json:",inline"`

	// CommonRetryResponse contains Status, Message and RetryAfterSeconds fields.
	CommonRetryResponse `json:",inline"`
}

// AfterControlPlaneUpgradeRequest is the request of the AfterControlPlaneUpgrade hook, called after the
// control plane reached the new version and before the workers are upgraded.
// +kubebuilder:object:root=true
type AfterControlPlaneUpgradeRequest struct {
	metav1.TypeMeta `json:",inline"`

	// CommonRequest contains fields common to all request types.
	CommonRequest `json:",inline"`

	// cluster is the cluster object the lifecycle hook corresponds to.
	// +required
	Cluster clusterv1.Cluster `json:"cluster"`

	// kubernetesVersion is the Kubernetes version of the Control Plane after the upgrade.
	// +required
	KubernetesVersion string `json:"kubernetesVersion"`
}

var _ RetryResponseObject = &AfterControlPlaneUpgradeResponse{}

// AfterControlPlaneUpgradeResponse is the response of the AfterControlPlaneUpgrade hook; a non-zero
// retryAfterSeconds holds the upgrade of the workers.
// +kubebuilder:object:root=true
type AfterControlPlaneUpgradeResponse struct {
	metav1.TypeMeta `json:",inline"`

	// CommonRetryResponse contains Status, Message and RetryAfterSeconds fields.
	CommonRetryResponse `json:",inline"`
}

// AfterClusterUpgradeRequest is the request of the AfterClusterUpgrade hook, called once after the control
// plane and every worker reached the new version.
// +kubebuilder:object:root=true
type AfterClusterUpgradeRequest struct {
	metav1.TypeMeta `json:",inline"`

	// CommonRequest contains fields common to all request types.
	CommonRequest `json:",inline"`

	// cluster is the cluster object the lifecycle hook corresponds to.
	// +required
	Cluster clusterv1.Cluster `json:"cluster"`

	// kubernetesVersion is the Kubernetes version after upgrade.
	// +required
	KubernetesVersion string `json:"kubernetesVersion"`
}

var _ ResponseObject = &AfterClusterUpgradeResponse{}

// AfterClusterUpgradeResponse is the response of the AfterClusterUpgrade hook, which does not block.
// +kubebuilder:object:root=true
type AfterClusterUpgradeResponse struct {
	metav1.TypeMeta `json:",inline"`

	// CommonResponse contains Status and Message fields common to all response types.
	CommonResponse `json:",inline"`
}

// BeforeClusterDeleteRequest is the request of the BeforeClusterDelete hook, called before the objects of
// a deleted Cluster are deleted.
// +kubebuilder:object:root=true
type BeforeClusterDeleteRequest struct {
	metav1.TypeMeta `json:",inline"`

	// CommonRequest contains fields common to all request types.
	CommonRequest `json:",inline"`

	// cluster is the cluster object the lifecycle hook corresponds to.
	// +required
	Cluster clusterv1.Cluster `json:"cluster"`
}

var _ RetryResponseObject = &BeforeClusterDeleteResponse{}

// BeforeClusterDeleteResponse is the response of the BeforeClusterDelete hook; a non-zero
// retryAfterSeconds holds the deletion.
// +kubebuilder:object:root=true
type BeforeClusterDeleteResponse struct {
	metav1.TypeMeta `json:",inline"`

	// CommonRetryResponse contains Status, Message and RetryAfterSeconds fields.
	CommonRetryResponse `json:",inline"`
}
