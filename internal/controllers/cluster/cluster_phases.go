package cluster

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
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
	"github.com/capstan-dev/capstan/internal/contract"
	"github.com/capstan-dev/capstan/internal/external"
	"github.com/capstan-dev/capstan/internal/reconciler"
)

// The v1beta2 conditions of Machines the Cluster counts.
const (
	machineReadyCondition     = "Ready"
	machineAvailableCondition = "Available"
	machineUpToDateCondition  = "UpToDate"
)

// The conditions of provider objects the Cluster mirrors.
const (
	readyCondition     = "Ready"
	availableCondition = "Available"
)

// reconcileInfrastructure reads the InfraCluster, makes the Cluster its controller owner, and records what
// it reports. Once it is provisioned, its control plane endpoint fills in the Cluster's when that is not set.
func (r *Reconciler) reconcileInfrastructure(ctx context.Context, s *scope) (ctrl.Result, error) {
	cluster := s.cluster
	ref := cluster.Spec.InfrastructureRef
	if ref == nil {
		return ctrl.Result{}, nil
	}
	log := ctrl.LoggerFrom(ctx)

	obj, res, err := r.readProvider(ctx, cluster, ref, &s.infra, cluster.Status.InfrastructureReady, "InfraCluster", readyCondition)
	if obj == nil {
		return res, err
	}
	c := s.infra.contract
	if s.infra.ready, err = contract.Provisioned(obj, c); err != nil {
		return ctrl.Result{}, err
	}
	if s.infra.failureReason, s.infra.failureMessage, err = failure(obj, c); err != nil {
		return ctrl.Result{}, err
	}
	if s.infra.failureDomains, err = contract.FailureDomains(obj); err != nil {
		return ctrl.Result{}, err
	}
	if !s.infra.ready {
		return ctrl.Result{}, nil
	}
	if !cluster.Status.InfrastructureReady {
		log.Info("The InfraCluster is provisioned", obj.GetKind(), klog.KObj(obj))
	}
	return ctrl.Result{}, r.adoptEndpoint(ctx, cluster, obj)
}

// readProvider reads the provider object ref points at (what it is: the InfraCluster or the control plane)
// into f, with its condition the Cluster mirrors; wasReady says whether the Cluster has seen it ready. It
// records in f what went wrong: obj is nil when the phase has nothing more to do, and res and err are then
// what the phase returns.
func (r *Reconciler) readProvider(ctx context.Context, cluster *clusterv1.Cluster, ref *corev1.ObjectReference, f *externalObject, wasReady bool, what, condition string) (*unstructured.Unstructured, ctrl.Result, error) {
	log := ctrl.LoggerFrom(ctx)
	obj, c, notFound, err := r.reconcileExternal(ctx, cluster, ref)
	if err != nil {
		if f.problem = external.ReadProblem(err, ref); f.problem != "" {
			log.Info("Cannot use "+ref.Kind, "problem", f.problem)
			return nil, ctrl.Result{RequeueAfter: externalProblemRequeue}, nil
		}
		return nil, ctrl.Result{}, err
	}
	if notFound {
		f.notFound = true
		switch {
		case !cluster.DeletionTimestamp.IsZero():
			return nil, ctrl.Result{}, nil
		case wasReady:
			return nil, ctrl.Result{}, fmt.Errorf("%s %s has been deleted while the Cluster still exists", ref.Kind, ref.Name)
		}
		log.Info("Waiting for the "+what+" to exist", ref.Kind, klog.KRef(cluster.Namespace, ref.Name))
		return nil, ctrl.Result{RequeueAfter: r.requeueAfter()}, nil
	}
	f.obj, f.contract = obj, c
	readConditions(f, condition)
	return obj, ctrl.Result{}, nil
}

