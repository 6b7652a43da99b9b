package topology

import (
	"context"
	"fmt"
	"reflect"

	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
	"github.com/capstan-dev/capstan/internal/topology"
)

// apply writes the desired state: the InfraCluster and control plane (with its machine template and
// health check) first, then the Cluster's references, then the MachineDeployments and MachinePools;
// MachineDeployments and MachinePools that the topology no longer lists are deleted. An object the
// engine holds (it waits for an upgrade) is left as it is, but for its MachineHealthCheck.
func (r *Reconciler) apply(ctx context.Context, s *scope, cur *topology.Current, desired *topology.Desired) error {
	if infra := desired.InfrastructureCluster; infra != nil {
		if err := r.ssa(ctx, infra, unstructuredOrNil(cur.InfrastructureCluster)); err != nil {
			return err
		}
		if err := r.watch(ctx, infra.GroupVersionKind()); err != nil {
			return err
		}
	}
	if !desired.ControlPlane.Held || cur.ControlPlane.Object == nil {
		if t := desired.ControlPlane.InfrastructureMachineTemplate; t != nil {
			if err := r.ssa(ctx, t, sameName(cur.ControlPlane.InfrastructureMachineTemplate, t)); err != nil {
				return err
			}
		}
		if err := r.ssa(ctx, desired.ControlPlane.Object, unstructuredOrNil(cur.ControlPlane.Object)); err != nil {
			return err
		}
		if err := r.deleteRotatedTemplate(ctx, cur.ControlPlane.InfrastructureMachineTemplate, desired.ControlPlane.InfrastructureMachineTemplate); err != nil {
			return err
		}
	}
	if err := r.watch(ctx, desired.ControlPlane.Object.GroupVersionKind()); err != nil {
		return err
	}
	if err := r.applyHealthCheck(ctx, desired.ControlPlane.MachineHealthCheck, cur.ControlPlane.MachineHealthCheck); err != nil {
		return err
	}
	if err := r.patchCluster(ctx, s.cluster, desired.Cluster); err != nil {
		return err
	}
	for name, md := range desired.MachineDeployments {
		var current *topology.MachineDeploymentState
		if c, ok := cur.MachineDeployments[name]; ok {
			current = c
		}
		var curBootstrap, curInfra *unstructured.Unstructured
		var curMD client.Object
		var curMHC *clusterv1.MachineHealthCheck
		if current != nil {
			curBootstrap, curInfra, curMD, curMHC = current.BootstrapTemplate, current.InfrastructureMachineTemplate, current.Object, current.MachineHealthCheck
		}
		if !md.Held || current == nil {
			if err := r.ssa(ctx, md.BootstrapTemplate, sameName(curBootstrap, md.BootstrapTemplate)); err != nil {
				return err
			}
			if err := r.ssa(ctx, md.InfrastructureMachineTemplate, sameName(curInfra, md.InfrastructureMachineTemplate)); err != nil {
				return err
			}
			obj, err := toUnstructured(md.Object)
			if err != nil {
				return err
			}
			if err := r.ssa(ctx, obj, curMD); err != nil {
				return err
			}
		}
		if err := r.applyHealthCheck(ctx, md.MachineHealthCheck, curMHC); err != nil {
			return err
		}
	}
	for name, mp := range desired.MachinePools {
		current := cur.MachinePools[name]
		if mp.Held && current != nil {
			continue
		}
		var curBootstrap, curInfra *unstructured.Unstructured
		var curMP client.Object
		if current != nil {
			curBootstrap, curInfra, curMP = current.BootstrapObject, current.InfrastructureMachinePoolObject, current.Object
		}
		if err := r.ssa(ctx, mp.BootstrapObject, sameName(curBootstrap, mp.BootstrapObject)); err != nil {
			return err
		}
		if err := r.ssa(ctx, mp.InfrastructureMachinePoolObject, sameName(curInfra, mp.InfrastructureMachinePoolObject)); err != nil {
			return err
		}
		obj, err := toUnstructured(mp.Object)
		if err != nil {
			return err
		}
		if err := r.ssa(ctx, obj, curMP); err != nil {
			return err
		}
	}
	keepMDs, keepMPs := map[string]bool{}, map[string]bool{}
	if w := s.cluster.Spec.Topology.Workers; w != nil {
		for _, md := range w.MachineDeployments {
			keepMDs[md.Name] = true
		}
		for _, mp := range w.MachinePools {
			keepMPs[mp.Name] = true
		}
	}
	for name, md := range cur.MachineDeployments {
		if keepMDs[name] {
			continue
		}
		ctrl.LoggerFrom(ctx).Info("Deleting MachineDeployment removed from the topology", "MachineDeployment", klog.KObj(md.Object))
		if md.MachineHealthCheck != nil {
			if err := client.IgnoreNotFound(r.Client.Delete(ctx, md.MachineHealthCheck)); err != nil {
				return fmt.Errorf("deleting MachineHealthCheck %s: %w", md.MachineHealthCheck.Name, err)
			}
		}
		if err := client.IgnoreNotFound(r.Client.Delete(ctx, md.Object)); err != nil {
			return fmt.Errorf("deleting MachineDeployment %s: %w", md.Object.Name, err)
		}
	}
	for name, mp := range cur.MachinePools {
		if keepMPs[name] {
			continue
		}
		// The MachinePool controller deletes its bootstrap config and InfraMachinePool.
		ctrl.LoggerFrom(ctx).Info("Deleting MachinePool removed from the topology", "MachinePool", klog.KObj(mp.Object))
		if err := client.IgnoreNotFound(r.Client.Delete(ctx, mp.Object)); err != nil {
			return fmt.Errorf("deleting MachinePool %s: %w", mp.Object.Name, err)
		}
	}
	return nil
}

