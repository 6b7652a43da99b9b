package move_test

import (
	"path/filepath"
	"testing"

	. "github.com/onsi/gomega"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
	"github.com/capstan-dev/capstan/internal/clusterctl/move"
	"github.com/capstan-dev/capstan/internal/test/builder"
)

// classWithTemplates creates, in the source, a ClusterClass whose five templates (InfraCluster, control
// plane, control plane machines, and a MachineDeployment class's bootstrap and infrastructure) carry no
// owner reference — the ClusterClass controller did not run yet — and a topology Cluster of the class.
func classWithTemplates(t *testing.T, g Gomega, ns string) []*unstructured.Unstructured {
	ctx := testContext(t)
	p := builder.V1Beta1
	template := func(group, kind, name string) *unstructured.Unstructured {
		u := p.Object(group, kind, ns, name)
		_ = unstructured.SetNestedMap(u.Object, map[string]any{"spec": map[string]any{}}, "spec", "template")
		g.Expect(source.Client.Create(ctx, u)).To(Succeed())
		return u
	}
	templates := []*unstructured.Unstructured{
		template(p.Infrastructure, builder.InfraClusterTemplateKind, "cc-infra"),
		template(p.ControlPlaneGroup, builder.ControlPlaneTemplateKind, "cc-cp"),
		template(p.Infrastructure, builder.InfraMachineTemplateKind, "cc-cp-machine"),
		template(p.Bootstrap, builder.BootstrapTemplateKind, "cc-worker-boot"),
		template(p.Infrastructure, builder.InfraMachineTemplateKind, "cc-worker"),
	}
	class := &clusterv1.ClusterClass{
		ObjectMeta: objectMeta(ns, "cc"),
		Spec: clusterv1.ClusterClassSpec{
			Infrastructure: clusterv1.LocalObjectTemplate{Ref: builder.Ref(templates[0])},
			ControlPlane: clusterv1.ControlPlaneClass{LocalObjectTemplate: clusterv1.LocalObjectTemplate{Ref: builder.Ref(templates[1])},
				MachineInfrastructure: &clusterv1.LocalObjectTemplate{Ref: builder.Ref(templates[2])}},
			Workers: clusterv1.WorkersClass{MachineDeployments: []clusterv1.MachineDeploymentClass{{Class: "worker", Template: clusterv1.MachineDeploymentClassTemplate{
				Bootstrap: clusterv1.LocalObjectTemplate{Ref: builder.Ref(templates[3])}, Infrastructure: clusterv1.LocalObjectTemplate{Ref: builder.Ref(templates[4])}}}}},
		},
	}
	g.Expect(source.Client.Create(ctx, class)).To(Succeed())
	cluster := &clusterv1.Cluster{ObjectMeta: objectMeta(ns, "topo"), Spec: clusterv1.ClusterSpec{
		Topology: &clusterv1.Topology{Class: "cc", Version: "v1.31.0"}}}
	g.Expect(source.Client.Create(ctx, cluster)).To(Succeed())
	// Provisioned, as clusterctl move wants it (no controller runs here).
	cluster.Status.InfrastructureReady, cluster.Status.ControlPlaneReady = true, true
	cluster.Status.Conditions = clusterv1.Conditions{{Type: clusterv1.ControlPlaneInitializedCondition, Status: "True", LastTransitionTime: metav1.Now()}}
	g.Expect(source.Client.Status().Update(ctx, cluster)).To(Succeed())
	return templates
}

func exists(t *testing.T, c client.Client, u *unstructured.Unstructured) bool {
	t.Helper()
	got := &unstructured.Unstructured{}
	got.SetGroupVersionKind(u.GroupVersionKind())
	err := c.Get(testContext(t), client.ObjectKeyFromObject(u), got)
	if err != nil && !apierrors.IsNotFound(err) {
		t.Fatal(err)
	}
	return err == nil
}

// TestClassTemplatesMoveWithTheirClass: the move graph follows a ClusterClass's template references, so
// that `clusterctl move` (to a cluster, to a directory and back) carries every object a topology Cluster
// needs, even templates without an owner reference.
func TestClassTemplatesMoveWithTheirClass(t *testing.T) {
	t.Run("to a directory and from it", func(t *testing.T) {
		g := NewWithT(t)
		ns := newNamespace(t)
		templates := classWithTemplates(t, g, ns)
		dir := filepath.Join(t.TempDir(), "backup")
		res, err := move.ToDirectory(testContext(t), clusterOf(t, source, "source"), dir, move.Options{Namespace: ns, Backoffs: fastBackoffs()})
		g.Expect(err).NotTo(HaveOccurred())
		for _, n := range res.Plan.NotMoved {
			g.Expect(n.Ref.Namespace).NotTo(Equal(ns), "%s: %s", n.Ref, n.Reason)
		}
		for _, tmpl := range templates {
			g.Expect(filepath.Join(dir, tmpl.GetKind()+"_"+ns+"_"+tmpl.GetName()+".yaml")).To(BeARegularFile())
		}
		_, err = move.FromDirectory(testContext(t), clusterOf(t, target, "target"), dir, move.Options{Backoffs: fastBackoffs()})
		g.Expect(err).NotTo(HaveOccurred())
		for _, tmpl := range templates {
			g.Expect(exists(t, target.Client, tmpl)).To(BeTrue(), "%s %s restored", tmpl.GetKind(), tmpl.GetName())
		}
	})
	t.Run("to a cluster", func(t *testing.T) {
		g := NewWithT(t)
		ns := newNamespace(t)
		templates := classWithTemplates(t, g, ns)
		res, err := move.Move(testContext(t), clusterOf(t, source, "source"), clusterOf(t, target, "target"), move.Options{Namespace: ns, Backoffs: fastBackoffs()})
		g.Expect(err).NotTo(HaveOccurred())
		for _, n := range res.Plan.NotMoved {
			g.Expect(n.Ref.Namespace).NotTo(Equal(ns), "%s: %s", n.Ref, n.Reason)
		}
		for _, tmpl := range templates {
			g.Expect(exists(t, target.Client, tmpl)).To(BeTrue(), "%s %s moved", tmpl.GetKind(), tmpl.GetName())
			g.Expect(exists(t, source.Client, tmpl)).To(BeFalse(), "%s %s left behind", tmpl.GetKind(), tmpl.GetName())
		}
	})
}
