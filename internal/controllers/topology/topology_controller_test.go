package topology

import (
	"context"
	"net/http"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/metrics"

	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
	"github.com/capstan-dev/capstan/internal/conditions"
	"github.com/capstan-dev/capstan/internal/test/apicount"
	"github.com/capstan-dev/capstan/internal/test/builder"
)

// classFixture creates the templates and a ClusterClass of the test provider in namespace, with a
// variable "flavor" patched into the machine infrastructure templates of the workers and the control plane.
func classFixture(ctx context.Context, g Gomega, namespace string) *clusterv1.ClusterClass {
	p := builder.V1Beta1
	template := func(group, kind, name string) *unstructured.Unstructured {
		u := p.Object(group, kind, namespace, name)
		_ = unstructured.SetNestedMap(u.Object, map[string]any{"spec": map[string]any{"fromTemplate": name}}, "spec", "template")
		g.Expect(env.Client.Create(ctx, u)).To(Succeed())
		return u
	}
	infra := template(p.Infrastructure, builder.InfraClusterTemplateKind, "class-infra")
	cp := template(p.ControlPlaneGroup, builder.ControlPlaneTemplateKind, "class-cp")
	cpMachine := template(p.Infrastructure, builder.InfraMachineTemplateKind, "class-cp-machine")
	worker := template(p.Infrastructure, builder.InfraMachineTemplateKind, "class-worker")
	boot := template(p.Bootstrap, builder.BootstrapTemplateKind, "class-worker-boot")
	class := &clusterv1.ClusterClass{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: "class"},
		Spec: clusterv1.ClusterClassSpec{
			Infrastructure: clusterv1.LocalObjectTemplate{Ref: builder.Ref(infra)},
			ControlPlane: clusterv1.ControlPlaneClass{
				LocalObjectTemplate:   clusterv1.LocalObjectTemplate{Ref: builder.Ref(cp)},
				MachineInfrastructure: &clusterv1.LocalObjectTemplate{Ref: builder.Ref(cpMachine)},
			},
			Workers: clusterv1.WorkersClass{MachineDeployments: []clusterv1.MachineDeploymentClass{{
				Class: "default-worker",
				Template: clusterv1.MachineDeploymentClassTemplate{
					Bootstrap:      clusterv1.LocalObjectTemplate{Ref: builder.Ref(boot)},
					Infrastructure: clusterv1.LocalObjectTemplate{Ref: builder.Ref(worker)},
				},
				MachineHealthCheck: &clusterv1.MachineHealthCheckClass{NodeStartupTimeout: &metav1.Duration{Duration: 10 * time.Minute}},
			}}},
			Variables: []clusterv1.ClusterClassVariable{{
				Name: "flavor", Required: true,
				Schema: clusterv1.VariableSchema{OpenAPIV3Schema: clusterv1.JSONSchemaProps{Type: "string", Default: &apiextensionsv1.JSON{Raw: []byte(`"small"`)}}},
			}},
			Patches: []clusterv1.ClusterClassPatch{{
				Name: "flavor",
				Definitions: []clusterv1.PatchDefinition{{
					Selector: clusterv1.PatchSelector{
						APIVersion: worker.GetAPIVersion(), Kind: builder.InfraMachineTemplateKind,
						MatchResources: clusterv1.PatchSelectorMatch{
							ControlPlane:           true,
							MachineDeploymentClass: &clusterv1.PatchSelectorMatchMachineDeploymentClass{Names: []string{"default-worker"}},
						},
					},
					JSONPatches: []clusterv1.JSONPatch{{Op: "add", Path: "/spec/template/spec/flavor", ValueFrom: &clusterv1.JSONPatchValue{Variable: ptr.To("flavor")}}},
				}},
			}},
		},
	}
	g.Expect(env.Client.Create(ctx, class)).To(Succeed())
	return class
}

// reconcileCount is how many reconciles the topology controller has finished (controller-runtime's
// controller_runtime_reconcile_total), in every test of the package.
func reconcileCount(g Gomega) float64 {
	families, err := metrics.Registry.Gather()
	g.Expect(err).NotTo(HaveOccurred())
	var n float64
	for _, f := range families {
		if f.GetName() != "controller_runtime_reconcile_total" {
			continue
		}
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "controller" && l.GetValue() == "topology/cluster" {
					n += m.GetCounter().GetValue()
				}
			}
		}
	}
	return n
}