// reconcileControlPlane reads the control plane object, makes the Cluster its controller owner, and
// records what it reports. Once it is ready, its control plane endpoint fills in the Cluster's when that
// is not set.
func (r *Reconciler) reconcileControlPlane(ctx context.Context, s *scope) (ctrl.Result, error) {
	cluster := s.cluster
	ref := cluster.Spec.ControlPlaneRef
	if ref == nil {
		return ctrl.Result{}, nil
	}
	log := ctrl.LoggerFrom(ctx)

	obj, res, err := r.readProvider(ctx, cluster, ref, &s.controlPlane, cluster.Status.ControlPlaneReady, "control plane", availableCondition)
	if obj == nil {
		return res, err
	}
	c := s.controlPlane.contract
	if s.controlPlane.ready, err = contract.ControlPlaneReady(obj, c); err != nil {
		return ctrl.Result{}, err
	}
	if s.controlPlane.initialized, err = contract.ControlPlaneInitialized(obj, c); err != nil {
		return ctrl.Result{}, err
	}
	if s.controlPlane.failureReason, s.controlPlane.failureMessage, err = failure(obj, c); err != nil {
		return ctrl.Result{}, err
	}
	if s.controlPlane.replicas, err = controlPlaneReplicas(obj, c); err != nil {
		return ctrl.Result{}, err
	}
	// As upstream, status.versions that cannot be used leave the Cluster's as they were; nothing else
	// depends on them.
	if versions, _, err := contract.ControlPlaneVersions(obj); err == nil {
		s.controlPlane.versions, s.controlPlane.versionsRead = versions, true
	} else {
		log.V(4).Info("Ignoring the control plane's status.versions", obj.GetKind(), klog.KObj(obj), "err", err)
	}
	if !s.controlPlane.ready {
		return ctrl.Result{}, nil
	}
	if !cluster.Status.ControlPlaneReady {
		log.Info("The control plane is ready", obj.GetKind(), klog.KObj(obj))
	}
	return ctrl.Result{}, r.adoptEndpoint(ctx, cluster, obj)
}

// externalProblemRequeue is when a Cluster whose provider object cannot be read for a reason the user
// must fix (RBAC) looks again.
const externalProblemRequeue = 30 * time.Second

// reconcileExternal brings a reference's apiVersion to the newest of its provider's contract, reads the
// object it points at, watches its kind, and makes the Cluster its controller owner and sets the
// cluster-name label (the only changes the Cluster makes to provider objects). notFound is true when the
// object does not exist, or when its CRD does not exist while the Cluster is being deleted.
func (r *Reconciler) reconcileExternal(ctx context.Context, cluster *clusterv1.Cluster, ref *corev1.ObjectReference) (_ *unstructured.Unstructured, _ contract.Version, notFound bool, _ error) {
	log := ctrl.LoggerFrom(ctx)
	deleting := !cluster.DeletionTimestamp.IsZero()

	before := ref.APIVersion
	info, changed, err := r.Contracts.UpdateReference(ctx, ref)
	if err != nil {
		if deleting && apierrors.IsNotFound(err) {
			// Without its CRD no object of that kind can exist.
			return nil, "", true, nil
		}
		return nil, "", false, err
	}
	if changed {
		log.Info("Updating the apiVersion of a reference to the newest of its contract", "kind", ref.Kind, "from", before, "to", ref.APIVersion)
	}

	obj, err := external.GetCached(ctx, r.externalObjects(), r.APIReader, ref, cluster.Namespace)
	if err != nil {
		if apierrors.IsNotFound(err) {
			return nil, "", true, nil
		}
		var cross *external.CrossNamespaceError
		if deleting && errors.As(err, &cross) {
			// Another namespace's object is not the Cluster's: the deletion goes on without it.
			return nil, "", true, nil
		}
		return nil, "", false, err
	}
	if r.tracker != nil {
		if err := r.tracker.Watch(obj, r.ownerHandler); err != nil {
			return nil, "", false, err
		}
	}
	if err := r.ensureOwnership(ctx, cluster, obj); err != nil {
		return nil, "", false, err
	}
	return obj, info.Contract, false, nil
}

func (r *Reconciler) externalObjects() client.Reader {
	if r.externalReader != nil {
		return r.externalReader
	}
	return r.Client
}

