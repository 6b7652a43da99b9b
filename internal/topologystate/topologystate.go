// Package topologystate gathers the input of the topology engine (internal/topology): a Cluster's
// blueprint (its ClusterClass and the templates the class references) and the current state of the
// objects its topology manages (the InfraCluster, the control plane with its machine template and
// MachineHealthCheck, the MachineDeployments and MachinePools with their templates, objects and
// MachineHealthChecks, and whether they are upgrading). It is the one gatherer of the topology
// controller and of `clusterctl alpha topology plan`: both read through a client.Reader, the
// controller's over the API (its cache), the plan's over the objects of its input files (Objects), with
// the management cluster behind them when it runs online.
package topologystate

import (
	"context"
	"errors"
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
	"github.com/capstan-dev/capstan/internal/reconciler"
	"github.com/capstan-dev/capstan/internal/topology"
)

// Gatherer reads the blueprint and current state of Clusters.
type Gatherer struct {
	// Reader reads the objects.
	Reader client.Reader
	// Indexed says that Reader lists a Cluster's MachineDeployments, MachinePools and Machines through
	// reconciler.ClusterNameIndex (a manager's cache with the index set up).
	Indexed bool
	// Missing says where a missing template was looked for, in errors: "does not exist" when empty.
	Missing string
	// Workload returns a reader of a Cluster's workload cluster, to read the Nodes of its MachinePools
	// (whether they run the pool's version); without it no MachinePool is upgrading.
	Workload func(ctx context.Context, cluster client.ObjectKey) (client.Reader, error)
}

// ClassNotFoundError says that the ClusterClass of a Cluster does not exist (or is not where it was
// looked for).
type ClassNotFoundError struct {
	Namespace, Name string
	missing         string
}

func (e *ClassNotFoundError) Error() string {
	return fmt.Sprintf("ClusterClass %s/%s %s", e.Namespace, e.Name, e.missing)
}

// IsClassNotFound reports whether err says that a ClusterClass does not exist.
func IsClassNotFound(err error) bool {
	var e *ClassNotFoundError
	return errors.As(err, &e)
}

// Class reads the ClusterClass of a Cluster with a topology.
func (g *Gatherer) Class(ctx context.Context, cluster *clusterv1.Cluster) (*clusterv1.ClusterClass, error) {
	ns, name := cluster.GetClassKey()
	class := &clusterv1.ClusterClass{}
	if err := g.Reader.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, class); err != nil {
		if apierrors.IsNotFound(err) || meta.IsNoMatchError(err) {
			return nil, &ClassNotFoundError{Namespace: ns, Name: name, missing: g.missing()}
		}
		return nil, fmt.Errorf("getting ClusterClass %s/%s: %w", ns, name, err)
	}
	return class, nil
}

func (g *Gatherer) missing() string {
	if g.Missing == "" {
		return "does not exist"
	}
	return g.Missing
}

// get reads the object of a reference (in namespace when the reference has none); nil when it does not
// exist.
func (g *Gatherer) get(ctx context.Context, ref *corev1.ObjectReference, namespace string) (*unstructured.Unstructured, error) {
	if ref == nil || ref.Name == "" {
		return nil, nil
	}
	obj := &unstructured.Unstructured{}
	obj.SetGroupVersionKind(schema.FromAPIVersionAndKind(ref.APIVersion, ref.Kind))
	if ref.Namespace != "" {
		namespace = ref.Namespace
	}
	if err := g.Reader.Get(ctx, client.ObjectKey{Namespace: namespace, Name: ref.Name}, obj); err != nil {
		if apierrors.IsNotFound(err) || meta.IsNoMatchError(err) {
			return nil, nil
		}
		return nil, fmt.Errorf("getting %s %s/%s: %w", ref.Kind, namespace, ref.Name, err)
	}
	return obj, nil
}

// Refs are the template references of a ClusterClass, in the order of its spec.
func Refs(class *clusterv1.ClusterClass) []*corev1.ObjectReference {
	refs := []*corev1.ObjectReference{class.Spec.Infrastructure.Ref, class.Spec.ControlPlane.Ref}
	if mi := class.Spec.ControlPlane.MachineInfrastructure; mi != nil {
		refs = append(refs, mi.Ref)
	}
	for i := range class.Spec.Workers.MachineDeployments {
		md := &class.Spec.Workers.MachineDeployments[i]
		refs = append(refs, md.Template.Bootstrap.Ref, md.Template.Infrastructure.Ref)
	}
	for i := range class.Spec.Workers.MachinePools {
		mp := &class.Spec.Workers.MachinePools[i]
		refs = append(refs, mp.Template.Bootstrap.Ref, mp.Template.Infrastructure.Ref)
	}
	return slices.DeleteFunc(refs, func(r *corev1.ObjectReference) bool { return r == nil })
}

