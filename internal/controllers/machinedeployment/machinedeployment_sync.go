package machinedeployment

import (
	"context"
	"fmt"
	"maps"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/klog/v2"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
	"github.com/capstan-dev/capstan/internal/external"
	"github.com/capstan-dev/capstan/internal/rollout"
)

// missingTemplateRequeue is how often a MachineDeployment whose templates do not exist checks again;
// templates are not watched.
const missingTemplateRequeue = 30 * time.Second

// rollout finds the new and old MachineSets and takes one step: a RollingUpdate or OnDelete step, or,
// when spec.replicas changed during a rollout or spec.paused is set, a proportional resize without rollout.
func (r *Reconciler) rollout(ctx context.Context, s *scope) (ctrl.Result, error) {
	log := ctrl.LoggerFrom(ctx)
	md := s.md
	if err := r.ensureDeploymentNameLabel(ctx, s); err != nil {
		return ctrl.Result{}, err
	}
	s.newMS = findNewMachineSet(md, s.machineSets, s.now)
	s.oldMSs = oldMachineSets(s.machineSets, s.newMS)

	var res ctrl.Result
	if after := md.Spec.RolloutAfter; after != nil && s.now.Before(after.Time) {
		res.RequeueAfter = after.Sub(s.now)
	}
	switch {
	case s.invalidConfiguration != "":
		log.Info("Not rolling out: the MachineDeployment's spec is invalid", "reason", s.invalidConfiguration)
		return res, nil
	case s.infrastructureTemplateNotFound || s.bootstrapTemplateNotFound:
		log.Info("Not rolling out: a template does not exist")
		return ctrl.Result{RequeueAfter: missingTemplateRequeue}, nil
	}

	if s.newMS != nil {
		if err := r.updateMachineSet(ctx, s, s.newMS); err != nil {
			return ctrl.Result{}, err
		}
	}
	for _, ms := range s.oldMSs {
		if err := r.updateOldMachineSet(ctx, s, ms); err != nil {
			return ctrl.Result{}, err
		}
	}

	desired := s.replicas()
	if md.Spec.Paused {
		// Only a paused MachineDeployment resizes its MachineSets proportionally; otherwise a new
		// spec.replicas is taken up by the rollout step, which grows the new MachineSet (as upstream).
		log.V(4).Info("Not rolling out: spec.paused is set")
		return res, r.applyPlan(ctx, s, planScale(md, desired, s.strategy, s.newMS, s.oldMSs))
	}

	if s.newMS == nil {
		ms, err := r.createMachineSet(ctx, s)
		if err != nil {
			return ctrl.Result{}, err
		}
		s.newMS = ms
		s.machineSets = append(s.machineSets, ms)
	}

	if err := r.setMachineCreation(ctx, s); err != nil {
		return ctrl.Result{}, err
	}
	return res, r.applyPlan(ctx, s, planStep(desired, s.strategy, s.newMS, s.oldMSs, s.liveMachines()))
}

// planStep is one step of the rollout of an unpaused MachineDeployment towards desired replicas, by its
// strategy. A change of spec.replicas during a rollout is part of the step: the new MachineSet grows (or
// shrinks) and old ones only ever shrink, as upstream does.
func planStep(desired int32, s strategy, newMS *clusterv1.MachineSet, oldMSs []*clusterv1.MachineSet, live map[string]int32) plan {
	if s.kind == clusterv1.RollingUpdateMachineDeploymentStrategyType {
		return planRollingUpdate(desired, s, newMS, oldMSs)
	}
	return planOnDelete(desired, newMS, oldMSs, live)
}

// oldMachineSets returns the MachineSets other than newMS.
func oldMachineSets(machineSets []*clusterv1.MachineSet, newMS *clusterv1.MachineSet) []*clusterv1.MachineSet {
	var out []*clusterv1.MachineSet
	for _, ms := range machineSets {
		if newMS == nil || ms.UID != newMS.UID {
			out = append(out, ms)
		}
	}
	return out
}

