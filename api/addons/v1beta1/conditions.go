package v1beta1

import clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"

// The v1beta1 conditions of a ClusterResourceSet (status.conditions) and their reasons.
const (
	// ResourcesAppliedCondition is true when every resource was applied to every selected Cluster.
	ResourcesAppliedCondition clusterv1.ConditionType = "ResourcesApplied"

	// RemoteClusterClientFailedReason is used when a workload cluster cannot be reached.
	RemoteClusterClientFailedReason = "RemoteClusterClientFailed"
	// ClusterMatchFailedReason is used when the selected Clusters cannot be listed.
	ClusterMatchFailedReason = "ClusterMatchFailed"
	// ApplyFailedReason is used when applying a resource to a Cluster failed.
	ApplyFailedReason = "ApplyFailed"
	// RetrievingResourceFailedReason is used when a resource cannot be read (for example it does not exist).
	RetrievingResourceFailedReason = "RetrievingResourceFailed"
	// WrongSecretTypeReason is used when a Secret is not of type addons.cluster.x-k8s.io/resource-set.
	WrongSecretTypeReason = "WrongSecretType"
)

// The v1beta2 conditions of a ClusterResourceSet (status.v1beta2.conditions) besides Paused, and their
// reasons.
const (
	// ResourcesAppliedV1Beta2Condition is true when every resource was applied to every selected Cluster.
	ResourcesAppliedV1Beta2Condition = "ResourcesApplied"
	// ResourcesAppliedV1beta2Reason is the reason of a True ResourcesApplied condition.
	ResourcesAppliedV1beta2Reason = "Applied"
	// ResourcesNotAppliedV1Beta2Reason is used when applying a resource to a Cluster failed.
	ResourcesNotAppliedV1Beta2Reason = "NotApplied"
	// ResourcesAppliedWrongSecretTypeV1Beta2Reason is used when a Secret is not of the ClusterResourceSet type.
	ResourcesAppliedWrongSecretTypeV1Beta2Reason = "WrongSecretType"
	// ResourcesAppliedInternalErrorV1Beta2Reason is used for other failures (a resource that cannot be
	// read, a workload cluster that cannot be reached).
	ResourcesAppliedInternalErrorV1Beta2Reason = "InternalError"
)
