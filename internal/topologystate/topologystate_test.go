package topologystate_test

import (
	"context"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
	"github.com/capstan-dev/capstan/internal/test/builder"
	"github.com/capstan-dev/capstan/internal/topologystate"
)

const ns = "default"

// toUnstructured returns a typed object as the file of a plan's input holds it.
func toUnstructured(t *testing.T, obj client.Object, kind string) *unstructured.Unstructured {
	t.Helper()
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		t.Fatal(err)
	}
	u := &unstructured.Unstructured{Object: m}
	u.SetGroupVersionKind(clusterv1.GroupVersion.WithKind(kind))
	return u
}

func newObjects(t *testing.T, objs []*unstructured.Unstructured, fallback client.Reader) *topologystate.Objects {
	t.Helper()
	o, err := topologystate.NewObjects(objs, fallback)
	if err != nil {
		t.Fatal(err)
	}
	return o
}

// The reader over files answers Get and List as the API would (typed and unstructured, by namespace and
// labels), reads what the files lack from the reader behind them, and lets the files' objects win.
func TestObjectsReadFilesBeforeTheManagementCluster(t *testing.T) {
	ctx := context.Background()
	p := builder.V1Beta1
	infra := p.InfraCluster(ns, "a")
	inFiles := builder.Cluster(ns, "a", infra, nil)
	inFiles.Labels = map[string]string{"env": "files"}
	stored := builder.Cluster(ns, "a", infra, nil)
	stored.Labels = map[string]string{"env": "stored"}
	other := builder.Cluster("other", "b", infra, nil)
	other.Labels = map[string]string{"env": "stored"}
	behind := newObjects(t, []*unstructured.Unstructured{
		toUnstructured(t, stored, "Cluster"), toUnstructured(t, other, "Cluster"), infra,
	}, nil)
	o := newObjects(t, []*unstructured.Unstructured{toUnstructured(t, inFiles, "Cluster")}, behind)

	got := &clusterv1.Cluster{}
	if err := o.Get(ctx, client.ObjectKey{Namespace: ns, Name: "a"}, got); err != nil {
		t.Fatal(err)
	}
	if got.Labels["env"] != "files" {
		t.Errorf("Get read the Cluster of the management cluster (labels %v), want the one of the files", got.Labels)
	}
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(infra.GroupVersionKind())
	if err := o.Get(ctx, client.ObjectKey{Namespace: ns, Name: "a"}, u); err != nil {
		t.Fatalf("Get of an object only the management cluster holds: %v", err)
	}
	if !o.Stored(topologystate.KeyOf(infra)) {
		t.Error("the InfraCluster read from the management cluster is not marked as stored there")
	}
	if err := o.Get(ctx, client.ObjectKey{Namespace: ns, Name: "missing"}, &clusterv1.Cluster{}); !apierrors.IsNotFound(err) {
		t.Errorf("Get of a Cluster neither holds: %v, want NotFound", err)
	}

	list := &clusterv1.ClusterList{}
	if err := o.List(ctx, list, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	if len(list.Items) != 1 || list.Items[0].Labels["env"] != "files" {
		t.Errorf("List in %s = %v, want the Cluster of the files only", ns, list.Items)
	}
	if err := o.List(ctx, list, client.MatchingLabels{"env": "stored"}); err != nil {
		t.Fatal(err)
	}
	if len(list.Items) != 1 || list.Items[0].Name != "b" {
		t.Errorf("List by label = %v, want other/b", list.Items)
	}
	err := o.List(ctx, list, client.MatchingFieldsSelector{Selector: fields.OneTermEqualSelector("spec.paused", "true")})
	if err == nil || !strings.Contains(err.Error(), "field selectors are not supported") {
		t.Errorf("List with a field selector: %v, want a refusal", err)
	}
}

// What the gatherer reads from the files: a missing template names the class and where it was looked
// for; only topology-owned MachineDeployments are current, upgrading when one of their Machines runs
// another version; a MachinePool upgrades while one of its Nodes runs another kubelet version.
func TestGathererReadsTheCurrentStateFromFiles(t *testing.T) {
	ctx := context.Background()
	p := builder.V1Beta1
	infraTemplate := p.InfraMachineTemplate(ns, "workers")
	bootstrapTemplate := p.BootstrapTemplate(ns, "workers")
	class := &clusterv1.ClusterClass{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "quick"}}
	class.Spec.Infrastructure.Ref = builder.Ref(p.Object(p.Infrastructure, builder.InfraClusterTemplateKind, ns, "quick"))
	class.Spec.ControlPlane.Ref = builder.Ref(p.Object(p.ControlPlaneGroup, builder.ControlPlaneTemplateKind, ns, "quick"))
	class.Spec.Workers.MachineDeployments = []clusterv1.MachineDeploymentClass{{Class: "default-worker",
		Template: clusterv1.MachineDeploymentClassTemplate{
			Bootstrap:      clusterv1.LocalObjectTemplate{Ref: builder.Ref(bootstrapTemplate)},
			Infrastructure: clusterv1.LocalObjectTemplate{Ref: builder.Ref(infraTemplate)},
		}}}
	g := &topologystate.Gatherer{Reader: newObjects(t, []*unstructured.Unstructured{infraTemplate, bootstrapTemplate}, nil),
		Missing: "is not in the input"}
	_, err := g.Blueprint(ctx, class)
	if err == nil || !strings.Contains(err.Error(), "referenced by ClusterClass quick is not in the input") {
		t.Errorf("Blueprint without the InfraClusterTemplate: %v, want an error naming the class and the input", err)
	}

	cluster := builder.Cluster(ns, "c", nil, nil)
	owned := func(md *clusterv1.MachineDeployment, topologyName string) *unstructured.Unstructured {
		md.Labels = map[string]string{clusterv1.ClusterNameLabel: "c", clusterv1.ClusterTopologyOwnedLabel: ""}
		if topologyName != "" {
			md.Labels[clusterv1.ClusterTopologyMachineDeploymentNameLabel] = topologyName
		}
		md.Spec.Template.Spec.Version = ptr.To("v1.32.0")
		return toUnstructured(t, md, "MachineDeployment")
	}
	md := builder.MachineDeployment(ns, "c-md-0", "c", 1, infraTemplate, bootstrapTemplate)
	unnamed := builder.MachineDeployment(ns, "c-hand-made", "c", 1, infraTemplate, bootstrapTemplate)
	machine := builder.Machine(ns, "c-md-0-x", "c", p.InfraMachine(ns, "x"), nil)
	machine.Labels[clusterv1.MachineDeploymentNameLabel] = "c-md-0"
	pool := builder.MachinePool(ns, "c-mp-0", "c", 1, p.InfraMachinePool(ns, "c-mp-0", false), p.BootstrapConfig(ns, "c-mp-0"))
	pool.Labels = map[string]string{clusterv1.ClusterNameLabel: "c", clusterv1.ClusterTopologyOwnedLabel: "",
		clusterv1.ClusterTopologyMachinePoolNameLabel: "pool"}
	pool.Status.NodeRefs = []corev1.ObjectReference{{Kind: "Node", Name: "n-1"}, {Kind: "Node", Name: "n-2"}}

	g.Reader = newObjects(t, []*unstructured.Unstructured{
		owned(md, "md-0"), owned(unnamed, ""), toUnstructured(t, machine, "Machine"),
		toUnstructured(t, pool, "MachinePool"), infraTemplate, bootstrapTemplate,
	}, nil)
	node := func(name, version string) *unstructured.Unstructured {
		n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}}
		n.Status.NodeInfo.KubeletVersion = version
		m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(n)
		if err != nil {
			t.Fatal(err)
		}
		u := &unstructured.Unstructured{Object: m}
		u.SetAPIVersion("v1")
		u.SetKind("Node")
		return u
	}
	nodes := []*unstructured.Unstructured{node("n-1", "v1.31.0"), node("n-2", "v1.30.0")}
	g.Workload = func(context.Context, client.ObjectKey) (client.Reader, error) {
		return newObjects(t, nodes, nil), nil
	}
	cur, err := g.Current(ctx, cluster)
	if err != nil {
		t.Fatal(err)
	}
	if len(cur.MachineDeployments) != 1 || cur.MachineDeployments["md-0"] == nil {
		t.Fatalf("current MachineDeployments %v, want md-0 only (the one without a topology name is not the topology's)", cur.MachineDeployments)
	}
	st := cur.MachineDeployments["md-0"]
	if !st.Upgrading {
		t.Error("md-0 with a Machine of v1.31.0 for v1.32.0 is not upgrading")
	}
	if st.InfrastructureMachineTemplate == nil || st.InfrastructureMachineTemplate.GetName() != "workers" {
		t.Errorf("md-0's InfraMachineTemplate = %v, want workers", st.InfrastructureMachineTemplate)
	}
	if mp := cur.MachinePools["pool"]; mp == nil || !mp.Upgrading {
		t.Errorf("MachinePool pool with a Node of v1.30.0 for v1.31.0: %+v, want upgrading", mp)
	}

	nodes = []*unstructured.Unstructured{node("n-1", "v1.31.0"), node("n-2", "v1.31.0")}
	machine.Spec.Version = ptr.To("v1.32.0")
	g.Reader = newObjects(t, []*unstructured.Unstructured{
		owned(md, "md-0"), toUnstructured(t, machine, "Machine"), toUnstructured(t, pool, "MachinePool"),
	}, nil)
	if cur, err = g.Current(ctx, cluster); err != nil {
		t.Fatal(err)
	}
	if cur.MachineDeployments["md-0"].Upgrading || cur.MachinePools["pool"].Upgrading {
		t.Error("a MachineDeployment and a MachinePool whose Machines and Nodes all run their version are upgrading")
	}
}
