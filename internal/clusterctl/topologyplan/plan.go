// Package topologyplan computes what the topology controller would do for the Clusters with a topology
// among a set of objects (`clusterctl alpha topology plan`): it runs the same engine (internal/topology)
// over the ClusterClasses and templates of the input, with the input's objects as the current state, and
// reports the objects that would be created, modified or deleted. Online (Options.Client), what the input
// lacks — the ClusterClass, templates, the objects a Cluster's topology manages, the Clusters using a class
// or template of the input — is read from a management cluster, a Cluster of the input is applied over the
// one stored there, and a change of an existing object is found as the controller finds it, with a
// dry-run server-side apply.
package topologyplan

import (
	"context"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
	"github.com/capstan-dev/capstan/internal/topology"
	"github.com/capstan-dev/capstan/internal/topologystate"
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
	// Object is the object as it will be: the desired object for Created, the current one with the
	// controller's changes for Modified, the current one for Deleted.
	Object *unstructured.Unstructured
	// Original is the current object, for Modified.
	Original *unstructured.Unstructured
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

// Plan computes, offline, the plan of the Clusters with a topology in objs (only clusterName,
// "namespace/name" or "name", when not empty). Objects without a namespace are in "default".
func Plan(ctx context.Context, objs []unstructured.Unstructured, clusterName string) ([]ClusterPlan, error) {
	r, err := PlanWith(ctx, objs, clusterName, Options{})
	if err != nil {
		return nil, err
	}
	return r.Clusters, nil
}

// Result is a plan.
type Result struct {
	// ClusterClasses are the ClusterClasses the input affects ("namespace/name", sorted): those of the
	// input and, online, those of the management cluster that use a template of the input.
	ClusterClasses []string
	// Clusters are the plans of the affected Clusters.
	Clusters []ClusterPlan
}

// Options say where a plan reads what its input lacks.
type Options struct {
	// Client reads from, and dry-runs applies on, a management cluster; nil plans offline.
	Client client.Client
	// Namespace is the namespace of the input's objects without one; "default" when empty.
	Namespace string
}

// PlanWith computes the plan of the Clusters with a topology in objs, and online of the Clusters of the
// management cluster that use a ClusterClass or template of objs (only clusterName when not empty).
func PlanWith(ctx context.Context, objs []unstructured.Unstructured, clusterName string, o Options) (*Result, error) {
	defaultNamespace := o.Namespace
	if defaultNamespace == "" {
		defaultNamespace = metav1.NamespaceDefault
	}
	var clusterObjs, all []*unstructured.Unstructured
	for i := range objs {
		u := &objs[i]
		if u.GetNamespace() == "" {
			u.SetNamespace(defaultNamespace)
		}
		all = append(all, u)
		if u.GroupVersionKind().GroupKind() == clusterGK {
			clusterObjs = append(clusterObjs, u)
		}
	}
	var fallback client.Reader
	if o.Client != nil {
		fallback = o.Client
	}
	set, err := topologystate.NewObjects(all, fallback)
	if err != nil {
		return nil, err
	}
	s := &source{objs: set, client: o.Client}
	classes := map[key]bool{}
	for i := range objs {
		if k := keyOf(&objs[i], ""); k.gk == clusterClassGK {
			classes[k] = true
		}
	}
	if s.client != nil {
		if err := s.applyOverStored(ctx, clusterObjs); err != nil {
			return nil, err
		}
		if err := s.classesUsing(ctx, objs, classes); err != nil {
			return nil, err
		}
		users, err := s.clustersOf(ctx, classes)
		if err != nil {
			return nil, err
		}
		clusterObjs = append(clusterObjs, users...)
	}
	var clusters []*clusterv1.Cluster
	objOf := map[*clusterv1.Cluster]*unstructured.Unstructured{}
	for _, u := range clusterObjs {
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
		objOf[c] = u
	}
	if len(clusters) == 0 {
		if s.client != nil {
			if clusterName != "" {
				return nil, fmt.Errorf("neither the input nor the management cluster has a Cluster %q with spec.topology that uses the input", clusterName)
			}
			return nil, fmt.Errorf("the input has no Cluster with spec.topology, and no Cluster of the management cluster uses a ClusterClass or template of the input")
		}
		if clusterName != "" {
			return nil, fmt.Errorf("the input has no Cluster %q with spec.topology", clusterName)
		}
		return nil, fmt.Errorf("the input has no Cluster with spec.topology: add one, or the ClusterClass's Clusters, to the files")
	}
	r := &Result{}
	for k := range classes {
		r.ClusterClasses = append(r.ClusterClasses, k.namespace+"/"+k.name)
	}
	slices.Sort(r.ClusterClasses)
	for _, c := range clusters {
		p, err := s.planCluster(ctx, c, objOf[c])
		if err != nil {
			return nil, fmt.Errorf("planning Cluster %s/%s: %w", c.Namespace, c.Name, err)
		}
		r.Clusters = append(r.Clusters, p)
	}
	return r, nil
}

// planCluster is the plan of c, which is cluster as read.
func (s *source) planCluster(ctx context.Context, c *clusterv1.Cluster, cluster *unstructured.Unstructured) (ClusterPlan, error) {
	plan := ClusterPlan{Cluster: c.Namespace + "/" + c.Name}
	g := &topologystate.Gatherer{Reader: s.objs, Missing: "is not in the input" + s.orCluster()}
	class, err := g.Class(ctx, c)
	if err != nil {
		return plan, err
	}
	bp, err := g.Blueprint(ctx, class)
	if err != nil {
		return plan, err
	}
	cur, err := g.Current(ctx, c)
	if err != nil {
		return plan, err
	}
	desired, err := topology.Compute(ctx, bp, cur, topology.Options{})
	if err != nil {
		return plan, err
	}
	if cur.ControlPlane.Object == nil && len(desired.Upgrade.MachineDeploymentsPendingCreate)+len(desired.Upgrade.MachinePoolsPendingCreate) > 0 {
		// A new Cluster: show the MachineDeployments too, as they will be once the control plane is
		// initialized.
		for kind, pending := range map[string][]string{"MachineDeployment": desired.Upgrade.MachineDeploymentsPendingCreate, "MachinePool": desired.Upgrade.MachinePoolsPendingCreate} {
			if len(pending) > 0 {
				plan.Notes = append(plan.Notes, fmt.Sprintf("%s(s) %s are created once the control plane is initialized", kind, strings.Join(pending, ", ")))
			}
		}
		slices.Sort(plan.Notes)
		next := &topology.Current{Cluster: desired.Cluster.DeepCopy(), InfrastructureCluster: desired.InfrastructureCluster,
			MachineDeployments: map[string]*topology.MachineDeploymentState{}, MachinePools: map[string]*topology.MachinePoolState{}}
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
		desired.MachineDeployments, desired.MachinePools = full.MachineDeployments, full.MachinePools
	} else if len(desired.Upgrade.MachineDeploymentsPendingCreate) > 0 {
		plan.Notes = append(plan.Notes, fmt.Sprintf("MachineDeployment(s) %s wait for the control plane before they are created",
			strings.Join(desired.Upgrade.MachineDeploymentsPendingCreate, ", ")))
	}
	if u := desired.Upgrade; len(u.ControlPlanePlan) > 1 || len(u.WorkersPlan) > 1 {
		// A chained upgrade: each object takes one step at a time.
		note := "upgrade plan: the control plane goes through " + strings.Join(u.ControlPlanePlan, ", ")
		if len(u.ControlPlanePlan) == 0 {
			note = "upgrade plan: the control plane runs " + c.Spec.Topology.Version
		}
		if len(u.WorkersPlan) > 0 {
			note += "; the workers through " + strings.Join(u.WorkersPlan, ", ")
		}
		plan.Notes = append(plan.Notes, note)
	}
	if len(desired.Upgrade.MachineDeploymentsPendingUpgrade) > 0 {
		plan.Notes = append(plan.Notes, fmt.Sprintf("MachineDeployment(s) %s upgrade after the control plane, one at a time",
			strings.Join(desired.Upgrade.MachineDeploymentsPendingUpgrade, ", ")))
	}

	var addErr error
	add := func(obj *unstructured.Unstructured) {
		if obj == nil || addErr != nil {
			return
		}
		change, err := s.change(ctx, obj, c.Namespace)
		if err != nil {
			addErr = err
			return
		}
		if change != nil {
			plan.Changes = append(plan.Changes, *change)
		}
	}
	// An object that waits for an upgrade gets no change before it takes its version (see Held).
	held := func(kind, name string, steps []string) {
		next := c.Spec.Topology.Version
		if len(steps) > 0 {
			next = steps[0]
		}
		plan.Notes = append(plan.Notes, fmt.Sprintf("%s %s waits for its upgrade: it is left as it is until it takes version %s, with its other changes", kind, name, next))
	}
	// What the controller deletes: objects the topology owns that it no longer wants.
	deleted := func(obj client.Object) {
		if obj == nil || reflect.ValueOf(obj).IsNil() {
			return
		}
		if _, owned := obj.GetLabels()[clusterv1.ClusterTopologyOwnedLabel]; !owned {
			return
		}
		u := typed(obj)
		if u == nil {
			return
		}
		unstructured.RemoveNestedField(u.Object, "metadata", "managedFields")
		plan.Changes = append(plan.Changes, Change{Action: Deleted, Object: u})
	}
	healthCheck := func(desired, current *clusterv1.MachineHealthCheck) {
		if desired != nil {
			add(typed(desired))
		} else if current != nil {
			deleted(current)
		}
	}
	add(desired.InfrastructureCluster)
	if desired.ControlPlane.Held && cur.ControlPlane.Object != nil {
		held(cur.ControlPlane.Object.GetKind(), cur.ControlPlane.Object.GetName(), desired.Upgrade.ControlPlanePlan)
	} else {
		add(desired.ControlPlane.InfrastructureMachineTemplate)
		add(desired.ControlPlane.Object)
		// The control plane's machine template a rotation replaced is deleted (see the controller's
		// deleteRotatedTemplate).
		if old, now := cur.ControlPlane.InfrastructureMachineTemplate, desired.ControlPlane.InfrastructureMachineTemplate; old != nil && now != nil && old.GetName() != now.GetName() {
			deleted(old)
		}
	}
	healthCheck(desired.ControlPlane.MachineHealthCheck, cur.ControlPlane.MachineHealthCheck)
	if addErr == nil {
		change, err := clusterChange(cluster, desired.Cluster)
		if err != nil {
			return plan, err
		}
		if change != nil {
			plan.Changes = append(plan.Changes, *change)
		}
	}
	for _, n := range slices.Sorted(maps.Keys(desired.MachineDeployments)) {
		md := desired.MachineDeployments[n]
		if md.Held && cur.MachineDeployments[n] != nil {
			held("MachineDeployment", md.Object.Name, desired.Upgrade.WorkersPlan)
		} else {
			add(md.BootstrapTemplate)
			add(md.InfrastructureMachineTemplate)
			add(typed(md.Object))
		}
		var curMHC *clusterv1.MachineHealthCheck
		if current := cur.MachineDeployments[n]; current != nil {
			curMHC = current.MachineHealthCheck
		}
		healthCheck(md.MachineHealthCheck, curMHC)
	}
	for _, n := range slices.Sorted(maps.Keys(desired.MachinePools)) {
		mp := desired.MachinePools[n]
		if mp.Held && cur.MachinePools[n] != nil {
			held("MachinePool", mp.Object.Name, desired.Upgrade.WorkersPlan)
			continue
		}
		add(mp.BootstrapObject)
		add(mp.InfrastructureMachinePoolObject)
		add(typed(mp.Object))
	}
	if addErr != nil {
		return plan, addErr
	}
	keep, keepPools := map[string]bool{}, map[string]bool{}
	if w := c.Spec.Topology.Workers; w != nil {
		for _, md := range w.MachineDeployments {
			keep[md.Name] = true
		}
		for _, mp := range w.MachinePools {
			keepPools[mp.Name] = true
		}
	}
	for topoName, md := range cur.MachineDeployments {
		if !keep[topoName] {
			// The controller deletes the MachineDeployment and its MachineHealthCheck; the MachineDeployment's
			// templates go later, with its last MachineSet (the topology MachineSet controller).
			deleted(md.MachineHealthCheck)
			deleted(md.Object)
		}
	}
	for topoName, mp := range cur.MachinePools {
		if !keepPools[topoName] {
			// The MachinePool controller deletes its bootstrap config and InfraMachinePool.
			deleted(mp.Object)
		}
	}
	sortChanges(plan.Changes)
	return plan, nil
}

// change is what applying desired does: Created when there is no current object, Modified with the
// object as it will be when the apply changes it, nil when it changes nothing.
func (s *source) change(ctx context.Context, desired *unstructured.Unstructured, namespace string) (*Change, error) {
	desired = desired.DeepCopy()
	dropNulls(desired.Object)
	current, err := s.lookup(ctx, &corev1.ObjectReference{APIVersion: desired.GetAPIVersion(), Kind: desired.GetKind(), Name: desired.GetName()}, namespace)
	if err != nil {
		return nil, err
	}
	if current == nil {
		return &Change{Action: Created, Object: desired}, nil
	}
	after, err := s.apply(ctx, current, desired)
	if err != nil {
		return nil, err
	}
	if sameObject(current, after) {
		return nil, nil
	}
	return modified(current, after)
}

// clusterChange is the controller's change of the Cluster (see its patchCluster): its infrastructureRef,
// controlPlaneRef and labels; nil when it has them.
func clusterChange(current *unstructured.Unstructured, desired *clusterv1.Cluster) (*Change, error) {
	c := &clusterv1.Cluster{}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(current.Object, c); err != nil {
		return nil, fmt.Errorf("reading Cluster %s: %w", current.GetName(), err)
	}
	if equality.Semantic.DeepEqual(c.Spec.InfrastructureRef, desired.Spec.InfrastructureRef) &&
		equality.Semantic.DeepEqual(c.Spec.ControlPlaneRef, desired.Spec.ControlPlaneRef) &&
		equality.Semantic.DeepEqual(c.Labels, desired.Labels) {
		return nil, nil
	}
	after := withoutManagedFields(current)
	for field, ref := range map[string]*corev1.ObjectReference{"infrastructureRef": desired.Spec.InfrastructureRef, "controlPlaneRef": desired.Spec.ControlPlaneRef} {
		if ref == nil {
			unstructured.RemoveNestedField(after.Object, "spec", field)
			continue
		}
		m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(ref)
		if err != nil {
			return nil, err
		}
		_ = unstructured.SetNestedMap(after.Object, m, "spec", field)
	}
	after.SetLabels(desired.Labels)
	return modified(current, after)
}

// sortChanges orders changes as upstream's table: created, modified, then deleted, each by kind and name.
func sortChanges(changes []Change) {
	rank := map[Action]int{Created: 0, Modified: 1, Deleted: 2}
	slices.SortStableFunc(changes, func(a, b Change) int {
		if d := rank[a.Action] - rank[b.Action]; d != 0 {
			return d
		}
		if d := strings.Compare(a.Object.GetKind(), b.Object.GetKind()); d != 0 {
			return d
		}
		return strings.Compare(a.Object.GetName(), b.Object.GetName())
	})
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
