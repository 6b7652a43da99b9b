// Package topologyplan computes, offline, what the topology controller would do for the Clusters with a
// topology among a set of objects (`clusterctl alpha topology plan`): it runs the same engine
// (internal/topology) over the ClusterClasses and templates of the input, with the input's objects as the
// current state, and reports the objects that would be created, modified or deleted.
package topologyplan

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
	"github.com/capstan-dev/capstan/internal/topology"
)

// Action is what would happen to an object.
type Action string

// The actions of a plan.
const (
	Created  Action = "created"
	Modified Action = "modified"
	Deleted  Action = "deleted"
)

// Change is one object of a plan.
type Change struct {
	Action Action
	// Object is the desired object (the current one for Deleted).
	Object *unstructured.Unstructured
	// Diff is the difference from the current object, for Modified.
	Diff string
}

// ClusterPlan is the plan of one Cluster.
type ClusterPlan struct {
	Cluster string // namespace/name
	Changes []Change
	// Notes say what the controller would wait for (for example MachineDeployments created only once the
	// control plane is initialized).
	Notes []string
}

type key struct {
	gk        schema.GroupKind
	namespace string
	name      string
}

func keyOf(u *unstructured.Unstructured, defaultNamespace string) key {
	ns := u.GetNamespace()
	if ns == "" {
		ns = defaultNamespace
	}
	return key{u.GroupVersionKind().GroupKind(), ns, u.GetName()}
}

// Plan computes the plan of the Clusters with a topology in objs (only clusterName, "namespace/name" or
// "name", when not empty). Objects without a namespace are in "default".
func Plan(ctx context.Context, objs []unstructured.Unstructured, clusterName string) ([]ClusterPlan, error) {
	index := map[key]*unstructured.Unstructured{}
	var clusters []*clusterv1.Cluster
	for i := range objs {
		u := &objs[i]
		if u.GetNamespace() == "" {
			u.SetNamespace("default")
		}
		index[keyOf(u, "default")] = u
		if u.GroupVersionKind().GroupKind() == (schema.GroupKind{Group: clusterv1.GroupVersion.Group, Kind: "Cluster"}) {
			c := &clusterv1.Cluster{}
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, c); err != nil {
				return nil, fmt.Errorf("reading Cluster %s: %w", u.GetName(), err)
			}
			if c.Spec.Topology == nil {
				continue
			}
			if clusterName != "" && clusterName != c.Name && clusterName != c.Namespace+"/"+c.Name {
				continue
			}
			clusters = append(clusters, c)
		}
	}
	if len(clusters) == 0 {
		if clusterName != "" {
			return nil, fmt.Errorf("the input has no Cluster %q with spec.topology", clusterName)
		}
		return nil, fmt.Errorf("the input has no Cluster with spec.topology: add one, or the ClusterClass's Clusters, to the files")
	}
	var plans []ClusterPlan
	for _, c := range clusters {
		p, err := planCluster(ctx, index, c)
		if err != nil {
			return nil, fmt.Errorf("planning Cluster %s/%s: %w", c.Namespace, c.Name, err)
		}
		plans = append(plans, p)
	}
	return plans, nil
}

func lookup(index map[key]*unstructured.Unstructured, ref *corev1.ObjectReference, namespace string) *unstructured.Unstructured {
	if ref == nil {
		return nil
	}
	ns := ref.Namespace
	if ns == "" {
		ns = namespace
	}
	gk := schema.FromAPIVersionAndKind(ref.APIVersion, ref.Kind).GroupKind()
	return index[key{gk, ns, ref.Name}]
}