func unstructuredOrNil(u *unstructured.Unstructured) client.Object {
	if u == nil {
		return nil
	}
	return u
}

// deleteRotatedTemplate deletes the control plane's machine template that a rotation replaced, once the
// control plane refers to the new one, as upstream does: the control plane provider clones the template
// when it creates a Machine, so the old one is used by nothing. Templates the topology does not own are
// left alone.
func (r *Reconciler) deleteRotatedTemplate(ctx context.Context, current, desired *unstructured.Unstructured) error {
	if current == nil || desired == nil || current.GetName() == desired.GetName() || !isTopologyOwned(current) {
		return nil
	}
	ctrl.LoggerFrom(ctx).Info("Deleting the control plane's machine template replaced by a rotation",
		current.GetKind(), klog.KObj(current), "new", desired.GetName())
	if err := client.IgnoreNotFound(r.Client.Delete(ctx, current)); err != nil {
		return fmt.Errorf("deleting %s %s replaced by %s: %w", current.GetKind(), current.GetName(), desired.GetName(), err)
	}
	return nil
}

// sameName returns the current template when the desired one keeps its name (no rotation).
func sameName(current, desired *unstructured.Unstructured) client.Object {
	if current == nil || current.GetName() != desired.GetName() {
		return nil
	}
	return current
}

func (r *Reconciler) applyHealthCheck(ctx context.Context, desired, current *clusterv1.MachineHealthCheck) error {
	if desired == nil {
		if current != nil && isTopologyOwned(current) {
			ctrl.LoggerFrom(ctx).Info("Deleting MachineHealthCheck no longer in the topology", "MachineHealthCheck", klog.KObj(current))
			return client.IgnoreNotFound(r.Client.Delete(ctx, current))
		}
		return nil
	}
	obj, err := toUnstructured(desired)
	if err != nil {
		return err
	}
	var cur client.Object
	if current != nil {
		cur = current
	}
	return r.ssa(ctx, obj, cur)
}

// toUnstructured turns a typed desired object into the unstructured form that is applied.
func toUnstructured(obj client.Object) (*unstructured.Unstructured, error) {
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		return nil, err
	}
	delete(m, "status")
	u := &unstructured.Unstructured{Object: m}
	unstructured.RemoveNestedField(u.Object, "metadata", "creationTimestamp")
	unstructured.RemoveNestedField(u.Object, "spec", "template", "metadata", "creationTimestamp")
	return u, nil
}

