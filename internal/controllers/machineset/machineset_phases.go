package machineset

import (
	"context"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"sort"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
	"github.com/capstan-dev/capstan/internal/conditions"
	"github.com/capstan-dev/capstan/internal/external"
	"github.com/capstan-dev/capstan/internal/labelformat"
	"github.com/capstan-dev/capstan/internal/reconciler"
	"github.com/capstan-dev/capstan/internal/rollout"
)

// reconcileLabelsAndDefaults labels the MachineSet with its Cluster, applies the defaults upstream's webhook
// would (spec.replicas) and checks what the CRD schema cannot. (A MachineSet that no MachineDeployment owns
// was made owned by its Cluster before.)
func (r *Reconciler) reconcileLabelsAndDefaults(ctx context.Context, s *scope) (ctrl.Result, error) {
	ms := s.ms
	reconciler.SetClusterNameLabel(ms, ms.Spec.ClusterName)
	rollout.DefaultSpecReplicas(ctx, &ms.Spec.Replicas, ms.Annotations, ms.Status.ObservedGeneration, ms.Status.Replicas)

	s.invalidConfiguration = validate(ms)
	return ctrl.Result{}, nil
}

// hasOwner reports whether refs hold a reference to a Cluster API object of the given kind.
func hasOwner(refs []metav1.OwnerReference, kind string) bool {
	return slices.ContainsFunc(refs, func(ref metav1.OwnerReference) bool {
		return reconciler.RefersTo(ref, clusterv1.GroupVersion.Group, kind)
	})
}

// validate returns why the MachineSet's spec cannot work, or "" when it can.
func validate(ms *clusterv1.MachineSet) string {
	selector, err := effectiveSelector(ms)
	if err != nil {
		return fmt.Sprintf("Spec.selector is invalid: %v", err)
	}
	if !selector.Matches(labels.Set(effectiveTemplateLabels(ms))) {
		return "Spec.selector does not match the labels of spec.template.metadata"
	}
	if problem := rollout.TemplateRefsProblem(&ms.Spec.Template.Spec, ms.Namespace); problem != "" {
		return problem
	}
	if t := ms.Spec.MachineNamingStrategy; t != nil && t.Template != "" {
		if _, err := machineName(t.Template, ms, "abcde"); err != nil {
			return fmt.Sprintf("Spec.machineNamingStrategy.template is invalid: %v", err)
		}
	}
	return ""
}

// effectiveSelector is the MachineSet's selector as upstream's defaulting webhook writes it: restricted to
// its Cluster, and, when empty, to the MachineSet's own Machines (set-name label).
func effectiveSelector(ms *clusterv1.MachineSet) (labels.Selector, error) {
	sel := ms.Spec.Selector.DeepCopy()
	if sel.MatchLabels == nil {
		sel.MatchLabels = map[string]string{}
	}
	if emptySelector(ms) {
		sel.MatchLabels[clusterv1.MachineSetNameLabel] = labelformat.Value(ms.Name)
	}
	sel.MatchLabels[clusterv1.ClusterNameLabel] = ms.Spec.ClusterName
	return metav1.LabelSelectorAsSelector(sel)
}

// effectiveTemplateLabels are the template's labels as upstream's defaulting webhook writes them: with the
// Cluster's and, when the selector is empty, the MachineSet's name.
func effectiveTemplateLabels(ms *clusterv1.MachineSet) map[string]string {
	out := maps.Clone(ms.Spec.Template.Labels)
	if out == nil {
		out = map[string]string{}
	}
	if emptySelector(ms) {
		out[clusterv1.MachineSetNameLabel] = labelformat.Value(ms.Name)
	}
	out[clusterv1.ClusterNameLabel] = ms.Spec.ClusterName
	return out
}

func emptySelector(ms *clusterv1.MachineSet) bool {
	return len(ms.Spec.Selector.MatchLabels) == 0 && len(ms.Spec.Selector.MatchExpressions) == 0
}

// getOwningMachineDeployment finds the MachineDeployment that controls the MachineSet, if any. When it
// has a spec.rolloutAfter in the future, the MachineSet comes back then to mark its Machines out of date.
func (r *Reconciler) getOwningMachineDeployment(ctx context.Context, s *scope) (ctrl.Result, error) {
	ref := metav1.GetControllerOf(s.ms)
	if ref == nil || ref.Kind != "MachineDeployment" || !hasOwner([]metav1.OwnerReference{*ref}, "MachineDeployment") {
		return ctrl.Result{}, nil
	}
	md := &clusterv1.MachineDeployment{}
	if err := r.Client.Get(ctx, client.ObjectKey{Namespace: s.ms.Namespace, Name: ref.Name}, md); err != nil {
		if apierrors.IsNotFound(err) {
			return ctrl.Result{}, nil
		}
		return ctrl.Result{}, fmt.Errorf("getting MachineDeployment %s: %w", ref.Name, err)
	}
	if md.UID != ref.UID {
		return ctrl.Result{}, nil
	}
	s.owningMD = md
	if after := md.Spec.RolloutAfter; after != nil && s.now.Before(after.Time) {
		return ctrl.Result{RequeueAfter: after.Sub(s.now)}, nil
	}
	return ctrl.Result{}, nil
}

