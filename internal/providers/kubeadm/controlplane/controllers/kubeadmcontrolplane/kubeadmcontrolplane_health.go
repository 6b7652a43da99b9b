package kubeadmcontrolplane

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	controlplanev1 "github.com/capstan-dev/capstan/api/controlplane/kubeadm/v1beta1"
	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
	"github.com/capstan-dev/capstan/internal/conditions"
	"github.com/capstan-dev/capstan/internal/providers/kubeadm/controlplane/workload"
)

// component is a control plane component whose health a Machine reports, with its conditions.
type component struct {
	name string
	v1   clusterv1.ConditionType
	v2   string
}

var (
	staticPodComponents = []component{
		{"kube-apiserver", controlplanev1.MachineAPIServerPodHealthyCondition, controlplanev1.KubeadmControlPlaneMachineAPIServerPodHealthyV1Beta2Condition},
		{"kube-controller-manager", controlplanev1.MachineControllerManagerPodHealthyCondition, controlplanev1.KubeadmControlPlaneMachineControllerManagerPodHealthyV1Beta2Condition},
		{"kube-scheduler", controlplanev1.MachineSchedulerPodHealthyCondition, controlplanev1.KubeadmControlPlaneMachineSchedulerPodHealthyV1Beta2Condition},
	}
	etcdPodComponent = component{"etcd", controlplanev1.MachineEtcdPodHealthyCondition, controlplanev1.KubeadmControlPlaneMachineEtcdPodHealthyV1Beta2Condition}
	etcdMember       = component{"etcd member", controlplanev1.MachineEtcdMemberHealthyCondition, controlplanev1.KubeadmControlPlaneMachineEtcdMemberHealthyV1Beta2Condition}
)

// podComponents returns the static Pods a Machine runs: etcd too when it is stacked.
func (s *scope) podComponents() []component {
	if s.isEtcdManaged() {
		return append(append([]component{}, staticPodComponents...), etcdPodComponent)
	}
	return staticPodComponents
}

// health is the state of one component of a Machine, as both condition versions say it.
type health struct {
	status   corev1.ConditionStatus
	reason   string
	severity clusterv1.ConditionSeverity
	reason2  string
	message  string
}

func healthy(reason2 string) health {
	return health{status: corev1.ConditionTrue, reason2: reason2}
}

func unknownHealth(reason, reason2, message string) health {
	return health{status: corev1.ConditionUnknown, reason: reason, reason2: reason2, message: message}
}

func unhealthy(reason string, severity clusterv1.ConditionSeverity, reason2, message string) health {
	return health{status: corev1.ConditionFalse, reason: reason, severity: severity, reason2: reason2, message: message}
}

// set writes h as the component's conditions on m.
func (h health) set(m *clusterv1.Machine, c component) {
	switch h.status {
	case corev1.ConditionTrue:
		conditions.MarkTrue(m, c.v1)
	case corev1.ConditionFalse:
		conditions.MarkFalse(m, c.v1, h.reason, h.severity, "%s", h.message)
	default:
		conditions.MarkUnknown(m, c.v1, h.reason, "%s", h.message)
	}
	conditions.SetV1Beta2(m, metav1.Condition{Type: c.v2, Status: metav1.ConditionStatus(h.status), Reason: h.reason2, Message: h.message})
}

