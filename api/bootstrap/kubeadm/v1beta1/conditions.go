package v1beta1

import clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"

// v1beta1 conditions of a KubeadmConfig (status.conditions), as upstream's.
const (
	// DataSecretAvailableCondition says whether the bootstrap data Secret has been generated.
	DataSecretAvailableCondition clusterv1.ConditionType = "DataSecretAvailable"

	// WaitingForClusterInfrastructureReason (Info): the Cluster's infrastructure is not ready yet.
	WaitingForClusterInfrastructureReason = "WaitingForClusterInfrastructure"

	// WaitingForControlPlaneAvailableReason (Info): a joining Machine waits for the control plane to be
	// initialized.
	WaitingForControlPlaneAvailableReason = "WaitingForControlPlaneAvailable"

	// WaitingForWorkloadClusterConnectionReason (Info): a joining Machine needs a bootstrap token, and the
	// provider waits for its connection to the workload cluster, made on demand, to create it (capstan's;
	// upstream's provider keeps every workload cluster connected).
	WaitingForWorkloadClusterConnectionReason = "WaitingForWorkloadClusterConnection"

	// DataSecretGenerationFailedReason (Warning): the bootstrap data cannot be generated, usually because of
	// the configuration (a missing Secret of a file, an invalid Ignition additionalConfig...).
	DataSecretGenerationFailedReason = "DataSecretGenerationFailed"

	// CertificatesAvailableCondition says whether the cluster certificates the bootstrap data needs exist.
	CertificatesAvailableCondition clusterv1.ConditionType = "CertificatesAvailable"

	// CertificatesGenerationFailedReason (Warning): generating the cluster certificates failed.
	CertificatesGenerationFailedReason = "CertificatesGenerationFailed"

	// CertificatesCorruptedReason (Error): the cluster certificates of a joining control plane Machine
	// cannot be read.
	CertificatesCorruptedReason = "CertificatesCorrupted"
)

// v1beta2 conditions of a KubeadmConfig (status.v1beta2.conditions), as upstream's.
const (
	// KubeadmConfigReadyV1Beta2Condition is true when the KubeadmConfig is not being deleted and both
	// DataSecretAvailable and CertificatesAvailable are true.
	KubeadmConfigReadyV1Beta2Condition = "Ready"
	// KubeadmConfigReadyV1Beta2Reason is the reason of a True Ready condition.
	KubeadmConfigReadyV1Beta2Reason = "Ready"
	// KubeadmConfigNotReadyV1Beta2Reason is the reason of a False Ready condition.
	KubeadmConfigNotReadyV1Beta2Reason = "NotReady"
	// KubeadmConfigReadyUnknownV1Beta2Reason is the reason of an Unknown Ready condition.
	KubeadmConfigReadyUnknownV1Beta2Reason = "ReadyUnknown"

	// KubeadmConfigCertificatesAvailableV1Beta2Condition is true when the cluster certificates the
	// bootstrap data needs are available.
	KubeadmConfigCertificatesAvailableV1Beta2Condition = "CertificatesAvailable"
	// KubeadmConfigCertificatesAvailableV1Beta2Reason is the reason of a True CertificatesAvailable.
	KubeadmConfigCertificatesAvailableV1Beta2Reason = "Available"
	// KubeadmConfigCertificatesAvailableInternalErrorV1Beta2Reason: reading or generating the certificates
	// failed.
	KubeadmConfigCertificatesAvailableInternalErrorV1Beta2Reason = "InternalError"

	// KubeadmConfigDataSecretAvailableV1Beta2Condition is true when the bootstrap data Secret exists.
	KubeadmConfigDataSecretAvailableV1Beta2Condition = "DataSecretAvailable"
	// KubeadmConfigDataSecretAvailableV1Beta2Reason is the reason of a True DataSecretAvailable.
	KubeadmConfigDataSecretAvailableV1Beta2Reason = "Available"
	// KubeadmConfigDataSecretNotAvailableV1Beta2Reason is the reason of a False DataSecretAvailable.
	KubeadmConfigDataSecretNotAvailableV1Beta2Reason = "NotAvailable"
)