// ensureOwnership makes the Cluster the controller owner of a provider object and sets its cluster-name
// label, patching only metadata.
func (r *Reconciler) ensureOwnership(ctx context.Context, cluster *clusterv1.Cluster, obj *unstructured.Unstructured) error {
	if isControlledBy(obj, cluster) && obj.GetLabels()[clusterv1.ClusterNameLabel] == cluster.Name {
		return nil
	}
	before := obj.DeepCopy()
	if err := controllerutil.SetControllerReference(cluster, obj, r.Client.Scheme()); err != nil {
		return fmt.Errorf("making Cluster %s the controller of %s %s: %w", cluster.Name, obj.GetKind(), obj.GetName(), err)
	}
	reconciler.SetClusterNameLabel(obj, cluster.Name)
	ctrl.LoggerFrom(ctx).Info("Setting the Cluster as controller owner", obj.GetKind(), klog.KObj(obj))
	// The optimistic lock keeps owner references that someone else adds meanwhile.
	if err := r.Client.Patch(ctx, obj, client.MergeFromWithOptions(before, client.MergeFromWithOptimisticLock{})); err != nil {
		return fmt.Errorf("setting the owner of %s %s: %w", obj.GetKind(), obj.GetName(), err)
	}
	return nil
}

// isControlledBy reports whether obj's controller owner reference points at cluster (UID included).
func isControlledBy(obj metav1.Object, cluster *clusterv1.Cluster) bool {
	owner := metav1.GetControllerOfNoCopy(obj)
	return owner != nil && reconciler.RefersTo(*owner, clusterv1.GroupVersion.Group, "Cluster") &&
		owner.Name == cluster.Name && owner.UID == cluster.UID && ptr.Deref(owner.BlockOwnerDeletion, false)
}

// adoptEndpoint copies the control plane endpoint of a provider object into the Cluster's spec when the
// Cluster has no valid endpoint; an endpoint that is set is never overwritten.
func (r *Reconciler) adoptEndpoint(ctx context.Context, cluster *clusterv1.Cluster, obj *unstructured.Unstructured) error {
	if cluster.Spec.ControlPlaneEndpoint.IsValid() {
		return nil
	}
	endpoint, err := contract.ControlPlaneEndpoint(obj)
	if err != nil {
		return err
	}
	if endpoint.IsZero() {
		return nil
	}
	ctrl.LoggerFrom(ctx).Info("Setting the control plane endpoint", "endpoint", endpoint.String(), obj.GetKind(), klog.KObj(obj))
	cluster.Spec.ControlPlaneEndpoint = endpoint
	return nil
}

// failure returns the terminal failure a provider object reports; only the v1beta1 contract has them.
func failure(obj *unstructured.Unstructured, c contract.Version) (reason, message string, err error) {
	if c != contract.V1Beta1 {
		return "", "", nil
	}
	return contract.Failure(obj)
}

// readConditions records the Ready condition of a provider object (status.conditions first, as the
// v1beta1 conditions mirror it) and the condition of type v1beta2Type (status.v1beta2.conditions first,
// where v1beta1-contract providers preview their v1beta2 conditions).
func readConditions(o *externalObject, v1beta2Type string) {
	var err error
	if o.readyCondition, err = contract.GetCondition(o.obj, readyCondition); err != nil {
		o.conditionError = err
		return
	}
	o.v1beta2Condition, o.conditionError = contract.GetV1Beta2Condition(o.obj, v1beta2Type)
}

// controlPlaneReplicas reads a control plane's counters. v1beta1-contract providers that preview the
// v1beta2 counters report the v1beta2 meaning of readyReplicas (Machines whose Ready condition is true)
// under status.v1beta2.readyReplicas; that one is preferred.
func controlPlaneReplicas(obj *unstructured.Unstructured, c contract.Version) (contract.ControlPlaneReplicas, error) {
	replicas, err := contract.Replicas(obj, c)
	if err != nil || c != contract.V1Beta1 {
		return replicas, err
	}
	raw, found, _ := unstructured.NestedFieldNoCopy(obj.Object, "status", "v1beta2", "readyReplicas")
	if !found {
		return replicas, nil
	}
	var ready int32
	switch v := raw.(type) {
	case int64:
		ready = int32(v)
	case float64:
		ready = int32(v)
	default:
		return replicas, fmt.Errorf("reading .status.v1beta2.readyReplicas of %s %s: %v is a %T, not an integer", obj.GetKind(), obj.GetName(), raw, raw)
	}
	replicas.Ready = &ready
	return replicas, nil
}