func planCluster(ctx context.Context, index map[key]*unstructured.Unstructured, c *clusterv1.Cluster) (ClusterPlan, error) {
	plan := ClusterPlan{Cluster: c.Namespace + "/" + c.Name}
	ns, name := c.GetClassKey()
	classObj := index[key{schema.GroupKind{Group: clusterv1.GroupVersion.Group, Kind: "ClusterClass"}, ns, name}]
	if classObj == nil {
		return plan, fmt.Errorf("ClusterClass %s/%s is not in the input", ns, name)
	}
	class := &clusterv1.ClusterClass{}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(classObj.Object, class); err != nil {
		return plan, fmt.Errorf("reading ClusterClass %s: %w", name, err)
	}
	bp := &topology.Blueprint{ClusterClass: class, MachineDeployments: map[string]topology.MachineDeploymentTemplates{}}
	must := func(ref *corev1.ObjectReference) (*unstructured.Unstructured, error) {
		if ref == nil {
			return nil, nil
		}
		u := lookup(index, ref, class.Namespace)
		if u == nil {
			return nil, fmt.Errorf("%s %s referenced by ClusterClass %s is not in the input", ref.Kind, ref.Name, class.Name)
		}
		return u, nil
	}
	var err error
	if bp.InfrastructureClusterTemplate, err = must(class.Spec.Infrastructure.Ref); err != nil {
		return plan, err
	}
	if bp.ControlPlaneTemplate, err = must(class.Spec.ControlPlane.Ref); err != nil {
		return plan, err
	}
	if mi := class.Spec.ControlPlane.MachineInfrastructure; mi != nil {
		if bp.ControlPlaneMachineInfrastructureTemplate, err = must(mi.Ref); err != nil {
			return plan, err
		}
	}
	for _, md := range class.Spec.Workers.MachineDeployments {
		var t topology.MachineDeploymentTemplates
		if t.BootstrapTemplate, err = must(md.Template.Bootstrap.Ref); err != nil {
			return plan, err
		}
		if t.InfrastructureMachineTemplate, err = must(md.Template.Infrastructure.Ref); err != nil {
			return plan, err
		}
		bp.MachineDeployments[md.Class] = t
	}

	cur := currentState(index, c)
	desired, err := topology.Compute(ctx, bp, cur, topology.Options{})
	if err != nil {
		return plan, err
	}
	if cur.ControlPlane.Object == nil && len(desired.Upgrade.MachineDeploymentsPendingCreate) > 0 {
		// A new Cluster: show the MachineDeployments too, as they will be once the control plane is
		// initialized.
		plan.Notes = append(plan.Notes, fmt.Sprintf("MachineDeployment(s) %s are created once the control plane is initialized",
			strings.Join(desired.Upgrade.MachineDeploymentsPendingCreate, ", ")))
		next := &topology.Current{Cluster: desired.Cluster.DeepCopy(), InfrastructureCluster: desired.InfrastructureCluster,
			MachineDeployments: map[string]*topology.MachineDeploymentState{}}
		next.Cluster.Status.ControlPlaneReady = true
		cp := desired.ControlPlane.Object.DeepCopy()
		v, _, _ := unstructured.NestedString(cp.Object, "spec", "version")
		_ = unstructured.SetNestedField(cp.Object, v, "status", "version")
		if r, ok, _ := unstructured.NestedInt64(cp.Object, "spec", "replicas"); ok {
			for _, f := range []string{"replicas", "updatedReplicas", "readyReplicas"} {
				_ = unstructured.SetNestedField(cp.Object, r, "status", f)
			}
		}
		next.ControlPlane = topology.ControlPlaneState{Object: cp, InfrastructureMachineTemplate: desired.ControlPlane.InfrastructureMachineTemplate}
		full, err := topology.Compute(ctx, bp, next, topology.Options{})
		if err != nil {
			return plan, err
		}
		desired.MachineDeployments = full.MachineDeployments
	} else if len(desired.Upgrade.MachineDeploymentsPendingCreate) > 0 {
		plan.Notes = append(plan.Notes, fmt.Sprintf("MachineDeployment(s) %s wait for the control plane before they are created",
			strings.Join(desired.Upgrade.MachineDeploymentsPendingCreate, ", ")))
	}
	if len(desired.Upgrade.MachineDeploymentsPendingUpgrade) > 0 {
		plan.Notes = append(plan.Notes, fmt.Sprintf("MachineDeployment(s) %s upgrade after the control plane, one at a time",
			strings.Join(desired.Upgrade.MachineDeploymentsPendingUpgrade, ", ")))
	}

	add := func(obj *unstructured.Unstructured) {
		if obj == nil {
			return
		}
		current := index[keyOf(obj, c.Namespace)]
		if current == nil {
			plan.Changes = append(plan.Changes, Change{Action: Created, Object: obj})
			return
		}
		if diff := objectDiff(current, obj); diff != "" {
			plan.Changes = append(plan.Changes, Change{Action: Modified, Object: obj, Diff: diff})
		}
	}
	add(desired.InfrastructureCluster)
	add(desired.ControlPlane.InfrastructureMachineTemplate)
	add(desired.ControlPlane.Object)
	if mhc := desired.ControlPlane.MachineHealthCheck; mhc != nil {
		add(typed(mhc))
	}
	names := make([]string, 0, len(desired.MachineDeployments))
	for n := range desired.MachineDeployments {
		names = append(names, n)
	}
	slices.Sort(names)
	for _, n := range names {
		md := desired.MachineDeployments[n]
		add(md.BootstrapTemplate)
		add(md.InfrastructureMachineTemplate)
		add(typed(md.Object))
		if md.MachineHealthCheck != nil {
			add(typed(md.MachineHealthCheck))
		}
	}
	keep := map[string]bool{}
	for _, md := range c.Spec.Topology.Workers.MachineDeployments {
		keep[md.Name] = true
	}
	for topoName, md := range cur.MachineDeployments {
		if !keep[topoName] {
			plan.Changes = append(plan.Changes, Change{Action: Deleted, Object: typed(md.Object)})
		}
	}
	return plan, nil
}