// liveMachines counts the Machines of each MachineSet that are not being deleted.
func (s *scope) liveMachines() map[string]int32 {
	byUID := map[string]string{}
	for _, ms := range s.machineSets {
		byUID[string(ms.UID)] = ms.Name
	}
	out := map[string]int32{}
	for _, m := range s.machines {
		if ref := metav1.GetControllerOf(m); ref != nil && m.DeletionTimestamp.IsZero() {
			out[byUID[string(ref.UID)]]++
		}
	}
	return out
}

// ensureDeploymentNameLabel labels the owned MachineSets with the MachineDeployment's name, which the
// MachineSets copy to their Machines; MachineSets adopted or created by older versions may lack it.
func (r *Reconciler) ensureDeploymentNameLabel(ctx context.Context, s *scope) error {
	for _, ms := range s.machineSets {
		if ms.Labels[clusterv1.MachineDeploymentNameLabel] == s.md.Name {
			continue
		}
		before := ms.DeepCopy()
		if ms.Labels == nil {
			ms.Labels = map[string]string{}
		}
		ms.Labels[clusterv1.MachineDeploymentNameLabel] = s.md.Name
		ctrl.LoggerFrom(ctx).Info("Labelling MachineSet with the MachineDeployment's name", "MachineSet", klog.KObj(ms))
		if err := r.Client.Patch(ctx, ms, client.MergeFrom(before), client.FieldOwner(fieldOwner)); err != nil {
			return fmt.Errorf("labelling MachineSet %s: %w", ms.Name, err)
		}
	}
	return nil
}

// desiredMachineSet returns the MachineSet the MachineDeployment wants for its current template. For an
// existing MachineSet it keeps what must not change (name, template spec apart from the in-place fields,
// replicas, the template hash label); for a new one it picks a name and a template hash label.
func desiredMachineSet(s *scope, existing *clusterv1.MachineSet) (*clusterv1.MachineSet, error) {
	md := s.md
	desired := s.replicas()
	var ms *clusterv1.MachineSet
	var uniqueLabel string
	if existing != nil {
		ms = existing.DeepCopy()
		uniqueLabel = existing.Labels[clusterv1.MachineDeploymentUniqueLabel]
		if uniqueLabel == "" {
			uniqueLabel = templateHash(&md.Spec.Template)
		}
	} else {
		name := external.GenerateName(md.Name + "-")
		// The random suffix tells apart MachineSets with the same template, which spec.rolloutAfter creates.
		uniqueLabel = templateHash(&md.Spec.Template) + "-" + name[len(name)-5:]
		ms = &clusterv1.MachineSet{
			TypeMeta: metav1.TypeMeta{APIVersion: clusterv1.GroupVersion.String(), Kind: "MachineSet"},
			ObjectMeta: metav1.ObjectMeta{
				Name: name, Namespace: md.Namespace,
				OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(md, clusterv1.GroupVersion.WithKind("MachineDeployment"))},
				Finalizers:      []string{clusterv1.MachineSetFinalizer},
			},
			Spec: clusterv1.MachineSetSpec{
				ClusterName: md.Spec.ClusterName,
				Template:    clusterv1.MachineTemplateSpec{Spec: *md.Spec.Template.Spec.DeepCopy()},
			},
		}
		var replicas int32
		if s.strategy.kind == clusterv1.RollingUpdateMachineDeploymentStrategyType {
			replicas = planRollingUpdate(desired, s.strategy, ms, s.oldMSs).replicas(ms)
		} else {
			replicas = planOnDelete(desired, ms, s.oldMSs, s.liveMachines()).replicas(ms)
		}
		ms.Spec.Replicas = ptr.To(replicas)
	}

	// The fields propagated in place.
	ms.Labels = maps.Clone(md.Spec.Template.Labels)
	if ms.Labels == nil {
		ms.Labels = map[string]string{}
	}
	ms.Labels[clusterv1.ClusterNameLabel] = md.Spec.ClusterName
	ms.Labels[clusterv1.MachineDeploymentNameLabel] = md.Name
	ms.Labels[clusterv1.MachineDeploymentUniqueLabel] = uniqueLabel
	ms.Spec.Template.Labels = effectiveTemplateLabels(md)
	ms.Spec.Template.Labels[clusterv1.MachineDeploymentUniqueLabel] = uniqueLabel
	ms.Spec.Template.Annotations = maps.Clone(md.Spec.Template.Annotations)
	ms.Spec.Selector = *effectiveSelectorSpec(md)
	ms.Spec.Selector.MatchLabels[clusterv1.MachineDeploymentUniqueLabel] = uniqueLabel
	annotations, err := machineSetAnnotations(md, desired, s.strategy, s.oldMSs, existing)
	if err != nil {
		return nil, err
	}
	ms.Annotations = annotations
	ms.Spec.MinReadySeconds = ptr.Deref(md.Spec.MinReadySeconds, 0)
	ms.Spec.DeletePolicy = s.strategy.deletePolicy
	ms.Spec.MachineNamingStrategy = md.Spec.MachineNamingStrategy.DeepCopy()
	rollout.CopyInPlaceFields(&ms.Spec.Template.Spec, &md.Spec.Template.Spec)
	return ms, nil
}

