package machine

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	"github.com/go-logr/logr"

	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
	"github.com/capstan-dev/capstan/internal/clustercache"
	"github.com/capstan-dev/capstan/internal/external"
	"github.com/capstan-dev/capstan/internal/reconciler"
)

// stepState is how far a reconcile got with one step of the deletion. The zero value means the reconcile
// did not get to the step, whose condition then keeps its value.
type stepState int

const (
	_ stepState = iota
	// stepWaiting: the step holds the deletion.
	stepWaiting
	// stepFailed: the step failed and will be retried.
	stepFailed
	// stepDone: the step let the deletion go on.
	stepDone
)

// deletionFacts is what reconcileDelete observed, for the status.
type deletionFacts struct {
	// executed is true when reconcileDelete ran; reason and message are then those of the v1beta2
	// Deleting condition.
	executed        bool
	reason, message string

	preDrainHook, drain, volumeDetach, preTerminateHook stepState
	// drainMessage says what the drain waits for.
	drainMessage string
	// nodeDeletionFailed is true when deleting the Node failed.
	nodeDeletionFailed bool
}

func (d *deletionFacts) at(reason, message string) {
	d.reason, d.message = reason, message
}

// hooks is the state of the step that waits for the Machine's hook annotations with prefix (the name hooks,
// pre-drain or pre-terminate): waiting, with reason, while there are any. The first time it waits it sets
// *started (status.deletion's waitForPreDrainHookStartTime or waitForPreTerminateHookStartTime) to now.
func (d *deletionFacts) hooks(log logr.Logger, m *clusterv1.Machine, prefix, reason, name string, started func(*clusterv1.MachineDeletionStatus) **metav1.Time, now time.Time) stepState {
	hooks := hookAnnotations(m, prefix)
	if len(hooks) == 0 {
		return stepDone
	}
	if m.Status.Deletion == nil {
		m.Status.Deletion = &clusterv1.MachineDeletionStatus{}
	}
	if t := started(m.Status.Deletion); *t == nil {
		*t = &metav1.Time{Time: now}
	}
	d.at(reason, fmt.Sprintf("Waiting for %s hooks to succeed (hooks: %s)", name, strings.Join(hooks, ",")))
	log.Info(fmt.Sprintf("Waiting for %s hooks to succeed", name), "hooks", hooks)
	return stepWaiting
}

