package v1beta1

import clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"

// v1beta1 conditions of a KubeadmControlPlane and its Machines (status.conditions), as upstream's.
const (
	// MachinesReadyCondition aggregates the Ready conditions of the control plane Machines.
	MachinesReadyCondition clusterv1.ConditionType = "MachinesReady"

	// CertificatesAvailableCondition says whether the cluster certificates have been generated.
	CertificatesAvailableCondition clusterv1.ConditionType = "CertificatesAvailable"
	// CertificatesGenerationFailedReason (Warning): generating the certificates failed; retried.
	CertificatesGenerationFailedReason = "CertificatesGenerationFailed"

	// AvailableCondition says whether the first control plane Machine completed `kubeadm init` and an API
	// server accepts requests.
	AvailableCondition clusterv1.ConditionType = "Available"
	// WaitingForKubeadmInitReason (Info): the first control plane Machine has not completed `kubeadm init`.
	WaitingForKubeadmInitReason = "WaitingForKubeadmInit"

	// MachinesSpecUpToDateCondition says whether every Machine matches the spec; False during a rollout.
	MachinesSpecUpToDateCondition clusterv1.ConditionType = "MachinesSpecUpToDate"
	// RollingUpdateInProgressReason (Warning): Machines are being rolled out.
	RollingUpdateInProgressReason = "RollingUpdateInProgress"

	// ResizedCondition says whether the number of Machines matches spec.replicas.
	ResizedCondition clusterv1.ConditionType = "Resized"
	// ScalingUpReason (Info): Machines are being added.
	ScalingUpReason = "ScalingUp"
	// ScalingDownReason (Info): Machines are being removed.
	ScalingDownReason = "ScalingDown"

	// ControlPlaneComponentsHealthyCondition aggregates the health of the control plane components of
	// every Machine.
	ControlPlaneComponentsHealthyCondition clusterv1.ConditionType = "ControlPlaneComponentsHealthy"
	// ControlPlaneComponentsUnhealthyReason (Error): a component is unhealthy.
	ControlPlaneComponentsUnhealthyReason = "ControlPlaneComponentsUnhealthy"
	// ControlPlaneComponentsUnknownReason (Info): the health of a component is unknown.
	ControlPlaneComponentsUnknownReason = "ControlPlaneComponentsUnknown"
	// ControlPlaneComponentsInspectionFailedReason (Warning): the components could not be inspected.
	ControlPlaneComponentsInspectionFailedReason = "ControlPlaneComponentsInspectionFailed"

	// MachineAPIServerPodHealthyCondition, on a Machine, reports its kube-apiserver Pod.
	MachineAPIServerPodHealthyCondition clusterv1.ConditionType = "APIServerPodHealthy"
	// MachineControllerManagerPodHealthyCondition, on a Machine, reports its kube-controller-manager Pod.
	MachineControllerManagerPodHealthyCondition clusterv1.ConditionType = "ControllerManagerPodHealthy"
	// MachineSchedulerPodHealthyCondition, on a Machine, reports its kube-scheduler Pod.
	MachineSchedulerPodHealthyCondition clusterv1.ConditionType = "SchedulerPodHealthy"
	// MachineEtcdPodHealthyCondition, on a Machine, reports its etcd Pod.
	MachineEtcdPodHealthyCondition clusterv1.ConditionType = "EtcdPodHealthy"
	// PodProvisioningReason (Info): the Pod is being provisioned.
	PodProvisioningReason = "PodProvisioning"
	// PodMissingReason (Error): the Pod does not exist.
	PodMissingReason = "PodMissing"
	// PodFailedReason (Error): the Pod failed.
	PodFailedReason = "PodFailed"
	// PodInspectionFailedReason (Info): the Pod could not be inspected.
	PodInspectionFailedReason = "PodInspectionFailed"

	// EtcdClusterHealthyCondition aggregates the health of the etcd members.
	EtcdClusterHealthyCondition clusterv1.ConditionType = "EtcdClusterHealthy"
	// EtcdClusterInspectionFailedReason (Warning): etcd could not be inspected.
	EtcdClusterInspectionFailedReason = "EtcdClusterInspectionFailed"
	// EtcdClusterUnknownReason (Info): the health of etcd is unknown.
	EtcdClusterUnknownReason = "EtcdClusterUnknown"
	// EtcdClusterUnhealthyReason (Error): etcd is unhealthy.
	EtcdClusterUnhealthyReason = "EtcdClusterUnhealthy"

	// MachineEtcdMemberHealthyCondition, on a Machine, reports its etcd member.
	MachineEtcdMemberHealthyCondition clusterv1.ConditionType = "EtcdMemberHealthy"
	// EtcdMemberInspectionFailedReason (Warning): the member could not be inspected.
	EtcdMemberInspectionFailedReason = "MemberInspectionFailed"
	// EtcdMemberUnhealthyReason (Error): the member is unhealthy.
	EtcdMemberUnhealthyReason = "EtcdMemberUnhealthy"

	// MachinesCreatedCondition says whether the Machines' objects could be created.
	MachinesCreatedCondition clusterv1.ConditionType = "MachinesCreated"
	// InfrastructureTemplateCloningFailedReason (Error): cloning the InfraMachine template failed.
	InfrastructureTemplateCloningFailedReason = "InfrastructureTemplateCloningFailed"
	// BootstrapTemplateCloningFailedReason (Error): creating the KubeadmConfig failed.
	BootstrapTemplateCloningFailedReason = "BootstrapTemplateCloningFailed"
	// MachineGenerationFailedReason (Error): creating the Machine failed.
	MachineGenerationFailedReason = "MachineGenerationFailed"
)