// inspectHealth reads the control plane Pods of every Machine and the etcd members, and sets the Machines'
// component conditions; what it cannot learn is Unknown with the reason.
func (r *Reconciler) inspectHealth(ctx context.Context, s *scope) {
	log := ctrl.LoggerFrom(ctx)
	comps := s.podComponents()
	all := append(append([]component{}, comps...), etcdMember)
	if !s.isEtcdManaged() {
		all = comps
	}
	setAll := func(m *clusterv1.Machine, h health) {
		for _, c := range all {
			h := h
			if c == etcdMember {
				h.reason, h.reason2 = memberReason(h)
			}
			h.set(m, c)
		}
	}

	if !s.kcp.Status.Initialized {
		s.notInspectedReason, s.notInspectedMessage = controlplanev1.KubeadmControlPlaneEtcdClusterInspectionFailedV1Beta2Reason, "Waiting for Cluster control plane to be initialized"
		for _, m := range s.machines {
			setAll(m, unknownHealth(controlplanev1.PodInspectionFailedReason, controlplanev1.KubeadmControlPlaneMachinePodInspectionFailedV1Beta2Reason, s.notInspectedMessage))
		}
		return
	}
	if s.workload == nil {
		s.notInspectedReason, s.notInspectedMessage = controlplanev1.KubeadmControlPlaneEtcdClusterConnectionDownV1Beta2Reason, "The connection to the workload cluster is down"
		for _, m := range s.machines {
			setAll(m, unknownHealth(controlplanev1.PodInspectionFailedReason, controlplanev1.KubeadmControlPlaneMachinePodConnectionDownV1Beta2Reason, s.notInspectedMessage))
		}
		return
	}
	nodes, err := s.workload.ControlPlaneNodes(ctx)
	if err != nil {
		log.Error(err, "Failed to list the control plane Nodes")
		s.notInspectedReason, s.notInspectedMessage = controlplanev1.KubeadmControlPlaneEtcdClusterInspectionFailedV1Beta2Reason, "Failed to get the Nodes hosting the control plane"
		for _, m := range s.machines {
			setAll(m, unknownHealth(controlplanev1.PodInspectionFailedReason, controlplanev1.KubeadmControlPlaneMachinePodInspectionFailedV1Beta2Reason, "Failed to get the Node hosting the Pod"))
		}
		return
	}
	s.healthInspected = true
	nodeByName := map[string]*corev1.Node{}
	for i := range nodes {
		nodeByName[nodes[i].Name] = &nodes[i]
	}

	provisioning := false
	for _, m := range s.all() {
		switch {
		case m.Status.NodeRef == nil:
			provisioning = true
			msg := fmt.Sprintf("Waiting for %s to report spec.providerID", m.Spec.InfrastructureRef.Kind)
			if id := ptr.Deref(m.Spec.ProviderID, ""); id != "" {
				msg = fmt.Sprintf("Waiting for a Node with spec.providerID %s to exist", id)
			}
			setAll(m, unknownHealth(controlplanev1.PodInspectionFailedReason, controlplanev1.KubeadmControlPlaneMachinePodInspectionFailedV1Beta2Reason, msg))
		case !m.DeletionTimestamp.IsZero():
			setAll(m, unhealthy(clusterv1.DeletingReason, clusterv1.ConditionSeverityInfo, controlplanev1.KubeadmControlPlaneMachinePodDeletingV1Beta2Reason, "Machine is deleting"))
		case nodeByName[m.Status.NodeRef.Name] == nil:
			for _, c := range comps {
				unhealthy(controlplanev1.PodFailedReason, clusterv1.ConditionSeverityError, controlplanev1.KubeadmControlPlaneMachinePodDoesNotExistV1Beta2Reason,
					fmt.Sprintf("Node %s does not exist", m.Status.NodeRef.Name)).set(m, c)
			}
		default:
			node := nodeByName[m.Status.NodeRef.Name]
			for _, c := range comps {
				r.podHealth(ctx, s, node, c.name).set(m, c)
			}
		}
	}
	if !provisioning {
		for _, n := range nodes {
			if machineForNode(s, n.Name) == nil {
				s.componentsErrors = append(s.componentsErrors, fmt.Sprintf("Control plane Node %s does not have a corresponding Machine", n.Name))
			}
		}
	}
	if s.isEtcdManaged() {
		r.inspectEtcd(ctx, s, provisioning)
	}
}

