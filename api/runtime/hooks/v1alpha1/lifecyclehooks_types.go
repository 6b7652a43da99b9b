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

	// controlPlaneUpgrades is the list of version upgrade steps for the control plane.
	// +optional
	ControlPlaneUpgrades []UpgradeStepInfo `json:"controlPlaneUpgrades,omitempty"`

	// workersUpgrades is the list of version upgrade steps for the workers.
	// +optional
	WorkersUpgrades []UpgradeStepInfo `json:"workersUpgrades,omitempty"`
}

// UpgradeStepInfo is one version of an upgrade plan, as the lifecycle hooks of upgrades tell it: the plan
// ends at the target version, which it lists too.
type UpgradeStepInfo struct {
	// version is the Kubernetes version for this upgrade step.
	// +required
	// +kubebuilder:validation:MinLength=1
	Version string `json:"version,omitempty"`
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

// BeforeControlPlaneUpgradeRequest is the request of the BeforeControlPlaneUpgrade hook, called before each
// version of the upgrade plan is propagated to the control plane (BeforeClusterUpgrade is called once,
// before the first).
// +kubebuilder:object:root=true
type BeforeControlPlaneUpgradeRequest struct {
	metav1.TypeMeta `json:",inline"`

	// CommonRequest contains fields common to all request types.
	CommonRequest `json:",inline"`

	// cluster is the cluster object the lifecycle hook corresponds to.
	// +required
	Cluster clusterv1.Cluster `json:"cluster"`

	// fromKubernetesVersion is the current Kubernetes version of the control plane for the next upgrade step.
	// +required
	FromKubernetesVersion string `json:"fromKubernetesVersion"`

	// toKubernetesVersion is the target Kubernetes version of the control plane for the next upgrade step.
	// +required
	ToKubernetesVersion string `json:"toKubernetesVersion"`

	// controlPlaneUpgrades is the list of the remaining version upgrade steps for the control plane, if any.
	// +optional
	ControlPlaneUpgrades []UpgradeStepInfo `json:"controlPlaneUpgrades,omitempty"`

	// workersUpgrades is the list of the remaining version upgrade steps for workers, if any.
	// +optional
	WorkersUpgrades []UpgradeStepInfo `json:"workersUpgrades,omitempty"`
}

var _ RetryResponseObject = &BeforeControlPlaneUpgradeResponse{}

// BeforeControlPlaneUpgradeResponse is the response of the BeforeControlPlaneUpgrade hook; a non-zero
// retryAfterSeconds holds the control plane at its version.
// +kubebuilder:object:root=true
type BeforeControlPlaneUpgradeResponse struct {
	metav1.TypeMeta `json:",inline"`

	// CommonRetryResponse contains Status, Message and RetryAfterSeconds fields.
	CommonRetryResponse `json:",inline"`
}

// AfterControlPlaneUpgradeRequest is the request of the AfterControlPlaneUpgrade hook, called after the
// control plane reached a version of the upgrade plan (or the target version) and before the workers or
// the control plane take the next one.
// +kubebuilder:object:root=true
type AfterControlPlaneUpgradeRequest struct {
	metav1.TypeMeta `json:",inline"`

	// CommonRequest contains fields common to all request types.
	CommonRequest `json:",inline"`

	// cluster is the cluster object the lifecycle hook corresponds to.
	// +required
	Cluster clusterv1.Cluster `json:"cluster"`

	// kubernetesVersion is the Kubernetes version of the control plane after an upgrade step.
	// +required
	KubernetesVersion string `json:"kubernetesVersion"`

	// controlPlaneUpgrades is the list of the remaining version upgrade steps for the control plane, if any.
	// +optional
	ControlPlaneUpgrades []UpgradeStepInfo `json:"controlPlaneUpgrades,omitempty"`

	// workersUpgrades is the list of the remaining version upgrade steps for workers, if any.
	// +optional
	WorkersUpgrades []UpgradeStepInfo `json:"workersUpgrades,omitempty"`
}

var _ RetryResponseObject = &AfterControlPlaneUpgradeResponse{}

// AfterControlPlaneUpgradeResponse is the response of the AfterControlPlaneUpgrade hook; a non-zero
// retryAfterSeconds holds the upgrade of the workers and the control plane's next step.
// +kubebuilder:object:root=true
type AfterControlPlaneUpgradeResponse struct {
	metav1.TypeMeta `json:",inline"`

	// CommonRetryResponse contains Status, Message and RetryAfterSeconds fields.
	CommonRetryResponse `json:",inline"`
}

// BeforeWorkersUpgradeRequest is the request of the BeforeWorkersUpgrade hook, called before a version of
// the upgrade plan (or the target version) is propagated to the workers, for the steps the workers take.
// +kubebuilder:object:root=true
type BeforeWorkersUpgradeRequest struct {
	metav1.TypeMeta `json:",inline"`

	// CommonRequest contains fields common to all request types.
	CommonRequest `json:",inline"`

	// cluster is the cluster object the lifecycle hook corresponds to.
	// +required
	Cluster clusterv1.Cluster `json:"cluster"`

	// fromKubernetesVersion is the current Kubernetes version of the workers for the next upgrade step.
	// +required
	FromKubernetesVersion string `json:"fromKubernetesVersion"`

	// toKubernetesVersion is the target Kubernetes version of the workers for the next upgrade step.
	// +required
	ToKubernetesVersion string `json:"toKubernetesVersion"`

	// controlPlaneUpgrades is the list of the remaining version upgrade steps for the control plane, if any.
	// +optional
	ControlPlaneUpgrades []UpgradeStepInfo `json:"controlPlaneUpgrades,omitempty"`

	// workersUpgrades is the list of the remaining version upgrade steps for workers, if any.
	// +optional
	WorkersUpgrades []UpgradeStepInfo `json:"workersUpgrades,omitempty"`
}

var _ RetryResponseObject = &BeforeWorkersUpgradeResponse{}

// BeforeWorkersUpgradeResponse is the response of the BeforeWorkersUpgrade hook; a non-zero
// retryAfterSeconds holds the workers at their version.
// +kubebuilder:object:root=true
type BeforeWorkersUpgradeResponse struct {
	metav1.TypeMeta `json:",inline"`

	// CommonRetryResponse contains Status, Message and RetryAfterSeconds fields.
	CommonRetryResponse `json:",inline"`
}

// AfterWorkersUpgradeRequest is the request of the AfterWorkersUpgrade hook, called after every worker
// reached a version of the upgrade plan (or the target version), before the control plane takes the next
// one or AfterClusterUpgrade is called.
// +kubebuilder:object:root=true
type AfterWorkersUpgradeRequest struct {
	metav1.TypeMeta `json:",inline"`

	// CommonRequest contains fields common to all request types.
	CommonRequest `json:",inline"`

	// cluster is the cluster object the lifecycle hook corresponds to.
	// +required
	Cluster clusterv1.Cluster `json:"cluster"`

	// kubernetesVersion is the Kubernetes version of the workers after an upgrade step.
	// +required
	KubernetesVersion string `json:"kubernetesVersion"`

	// controlPlaneUpgrades is the list of the remaining version upgrade steps for the control plane, if any.
	// +optional
	ControlPlaneUpgrades []UpgradeStepInfo `json:"controlPlaneUpgrades,omitempty"`

	// workersUpgrades is the list of the remaining version upgrade steps for workers, if any.
	// +optional
	WorkersUpgrades []UpgradeStepInfo `json:"workersUpgrades,omitempty"`
}

var _ RetryResponseObject = &AfterWorkersUpgradeResponse{}

// AfterWorkersUpgradeResponse is the response of the AfterWorkersUpgrade hook; a non-zero
// retryAfterSeconds holds the control plane's next step, or AfterClusterUpgrade at the end.
// +kubebuilder:object:root=true
type AfterWorkersUpgradeResponse struct {
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

var _ RetryResponseObject = &AfterClusterUpgradeResponse{}

// AfterClusterUpgradeResponse is the response of the AfterClusterUpgrade hook; a non-zero
// retryAfterSeconds holds the next upgrade (blocking since upstream Cluster API v1.12).
// +kubebuilder:object:root=true
type AfterClusterUpgradeResponse struct {
	metav1.TypeMeta `json:",inline"`

	// CommonRetryResponse contains Status, Message and RetryAfterSeconds fields.
	CommonRetryResponse `json:",inline"`
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