// reconcileTemplates points the template references at the newest API version of their contract, makes
// the Cluster an owner of the templates (so they move and go with it) and records missing templates.
func (r *Reconciler) reconcileTemplates(ctx context.Context, s *scope) (ctrl.Result, error) {
	var err error
	s.infrastructureTemplateNotFound, s.bootstrapTemplateNotFound, err = rollout.ReconcileTemplates(ctx, r.Client, r.Contracts,
		s.cluster, &s.ms.Spec.Template.Spec, s.ms.Namespace)
	return ctrl.Result{}, err
}

// getAndAdoptMachines finds the Machines the MachineSet owns and adopts the orphans of its Cluster that its
// selector matches. Machines controlled by something else are never taken.
func (r *Reconciler) getAndAdoptMachines(ctx context.Context, s *scope) (ctrl.Result, error) {
	ms := s.ms
	owned := &clusterv1.MachineList{}
	if err := r.Client.List(ctx, owned, client.InNamespace(ms.Namespace),
		client.MatchingFields{MachineControllerIndex: string(ms.UID)}); err != nil {
		return ctrl.Result{}, fmt.Errorf("listing the Machines of MachineSet %s: %w", ms.Name, err)
	}
	machines := make([]*clusterv1.Machine, 0, len(owned.Items))
	for i := range owned.Items {
		machines = append(machines, &owned.Items[i])
	}

	if ms.DeletionTimestamp.IsZero() && s.invalidConfiguration == "" {
		adopted, err := r.adoptOrphans(ctx, ms)
		if err != nil {
			return ctrl.Result{}, err
		}
		machines = append(machines, adopted...)
	}
	sort.Slice(machines, func(i, j int) bool { return machines[i].Name < machines[j].Name })
	s.machines = machines
	s.getMachinesSucceeded = true
	return ctrl.Result{}, nil
}

func (r *Reconciler) adoptOrphans(ctx context.Context, ms *clusterv1.MachineSet) ([]*clusterv1.Machine, error) {
	log := ctrl.LoggerFrom(ctx)
	selector, err := effectiveSelector(ms)
	if err != nil {
		return nil, err
	}
	candidates := &clusterv1.MachineList{}
	if err := r.Client.List(ctx, candidates, client.InNamespace(ms.Namespace), client.MatchingLabelsSelector{Selector: selector}); err != nil {
		return nil, fmt.Errorf("listing Machines matching the selector of MachineSet %s: %w", ms.Name, err)
	}
	var adopted []*clusterv1.Machine
	for i := range candidates.Items {
		m := &candidates.Items[i]
		if metav1.GetControllerOf(m) != nil || !m.DeletionTimestamp.IsZero() || m.Spec.ClusterName != ms.Spec.ClusterName {
			continue
		}
		before := m.DeepCopy()
		m.OwnerReferences = append(m.OwnerReferences, *metav1.NewControllerRef(ms, clusterv1.GroupVersion.WithKind("MachineSet")))
		log.Info("Adopting Machine", "Machine", klog.KObj(m))
		if err := r.Client.Patch(ctx, m, client.MergeFromWithOptions(before, client.MergeFromWithOptimisticLock{})); err != nil {
			if apierrors.IsNotFound(err) {
				continue
			}
			return nil, fmt.Errorf("adopting Machine %s: %w", m.Name, err)
		}
		adopted = append(adopted, m)
	}
	return adopted, nil
}