func memberReason(h health) (string, string) {
	switch h.reason2 {
	case controlplanev1.KubeadmControlPlaneMachinePodDeletingV1Beta2Reason:
		return h.reason, controlplanev1.KubeadmControlPlaneMachineEtcdMemberDeletingV1Beta2Reason
	case controlplanev1.KubeadmControlPlaneMachinePodConnectionDownV1Beta2Reason:
		return controlplanev1.EtcdMemberInspectionFailedReason, controlplanev1.KubeadmControlPlaneMachineEtcdMemberConnectionDownV1Beta2Reason
	default:
		return controlplanev1.EtcdMemberInspectionFailedReason, controlplanev1.KubeadmControlPlaneMachineEtcdMemberInspectionFailedV1Beta2Reason
	}
}

func machineForNode(s *scope, node string) *clusterv1.Machine {
	for _, m := range s.machines {
		if m.Status.NodeRef != nil && m.Status.NodeRef.Name == node {
			return m
		}
	}
	return nil
}

// podHealth reads the static Pod of a component on a Node, as upstream's KCP judges it.
func (r *Reconciler) podHealth(ctx context.Context, s *scope, node *corev1.Node, name string) health {
	for _, t := range node.Spec.Taints {
		if t.Key == corev1.TaintNodeUnreachable && t.Effect == corev1.TaintEffectNoExecute {
			return unknownHealth(controlplanev1.PodInspectionFailedReason, controlplanev1.KubeadmControlPlaneMachinePodInspectionFailedV1Beta2Reason, fmt.Sprintf("Node %s is unreachable", node.Name))
		}
	}
	for _, c := range node.Status.Conditions {
		if c.Type == corev1.NodeReady && c.Status == corev1.ConditionUnknown {
			return unknownHealth(controlplanev1.PodInspectionFailedReason, controlplanev1.KubeadmControlPlaneMachinePodInspectionFailedV1Beta2Reason, "Node Ready condition is Unknown, Pod data might be stale")
		}
	}
	pod := &corev1.Pod{}
	key := client.ObjectKey{Namespace: metav1.NamespaceSystem, Name: workload.StaticPodName(name, node.Name)}
	if err := s.workload.Client.Get(ctx, key, pod); err != nil {
		if apierrors.IsNotFound(err) {
			return unhealthy(controlplanev1.PodMissingReason, clusterv1.ConditionSeverityError, controlplanev1.KubeadmControlPlaneMachinePodDoesNotExistV1Beta2Reason, "Pod does not exist")
		}
		ctrl.LoggerFrom(ctx).Error(err, "Failed to get Pod", "Pod", key.String())
		return unknownHealth(controlplanev1.PodInspectionFailedReason, controlplanev1.KubeadmControlPlaneMachinePodInspectionFailedV1Beta2Reason, conditions.InternalErrorMessage)
	}
	return podState(pod)
}