func getU(ctx context.Context, g Gomega, gvk schema.GroupVersionKind, namespace, name string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(gvk)
	g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, u)).To(Succeed())
	return u
}

func str(obj map[string]any, path ...string) string {
	v, _, _ := unstructured.NestedString(obj, path...)
	return v
}

func num(obj map[string]any, path ...string) int64 {
	v, _, _ := unstructured.NestedInt64(obj, path...)
	return v
}

func topologyCondition(ctx context.Context, g Gomega, key client.ObjectKey) *metav1.Condition {
	c := &clusterv1.Cluster{}
	g.Expect(env.Client.Get(ctx, key, c)).To(Succeed())
	return conditions.GetV1Beta2(c, clusterv1.ClusterTopologyReconciledV1Beta2Condition)
}

func listMDs(ctx context.Context, g Gomega, namespace string) []clusterv1.MachineDeployment {
	mds := &clusterv1.MachineDeploymentList{}
	g.Expect(env.Client.List(ctx, mds, client.InNamespace(namespace))).To(Succeed())
	return mds.Items
}

func TestClusterFromClusterClass(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := env.NewNamespace(t)
	counter := startManager(t, ns)
	class := classFixture(ctx, g, ns)

	// The ClusterClass controller reconciles the class and lists its variables.
	g.Eventually(func(g Gomega) {
		got := &clusterv1.ClusterClass{}
		g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(class), got)).To(Succeed())
		g.Expect(got.Status.ObservedGeneration).To(Equal(got.Generation))
		g.Expect(got.Status.Variables).To(HaveLen(1))
		g.Expect(got.Status.Variables[0].Definitions[0].From).To(Equal(clusterv1.VariableDefinitionFromInline))
		g.Expect(conditions.IsV1Beta2True(got, clusterv1.ClusterClassVariablesReadyV1Beta2Condition)).To(BeTrue())
	}, timeout, interval).Should(Succeed())

	cluster := &clusterv1.Cluster{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "demo"},
		Spec: clusterv1.ClusterSpec{Topology: &clusterv1.Topology{
			Class: "class", Version: "v1.30.0",
			ControlPlane: clusterv1.ControlPlaneTopology{Replicas: ptr.To[int32](1)},
			Workers: &clusterv1.WorkersTopology{MachineDeployments: []clusterv1.MachineDeploymentTopology{
				{Class: "default-worker", Name: "md-0", Replicas: ptr.To[int32](2)},
				{Class: "default-worker", Name: "md-1", Replicas: ptr.To[int32](1)},
			}},
		}},
	}
	g.Expect(env.Client.Create(ctx, cluster)).To(Succeed())
	key := client.ObjectKeyFromObject(cluster)

	// The InfraCluster and control plane are created and referenced; MachineDeployments wait for the
	// control plane to be initialized.
	var cp *unstructured.Unstructured
	g.Eventually(func(g Gomega) {
		c := &clusterv1.Cluster{}
		g.Expect(env.Client.Get(ctx, key, c)).To(Succeed())
		g.Expect(c.Spec.InfrastructureRef).NotTo(BeNil())
		g.Expect(c.Spec.ControlPlaneRef).NotTo(BeNil())
		infra := getU(ctx, g, schema.FromAPIVersionAndKind(c.Spec.InfrastructureRef.APIVersion, c.Spec.InfrastructureRef.Kind), ns, c.Spec.InfrastructureRef.Name)
		g.Expect(infra.GetKind()).To(Equal(builder.InfraClusterKind))
		g.Expect(str(infra.Object, "spec", "fromTemplate")).To(Equal("class-infra"))
		cp = getU(ctx, g, schema.FromAPIVersionAndKind(c.Spec.ControlPlaneRef.APIVersion, c.Spec.ControlPlaneRef.Kind), ns, c.Spec.ControlPlaneRef.Name)
		g.Expect(str(cp.Object, "spec", "version")).To(Equal("v1.30.0"))
		g.Expect(num(cp.Object, "spec", "replicas")).To(Equal(int64(1)))
		g.Expect(cp.GetManagedFields()).To(ContainElement(HaveField("Manager", FieldManager)))
		cond := topologyCondition(ctx, g, key)
		g.Expect(cond).NotTo(BeNil())
		g.Expect(cond.Reason).To(Equal(ClusterUpgradingReason), "as upstream, MachineDeployments waiting for their creation are shown as an upgrade")
		g.Expect(cond.Message).To(Equal("Cluster is upgrading to v1.30.0\n" +
			"  * MachineDeployments md-0, md-1 creation deferred while control plane upgrade is in progress"))
	}, timeout, interval).Should(Succeed())
	g.Expect(listMDs(ctx, g, ns)).To(BeEmpty())

	// The control plane comes up: status.version, and the Cluster's ControlPlaneInitialized.
	_ = unstructured.SetNestedField(cp.Object, "v1.30.0", "status", "version")
	for _, f := range []string{"replicas", "updatedReplicas", "readyReplicas"} {
		_ = unstructured.SetNestedField(cp.Object, int64(1), "status", f)
	}
	g.Expect(env.Client.Status().Update(ctx, cp)).To(Succeed())
	g.Eventually(func(g Gomega) {
		c := &clusterv1.Cluster{}
		g.Expect(env.Client.Get(ctx, key, c)).To(Succeed())
		conditions.Set(c, clusterv1.Condition{Type: clusterv1.ControlPlaneInitializedCondition, Status: "True"})
		g.Expect(env.Client.Status().Update(ctx, c)).To(Succeed())
	}, timeout, interval).Should(Succeed())

	g.Eventually(func(g Gomega) {
		mds := listMDs(ctx, g, ns)
		g.Expect(mds).To(HaveLen(2))
		for _, md := range mds {
			g.Expect(*md.Spec.Template.Spec.Version).To(Equal("v1.30.0"))
			infra := getU(ctx, g, schema.FromAPIVersionAndKind(md.Spec.Template.Spec.InfrastructureRef.APIVersion, md.Spec.Template.Spec.InfrastructureRef.Kind), ns, md.Spec.Template.Spec.InfrastructureRef.Name)
			g.Expect(str(infra.Object, "spec", "template", "spec", "flavor")).To(Equal("small"))
			mhc := &clusterv1.MachineHealthCheck{}
			g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: md.Name}, mhc)).To(Succeed())
		}
		cond := topologyCondition(ctx, g, key)
		g.Expect(cond.Status).To(Equal(metav1.ConditionTrue), "%+v", cond)
		g.Expect(cond.Reason).To(Equal(ReconcileSucceededReason))
	}, timeout, interval).Should(Succeed())

	// A steady Cluster causes no writes: poke the controller and watch resourceVersions.
	versions := func(g Gomega) map[string]string {
		out := map[string]string{}
		for _, md := range listMDs(ctx, g, ns) {
			out["md/"+md.Name] = md.ResourceVersion
		}
		for _, kind := range []string{builder.InfraClusterKind, builder.InfraMachineTemplateKind, builder.BootstrapTemplateKind, builder.ControlPlaneKind} {
			group := builder.InfrastructureGroup
			if kind == builder.BootstrapTemplateKind {
				group = builder.BootstrapGroup
			}
			if kind == builder.ControlPlaneKind {
				group = builder.ControlPlaneGroup
			}
			l := &unstructured.UnstructuredList{}
			l.SetGroupVersionKind(schema.GroupVersionKind{Group: group, Version: "v1beta1", Kind: kind + "List"})
			g.Expect(env.Client.List(ctx, l, client.InNamespace(ns))).To(Succeed())
			for _, o := range l.Items {
				out[kind+"/"+o.GetName()] = o.GetResourceVersion()
			}
		}
		return out
	}
	before := versions(g)
	poke := func(value string) {
		reconciles := reconcileCount(g)
		g.Eventually(func(g Gomega) {
			c := &clusterv1.Cluster{}
			g.Expect(env.Client.Get(ctx, key, c)).To(Succeed())
			c.Annotations = map[string]string{"poke": value}
			g.Expect(env.Client.Update(ctx, c)).To(Succeed())
		}, timeout, interval).Should(Succeed())
		g.Eventually(func() float64 { return reconcileCount(g) }, timeout, interval).Should(BeNumerically(">", reconciles))
	}
	poke("1")
	g.Consistently(func(g Gomega) {
		g.Expect(versions(g)).To(Equal(before))
	}, 5*time.Second, 500*time.Millisecond).Should(Succeed())
	// Nor any request that would write: once a dry-run apply found an object unchanged, the same desired
	// state for the same object is not dry-run again (upstream's SSA cache).
	requests := counter.Snapshot()
	poke("2")
	g.Expect(counter.Snapshot().Since(requests).Sum(func(k apicount.Key) bool {
		return k.Verb == http.MethodPatch
	})).To(BeZero(), "PATCH requests of a reconcile of a steady topology:\n%s", counter.Snapshot().Since(requests))

	// Another writer's change of what the topology does not set (a label, as other controllers add labels,
	// owner references and finalizers) needs no dry-run either: the control plane still holds all that
	// the controller applied.
	cpNow := getU(ctx, g, cp.GroupVersionKind(), ns, cp.GetName())
	cpNow.SetLabels(map[string]string{"example.com/other": "x"})
	g.Expect(env.Client.Patch(ctx, cpNow, client.Merge)).To(Succeed())
	requests = counter.Snapshot()
	poke("3")
	g.Expect(counter.Snapshot().Since(requests).Sum(func(k apicount.Key) bool {
		return k.Verb == http.MethodPatch
	})).To(BeZero(), "PATCH requests after another writer labelled the control plane:\n%s", counter.Snapshot().Since(requests))
	// A change of a value the topology sets is set back.
	cpNow = getU(ctx, g, cp.GroupVersionKind(), ns, cp.GetName())
	_ = unstructured.SetNestedField(cpNow.Object, int64(3), "spec", "replicas")
	g.Expect(env.Client.Update(ctx, cpNow)).To(Succeed())
	g.Eventually(func(g Gomega) {
		poke(time.Now().String())
		cpNow := getU(ctx, g, cp.GroupVersionKind(), ns, cp.GetName())
		g.Expect(num(cpNow.Object, "spec", "replicas")).To(Equal(int64(1)))
		g.Expect(cpNow.GetLabels()).To(HaveKeyWithValue("example.com/other", "x"))
	}, timeout, interval).Should(Succeed())

	// Changing a variable rotates the machine infrastructure templates; the control plane's old one is
	// deleted once the control plane refers to the new one.
	oldRef := listMDs(ctx, g, ns)[0].Spec.Template.Spec.InfrastructureRef.Name
	oldCPMachine := str(getU(ctx, g, cp.GroupVersionKind(), ns, cp.GetName()).Object, "spec", "machineTemplate", "infrastructureRef", "name")
	g.Expect(oldCPMachine).NotTo(BeEmpty())
	g.Eventually(func(g Gomega) {
		c := &clusterv1.Cluster{}
		g.Expect(env.Client.Get(ctx, key, c)).To(Succeed())
		c.Spec.Topology.Variables = []clusterv1.ClusterVariable{{Name: "flavor", Value: apiextensionsv1.JSON{Raw: []byte(`"large"`)}}}
		g.Expect(env.Client.Update(ctx, c)).To(Succeed())
	}, timeout, interval).Should(Succeed())
	g.Eventually(func(g Gomega) {
		for _, md := range listMDs(ctx, g, ns) {
			g.Expect(md.Spec.Template.Spec.InfrastructureRef.Name).NotTo(Equal(oldRef))
			infra := getU(ctx, g, schema.FromAPIVersionAndKind(md.Spec.Template.Spec.InfrastructureRef.APIVersion, md.Spec.Template.Spec.InfrastructureRef.Kind), ns, md.Spec.Template.Spec.InfrastructureRef.Name)
			g.Expect(str(infra.Object, "spec", "template", "spec", "flavor")).To(Equal("large"))
		}
		cpNow := getU(ctx, g, cp.GroupVersionKind(), ns, cp.GetName())
		newCPMachine := str(cpNow.Object, "spec", "machineTemplate", "infrastructureRef", "name")
		g.Expect(newCPMachine).NotTo(Equal(oldCPMachine))
		cpInfraGVK := schema.FromAPIVersionAndKind(str(cpNow.Object, "spec", "machineTemplate", "infrastructureRef", "apiVersion"), builder.InfraMachineTemplateKind)
		cpInfra := getU(ctx, g, cpInfraGVK, ns, newCPMachine)
		g.Expect(str(cpInfra.Object, "spec", "template", "spec", "flavor")).To(Equal("large"))
		old := &unstructured.Unstructured{}
		old.SetGroupVersionKind(cpInfra.GroupVersionKind())
		g.Expect(apierrors.IsNotFound(env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: oldCPMachine}, old))).To(BeTrue(), "the rotated control plane template %s is deleted", oldCPMachine)
	}, timeout, interval).Should(Succeed())

	// An upgrade moves the control plane first; workers wait until it runs the new version.
	g.Eventually(func(g Gomega) {
		c := &clusterv1.Cluster{}
		g.Expect(env.Client.Get(ctx, key, c)).To(Succeed())
		c.Spec.Topology.Version = "v1.31.0"
		c.Spec.Topology.Workers.MachineDeployments = c.Spec.Topology.Workers.MachineDeployments[:1]
		g.Expect(env.Client.Update(ctx, c)).To(Succeed())
	}, timeout, interval).Should(Succeed())
	g.Eventually(func(g Gomega) {
		cp := getU(ctx, g, cp.GroupVersionKind(), ns, cp.GetName())
		g.Expect(str(cp.Object, "spec", "version")).To(Equal("v1.31.0"))
		mds := listMDs(ctx, g, ns)
		g.Expect(mds).To(HaveLen(1), "md-1 was removed from the topology")
		g.Expect(*mds[0].Spec.Template.Spec.Version).To(Equal("v1.30.0"))
		cond := topologyCondition(ctx, g, key)
		g.Expect(cond.Reason).To(Equal(ClusterUpgradingReason))
	}, timeout, interval).Should(Succeed())
	g.Eventually(func(g Gomega) {
		cp := getU(ctx, g, cp.GroupVersionKind(), ns, cp.GetName())
		_ = unstructured.SetNestedField(cp.Object, "v1.31.0", "status", "version")
		g.Expect(env.Client.Status().Update(ctx, cp)).To(Succeed())
	}, timeout, interval).Should(Succeed())
	g.Eventually(func(g Gomega) {
		mds := listMDs(ctx, g, ns)
		g.Expect(mds).To(HaveLen(1))
		g.Expect(*mds[0].Spec.Template.Spec.Version).To(Equal("v1.31.0"))
	}, timeout, interval).Should(Succeed())
}

func TestInvalidVariableIsReported(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := env.NewNamespace(t)
	startManager(t, ns)
	classFixture(ctx, g, ns)
	cluster := &clusterv1.Cluster{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "bad"},
		Spec: clusterv1.ClusterSpec{Topology: &clusterv1.Topology{
			Class: "class", Version: "v1.30.0",
			Variables: []clusterv1.ClusterVariable{{Name: "flavor", Value: apiextensionsv1.JSON{Raw: []byte(`42`)}}},
		}},
	}
	g.Expect(env.Client.Create(ctx, cluster)).To(Succeed())
	g.Eventually(func(g Gomega) {
		cond := topologyCondition(ctx, g, client.ObjectKeyFromObject(cluster))
		g.Expect(cond).NotTo(BeNil())
		g.Expect(cond.Reason).To(Equal(ReconcileFailedReason))
		g.Expect(cond.Message).To(ContainSubstring("spec.topology.variables[flavor].value"))
	}, timeout, interval).Should(Succeed())
	c := &clusterv1.Cluster{}
	g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(cluster), c)).To(Succeed())
	g.Expect(c.Spec.ControlPlaneRef).To(BeNil(), "nothing is created from an invalid topology")
}