// getDescendants lists, through the cache, the MachineDeployments, MachineSets and Machines that carry the
// Cluster's cluster-name label.
func (r *Reconciler) getDescendants(ctx context.Context, s *scope) (ctrl.Result, error) {
	d, err := listDescendants(ctx, r.Client, s.cluster, r.descendantsIndexed)
	if err != nil {
		return ctrl.Result{}, err
	}
	s.descendants, s.descendantsRead = d, true
	return ctrl.Result{}, nil
}

// listDescendants lists the Cluster's descendants from c; indexed says that c is the manager's cache with
// reconciler.ClusterNameIndex (an API server does not know the index).
func listDescendants(ctx context.Context, c client.Reader, cluster *clusterv1.Cluster, indexed bool) (descendants, error) {
	opts := []client.ListOption{client.InNamespace(cluster.Namespace), client.MatchingLabels{clusterv1.ClusterNameLabel: cluster.Name}}
	if indexed {
		opts = []client.ListOption{client.InNamespace(cluster.Namespace), client.MatchingFields{reconciler.ClusterNameIndex: cluster.Name}}
	}
	mds := &clusterv1.MachineDeploymentList{}
	if err := c.List(ctx, mds, opts...); err != nil {
		return descendants{}, fmt.Errorf("listing the MachineDeployments of Cluster %s: %w", cluster.Name, err)
	}
	mss := &clusterv1.MachineSetList{}
	if err := c.List(ctx, mss, opts...); err != nil {
		return descendants{}, fmt.Errorf("listing the MachineSets of Cluster %s: %w", cluster.Name, err)
	}
	machines := &clusterv1.MachineList{}
	if err := c.List(ctx, machines, opts...); err != nil {
		return descendants{}, fmt.Errorf("listing the Machines of Cluster %s: %w", cluster.Name, err)
	}
	mps := &clusterv1.MachinePoolList{}
	if err := c.List(ctx, mps, opts...); err != nil {
		return descendants{}, fmt.Errorf("listing the MachinePools of Cluster %s: %w", cluster.Name, err)
	}
	d := descendants{machinePools: mps.Items, machineDeployments: mds.Items, machineSets: mss.Items}
	for _, m := range machines.Items {
		_, controlPlane := m.Labels[clusterv1.MachineControlPlaneLabel]
		_, pool := m.Labels[clusterv1.MachinePoolNameLabel]
		switch {
		case controlPlane:
			d.controlPlaneMachines = append(d.controlPlaneMachines, m)
		case pool:
			d.machinePoolMachines = append(d.machinePoolMachines, m)
		default:
			d.workerMachines = append(d.workerMachines, m)
		}
	}
	byName := func(a, b metav1.Object) int { return strings.Compare(a.GetName(), b.GetName()) }
	slices.SortFunc(d.machinePools, func(a, b clusterv1.MachinePool) int { return byName(&a, &b) })
	slices.SortFunc(d.machinePoolMachines, func(a, b clusterv1.Machine) int { return byName(&a, &b) })
	slices.SortFunc(d.machineDeployments, func(a, b clusterv1.MachineDeployment) int { return byName(&a, &b) })
	slices.SortFunc(d.machineSets, func(a, b clusterv1.MachineSet) int { return byName(&a, &b) })
	slices.SortFunc(d.controlPlaneMachines, func(a, b clusterv1.Machine) int { return byName(&a, &b) })
	slices.SortFunc(d.workerMachines, func(a, b clusterv1.Machine) int { return byName(&a, &b) })
	return d, nil
}