// reconcileDelete takes the deletion of a Machine one step further; see the package documentation for the
// steps. Each step that has to wait returns, so a reconcile never blocks.
func (r *Reconciler) reconcileDelete(ctx context.Context, s *scope) (ctrl.Result, error) {
	log := ctrl.LoggerFrom(ctx)
	m := s.machine
	d := &s.deletion
	d.executed = true
	now := time.Now()

	nodeAllowed, why, err := r.isDeleteNodeAllowed(ctx, s)
	if err != nil {
		d.at(clusterv1.MachineDeletingInternalErrorV1Beta2Reason, "Please check controller logs for errors")
		return ctrl.Result{}, err
	}
	if !nodeAllowed {
		log.Info("Skipping drain and deletion of the Node", "cause", why)
	}

	if nodeAllowed {
		d.preDrainHook = d.hooks(log, m, clusterv1.PreDrainDeleteHookAnnotationPrefix, clusterv1.MachineDeletingWaitingForPreDrainHookV1Beta2Reason, "pre-drain",
			func(st *clusterv1.MachineDeletionStatus) **metav1.Time { return &st.WaitForPreDrainHookStartTime }, now)
		if d.preDrainHook == stepWaiting {
			return ctrl.Result{}, nil
		}

		if drainAllowed(m, s.infra, now) {
			if m.Status.Deletion == nil {
				m.Status.Deletion = &clusterv1.MachineDeletionStatus{}
			}
			if m.Status.Deletion.NodeDrainStartTime == nil {
				m.Status.Deletion.NodeDrainStartTime = &metav1.Time{Time: now}
			}
			done, message, err := r.drainNode(ctx, s)
			switch {
			case errors.Is(err, clustercache.ErrClusterNotConnected):
				d.drain = stepWaiting
				d.drainMessage = "Waiting for the connection to the workload cluster"
				d.at(clusterv1.MachineDeletingDrainingNodeV1Beta2Reason, d.drainMessage)
				return ctrl.Result{}, err
			case err != nil:
				d.drain = stepFailed
				d.at(clusterv1.MachineDeletingDrainingNodeV1Beta2Reason, "Error draining Node, please check controller logs for errors")
				r.event(m, corev1.EventTypeWarning, "FailedDrainNode", "error draining Machine's node %q: %v", m.Status.NodeRef.Name, err)
				return ctrl.Result{}, err
			case !done:
				d.drain = stepWaiting
				d.drainMessage = message
				d.at(clusterv1.MachineDeletingDrainingNodeV1Beta2Reason, message)
				return ctrl.Result{RequeueAfter: reconciler.OrDefault(r.DrainRetryInterval, defaultDrainRetryInterval)}, nil
			}
			d.drain = stepDone
			r.event(m, corev1.EventTypeNormal, "SuccessfulDrainNode", "success draining Machine's node %q", m.Status.NodeRef.Name)
		}

		if volumeDetachWaitAllowed(m, s.infra, now) {
			if m.Status.Deletion == nil {
				m.Status.Deletion = &clusterv1.MachineDeletionStatus{}
			}
			if m.Status.Deletion.WaitForNodeVolumeDetachStartTime == nil {
				m.Status.Deletion.WaitForNodeVolumeDetachStartTime = &metav1.Time{Time: now}
			}
			volumes, err := r.attachedVolumes(ctx, s)
			if err != nil {
				d.volumeDetach = stepWaiting
				d.at(clusterv1.MachineDeletingWaitingForVolumeDetachV1Beta2Reason, "Error waiting for volumes to be detached from Node, please check controller logs for errors")
				return ctrl.Result{}, err
			}
			if len(volumes) > 0 {
				d.volumeDetach = stepWaiting
				d.at(clusterv1.MachineDeletingWaitingForVolumeDetachV1Beta2Reason, volumesMessage(volumes))
				log.Info("Waiting for the Node's volumes to be detached", "volumes", len(volumes))
				return ctrl.Result{RequeueAfter: reconciler.OrDefault(r.VolumeDetachRetryInterval, defaultVolumeDetachRetryInterval)}, nil
			}
			d.volumeDetach = stepDone
			r.event(m, corev1.EventTypeNormal, "NodeVolumesDetached", "success waiting for node volumes detaching Machine's node %q", m.Status.NodeRef.Name)
		}
	}

	d.preTerminateHook = d.hooks(log, m, clusterv1.PreTerminateDeleteHookAnnotationPrefix, clusterv1.MachineDeletingWaitingForPreTerminateHookV1Beta2Reason, "pre-terminate",
		func(st *clusterv1.MachineDeletionStatus) **metav1.Time { return &st.WaitForPreTerminateHookStartTime }, now)
	if d.preTerminateHook == stepWaiting {
		return ctrl.Result{}, nil
	}

	// The InfraMachine goes first: the bootstrap data must outlive the machine that may still read it.
	gone, err := r.deleteExternal(ctx, m, &m.Spec.InfrastructureRef)
	if err != nil {
		d.at(clusterv1.MachineDeletingInternalErrorV1Beta2Reason, "Please check controller logs for errors")
		return ctrl.Result{}, err
	}
	if !gone {
		d.at(clusterv1.MachineDeletingWaitingForInfrastructureDeletionV1Beta2Reason, fmt.Sprintf("Waiting for %s to be deleted", m.Spec.InfrastructureRef.Kind))
		log.Info("Waiting for the InfraMachine to be deleted", m.Spec.InfrastructureRef.Kind, klog.KRef(m.Namespace, m.Spec.InfrastructureRef.Name))
		return ctrl.Result{}, nil
	}
	if ref := m.Spec.Bootstrap.ConfigRef; ref != nil {
		gone, err := r.deleteExternal(ctx, m, ref)
		if err != nil {
			d.at(clusterv1.MachineDeletingInternalErrorV1Beta2Reason, "Please check controller logs for errors")
			return ctrl.Result{}, err
		}
		if !gone {
			d.at(clusterv1.MachineDeletingWaitingForBootstrapDeletionV1Beta2Reason, fmt.Sprintf("Waiting for %s to be deleted", ref.Kind))
			log.Info("Waiting for the bootstrap config to be deleted", ref.Kind, klog.KRef(m.Namespace, ref.Name))
			return ctrl.Result{}, nil
		}
	}

	// The Node goes only after the infrastructure: a Node deleted earlier would be recreated by its kubelet.
	if nodeAllowed {
		if err := r.deleteNode(ctx, s); err != nil {
			d.nodeDeletionFailed = true
			r.event(m, corev1.EventTypeWarning, "FailedDeleteNode", "error deleting Machine's node: %v", err)
			if !nodeDeletionTimedOut(m, now) {
				d.at(clusterv1.MachineDeletingDeletingNodeV1Beta2Reason, "Error deleting Node, please check controller logs for errors")
				log.Error(err, "Deleting the Node failed, retrying", "Node", klog.KRef("", m.Status.NodeRef.Name))
				return ctrl.Result{RequeueAfter: reconciler.OrDefault(r.NodeDeletionRetryInterval, defaultNodeDeletionRetryInterval)}, nil
			}
			log.Error(err, "Deleting the Node failed and nodeDeletionTimeout expired, going on without deleting it", "Node", klog.KRef("", m.Status.NodeRef.Name))
		}
	}

	d.at(clusterv1.MachineDeletingDeletionCompletedV1Beta2Reason, "Deletion completed")
	log.Info("Removing the finalizer")
	controllerutil.RemoveFinalizer(m, clusterv1.MachineFinalizer)
	return ctrl.Result{}, nil
}

