// Package topologymachineset holds the controller that cleans up the templates rotated by the topology
// controller, as upstream's topology MachineSet controller does: a MachineSet of a topology-owned
// MachineDeployment gets the finalizer machineset.topology.cluster.x-k8s.io; when it is deleted (the
// MachineDeployment controller deletes old MachineSets once a rollout is done, and every MachineSet of a
// MachineDeployment removed from the topology), the bootstrap and infrastructure templates it references
// are deleted unless the MachineDeployment or another MachineSet of it still uses them.
package topologymachineset

import (
	"context"
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
	"github.com/capstan-dev/capstan/internal/patch"
	"github.com/capstan-dev/capstan/internal/reconciler"
)

// Reconciler is the topology MachineSet controller.
type Reconciler struct {
	Client client.Client
	// APIReader lists the MachineSets of a MachineDeployment uncached, so that a MachineSet created a
	// moment ago is not missed.
	APIReader client.Reader
	// WatchFilter, when set, limits the controller to objects with this cluster.x-k8s.io/watch-filter label.
	WatchFilter string
}

// SetupWithManager adds the controller to mgr; it watches topology-owned MachineSets.
func (r *Reconciler) SetupWithManager(_ context.Context, mgr ctrl.Manager, options controller.Options) error {
	if r.Client == nil || r.APIReader == nil {
		return errors.New("the topology MachineSet controller needs a Client and an APIReader")
	}
	return ctrl.NewControllerManagedBy(mgr).
		Named("topology/machineset").
		For(&clusterv1.MachineSet{}, builder.WithPredicates(predicate.NewPredicateFuncs(isTopologyOwned))).
		WithOptions(options).
		WithEventFilter(reconciler.HasWatchLabel(r.WatchFilter)).
		Complete(reconciler.RequeueOnConflict(r))
}

func isTopologyOwned(o client.Object) bool {
	_, ok := o.GetLabels()[clusterv1.ClusterTopologyOwnedLabel]
	return ok
}

// Reconcile adds the finalizer to a topology-owned MachineSet, and cleans up its templates when it is
// deleted.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	ms := &clusterv1.MachineSet{}
	if err := r.Client.Get(ctx, req.NamespacedName, ms); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !isTopologyOwned(ms) {
		return ctrl.Result{}, nil
	}
	if ms.DeletionTimestamp.IsZero() {
		if controllerutil.ContainsFinalizer(ms, clusterv1.MachineSetTopologyFinalizer) {
			return ctrl.Result{}, nil
		}
		helper := patch.NewHelper(ms, r.Client)
		controllerutil.AddFinalizer(ms, clusterv1.MachineSetTopologyFinalizer)
		return ctrl.Result{}, helper.Patch(ctx, ms)
	}
	if !controllerutil.ContainsFinalizer(ms, clusterv1.MachineSetTopologyFinalizer) {
		return ctrl.Result{}, nil
	}
	if controllerutil.ContainsFinalizer(ms, clusterv1.MachineSetFinalizer) {
		// The MachineSet controller deletes the Machines first and then removes its finalizer, which brings
		// the MachineSet back here. Removing both finalizers at once made one of the two patches fail (each
		// replaces the list of finalizers), and the loser's reconcile ran again, templates and all.
		return ctrl.Result{}, nil
	}
	if err := r.deleteUnusedTemplates(ctx, ms); err != nil {
		return ctrl.Result{}, err
	}
	// The helper sends the finalizer alone, tested rather than locked: the MachineSet controller writes the
	// status of a MachineSet being deleted meanwhile, and that need not make this patch fail.
	helper := patch.NewHelper(ms, r.Client)
	controllerutil.RemoveFinalizer(ms, clusterv1.MachineSetTopologyFinalizer)
	return ctrl.Result{}, client.IgnoreNotFound(helper.Patch(ctx, ms))
}

type templateKey struct {
	gk   schema.GroupKind
	name string
}

func keyOf(ref *corev1.ObjectReference) templateKey {
	return templateKey{schema.FromAPIVersionAndKind(ref.APIVersion, ref.Kind).GroupKind(), ref.Name}
}

// deleteUnusedTemplates deletes the templates of ms that neither its MachineDeployment (unless it is
// being deleted) nor another of its MachineSets (not being deleted) references.
func (r *Reconciler) deleteUnusedTemplates(ctx context.Context, ms *clusterv1.MachineSet) error {
	inUse := map[templateKey]bool{}
	mdName := ""
	for _, ref := range ms.OwnerReferences {
		if ref.Kind == "MachineDeployment" {
			if gv, err := schema.ParseGroupVersion(ref.APIVersion); err == nil && gv.Group == clusterv1.GroupVersion.Group {
				mdName = ref.Name
			}
		}
	}
	if mdName == "" {
		mdName = ms.Labels[clusterv1.MachineDeploymentNameLabel]
	}
	if mdName != "" {
		md := &clusterv1.MachineDeployment{}
		err := r.Client.Get(ctx, client.ObjectKey{Namespace: ms.Namespace, Name: mdName}, md)
		switch {
		case err == nil:
			if md.DeletionTimestamp.IsZero() {
				addTemplates(inUse, md.Spec.Template.Spec)
			}
		case !apierrors.IsNotFound(err):
			return fmt.Errorf("getting MachineDeployment %s: %w", mdName, err)
		}
		siblings := &clusterv1.MachineSetList{}
		if err := r.APIReader.List(ctx, siblings, client.InNamespace(ms.Namespace), client.MatchingLabels{clusterv1.MachineDeploymentNameLabel: mdName}); err != nil {
			return fmt.Errorf("listing the MachineSets of MachineDeployment %s: %w", mdName, err)
		}
		for i := range siblings.Items {
			other := &siblings.Items[i]
			if other.UID != ms.UID && other.DeletionTimestamp.IsZero() {
				addTemplates(inUse, other.Spec.Template.Spec)
			}
		}
	}
	var errs []error
	refs := []*corev1.ObjectReference{ms.Spec.Template.Spec.Bootstrap.ConfigRef, &ms.Spec.Template.Spec.InfrastructureRef}
	for _, ref := range refs {
		if ref == nil || ref.Name == "" || inUse[keyOf(ref)] {
			continue
		}
		u := &unstructured.Unstructured{}
		u.SetAPIVersion(ref.APIVersion)
		u.SetKind(ref.Kind)
		u.SetNamespace(ms.Namespace)
		u.SetName(ref.Name)
		ctrl.LoggerFrom(ctx).Info("Deleting template no longer used", ref.Kind, klog.KObj(u), "MachineSet", klog.KObj(ms))
		if err := r.Client.Delete(ctx, u); err != nil && !apierrors.IsNotFound(err) {
			errs = append(errs, fmt.Errorf("deleting %s %s of MachineSet %s: %w", ref.Kind, ref.Name, ms.Name, err))
		}
	}
	return errors.Join(errs...)
}

func addTemplates(inUse map[templateKey]bool, spec clusterv1.MachineSpec) {
	if ref := spec.Bootstrap.ConfigRef; ref != nil {
		inUse[keyOf(ref)] = true
	}
	inUse[keyOf(&spec.InfrastructureRef)] = true
}