// createMachineSet creates the MachineSet for the current template and waits for the cache to show it, so
// the next reconcile does not create another one.
func (r *Reconciler) createMachineSet(ctx context.Context, s *scope) (*clusterv1.MachineSet, error) {
	ms, err := desiredMachineSet(s, nil)
	if err != nil {
		return nil, err
	}
	if _, owned := ms.Labels[clusterv1.ClusterTopologyOwnedLabel]; owned && r.TopologyFinalizer {
		controllerutil.AddFinalizer(ms, clusterv1.MachineSetTopologyFinalizer)
	}
	log := ctrl.LoggerFrom(ctx)
	log.Info("Creating MachineSet", "MachineSet", klog.KObj(ms), "replicas", ptr.Deref(ms.Spec.Replicas, 0),
		"reason", newMachineSetReason(s))
	if err := r.Client.Create(ctx, ms, client.FieldOwner(fieldOwner)); err != nil {
		r.event(s.md, corev1.EventTypeWarning, "FailedCreate", "Failed to create MachineSet %s: %v", klog.KObj(ms), err)
		return nil, fmt.Errorf("creating MachineSet %s: %w", ms.Name, err)
	}
	r.event(s.md, corev1.EventTypeNormal, "SuccessfulCreate", "Created MachineSet %s", klog.KObj(ms))
	err = wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, r.cacheSyncTimeout(), true, func(ctx context.Context) (bool, error) {
		return r.Client.Get(ctx, client.ObjectKeyFromObject(ms), &clusterv1.MachineSet{}) == nil, nil
	})
	if err != nil {
		return nil, fmt.Errorf("waiting for the cache to show MachineSet %s: %w", ms.Name, err)
	}
	s.md.Annotations = setAnnotation(s.md.Annotations, clusterv1.RevisionAnnotation, ms.Annotations[clusterv1.RevisionAnnotation])
	return ms, nil
}

// newMachineSetReason says why a new MachineSet is needed, for the log.
func newMachineSetReason(s *scope) string {
	if len(s.machineSets) == 0 {
		return "no MachineSet exists"
	}
	newest := s.machineSets[len(s.machineSets)-1]
	if diffs := rollout.TemplateDiff(&newest.Spec.Template, &s.md.Spec.Template); len(diffs) > 0 {
		return fmt.Sprintf("MachineSet %s: %s", newest.Name, strings.Join(diffs, ", "))
	}
	if s.md.Spec.RolloutAfter != nil {
		return fmt.Sprintf("spec.rolloutAfter %s has passed", s.md.Spec.RolloutAfter.UTC().Format(time.RFC3339))
	}
	return "no MachineSet matches the template"
}