// podState judges a static Pod from its phase, conditions and container states.
func podState(pod *corev1.Pod) health {
	provisioning := func(msg string) health {
		return unhealthy(controlplanev1.PodProvisioningReason, clusterv1.ConditionSeverityInfo, controlplanev1.KubeadmControlPlaneMachinePodProvisioningV1Beta2Reason, msg)
	}
	failed := func(msg string) health {
		return unhealthy(controlplanev1.PodFailedReason, clusterv1.ConditionSeverityError, controlplanev1.KubeadmControlPlaneMachinePodFailedV1Beta2Reason, msg)
	}
	cond := func(t corev1.PodConditionType) corev1.ConditionStatus {
		for _, c := range pod.Status.Conditions {
			if c.Type == t {
				return c.Status
			}
		}
		return corev1.ConditionUnknown
	}
	switch pod.Status.Phase {
	case corev1.PodPending:
		if cond(corev1.PodScheduled) != corev1.ConditionTrue {
			return provisioning("Waiting to be scheduled")
		}
		if cond(corev1.PodInitialized) != corev1.ConditionTrue {
			return provisioning("Running init containers")
		}
		return provisioning("")
	case corev1.PodRunning:
		if cond(corev1.PodReady) == corev1.ConditionTrue {
			return healthy(controlplanev1.KubeadmControlPlaneMachinePodRunningV1Beta2Reason)
		}
		var waiting, terminated []string
		crashed := false
		for _, cs := range pod.Status.ContainerStatuses {
			if t := cs.LastTerminationState.Terminated; t != nil && t.ExitCode != 0 {
				crashed = true
			}
			if cs.State.Waiting != nil {
				waiting = append(waiting, cs.State.Waiting.Reason)
			}
			if cs.State.Terminated != nil {
				terminated = append(terminated, cs.State.Terminated.Reason)
			}
		}
		switch {
		case len(waiting) > 0 && crashed:
			return failed(strings.Join(waiting, ", "))
		case len(waiting) > 0:
			return provisioning(strings.Join(waiting, ", "))
		case len(terminated) > 0:
			return failed(strings.Join(terminated, ", "))
		}
		return provisioning("Waiting for startup or readiness probes")
	case corev1.PodSucceeded, corev1.PodFailed:
		return failed("All the containers have been terminated")
	default:
		return unknownHealth(controlplanev1.PodInspectionFailedReason, controlplanev1.KubeadmControlPlaneMachinePodInspectionFailedV1Beta2Reason, "Pod is reporting Unknown status")
	}
}