// v1beta2 conditions of a KubeadmControlPlane (status.v1beta2.conditions), as upstream's.
const (
	// KubeadmControlPlaneAvailableV1Beta2Condition is true when the control plane can serve requests: etcd
	// has quorum and at least one Machine has healthy components.
	KubeadmControlPlaneAvailableV1Beta2Condition = "Available"
	// KubeadmControlPlaneAvailableInspectionFailedV1Beta2Reason: availability could not be determined.
	KubeadmControlPlaneAvailableInspectionFailedV1Beta2Reason = "InspectionFailed"
	// KubeadmControlPlaneAvailableV1Beta2Reason is the reason of a True Available.
	KubeadmControlPlaneAvailableV1Beta2Reason = "Available"
	// KubeadmControlPlaneNotAvailableV1Beta2Reason is the reason of a False Available.
	KubeadmControlPlaneNotAvailableV1Beta2Reason = "NotAvailable"

	// KubeadmControlPlaneInitializedV1Beta2Condition is true once the control plane is initialized.
	KubeadmControlPlaneInitializedV1Beta2Condition = "Initialized"
	// KubeadmControlPlaneInitializedV1Beta2Reason is the reason of a True Initialized.
	KubeadmControlPlaneInitializedV1Beta2Reason = "Initialized"
	// KubeadmControlPlaneNotInitializedV1Beta2Reason is the reason of a False Initialized.
	KubeadmControlPlaneNotInitializedV1Beta2Reason = "NotInitialized"

	// KubeadmControlPlaneCertificatesAvailableV1Beta2Condition is true when the cluster certificates exist.
	KubeadmControlPlaneCertificatesAvailableV1Beta2Condition = "CertificatesAvailable"
	// KubeadmControlPlaneCertificatesInternalErrorV1Beta2Reason: reading or generating them failed.
	KubeadmControlPlaneCertificatesInternalErrorV1Beta2Reason = "InternalError"
	// KubeadmControlPlaneCertificatesAvailableV1Beta2Reason is the reason of a True CertificatesAvailable.
	KubeadmControlPlaneCertificatesAvailableV1Beta2Reason = "Available"

	// KubeadmControlPlaneEtcdClusterHealthyV1Beta2Condition reports the health of etcd.
	KubeadmControlPlaneEtcdClusterHealthyV1Beta2Condition = "EtcdClusterHealthy"
	// KubeadmControlPlaneEtcdClusterInspectionFailedV1Beta2Reason: etcd could not be inspected.
	KubeadmControlPlaneEtcdClusterInspectionFailedV1Beta2Reason = "InspectionFailed"
	// KubeadmControlPlaneEtcdClusterConnectionDownV1Beta2Reason: the workload cluster cannot be reached.
	KubeadmControlPlaneEtcdClusterConnectionDownV1Beta2Reason = "ConnectionDown"
	// KubeadmControlPlaneEtcdClusterHealthyV1Beta2Reason: etcd is healthy.
	KubeadmControlPlaneEtcdClusterHealthyV1Beta2Reason = "Healthy"
	// KubeadmControlPlaneEtcdClusterNotHealthyV1Beta2Reason: etcd is not healthy.
	KubeadmControlPlaneEtcdClusterNotHealthyV1Beta2Reason = "NotHealthy"
	// KubeadmControlPlaneEtcdClusterHealthUnknownV1Beta2Reason: the health of etcd is unknown.
	KubeadmControlPlaneEtcdClusterHealthUnknownV1Beta2Reason = "HealthUnknown"

	// KubeadmControlPlaneControlPlaneComponentsHealthyV1Beta2Condition reports the health of the control
	// plane components.
	KubeadmControlPlaneControlPlaneComponentsHealthyV1Beta2Condition = "ControlPlaneComponentsHealthy"
	// KubeadmControlPlaneControlPlaneComponentsInspectionFailedV1Beta2Reason: they could not be inspected.
	KubeadmControlPlaneControlPlaneComponentsInspectionFailedV1Beta2Reason = "InspectionFailed"
	// KubeadmControlPlaneControlPlaneComponentsConnectionDownV1Beta2Reason: the workload cluster cannot be
	// reached.
	KubeadmControlPlaneControlPlaneComponentsConnectionDownV1Beta2Reason = "ConnectionDown"
	// KubeadmControlPlaneControlPlaneComponentsHealthyV1Beta2Reason: the components are healthy.
	KubeadmControlPlaneControlPlaneComponentsHealthyV1Beta2Reason = "Healthy"
	// KubeadmControlPlaneControlPlaneComponentsNotHealthyV1Beta2Reason: a component is not healthy.
	KubeadmControlPlaneControlPlaneComponentsNotHealthyV1Beta2Reason = "NotHealthy"
	// KubeadmControlPlaneControlPlaneComponentsHealthUnknownV1Beta2Reason: the health of a component is
	// unknown.
	KubeadmControlPlaneControlPlaneComponentsHealthUnknownV1Beta2Reason = "HealthUnknown"

	// KubeadmControlPlaneMachinesReadyV1Beta2Condition aggregates the Ready conditions of the Machines.
	KubeadmControlPlaneMachinesReadyV1Beta2Condition = "MachinesReady"
	// KubeadmControlPlaneMachinesReadyV1Beta2Reason: every Machine is ready.
	KubeadmControlPlaneMachinesReadyV1Beta2Reason = "Ready"
	// KubeadmControlPlaneMachinesNotReadyV1Beta2Reason: a Machine is not ready.
	KubeadmControlPlaneMachinesNotReadyV1Beta2Reason = "NotReady"
	// KubeadmControlPlaneMachinesReadyUnknownV1Beta2Reason: the readiness of a Machine is unknown.
	KubeadmControlPlaneMachinesReadyUnknownV1Beta2Reason = "ReadyUnknown"
	// KubeadmControlPlaneMachinesReadyNoReplicasV1Beta2Reason: there are no Machines.
	KubeadmControlPlaneMachinesReadyNoReplicasV1Beta2Reason = "NoReplicas"
	// KubeadmControlPlaneMachinesReadyInternalErrorV1Beta2Reason: the Machines could not be read.
	KubeadmControlPlaneMachinesReadyInternalErrorV1Beta2Reason = "InternalError"

	// KubeadmControlPlaneMachinesUpToDateV1Beta2Condition aggregates the UpToDate conditions of the Machines.
	KubeadmControlPlaneMachinesUpToDateV1Beta2Condition = "MachinesUpToDate"
	// KubeadmControlPlaneMachinesUpToDateV1Beta2Reason: every Machine is up to date.
	KubeadmControlPlaneMachinesUpToDateV1Beta2Reason = "UpToDate"
	// KubeadmControlPlaneMachinesNotUpToDateV1Beta2Reason: a Machine is not up to date.
	KubeadmControlPlaneMachinesNotUpToDateV1Beta2Reason = "NotUpToDate"
	// KubeadmControlPlaneMachinesUpToDateUnknownV1Beta2Reason: whether a Machine is up to date is unknown.
	KubeadmControlPlaneMachinesUpToDateUnknownV1Beta2Reason = "UpToDateUnknown"
	// KubeadmControlPlaneMachinesUpToDateNoReplicasV1Beta2Reason: there are no Machines.
	KubeadmControlPlaneMachinesUpToDateNoReplicasV1Beta2Reason = "NoReplicas"
	// KubeadmControlPlaneMachinesUpToDateInternalErrorV1Beta2Reason: the Machines could not be read.
	KubeadmControlPlaneMachinesUpToDateInternalErrorV1Beta2Reason = "InternalError"

	// KubeadmControlPlaneRollingOutV1Beta2Condition is true while Machines are rolled out.
	KubeadmControlPlaneRollingOutV1Beta2Condition = "RollingOut"
	// KubeadmControlPlaneRollingOutV1Beta2Reason is the reason of a True RollingOut.
	KubeadmControlPlaneRollingOutV1Beta2Reason = "RollingOut"
	// KubeadmControlPlaneNotRollingOutV1Beta2Reason is the reason of a False RollingOut.
	KubeadmControlPlaneNotRollingOutV1Beta2Reason = "NotRollingOut"

	// KubeadmControlPlaneScalingUpV1Beta2Condition is true while Machines are added.
	KubeadmControlPlaneScalingUpV1Beta2Condition = "ScalingUp"
	// KubeadmControlPlaneScalingUpV1Beta2Reason is the reason of a True ScalingUp.
	KubeadmControlPlaneScalingUpV1Beta2Reason = "ScalingUp"
	// KubeadmControlPlaneNotScalingUpV1Beta2Reason is the reason of a False ScalingUp.
	KubeadmControlPlaneNotScalingUpV1Beta2Reason = "NotScalingUp"
	// KubeadmControlPlaneScalingUpWaitingForReplicasSetV1Beta2Reason: spec.replicas is not set.
	KubeadmControlPlaneScalingUpWaitingForReplicasSetV1Beta2Reason = "WaitingForReplicasSet"

	// KubeadmControlPlaneScalingDownV1Beta2Condition is true while Machines are removed.
	KubeadmControlPlaneScalingDownV1Beta2Condition = "ScalingDown"
	// KubeadmControlPlaneScalingDownV1Beta2Reason is the reason of a True ScalingDown.
	KubeadmControlPlaneScalingDownV1Beta2Reason = "ScalingDown"
	// KubeadmControlPlaneNotScalingDownV1Beta2Reason is the reason of a False ScalingDown.
	KubeadmControlPlaneNotScalingDownV1Beta2Reason = "NotScalingDown"
	// KubeadmControlPlaneScalingDownWaitingForReplicasSetV1Beta2Reason: spec.replicas is not set.
	KubeadmControlPlaneScalingDownWaitingForReplicasSetV1Beta2Reason = "WaitingForReplicasSet"

	// KubeadmControlPlaneRemediatingV1Beta2Condition is true while unhealthy Machines are remediated.
	KubeadmControlPlaneRemediatingV1Beta2Condition = "Remediating"
	// KubeadmControlPlaneRemediatingV1Beta2Reason is the reason of a True Remediating.
	KubeadmControlPlaneRemediatingV1Beta2Reason = "Remediating"
	// KubeadmControlPlaneNotRemediatingV1Beta2Reason is the reason of a False Remediating.
	KubeadmControlPlaneNotRemediatingV1Beta2Reason = "NotRemediating"
	// KubeadmControlPlaneRemediatingInternalErrorV1Beta2Reason: the remediation could not be determined.
	KubeadmControlPlaneRemediatingInternalErrorV1Beta2Reason = "InternalError"

	// KubeadmControlPlaneMachineRemediationInternalErrorV1Beta2Reason, on a Machine's OwnerRemediated
	// condition: remediating it failed.
	KubeadmControlPlaneMachineRemediationInternalErrorV1Beta2Reason = "InternalError"
	// KubeadmControlPlaneMachineCannotBeRemediatedV1Beta2Reason: remediating it would be unsafe.
	KubeadmControlPlaneMachineCannotBeRemediatedV1Beta2Reason = "CannotBeRemediated"
	// KubeadmControlPlaneMachineRemediationDeferredV1Beta2Reason: remediation waits (retryPeriod, another
	// remediation in progress...).
	KubeadmControlPlaneMachineRemediationDeferredV1Beta2Reason = "RemediationDeferred"
	// KubeadmControlPlaneMachineRemediationMachineDeletingV1Beta2Reason: the Machine is being deleted as
	// its remediation.
	KubeadmControlPlaneMachineRemediationMachineDeletingV1Beta2Reason = "MachineDeleting"

	// KubeadmControlPlaneDeletingV1Beta2Condition is true while the KubeadmControlPlane is deleted.
	KubeadmControlPlaneDeletingV1Beta2Condition = "Deleting"
	// KubeadmControlPlaneNotDeletingV1Beta2Reason is the reason of a False Deleting.
	KubeadmControlPlaneNotDeletingV1Beta2Reason = "NotDeleting"
	// KubeadmControlPlaneDeletingWaitingForWorkersDeletionV1Beta2Reason: worker Machines are still there.
	KubeadmControlPlaneDeletingWaitingForWorkersDeletionV1Beta2Reason = "WaitingForWorkersDeletion"
	// KubeadmControlPlaneDeletingWaitingForMachineDeletionV1Beta2Reason: control plane Machines are
	// being deleted.
	KubeadmControlPlaneDeletingWaitingForMachineDeletionV1Beta2Reason = "WaitingForMachineDeletion"
	// KubeadmControlPlaneDeletingDeletionCompletedV1Beta2Reason: everything is deleted.
	KubeadmControlPlaneDeletingDeletionCompletedV1Beta2Reason = "DeletionCompleted"
	// KubeadmControlPlaneDeletingInternalErrorV1Beta2Reason: what the deletion waits for could not be
	// determined.
	KubeadmControlPlaneDeletingInternalErrorV1Beta2Reason = "InternalError"

	// KubeadmControlPlaneMachineAPIServerPodHealthyV1Beta2Condition, on a Machine, reports its
	// kube-apiserver Pod.
	KubeadmControlPlaneMachineAPIServerPodHealthyV1Beta2Condition = "APIServerPodHealthy"
	// KubeadmControlPlaneMachineControllerManagerPodHealthyV1Beta2Condition, on a Machine, reports its
	// kube-controller-manager Pod.
	KubeadmControlPlaneMachineControllerManagerPodHealthyV1Beta2Condition = "ControllerManagerPodHealthy"
	// KubeadmControlPlaneMachineSchedulerPodHealthyV1Beta2Condition, on a Machine, reports its
	// kube-scheduler Pod.
	KubeadmControlPlaneMachineSchedulerPodHealthyV1Beta2Condition = "SchedulerPodHealthy"
	// KubeadmControlPlaneMachineEtcdPodHealthyV1Beta2Condition, on a Machine, reports its etcd Pod.
	KubeadmControlPlaneMachineEtcdPodHealthyV1Beta2Condition = "EtcdPodHealthy"
	// KubeadmControlPlaneMachinePodRunningV1Beta2Reason: the Pod is running.
	KubeadmControlPlaneMachinePodRunningV1Beta2Reason = "Running"
	// KubeadmControlPlaneMachinePodProvisioningV1Beta2Reason: the Pod is being provisioned.
	KubeadmControlPlaneMachinePodProvisioningV1Beta2Reason = "Provisioning"
	// KubeadmControlPlaneMachinePodDoesNotExistV1Beta2Reason: the Pod does not exist.
	KubeadmControlPlaneMachinePodDoesNotExistV1Beta2Reason = "DoesNotExist"
	// KubeadmControlPlaneMachinePodFailedV1Beta2Reason: the Pod failed.
	KubeadmControlPlaneMachinePodFailedV1Beta2Reason = "Failed"
	// KubeadmControlPlaneMachinePodInspectionFailedV1Beta2Reason: the Pod could not be inspected.
	KubeadmControlPlaneMachinePodInspectionFailedV1Beta2Reason = "InspectionFailed"
	// KubeadmControlPlaneMachinePodConnectionDownV1Beta2Reason: the workload cluster cannot be reached.
	KubeadmControlPlaneMachinePodConnectionDownV1Beta2Reason = "ConnectionDown"
	// KubeadmControlPlaneMachinePodDeletingV1Beta2Reason: the Machine is being deleted.
	KubeadmControlPlaneMachinePodDeletingV1Beta2Reason = "Deleting"

	// KubeadmControlPlaneMachineEtcdMemberHealthyV1Beta2Condition, on a Machine, reports its etcd member.
	KubeadmControlPlaneMachineEtcdMemberHealthyV1Beta2Condition = "EtcdMemberHealthy"
	// KubeadmControlPlaneMachineEtcdMemberNotHealthyV1Beta2Reason: the member is not healthy.
	KubeadmControlPlaneMachineEtcdMemberNotHealthyV1Beta2Reason = "NotHealthy"
	// KubeadmControlPlaneMachineEtcdMemberHealthyV1Beta2Reason: the member is healthy.
	KubeadmControlPlaneMachineEtcdMemberHealthyV1Beta2Reason = "Healthy"
	// KubeadmControlPlaneMachineEtcdMemberInspectionFailedV1Beta2Reason: the member could not be inspected.
	KubeadmControlPlaneMachineEtcdMemberInspectionFailedV1Beta2Reason = "InspectionFailed"
	// KubeadmControlPlaneMachineEtcdMemberConnectionDownV1Beta2Reason: the workload cluster cannot be
	// reached.
	KubeadmControlPlaneMachineEtcdMemberConnectionDownV1Beta2Reason = "ConnectionDown"
	// KubeadmControlPlaneMachineEtcdMemberDeletingV1Beta2Reason: the Machine is being deleted.
	KubeadmControlPlaneMachineEtcdMemberDeletingV1Beta2Reason = "Deleting"
)