// Blueprint reads the templates of a class.
func (g *Gatherer) Blueprint(ctx context.Context, class *clusterv1.ClusterClass) (*topology.Blueprint, error) {
	bp := &topology.Blueprint{ClusterClass: class, MachineDeployments: map[string]topology.MachineDeploymentTemplates{},
		MachinePools: map[string]topology.MachinePoolTemplates{}}
	must := func(ref *corev1.ObjectReference) (*unstructured.Unstructured, error) {
		obj, err := g.get(ctx, ref, class.Namespace)
		if err != nil {
			return nil, err
		}
		if obj == nil && ref != nil {
			return nil, fmt.Errorf("%s %s referenced by ClusterClass %s %s", ref.Kind, ref.Name, class.Name, g.missing())
		}
		return obj, nil
	}
	var err error
	if bp.InfrastructureClusterTemplate, err = must(class.Spec.Infrastructure.Ref); err != nil {
		return nil, err
	}
	if bp.ControlPlaneTemplate, err = must(class.Spec.ControlPlane.Ref); err != nil {
		return nil, err
	}
	if mi := class.Spec.ControlPlane.MachineInfrastructure; mi != nil {
		if bp.ControlPlaneMachineInfrastructureTemplate, err = must(mi.Ref); err != nil {
			return nil, err
		}
	}
	// workerTemplates reads the bootstrap and infrastructure templates of a MachineDeployment or MachinePool class.
	workerTemplates := func(bootstrap, infrastructure clusterv1.LocalObjectTemplate) (b, i *unstructured.Unstructured, err error) {
		if b, err = must(bootstrap.Ref); err != nil {
			return nil, nil, err
		}
		if i, err = must(infrastructure.Ref); err != nil {
			return nil, nil, err
		}
		return b, i, nil
	}
	for _, md := range class.Spec.Workers.MachineDeployments {
		var t topology.MachineDeploymentTemplates
		if t.BootstrapTemplate, t.InfrastructureMachineTemplate, err = workerTemplates(md.Template.Bootstrap, md.Template.Infrastructure); err != nil {
			return nil, err
		}
		bp.MachineDeployments[md.Class] = t
	}
	for _, mp := range class.Spec.Workers.MachinePools {
		var t topology.MachinePoolTemplates
		if t.BootstrapTemplate, t.InfrastructureMachinePoolTemplate, err = workerTemplates(mp.Template.Bootstrap, mp.Template.Infrastructure); err != nil {
			return nil, err
		}
		bp.MachinePools[mp.Class] = t
	}
	return bp, nil
}

// ofCluster are the options of a list of a Cluster's objects.
func (g *Gatherer) ofCluster(cluster *clusterv1.Cluster, labels client.MatchingLabels) []client.ListOption {
	opts := []client.ListOption{client.InNamespace(cluster.Namespace), labels}
	if g.Indexed {
		opts = append(opts, client.MatchingFields{reconciler.ClusterNameIndex: cluster.Name})
	}
	return opts
}

// healthCheck reads the MachineHealthCheck of a name; nil when there is none.
func (g *Gatherer) healthCheck(ctx context.Context, namespace, name string) (*clusterv1.MachineHealthCheck, error) {
	mhc := &clusterv1.MachineHealthCheck{}
	if err := g.Reader.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, mhc); err != nil {
		if apierrors.IsNotFound(err) || meta.IsNoMatchError(err) {
			return nil, nil
		}
		return nil, fmt.Errorf("getting MachineHealthCheck %s: %w", name, err)
	}
	return mhc, nil
}

// readTemplateRefs reads the bootstrap and infrastructure objects the Machine template of a MachineDeployment
// or MachinePool references (templates for a MachineDeployment, the objects themselves for a MachinePool).
func (g *Gatherer) readTemplateRefs(ctx context.Context, spec *clusterv1.MachineSpec, namespace string) (bootstrap, infrastructure *unstructured.Unstructured, err error) {
	if bootstrap, err = g.get(ctx, spec.Bootstrap.ConfigRef, namespace); err != nil {
		return nil, nil, err
	}
	if infrastructure, err = g.get(ctx, &spec.InfrastructureRef, namespace); err != nil {
		return nil, nil, err
	}
	return bootstrap, infrastructure, nil
}

