package machinedeployment

import (
	"context"
	"fmt"
	"maps"
	"sort"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
	"github.com/capstan-dev/capstan/internal/conditions"
	"github.com/capstan-dev/capstan/internal/reconciler"
	"github.com/capstan-dev/capstan/internal/rollout"
)

// reconcileLabelsAndDefaults labels the MachineDeployment with its Cluster, applies the replicas default
// upstream's webhook would, and resolves the strategy. (The Cluster was made its owner before.)
func (r *Reconciler) reconcileLabelsAndDefaults(ctx context.Context, s *scope) (ctrl.Result, error) {
	md := s.md
	reconciler.SetClusterNameLabel(md, md.Spec.ClusterName)
	rollout.DefaultSpecReplicas(ctx, &md.Spec.Replicas, md.Annotations, md.Status.ObservedGeneration, md.Status.Replicas)

	s.invalidConfiguration = validate(md)
	var err error
	s.strategy, err = resolveStrategy(md, s.replicas())
	if err != nil && s.invalidConfiguration == "" {
		s.invalidConfiguration = conditions.Capitalise(err.Error())
	}
	return ctrl.Result{}, nil
}

// validate returns why the MachineDeployment's selector or template cannot work, or "" when they can.
func validate(md *clusterv1.MachineDeployment) string {
	selector, err := effectiveSelector(md)
	if err != nil {
		return fmt.Sprintf("Spec.selector is invalid: %v", err)
	}
	if !selector.Matches(labels.Set(effectiveTemplateLabels(md))) {
		return "Spec.selector does not match the labels of spec.template.metadata"
	}
	return rollout.TemplateRefsProblem(&md.Spec.Template.Spec, md.Namespace)
}

// effectiveSelectorLabels is the MachineDeployment's selector restricted to its Cluster and to itself, as
// upstream's webhook writes it.
func effectiveSelectorSpec(md *clusterv1.MachineDeployment) *metav1.LabelSelector {
	sel := md.Spec.Selector.DeepCopy()
	if sel.MatchLabels == nil {
		sel.MatchLabels = map[string]string{}
	}
	sel.MatchLabels[clusterv1.ClusterNameLabel] = md.Spec.ClusterName
	sel.MatchLabels[clusterv1.MachineDeploymentNameLabel] = md.Name
	return sel
}

func effectiveSelector(md *clusterv1.MachineDeployment) (labels.Selector, error) {
	return metav1.LabelSelectorAsSelector(effectiveSelectorSpec(md))
}

// effectiveTemplateLabels are the template's labels with the Cluster's and the MachineDeployment's name.
func effectiveTemplateLabels(md *clusterv1.MachineDeployment) map[string]string {
	out := maps.Clone(md.Spec.Template.Labels)
	if out == nil {
		out = map[string]string{}
	}
	out[clusterv1.ClusterNameLabel] = md.Spec.ClusterName
	out[clusterv1.MachineDeploymentNameLabel] = md.Name
	return out
}

// reconcileTemplates points the template references at the newest API version of their contract, makes
// the Cluster an owner of the templates and records missing templates.
func (r *Reconciler) reconcileTemplates(ctx context.Context, s *scope) (ctrl.Result, error) {
	var err error
	s.infrastructureTemplateNotFound, s.bootstrapTemplateNotFound, err = rollout.ReconcileTemplates(ctx, r.Client, r.Contracts,
		s.cluster, &s.md.Spec.Template.Spec, s.md.Namespace)
	return ctrl.Result{}, err
}