// syncMachines propagates, without replacing any Machine, the template's labels and annotations to the
// Machines and their InfraMachines and BootstrapConfigs, and the node timeouts and readiness gates to the
// Machines. Labels and annotations this controller set earlier and the template no longer has are removed;
// those that others set are kept. For a MachineSet of a MachineDeployment, it also sets the Machines'
// UpToDate condition.
func (r *Reconciler) syncMachines(ctx context.Context, s *scope) (ctrl.Result, error) {
	log := ctrl.LoggerFrom(ctx)
	ms := s.ms
	wantLabels := machineLabels(ms)
	wantAnnotations := maps.Clone(ms.Spec.Template.Annotations)
	upToDate := machineUpToDateCondition(ms, s.owningMD, s.now)
	for _, m := range s.machines {
		if r.machineWrites.Stale(m) {
			// The cache has not caught up with the last write of this Machine (or with the write that a
			// write of it conflicted with): the event of that write brings the MachineSet back.
			log.V(5).Info("Waiting for the cache to show the last write of the Machine", "Machine", klog.KObj(m))
			continue
		}
		if err := r.syncUpToDate(ctx, m, upToDate, s.now); err != nil {
			return ctrl.Result{}, err
		}
		if r.machineWrites.Stale(m) {
			continue // the write conflicted
		}
		before := m.DeepCopy()
		rollout.CopyInPlaceFields(&m.Spec, &ms.Spec.Template.Spec)
		if m.DeletionTimestamp.IsZero() {
			m.Labels = rollout.SyncMetadata(m.Labels, wantLabels, rollout.OwnedKeys(m, fieldOwner, "f:labels"))
			m.Annotations = rollout.SyncMetadata(m.Annotations, wantAnnotations, rollout.OwnedKeys(m, fieldOwner, "f:annotations"))
		}
		if !reflect.DeepEqual(before.Labels, m.Labels) || !reflect.DeepEqual(before.Annotations, m.Annotations) ||
			!reflect.DeepEqual(before.Spec, m.Spec) {
			log.Info("Updating Machine in place", "Machine", klog.KObj(m))
			if err := r.Client.Patch(ctx, m, client.MergeFrom(before), client.FieldOwner(fieldOwner)); err != nil {
				if apierrors.IsNotFound(err) {
					continue
				}
				return ctrl.Result{}, fmt.Errorf("updating Machine %s in place: %w", m.Name, err)
			}
			r.machineWrites.Record(before.ResourceVersion, m)
		}
		if !m.DeletionTimestamp.IsZero() {
			continue
		}
		if err := r.resumeClones(ctx, ms, m); err != nil {
			return ctrl.Result{}, err
		}
		refs := []*corev1.ObjectReference{&m.Spec.InfrastructureRef}
		if m.Spec.Bootstrap.ConfigRef != nil {
			refs = append(refs, m.Spec.Bootstrap.ConfigRef)
		}
		for _, ref := range refs {
			if err := r.syncExternalMetadata(ctx, ms, ref, m.Namespace, wantLabels, wantAnnotations); err != nil {
				return ctrl.Result{}, err
			}
		}
	}
	return ctrl.Result{}, nil
}

// syncUpToDate sets a Machine's UpToDate condition, with optimistic locking: conditions are a list, which a
// merge patch replaces, and the Machine controller writes them too. The condition is written when what it
// says changes; its observedGeneration is the Machine's generation then. A new generation of the Machine
// alone is no reason to write it again: whether a Machine is up to date follows from its MachineSet and
// MachineDeployment, not from the Machine's spec.
//
// A new Machine without the condition is left to its controller within upToDateGracePeriod when it is up to
// date: the Machine controller's first status write sets UpToDate True, which saves a write (and the
// conflict of two writers of a new Machine's conditions).
func (r *Reconciler) syncUpToDate(ctx context.Context, m *clusterv1.Machine, want *metav1.Condition, now time.Time) error {
	if want == nil {
		return nil
	}
	c := conditions.GetV1Beta2(m, want.Type)
	if c != nil && c.Status == want.Status && c.Reason == want.Reason && c.Message == want.Message {
		return nil
	}
	if c == nil && want.Status == metav1.ConditionTrue && conditions.InUpToDateGracePeriod(m, now) {
		return nil
	}
	before := m.DeepCopy()
	conditions.SetV1Beta2(m, *want)
	ctrl.LoggerFrom(ctx).V(4).Info("Setting the UpToDate condition of a Machine", "Machine", klog.KObj(m), "status", want.Status)
	err := r.Client.Status().Patch(ctx, m, client.MergeFromWithOptions(before, client.MergeFromWithOptimisticLock{}), client.FieldOwner(fieldOwner))
	switch {
	case apierrors.IsConflict(err):
		// The Machine changed since it was read; its event brings the MachineSet back to look again.
		r.machineWrites.Replaced(m, before.ResourceVersion)
		*m = *before
		return nil
	case apierrors.IsNotFound(err):
		return nil
	case err != nil:
		return fmt.Errorf("setting the UpToDate condition of Machine %s: %w", m.Name, err)
	}
	r.machineWrites.Record(before.ResourceVersion, m)
	return nil
}