// currentState finds the Cluster's managed objects in the input.
func currentState(index map[key]*unstructured.Unstructured, c *clusterv1.Cluster) *topology.Current {
	cur := &topology.Current{Cluster: c, MachineDeployments: map[string]*topology.MachineDeploymentState{}}
	cur.InfrastructureCluster = lookup(index, c.Spec.InfrastructureRef, c.Namespace)
	cur.ControlPlane.Object = lookup(index, c.Spec.ControlPlaneRef, c.Namespace)
	if cp := cur.ControlPlane.Object; cp != nil {
		if m, ok, _ := unstructured.NestedStringMap(cp.Object, "spec", "machineTemplate", "infrastructureRef"); ok {
			cur.ControlPlane.InfrastructureMachineTemplate = lookup(index, &corev1.ObjectReference{APIVersion: m["apiVersion"], Kind: m["kind"], Name: m["name"]}, c.Namespace)
		}
	}
	for _, u := range index {
		if u.GroupVersionKind().GroupKind() != (schema.GroupKind{Group: clusterv1.GroupVersion.Group, Kind: "MachineDeployment"}) ||
			u.GetNamespace() != c.Namespace || u.GetLabels()[clusterv1.ClusterNameLabel] != c.Name {
			continue
		}
		topoName, ok := u.GetLabels()[clusterv1.ClusterTopologyMachineDeploymentNameLabel]
		if !ok {
			continue
		}
		md := &clusterv1.MachineDeployment{}
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, md); err != nil {
			continue
		}
		cur.MachineDeployments[topoName] = &topology.MachineDeploymentState{
			Object:                        md,
			BootstrapTemplate:             lookup(index, md.Spec.Template.Spec.Bootstrap.ConfigRef, c.Namespace),
			InfrastructureMachineTemplate: lookup(index, &md.Spec.Template.Spec.InfrastructureRef, c.Namespace),
		}
	}
	return cur
}

func typed(obj runtime.Object) *unstructured.Unstructured {
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		return nil
	}
	u := &unstructured.Unstructured{Object: m}
	delete(u.Object, "status")
	unstructured.RemoveNestedField(u.Object, "metadata", "creationTimestamp")
	unstructured.RemoveNestedField(u.Object, "spec", "template", "metadata", "creationTimestamp")
	return u
}

// objectDiff is the difference of the fields desired sets, "" when current already has them.
func objectDiff(current, desired *unstructured.Unstructured) string {
	merged := current.DeepCopy()
	for _, f := range []string{"spec"} {
		if v, ok := desired.Object[f]; ok {
			merged.Object[f] = v
		}
	}
	merged.SetLabels(desired.GetLabels())
	merged.SetAnnotations(desired.GetAnnotations())
	if equality.Semantic.DeepEqual(current.Object, merged.Object) {
		return ""
	}
	return cmp.Diff(current.Object, merged.Object)
}