// getMachineSets finds the MachineSets the MachineDeployment owns and adopts the orphans labelled with its
// name that its selector matches. MachineSets controlled by something else are never taken.
func (r *Reconciler) getMachineSets(ctx context.Context, s *scope) (ctrl.Result, error) {
	log := ctrl.LoggerFrom(ctx)
	md := s.md
	owned := &clusterv1.MachineSetList{}
	if err := r.Client.List(ctx, owned, client.InNamespace(md.Namespace),
		client.MatchingFields{MachineSetControllerIndex: string(md.UID)}); err != nil {
		return ctrl.Result{}, fmt.Errorf("listing the MachineSets of MachineDeployment %s: %w", md.Name, err)
	}
	machineSets := make([]*clusterv1.MachineSet, 0, len(owned.Items))
	for i := range owned.Items {
		machineSets = append(machineSets, &owned.Items[i])
	}

	if md.DeletionTimestamp.IsZero() && s.invalidConfiguration == "" {
		selector, err := effectiveSelector(md)
		if err != nil {
			return ctrl.Result{}, err
		}
		candidates := &clusterv1.MachineSetList{}
		if err := r.Client.List(ctx, candidates, client.InNamespace(md.Namespace), client.MatchingLabelsSelector{Selector: selector}); err != nil {
			return ctrl.Result{}, fmt.Errorf("listing MachineSets matching the selector of MachineDeployment %s: %w", md.Name, err)
		}
		for i := range candidates.Items {
			ms := &candidates.Items[i]
			if metav1.GetControllerOf(ms) != nil || !ms.DeletionTimestamp.IsZero() || ms.Spec.ClusterName != md.Spec.ClusterName {
				continue
			}
			before := ms.DeepCopy()
			// The MachineSet controller makes the Cluster the owner of a MachineSet nothing owns; once the
			// MachineDeployment owns it, the Cluster owns it through the MachineDeployment.
			ms.OwnerReferences = withoutClusterOwner(ms.OwnerReferences)
			ms.OwnerReferences = append(ms.OwnerReferences, *metav1.NewControllerRef(md, clusterv1.GroupVersion.WithKind("MachineDeployment")))
			log.Info("Adopting MachineSet", "MachineSet", klog.KObj(ms))
			if err := r.Client.Patch(ctx, ms, client.MergeFromWithOptions(before, client.MergeFromWithOptimisticLock{})); err != nil {
				return ctrl.Result{}, fmt.Errorf("adopting MachineSet %s: %w", ms.Name, err)
			}
			machineSets = append(machineSets, ms)
		}
	}
	sort.Slice(machineSets, func(i, j int) bool { return olderThan(machineSets[i], machineSets[j]) })
	s.machineSets = machineSets
	s.getMachineSetsSucceeded = true
	return ctrl.Result{}, nil
}

// getMachines finds the Machines of the MachineDeployment's MachineSets, through the deployment-name label
// the MachineSets put on them.
func (r *Reconciler) getMachines(ctx context.Context, s *scope) (ctrl.Result, error) {
	list := &clusterv1.MachineList{}
	if err := r.Client.List(ctx, list, client.InNamespace(s.md.Namespace), client.MatchingLabels{
		clusterv1.ClusterNameLabel: s.md.Spec.ClusterName, clusterv1.MachineDeploymentNameLabel: s.md.Name,
	}); err != nil {
		return ctrl.Result{}, fmt.Errorf("listing the Machines of MachineDeployment %s: %w", s.md.Name, err)
	}
	owners := map[types.UID]bool{}
	for _, ms := range s.machineSets {
		owners[ms.UID] = true
	}
	machines := make([]*clusterv1.Machine, 0, len(list.Items))
	for i := range list.Items {
		if ref := metav1.GetControllerOf(&list.Items[i]); ref != nil && owners[ref.UID] {
			machines = append(machines, &list.Items[i])
		}
	}
	sort.Slice(machines, func(i, j int) bool { return machines[i].Name < machines[j].Name })
	s.machines = machines
	s.getMachinesSucceeded = true
	return ctrl.Result{}, nil
}

func withoutClusterOwner(refs []metav1.OwnerReference) []metav1.OwnerReference {
	var out []metav1.OwnerReference
	for _, ref := range refs {
		if ref.Kind == "Cluster" && strings.HasPrefix(ref.APIVersion, clusterv1.GroupVersion.Group+"/") {
			continue
		}
		out = append(out, ref)
	}
	return out
}