// event records an event on the Machine, when the controller has a recorder.
func (r *Reconciler) event(m *clusterv1.Machine, eventType, reason, format string, args ...any) {
	if r.Recorder != nil {
		r.Recorder.Eventf(m, eventType, reason, format, args...)
	}
}

// isDeleteNodeAllowed reports whether the deletion drains and deletes the Node, and why not: not while the
// Cluster or its control plane are going away, not without a Node, and not when no other control plane
// Machine is left (the workload cluster is going away), unless the control plane is externally managed.
func (r *Reconciler) isDeleteNodeAllowed(ctx context.Context, s *scope) (bool, string, error) {
	log := ctrl.LoggerFrom(ctx)
	m, cluster := s.machine, s.cluster
	if cluster == nil {
		return false, "the Cluster is gone", nil
	}
	if !cluster.DeletionTimestamp.IsZero() {
		return false, "the Cluster is being deleted", nil
	}
	// reconcileNode, which runs first, links the Node when there is one.
	if m.Status.NodeRef == nil {
		return false, "the Machine has no Node", nil
	}
	if ref := cluster.Spec.ControlPlaneRef; ref != nil {
		cp, err := external.GetCached(ctx, r.providers(), r.APIReader, ref, cluster.Namespace)
		var cross *external.CrossNamespaceError
		switch {
		case apierrors.IsNotFound(err), errors.As(err, &cross):
			log.Info("The control plane object of the Cluster does not exist", ref.Kind, klog.KRef(cluster.Namespace, ref.Name))
		case err != nil:
			return false, "", err
		case !cp.GetDeletionTimestamp().IsZero():
			return false, "the control plane is being deleted", nil
		case externallyManaged(cp):
			return true, "", nil
		}
	}
	machines := &clusterv1.MachineList{}
	if err := r.Client.List(ctx, machines, client.InNamespace(cluster.Namespace), client.MatchingLabels{clusterv1.ClusterNameLabel: cluster.Name}); err != nil {
		return false, "", fmt.Errorf("listing the Machines of Cluster %s: %w", cluster.Name, err)
	}
	activeControlPlane := 0
	for i := range machines.Items {
		other := &machines.Items[i]
		if _, cp := other.Labels[clusterv1.MachineControlPlaneLabel]; cp && other.DeletionTimestamp.IsZero() {
			activeControlPlane++
		}
	}
	if activeControlPlane == 0 {
		return false, "no control plane Machine is left", nil
	}
	return true, "", nil
}

