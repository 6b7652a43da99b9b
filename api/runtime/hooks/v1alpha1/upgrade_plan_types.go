package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
)

// GenerateUpgradePlanRequest is the request of the GenerateUpgradePlan hook, called to compute the
// versions an upgrade of a Cluster's topology goes through when its ClusterClass names the hook's
// handler in spec.upgrade.external.generateUpgradePlanExtension.
// +kubebuilder:object:root=true
type GenerateUpgradePlanRequest struct {
	metav1.TypeMeta `json:",inline"`

	// CommonRequest contains fields common to all request types.
	CommonRequest `json:",inline"`

	// cluster is the cluster object the GenerateUpgradePlan request corresponds to.
	// +required
	Cluster clusterv1.Cluster `json:"cluster,omitempty,omitzero"`

	// fromControlPlaneKubernetesVersion is the current Kubernetes version of the control plane.
	// +required
	// +kubebuilder:validation:MinLength=1
	FromControlPlaneKubernetesVersion string `json:"fromControlPlaneKubernetesVersion,omitempty"`

	// fromWorkersKubernetesVersion is the min current Kubernetes version of the workers.
	// +optional
	// +kubebuilder:validation:MinLength=1
	FromWorkersKubernetesVersion string `json:"fromWorkersKubernetesVersion,omitempty"`

	// toKubernetesVersion is the target Kubernetes version for the upgrade.
	// +required
	// +kubebuilder:validation:MinLength=1
	ToKubernetesVersion string `json:"toKubernetesVersion,omitempty"`
}

var _ ResponseObject = &GenerateUpgradePlanResponse{}

// GenerateUpgradePlanResponse is the response of the GenerateUpgradePlan hook: the plan of the control
// plane and, optionally, the workers'. It does not block.
// +kubebuilder:object:root=true
type GenerateUpgradePlanResponse struct {
	metav1.TypeMeta `json:",inline"`

	// CommonResponse contains Status and Message fields common to all response types.
	CommonResponse `json:",inline"`

	// controlPlaneUpgrades is the list of version upgrade steps for the control plane.
	// Each entry represents an intermediate version that must be applied in sequence.
	// The following rules apply:
	// - there should be at least one version for every minor between fromControlPlaneKubernetesVersion
	//   (excluded) and toKubernetesVersion (included).
	// - each version must be:
	//   - greater than fromControlPlaneKubernetesVersion (or with a different build number)
	//   - greater than the previous version in the list (or with a different build number)
	//   - less or equal to toKubernetesVersion (or with a different build number)
	//   - the last version in the plan must be equal to toKubernetesVersion
	// +optional
	ControlPlaneUpgrades []UpgradeStep `json:"controlPlaneUpgrades,omitempty"`

	// workersUpgrades is the list of version upgrade steps for the workers.
	// Each entry represents an intermediate version that must be applied in sequence.
	//
	// When it is empty, the workers take the fewest steps the version skew policy allows, to reduce the
	// impact on workloads and the time of the upgrade.
	//
	// When it is set, each version must be:
	//   - equal to fromControlPlaneKubernetesVersion or to one of the versions of controlPlaneUpgrades
	//   - greater than fromWorkersKubernetesVersion (or with a different build number)
	//   - greater than the previous version in the list (or with a different build number)
	//   - less or equal to toKubernetesVersion (or with a different build number)
	//   - for versions that differ only by build number, in the same order as in controlPlaneUpgrades
	//   - the last version in the plan must be equal to toKubernetesVersion
	//   - the plan must list every version the workers go through to keep within the version skew
	//     policy between control plane and workers.
	// +optional
	WorkersUpgrades []UpgradeStep `json:"workersUpgrades,omitempty"`
}

// UpgradeStep is one version of an upgrade plan, as GenerateUpgradePlan answers it.
type UpgradeStep struct {
	// version is the Kubernetes version for this upgrade step.
	// +required
	// +kubebuilder:validation:MinLength=1
	Version string `json:"version,omitempty"`
}