// Current reads the objects the topology of a Cluster manages.
func (g *Gatherer) Current(ctx context.Context, cluster *clusterv1.Cluster) (*topology.Current, error) {
	cur := &topology.Current{Cluster: cluster, MachineDeployments: map[string]*topology.MachineDeploymentState{},
		MachinePools: map[string]*topology.MachinePoolState{}}
	var err error
	if cur.InfrastructureCluster, err = g.get(ctx, cluster.Spec.InfrastructureRef, cluster.Namespace); err != nil {
		return nil, err
	}
	if cur.ControlPlane.Object, err = g.get(ctx, cluster.Spec.ControlPlaneRef, cluster.Namespace); err != nil {
		return nil, err
	}
	if cp := cur.ControlPlane.Object; cp != nil {
		if m, ok, _ := unstructured.NestedMap(cp.Object, "spec", "machineTemplate", "infrastructureRef"); ok {
			ref := &corev1.ObjectReference{}
			ref.APIVersion, _ = m["apiVersion"].(string)
			ref.Kind, _ = m["kind"].(string)
			ref.Name, _ = m["name"].(string)
			if cur.ControlPlane.InfrastructureMachineTemplate, err = g.get(ctx, ref, cluster.Namespace); err != nil {
				return nil, err
			}
		}
		if cur.ControlPlane.MachineHealthCheck, err = g.healthCheck(ctx, cluster.Namespace, cp.GetName()); err != nil {
			return nil, err
		}
	}
	owned := client.MatchingLabels{clusterv1.ClusterNameLabel: cluster.Name, clusterv1.ClusterTopologyOwnedLabel: ""}
	mds := &clusterv1.MachineDeploymentList{}
	if err := g.Reader.List(ctx, mds, g.ofCluster(cluster, owned)...); err != nil && !meta.IsNoMatchError(err) {
		return nil, fmt.Errorf("listing MachineDeployments: %w", err)
	}
	machines := &clusterv1.MachineList{}
	if len(mds.Items) > 0 {
		if err := g.Reader.List(ctx, machines, g.ofCluster(cluster, client.MatchingLabels{clusterv1.ClusterNameLabel: cluster.Name})...); err != nil && !meta.IsNoMatchError(err) {
			return nil, fmt.Errorf("listing Machines: %w", err)
		}
	}
	for i := range mds.Items {
		md := &mds.Items[i]
		topoName, ok := md.Labels[clusterv1.ClusterTopologyMachineDeploymentNameLabel]
		if !ok {
			continue
		}
		st := &topology.MachineDeploymentState{Object: md}
		if st.BootstrapTemplate, st.InfrastructureMachineTemplate, err = g.readTemplateRefs(ctx, &md.Spec.Template.Spec, md.Namespace); err != nil {
			return nil, err
		}
		if st.MachineHealthCheck, err = g.healthCheck(ctx, md.Namespace, md.Name); err != nil {
			return nil, err
		}
		st.Upgrading = MachineDeploymentUpgrading(md, machines.Items)
		cur.MachineDeployments[topoName] = st
	}
	mps := &clusterv1.MachinePoolList{}
	if err := g.Reader.List(ctx, mps, g.ofCluster(cluster, owned)...); err != nil && !meta.IsNoMatchError(err) {
		return nil, fmt.Errorf("listing MachinePools: %w", err)
	}
	var workload client.Reader
	for i := range mps.Items {
		mp := &mps.Items[i]
		topoName, ok := mp.Labels[clusterv1.ClusterTopologyMachinePoolNameLabel]
		if !ok {
			continue
		}
		st := &topology.MachinePoolState{Object: mp}
		if st.BootstrapObject, st.InfrastructureMachinePoolObject, err = g.readTemplateRefs(ctx, &mp.Spec.Template.Spec, mp.Namespace); err != nil {
			return nil, err
		}
		if g.Workload != nil && len(mp.Status.NodeRefs) > 0 {
			if workload == nil {
				if workload, err = g.Workload(ctx, client.ObjectKeyFromObject(cluster)); err != nil {
					return nil, fmt.Errorf("reading the Nodes of MachinePool %s: %w", mp.Name, err)
				}
			}
			if st.Upgrading, err = MachinePoolUpgrading(ctx, workload, mp); err != nil {
				return nil, err
			}
		}
		cur.MachinePools[topoName] = st
	}
	return cur, nil
}

// MachineDeploymentUpgrading reports whether some Machines of a MachineDeployment (among machines) do
// not run its version, as upstream's check.IsMachineDeploymentUpgrading.
func MachineDeploymentUpgrading(md *clusterv1.MachineDeployment, machines []clusterv1.Machine) bool {
	if md.Spec.Template.Spec.Version == nil {
		return false
	}
	want := *md.Spec.Template.Spec.Version
	return slices.ContainsFunc(machines, func(m clusterv1.Machine) bool {
		return m.Labels[clusterv1.MachineDeploymentNameLabel] == md.Name && m.Spec.Version != nil && *m.Spec.Version != want
	})
}

// MachinePoolUpgrading reports whether some Nodes of a MachinePool (status.nodeRefs, read from its
// workload cluster) report a kubelet version other than the pool's, as upstream's
// check.IsMachinePoolUpgrading.
func MachinePoolUpgrading(ctx context.Context, workload client.Reader, mp *clusterv1.MachinePool) (bool, error) {
	if mp.Spec.Template.Spec.Version == nil {
		return false, nil
	}
	want := *mp.Spec.Template.Spec.Version
	for _, ref := range mp.Status.NodeRefs {
		node := &corev1.Node{}
		if err := workload.Get(ctx, client.ObjectKey{Name: ref.Name}, node); err != nil {
			if apierrors.IsNotFound(err) {
				continue
			}
			return false, fmt.Errorf("checking whether MachinePool %s is upgrading: getting Node %s: %w", mp.Name, ref.Name, err)
		}
		if node.Status.NodeInfo.KubeletVersion != want {
			return true, nil
		}
	}
	return false, nil
}