// externallyManaged reports whether a control plane object says it is managed outside the cluster
// (status.externalManagedControlPlane, as managed Kubernetes services do).
func externallyManaged(cp *unstructured.Unstructured) bool {
	v, _, _ := unstructured.NestedBool(cp.Object, "status", "externalManagedControlPlane")
	return v
}

// hookAnnotations returns, sorted, the annotations of the Machine with a delete hook prefix.
func hookAnnotations(m *clusterv1.Machine, prefix string) []string {
	var out []string
	for key := range m.Annotations {
		if strings.HasPrefix(key, prefix) {
			out = append(out, key)
		}
	}
	slices.Sort(out)
	return out
}

// drainAllowed reports whether the deletion drains the Node now: not with the exclude-node-draining
// annotation, not once nodeDrainTimeout has passed since the drain started, and (as upstream v1.14) not
// once the deletion waited for pre-terminate hooks or the InfraMachine is gone or being deleted: the Node
// is then going away with its machine, and a drain would only hold the deletion.
func drainAllowed(m *clusterv1.Machine, infra providerFacts, now time.Time) bool {
	if _, ok := m.Annotations[clusterv1.ExcludeNodeDrainingAnnotation]; ok {
		return false
	}
	return nodeStepsAllowed(m, infra) && !timedOut(m.Spec.NodeDrainTimeout, drainStart(m), now)
}

// volumeDetachWaitAllowed reports whether the deletion waits for volumes to detach now: not with the
// exclude-wait-for-node-volume-detach annotation, not once nodeVolumeDetachTimeout has passed, and not when
// drainAllowed would refuse for the pre-terminate hooks or the InfraMachine.
func volumeDetachWaitAllowed(m *clusterv1.Machine, infra providerFacts, now time.Time) bool {
	if _, ok := m.Annotations[clusterv1.ExcludeWaitForNodeVolumeDetachAnnotation]; ok {
		return false
	}
	var start *metav1.Time
	if m.Status.Deletion != nil {
		start = m.Status.Deletion.WaitForNodeVolumeDetachStartTime
	}
	return nodeStepsAllowed(m, infra) && !timedOut(m.Spec.NodeVolumeDetachTimeout, start, now)
}

// nodeStepsAllowed reports whether drain and the wait for volumes may still run: not once the deletion has
// waited for pre-terminate hooks (status.deletion.waitForPreTerminateHookStartTime), and not when the
// InfraMachine does not exist or is being deleted.
func nodeStepsAllowed(m *clusterv1.Machine, infra providerFacts) bool {
	if m.Status.Deletion != nil && m.Status.Deletion.WaitForPreTerminateHookStartTime != nil {
		return false
	}
	return infra.obj != nil && infra.obj.GetDeletionTimestamp().IsZero()
}

func drainStart(m *clusterv1.Machine) *metav1.Time {
	if m.Status.Deletion == nil {
		return nil
	}
	return m.Status.Deletion.NodeDrainStartTime
}

// timedOut reports whether a step started at start with a timeout (none when nil or zero) is over.
func timedOut(timeout *metav1.Duration, start *metav1.Time, now time.Time) bool {
	if timeout == nil || timeout.Duration <= 0 || start == nil {
		return false
	}
	return !now.Before(start.Add(timeout.Duration))
}