// updateMachineSet propagates the in-place fields and the revision annotations to the new MachineSet.
func (r *Reconciler) updateMachineSet(ctx context.Context, s *scope, ms *clusterv1.MachineSet) error {
	want, err := desiredMachineSet(s, ms)
	if err != nil {
		return err
	}
	// Labels and annotations that others set on the MachineSet stay; those this controller set and no
	// longer wants go.
	want.Labels = rollout.SyncMetadata(ms.Labels, want.Labels, rollout.OwnedKeys(ms, fieldOwner, "f:labels"))
	want.Annotations = rollout.SyncMetadata(ms.Annotations, want.Annotations, rollout.OwnedKeys(ms, fieldOwner, "f:annotations"))
	if err := r.patchMachineSet(ctx, ms, want, "Updating MachineSet in place"); err != nil {
		return err
	}
	s.md.Annotations = setAnnotation(s.md.Annotations, clusterv1.RevisionAnnotation, ms.Annotations[clusterv1.RevisionAnnotation])
	return nil
}

// updateOldMachineSet propagates the node deletion timeouts to an old MachineSet, whose Machines are the
// next to be deleted.
func (r *Reconciler) updateOldMachineSet(ctx context.Context, s *scope, ms *clusterv1.MachineSet) error {
	want := ms.DeepCopy()
	from := &s.md.Spec.Template.Spec
	want.Spec.Template.Spec.NodeDrainTimeout = from.NodeDrainTimeout.DeepCopy()
	want.Spec.Template.Spec.NodeDeletionTimeout = from.NodeDeletionTimeout.DeepCopy()
	want.Spec.Template.Spec.NodeVolumeDetachTimeout = from.NodeVolumeDetachTimeout.DeepCopy()
	return r.patchMachineSet(ctx, ms, want, "Updating the node deletion timeouts of an old MachineSet")
}

// patchMachineSet patches ms to want when they differ, with optimistic locking: a decision taken on a
// stale MachineSet is retried rather than applied.
func (r *Reconciler) patchMachineSet(ctx context.Context, ms, want *clusterv1.MachineSet, message string) error {
	if reflect.DeepEqual(ms.ObjectMeta, want.ObjectMeta) && reflect.DeepEqual(ms.Spec, want.Spec) {
		return nil
	}
	before := ms.DeepCopy()
	ms.ObjectMeta = want.ObjectMeta
	ms.Spec = want.Spec
	ctrl.LoggerFrom(ctx).Info(message, "MachineSet", klog.KObj(ms))
	if err := r.Client.Patch(ctx, ms, client.MergeFromWithOptions(before, client.MergeFromWithOptimisticLock{}), client.FieldOwner(fieldOwner)); err != nil {
		return fmt.Errorf("patching MachineSet %s: %w", ms.Name, err)
	}
	return nil
}

// applyPlan scales the MachineSets in the plan, the new one first, and refreshes their desired and maximum
// replicas annotations.
func (r *Reconciler) applyPlan(ctx context.Context, s *scope, p plan) error {
	ordered := append([]*clusterv1.MachineSet(nil), s.machineSets...)
	sort.SliceStable(ordered, func(i, j int) bool { return ordered[i] == s.newMS && ordered[j] != s.newMS })
	for _, ms := range ordered {
		replicas, ok := p[ms.Name]
		if !ok {
			continue
		}
		if err := r.scaleMachineSet(ctx, s, ms, replicas); err != nil {
			return err
		}
	}
	return nil
}

func (r *Reconciler) scaleMachineSet(ctx context.Context, s *scope, ms *clusterv1.MachineSet, replicas int32) error {
	want := ms.DeepCopy()
	want.Spec.Replicas = ptr.To(replicas)
	desired := s.replicas()
	want.Annotations = setAnnotation(want.Annotations, clusterv1.DesiredReplicasAnnotation, strconv.Itoa(int(desired)))
	want.Annotations = setAnnotation(want.Annotations, clusterv1.MaxReplicasAnnotation, strconv.Itoa(int(desired+s.strategy.maxSurge)))
	from := specReplicas(ms)
	msg := fmt.Sprintf("Scaling MachineSet from %d to %d replicas", from, replicas)
	if from == replicas {
		msg = "Updating the replicas annotations of a MachineSet"
	}
	if err := r.patchMachineSet(ctx, ms, want, msg); err != nil {
		if from != replicas {
			r.event(s.md, corev1.EventTypeWarning, "FailedScale", "Failed to scale MachineSet %s: %v", klog.KObj(ms), err)
		}
		return err
	}
	if from != replicas {
		r.event(s.md, corev1.EventTypeNormal, "SuccessfulScale", "Scaled MachineSet %s: %d -> %d", klog.KObj(ms), from, replicas)
	}
	return nil
}