// syncExternalMetadata propagates labels and annotations to an InfraMachine or BootstrapConfig. It reads
// only the object's metadata, which the manager caches. The MachineSet creates its clones with the labels
// and annotations it propagates, as its own (createMachine), so there is nothing to write unless they
// change; the clone's cloned-from annotations, and the labels and annotations that came from its template's
// spec.template.metadata, are never removed (the template is read only when something would be).
func (r *Reconciler) syncExternalMetadata(ctx context.Context, ms *clusterv1.MachineSet, ref *corev1.ObjectReference, namespace string, wantLabels, wantAnnotations map[string]string) error {
	if ref.Name == "" || ref.Kind == "" {
		return nil
	}
	obj := &metav1.PartialObjectMetadata{}
	obj.SetGroupVersionKind(schema.FromAPIVersionAndKind(ref.APIVersion, ref.Kind))
	ns := ref.Namespace
	if ns == "" {
		ns = namespace
	}
	if err := r.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: ref.Name}, obj); err != nil {
		if apierrors.IsNotFound(err) {
			return nil // the Machine controller reports missing objects
		}
		return fmt.Errorf("getting %s %s/%s: %w", ref.Kind, ns, ref.Name, err)
	}
	ownedLabels := rollout.OwnedKeys(obj, fieldOwner, "f:labels")
	ownedAnnotations := rollout.OwnedKeys(obj, fieldOwner, "f:annotations").
		Delete(clusterv1.TemplateClonedFromNameAnnotation, clusterv1.TemplateClonedFromGroupKindAnnotation)
	if removes(obj.Labels, wantLabels, ownedLabels) || removes(obj.Annotations, wantAnnotations, ownedAnnotations) {
		tplLabels, tplAnnotations, err := r.templateMetadataKeys(ctx, ms, obj)
		if err != nil {
			return err
		}
		ownedLabels, ownedAnnotations = ownedLabels.Difference(tplLabels), ownedAnnotations.Difference(tplAnnotations)
	}
	before := obj.DeepCopy()
	obj.Labels = rollout.SyncMetadata(obj.Labels, wantLabels, ownedLabels)
	obj.Annotations = rollout.SyncMetadata(obj.Annotations, wantAnnotations, ownedAnnotations)
	if reflect.DeepEqual(before.Labels, obj.Labels) && reflect.DeepEqual(before.Annotations, obj.Annotations) {
		return nil
	}
	ctrl.LoggerFrom(ctx).Info("Updating labels and annotations", ref.Kind, klog.KRef(ns, ref.Name))
	if err := r.Client.Patch(ctx, obj, client.MergeFrom(before), client.FieldOwner(fieldOwner)); err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("updating the labels and annotations of %s %s/%s: %w", ref.Kind, ns, ref.Name, err)
	}
	return nil
}

// removes says whether syncMetadata would remove a key of current: one owned and no longer wanted.
func removes(current, want map[string]string, owned sets.Set[string]) bool {
	for k := range owned {
		if _, has := current[k]; has {
			if _, wanted := want[k]; !wanted {
				return true
			}
		}
	}
	return false
}

// templateMetadataKeys returns the keys of the labels and annotations of the spec.template.metadata of the
// template obj was cloned from: one of the MachineSet's templates, by the cloned-from annotations. When
// obj's template is not one of them (the MachineSet's template references changed since), it returns every
// key of obj, so that nothing is removed from a clone whose template cannot be told.
func (r *Reconciler) templateMetadataKeys(ctx context.Context, ms *clusterv1.MachineSet, obj *metav1.PartialObjectMetadata) (tplLabels, tplAnnotations sets.Set[string], err error) {
	name, groupKind := obj.Annotations[clusterv1.TemplateClonedFromNameAnnotation], obj.Annotations[clusterv1.TemplateClonedFromGroupKindAnnotation]
	refs := []*corev1.ObjectReference{&ms.Spec.Template.Spec.InfrastructureRef, ms.Spec.Template.Spec.Bootstrap.ConfigRef}
	for _, ref := range refs {
		if ref == nil || ref.Name != name || schema.FromAPIVersionAndKind(ref.APIVersion, ref.Kind).GroupKind().String() != groupKind {
			continue
		}
		tpl, err := external.Get(ctx, r.Client, ref, ms.Namespace)
		if apierrors.IsNotFound(err) {
			break
		}
		if err != nil {
			return nil, nil, fmt.Errorf("getting the template %s %s: %w", ref.Kind, ref.Name, err)
		}
		l, _, _ := unstructured.NestedStringMap(tpl.Object, "spec", "template", "metadata", "labels")
		a, _, _ := unstructured.NestedStringMap(tpl.Object, "spec", "template", "metadata", "annotations")
		return sets.KeySet(l), sets.KeySet(a), nil
	}
	return sets.KeySet(obj.Labels), sets.KeySet(obj.Annotations), nil
}