// inspectEtcd reads the etcd members through the first member that answers (those last known healthy
// first), and sets each Machine's EtcdMemberHealthy: its member must be in the list, raise no alarm and
// answer itself.
func (r *Reconciler) inspectEtcd(ctx context.Context, s *scope, provisioning bool) {
	log := ctrl.LoggerFrom(ctx)
	s.etcdReused, s.etcdProvisioning = false, provisioning
	s.etcdMembers, s.etcdErrors = nil, nil
	var candidates []*clusterv1.Machine
	for _, m := range s.all() {
		if m.Status.NodeRef != nil && m.DeletionTimestamp.IsZero() {
			candidates = append(candidates, m)
		}
	}
	// Reach etcd through the members last known healthy first.
	sort.SliceStable(candidates, func(i, j int) bool {
		return conditions.IsTrue(candidates[i], etcdMember.v1) && !conditions.IsTrue(candidates[j], etcdMember.v1)
	})
	nodeNames := s.nodeNames(candidates)
	if len(nodeNames) == 0 {
		return
	}
	// A read that found every member healthy a few seconds ago, through the same Nodes, stands in for this
	// one: nothing the Machines show has changed etcd since.
	clusterKey := client.ObjectKeyFromObject(s.cluster)
	state := r.etcdReads.get(clusterKey, nodeNames, s.now, r.EtcdHealthReuse)
	reused := state != nil
	s.etcdReused = reused
	var err error
	if !reused {
		state, err = s.workload.EtcdState(ctx, nodeNames)
	}
	if err == nil && len(state.Errors) > 0 {
		err = fmt.Errorf("etcd endpoint %s reports errors: %s", state.Endpoint, strings.Join(state.Errors, ", "))
	}
	if err != nil {
		log.Error(err, "Failed to read the etcd members")
		msg := "Failed to connect to etcd: " + rootCause(err)
		for _, m := range candidates {
			unknownHealth(controlplanev1.EtcdMemberInspectionFailedReason, controlplanev1.KubeadmControlPlaneMachineEtcdMemberInspectionFailedV1Beta2Reason, msg).set(m, etcdMember)
		}
		s.etcdErrors = append(s.etcdErrors, msg)
		return
	}
	s.etcdMembers = state.Members
	memberNames := make([]string, 0, len(state.Members))
	for _, mb := range state.Members {
		memberNames = append(memberNames, mb.Name)
	}
	sort.Strings(memberNames)
	allHealthy := true
	for _, m := range candidates {
		node := m.Status.NodeRef.Name
		mb := workload.MemberForName(state.Members, node)
		if mb == nil {
			allHealthy = false
			unhealthy(controlplanev1.EtcdMemberUnhealthyReason, clusterv1.ConditionSeverityError, controlplanev1.KubeadmControlPlaneMachineEtcdMemberNotHealthyV1Beta2Reason,
				fmt.Sprintf("Etcd reports the cluster is composed by %s, but the etcd member hosted on this Machine is not included", strings.Join(memberNames, ", "))).set(m, etcdMember)
			continue
		}
		var alarms []string
		for _, a := range state.Alarms {
			if a.MemberID == mb.ID && a.Type != "NONE" {
				alarms = append(alarms, a.Type)
			}
		}
		if len(alarms) > 0 {
			allHealthy = false
			unhealthy(controlplanev1.EtcdMemberUnhealthyReason, clusterv1.ConditionSeverityError, controlplanev1.KubeadmControlPlaneMachineEtcdMemberNotHealthyV1Beta2Reason,
				"Etcd reports alarms: "+strings.Join(alarms, ", ")).set(m, etcdMember)
			continue
		}
		// capstan also asks each member itself (but the one the state was read through, which just did): a
		// member whose process died stays in the list of the others.
		if reused {
			// It answered then.
		} else if err := s.workload.MemberAnswers(ctx, node, state); err != nil {
			allHealthy = false
			unhealthy(controlplanev1.EtcdMemberUnhealthyReason, clusterv1.ConditionSeverityError, controlplanev1.KubeadmControlPlaneMachineEtcdMemberNotHealthyV1Beta2Reason,
				fmt.Sprintf("Etcd member on Node %s does not answer: %s", node, rootCause(err))).set(m, etcdMember)
			continue
		}
		healthy(controlplanev1.KubeadmControlPlaneMachineEtcdMemberHealthyV1Beta2Reason).set(m, etcdMember)
	}
	for _, mb := range state.Members {
		if mb.Name != "" && machineForNode(s, mb.Name) != nil {
			continue
		}
		name := mb.Name
		if name == "" {
			if provisioning {
				continue
			}
			name = fmt.Sprintf("%x (Name not yet assigned)", mb.ID)
		}
		s.etcdErrors = append(s.etcdErrors, fmt.Sprintf("Etcd member %s does not have a corresponding Machine", name))
	}
	if !reused && allHealthy && len(s.etcdErrors) == 0 {
		r.etcdReads.put(clusterKey, nodeNames, state, s.now, r.EtcdHealthReuse)
	}
}

// readEtcdLive makes what the reconcile knows of etcd — its members and each Machine's EtcdMemberHealthy —
// a read of etcd made now: when inspectEtcd reused an earlier read, etcd is read again. A reused read may be
// 15 s old, and a member that died since would count as healthy: every step that deletes a Machine or
// removes a member (scale down, a rollout's deletions, remediation, the pre-terminate hook) and the
// preflight checks of a scale up call this first; the reused read serves the status alone.
func (r *Reconciler) readEtcdLive(ctx context.Context, s *scope) {
	if !s.etcdReused {
		return
	}
	ctrl.LoggerFrom(ctx).V(4).Info("Reading etcd again before changing the control plane: the health read was reused")
	r.etcdReads.forget(client.ObjectKeyFromObject(s.cluster))
	r.inspectEtcd(ctx, s, s.etcdProvisioning)
}

// rootCause returns the message of the innermost error.
func rootCause(err error) string {
	for {
		next := errors.Unwrap(err)
		if next == nil {
			if joined, ok := err.(interface{ Unwrap() []error }); ok && len(joined.Unwrap()) > 0 {
				err = joined.Unwrap()[len(joined.Unwrap())-1]
				continue
			}
			return err.Error()
		}
		err = next
	}
}