// setMachineCreation lets only the new MachineSet create Machines under OnDelete: old MachineSets get the
// disable-machine-create annotation, so they do not replace the Machines the user deletes. The new
// MachineSet loses it (an old MachineSet can become the new one again), unless the MachineDeployment itself
// carries it.
func (r *Reconciler) setMachineCreation(ctx context.Context, s *scope) error {
	onDelete := s.strategy.kind == clusterv1.OnDeleteMachineDeploymentStrategyType
	_, mdDisables := s.md.Annotations[clusterv1.DisableMachineCreateAnnotation]
	for _, ms := range s.machineSets {
		want := ms.DeepCopy()
		switch {
		case ms == s.newMS && !mdDisables:
			delete(want.Annotations, clusterv1.DisableMachineCreateAnnotation)
		case ms != s.newMS && onDelete && specReplicas(ms) > 0:
			want.Annotations = setAnnotation(want.Annotations, clusterv1.DisableMachineCreateAnnotation, "true")
		}
		if err := r.patchMachineSet(ctx, ms, want, "Updating the disable-machine-create annotation of a MachineSet"); err != nil {
			return err
		}
	}
	return nil
}

// cleanupOldMachineSets deletes old MachineSets without Machines beyond spec.revisionHistoryLimit (1 when
// empty), oldest first, once the rollout is complete.
func (r *Reconciler) cleanupOldMachineSets(ctx context.Context, s *scope) (ctrl.Result, error) {
	if s.newMS == nil || !rolloutComplete(s) {
		return ctrl.Result{}, nil
	}
	limit := int(ptr.Deref(s.md.Spec.RevisionHistoryLimit, 1))
	var candidates []*clusterv1.MachineSet
	for _, ms := range s.oldMSs {
		if ms.DeletionTimestamp.IsZero() {
			candidates = append(candidates, ms)
		}
	}
	sort.SliceStable(candidates, func(i, j int) bool { return olderThan(candidates[i], candidates[j]) })
	for i := 0; i < len(candidates)-limit; i++ {
		ms := candidates[i]
		if specReplicas(ms) != 0 || ms.Status.Replicas != 0 || ms.Generation > ms.Status.ObservedGeneration {
			continue
		}
		ctrl.LoggerFrom(ctx).Info("Deleting old MachineSet", "MachineSet", klog.KObj(ms))
		if err := r.Client.Delete(ctx, ms); err != nil && !apierrors.IsNotFound(err) {
			r.event(s.md, corev1.EventTypeWarning, "FailedDelete", "Failed to delete MachineSet %q: %v", ms.Name, err)
			return ctrl.Result{}, fmt.Errorf("deleting old MachineSet %s: %w", ms.Name, err)
		}
		r.event(s.md, corev1.EventTypeNormal, "SuccessfulDelete", "Deleted MachineSet %q", ms.Name)
	}
	return ctrl.Result{}, nil
}

// rolloutComplete reports whether the new MachineSet has every desired replica available and no other
// Machines are left.
func rolloutComplete(s *scope) bool {
	desired := s.replicas()
	var replicas, available int32
	for _, ms := range s.machineSets {
		replicas += ms.Status.Replicas
		available += ms.Status.AvailableReplicas
	}
	return s.newMS.Status.Replicas == desired && replicas == desired && available == desired &&
		s.newMS.Status.ObservedGeneration >= s.newMS.Generation
}

func setAnnotation(annotations map[string]string, key, value string) map[string]string {
	if annotations == nil {
		annotations = map[string]string{}
	}
	annotations[key] = value
	return annotations
}