// ssa applies desired with server-side apply under FieldManager. When the object exists, and holds the
// desired state this controller applied last, the apply is skipped; otherwise a dry-run apply first tells
// whether the apply would change it. A steady object is not written.
func (r *Reconciler) ssa(ctx context.Context, desired *unstructured.Unstructured, current client.Object) error {
	log := ctrl.LoggerFrom(ctx).WithValues(desired.GetKind(), klog.KObj(desired))
	hash, err := desiredHash(desired)
	if err != nil {
		return err
	}
	if current != nil {
		cur, err := runtime.DefaultUnstructuredConverter.ToUnstructured(current)
		if err != nil {
			return fmt.Errorf("reading the current %s %s: %w", desired.GetKind(), desired.GetName(), err)
		}
		if r.noDiff.holdsApplied(desired, hash, cur, current.GetUID()) {
			return nil
		}
		key, err := r.noDiff.key(desired, hash, current, cur)
		if err != nil {
			return err
		}
		if r.noDiff.has(key) {
			return nil
		}
		dry := desired.DeepCopy()
		if err := r.Client.Apply(ctx, client.ApplyConfigurationFromUnstructured(dry), client.FieldOwner(FieldManager), client.ForceOwnership, client.DryRunAll); err != nil {
			return fmt.Errorf("dry-run applying %s %s: %w", desired.GetKind(), desired.GetName(), err)
		}
		same, err := unchanged(current, dry)
		if err != nil {
			return err
		}
		if same {
			r.noDiff.add(key)
			r.noDiff.recordApplied(current.GetUID(), hash)
			return nil
		}
		log.Info("Updating object")
	} else {
		log.Info("Creating object")
	}
	obj := desired.DeepCopy()
	if err := r.Client.Apply(ctx, client.ApplyConfigurationFromUnstructured(obj), client.FieldOwner(FieldManager), client.ForceOwnership); err != nil {
		if apierrors.IsInvalid(err) {
			return fmt.Errorf("applying %s %s: the object is invalid: %w", desired.GetKind(), desired.GetName(), err)
		}
		return fmt.Errorf("applying %s %s: %w", desired.GetKind(), desired.GetName(), err)
	}
	r.noDiff.recordApplied(obj.GetUID(), hash)
	return nil
}

// unchanged compares the current object with the result of a dry-run apply, ignoring managedFields.
func unchanged(current client.Object, dry *unstructured.Unstructured) (bool, error) {
	unstructured.RemoveNestedField(dry.Object, "metadata", "managedFields")
	if u, ok := current.(*unstructured.Unstructured); ok {
		c := u.DeepCopy()
		unstructured.RemoveNestedField(c.Object, "metadata", "managedFields")
		return equality.Semantic.DeepEqual(c.Object, dry.Object), nil
	}
	typed := reflect.New(reflect.TypeOf(current).Elem()).Interface().(client.Object)
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(dry.Object, typed); err != nil {
		return false, err
	}
	c := current.DeepCopyObject().(client.Object)
	c.SetManagedFields(nil)
	typed.SetManagedFields(nil)
	c.GetObjectKind().SetGroupVersionKind(typed.GetObjectKind().GroupVersionKind())
	return equality.Semantic.DeepEqual(c, typed), nil
}

// patchCluster sets the Cluster's references and topology labels with a regular patch, as upstream does
// for the Cluster itself.
func (r *Reconciler) patchCluster(ctx context.Context, cluster, desired *clusterv1.Cluster) error {
	step, stepSet := desired.Annotations[clusterv1.ClusterTopologyUpgradeStepAnnotation]
	current, currentSet := cluster.Annotations[clusterv1.ClusterTopologyUpgradeStepAnnotation]
	if equality.Semantic.DeepEqual(cluster.Spec.InfrastructureRef, desired.Spec.InfrastructureRef) &&
		equality.Semantic.DeepEqual(cluster.Spec.ControlPlaneRef, desired.Spec.ControlPlaneRef) &&
		equality.Semantic.DeepEqual(cluster.Labels, desired.Labels) && step == current && stepSet == currentSet {
		return nil
	}
	ctrl.LoggerFrom(ctx).Info("Setting the Cluster's references, labels and upgrade step")
	before := cluster.DeepCopy()
	cluster.Spec.InfrastructureRef = desired.Spec.InfrastructureRef
	cluster.Spec.ControlPlaneRef = desired.Spec.ControlPlaneRef
	cluster.Labels = desired.Labels
	// Only the upgrade-step annotation: the others are written by whoever owns them (the pending hooks by
	// this controller's hook handling, users').
	if stepSet {
		if cluster.Annotations == nil {
			cluster.Annotations = map[string]string{}
		}
		cluster.Annotations[clusterv1.ClusterTopologyUpgradeStepAnnotation] = step
	} else {
		delete(cluster.Annotations, clusterv1.ClusterTopologyUpgradeStepAnnotation)
	}
	if err := r.Client.Patch(ctx, cluster, client.MergeFromWithOptions(before, client.MergeFromWithOptimisticLock{})); err != nil {
		return fmt.Errorf("patching the Cluster's references: %w", err)
	}
	return nil
}