// nodeDeletionTimedOut reports whether the Machine stopped trying to delete its Node: nodeDeletionTimeout
// (10s when unset, forever when 0) after the Machine's deletion started.
func nodeDeletionTimedOut(m *clusterv1.Machine, now time.Time) bool {
	timeout := defaultNodeDeletionTimeout
	if m.Spec.NodeDeletionTimeout != nil {
		timeout = m.Spec.NodeDeletionTimeout.Duration
	}
	if timeout <= 0 || m.DeletionTimestamp.IsZero() {
		return false
	}
	return !now.Before(m.DeletionTimestamp.Add(timeout))
}

// attachedVolumes returns the volumes still attached to the Machine's Node (status.volumesAttached). A Node
// that is gone or unreachable has none that will ever detach.
func (r *Reconciler) attachedVolumes(ctx context.Context, s *scope) ([]string, error) {
	remote, err := r.ClusterCache.GetClient(ctx, client.ObjectKeyFromObject(s.cluster))
	if err != nil {
		return nil, err
	}
	node := &corev1.Node{}
	if err := remote.Get(ctx, client.ObjectKey{Name: s.machine.Status.NodeRef.Name}, node); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, nil
		}
		return nil, fmt.Errorf("getting Node %s: %w", s.machine.Status.NodeRef.Name, err)
	}
	if nodeUnreachable(node) {
		ctrl.LoggerFrom(ctx).Info("The Node is unreachable, not waiting for its volumes to detach", "Node", klog.KObj(node))
		return nil, nil
	}
	var out []string
	for _, v := range node.Status.VolumesAttached {
		out = append(out, string(v.Name))
	}
	slices.Sort(out)
	return out, nil
}

// volumesMessage says which volumes the deletion waits for, naming at most three.
func volumesMessage(volumes []string) string {
	names := strings.Join(volumes, ", ")
	if len(volumes) > 3 {
		names = fmt.Sprintf("%s, ... (%d more)", strings.Join(volumes[:3], ", "), len(volumes)-3)
	}
	return fmt.Sprintf("Waiting for Node volumes to be detached:\n* Volumes: %s", names)
}

// deleteExternal deletes the object a reference points at and reports whether it is gone.
func (r *Reconciler) deleteExternal(ctx context.Context, m *clusterv1.Machine, ref *corev1.ObjectReference) (bool, error) {
	obj, err := external.GetCached(ctx, r.providers(), r.APIReader, ref, m.Namespace)
	if apierrors.IsNotFound(err) {
		return true, nil
	}
	var cross *external.CrossNamespaceError
	if errors.As(err, &cross) {
		// Never delete another namespace's object: it is not this Machine's to delete.
		ctrl.LoggerFrom(ctx).Info("Not deleting the object of another namespace that the Machine references", ref.Kind, klog.KRef(ref.Namespace, ref.Name))
		return true, nil
	}
	if err != nil {
		return false, err
	}
	if obj.GetDeletionTimestamp().IsZero() {
		ctrl.LoggerFrom(ctx).Info("Deleting "+ref.Kind, ref.Kind, klog.KObj(obj))
		if err := r.Client.Delete(ctx, obj); err != nil && !apierrors.IsNotFound(err) {
			return false, fmt.Errorf("deleting %s %s: %w", ref.Kind, klog.KObj(obj), err)
		}
	}
	return false, nil
}

// deleteNode deletes the Machine's Node from the workload cluster.
func (r *Reconciler) deleteNode(ctx context.Context, s *scope) error {
	remote, err := r.ClusterCache.GetClient(ctx, client.ObjectKeyFromObject(s.cluster))
	if err != nil {
		return err
	}
	name := s.machine.Status.NodeRef.Name
	ctrl.LoggerFrom(ctx).Info("Deleting Node", "Node", klog.KRef("", name))
	if err := remote.Delete(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}}); err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("deleting Node %s: %w", name, err)
	}
	return nil
}
