package topology

import (
	"context"
	"encoding/json"
	"testing"

	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
	"sigs.k8s.io/structured-merge-diff/v6/value"

	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
)

// applied returns obj as the API server stores it after the topology controller applied it: with the
// managed fields of the apply (every field of its spec owned by capi-topology, lists as a whole).
func applied(obj *unstructured.Unstructured) *unstructured.Unstructured {
	out := obj.DeepCopy()
	var fields func(v any) map[string]any
	fields = func(v any) map[string]any {
		out := map[string]any{}
		if m, ok := v.(map[string]any); ok {
			for k, e := range m {
				out["f:"+k] = fields(e)
			}
		}
		return out
	}
	raw, _ := json.Marshal(map[string]any{"f:spec": fields(obj.Object["spec"])})
	out.SetManagedFields([]metav1.ManagedFieldsEntry{{Manager: FieldManager, Operation: metav1.ManagedFieldsOperationApply,
		APIVersion: obj.GetAPIVersion(), FieldsType: "FieldsV1", FieldsV1: metav1.NewFieldsV1(string(raw))}})
	return out
}

// apply returns the current state after the topology controller applied d over cur: objects the engine
// holds keep their current state; the control plane has rolled out (status.version = spec.version) when
// cpDone; workers listed in upgrading still roll out.
func apply(t *testing.T, cur *Current, d *Desired, cpDone bool, upgrading ...string) *Current {
	t.Helper()
	next := &Current{Cluster: cur.Cluster.DeepCopy(), MachineDeployments: map[string]*MachineDeploymentState{}, MachinePools: map[string]*MachinePoolState{}}
	next.InfrastructureCluster = d.InfrastructureCluster.DeepCopy()
	if d.ControlPlane.Held && cur.ControlPlane.Object != nil {
		next.ControlPlane = cur.ControlPlane
	} else {
		cp := d.ControlPlane.Object.DeepCopy()
		v, _, _ := unstructured.NestedString(cp.Object, "spec", "version")
		if !cpDone && cur.ControlPlane.Object != nil {
			v, _, _ = unstructured.NestedString(cur.ControlPlane.Object.Object, "status", "version")
		}
		_ = unstructured.SetNestedField(cp.Object, v, "status", "version")
		if r, ok, _ := unstructured.NestedInt64(cp.Object, "spec", "replicas"); ok {
			for _, f := range []string{"replicas", "updatedReplicas", "readyReplicas"} {
				_ = unstructured.SetNestedField(cp.Object, r, "status", f)
			}
		}
		next.ControlPlane = ControlPlaneState{Object: cp}
		if t := d.ControlPlane.InfrastructureMachineTemplate; t != nil {
			next.ControlPlane.InfrastructureMachineTemplate = applied(t)
		}
	}
	initialized(next.Cluster)
	for name, md := range d.MachineDeployments {
		if md.Held && cur.MachineDeployments[name] != nil {
			kept := *cur.MachineDeployments[name]
			kept.Upgrading = false
			next.MachineDeployments[name] = &kept
			continue
		}
		next.MachineDeployments[name] = &MachineDeploymentState{Object: md.Object.DeepCopy(),
			BootstrapTemplate: applied(md.BootstrapTemplate), InfrastructureMachineTemplate: applied(md.InfrastructureMachineTemplate)}
	}
	for name, mp := range d.MachinePools {
		if mp.Held && cur.MachinePools[name] != nil {
			kept := *cur.MachinePools[name]
			kept.Upgrading = false
			next.MachinePools[name] = &kept
			continue
		}
		next.MachinePools[name] = &MachinePoolState{Object: mp.Object.DeepCopy(),
			BootstrapObject: mp.BootstrapObject.DeepCopy(), InfrastructureMachinePoolObject: mp.InfrastructureMachinePoolObject.DeepCopy()}
	}
	for _, name := range upgrading {
		if md, ok := next.MachineDeployments[name]; ok {
			md.Upgrading = true
		}
		if mp, ok := next.MachinePools[name]; ok {
			mp.Upgrading = true
		}
	}
	return next
}

func cpReplicas(t *testing.T, d *Desired) int64 {
	return nested(t, d.ControlPlane.Object, "spec", "replicas").(int64)
}

// TestVersionChangeWedge is the wedge of issue 36: the topology at v1.31 while the control plane stays on
// v1.30 (BeforeClusterUpgrade blocks), then v1.32. The engine refuses it, naming what still runs v1.30,
// and changes nothing.
func TestVersionChangeWedge(t *testing.T) {
	g := NewWithT(t)
	bp, cur := upgradeFixture(t, nil)
	d := computeWithHooks(t, bp, cur, blocking(BeforeClusterUpgradeHook))
	g.Expect(d.Upgrade.BlockingHook).To(Equal(BeforeClusterUpgradeHook))
	g.Expect(cpVersion(t, d)).To(Equal("v1.30.0"))
	cur = apply(t, cur, d, true)

	cur.Cluster.Spec.Topology.Version = "v1.32.0"
	_, err := Compute(context.Background(), bp, cur, Options{RuntimeHooks: true})
	g.Expect(err).To(MatchError(And(
		ContainSubstring("spec.topology.version v1.32.0 skips a minor version"),
		ContainSubstring("the control plane KubeadmControlPlane "+cur.ControlPlane.Object.GetName()),
		ContainSubstring("MachineDeployment(s) "+cur.MachineDeployments["md-1"].Object.Name),
		ContainSubstring("still run v1.30.0; set v1.31.x first"))))
}

// TestControlPlaneWaitsForWorkersOnlyForTheSkew: a worker left behind (here deferred) holds the control
// plane only when the version skew policy needs it to catch up first: the workers' plan then starts with
// the control plane's version, and the control plane waits at it (upstream v1.12's chained upgrades; the
// admission refuses these bumps while a worker lags, a Cluster without admission gets here). Once
// released, the worker goes straight to the step the plan names, skipping minors.
func TestControlPlaneWaitsForWorkersOnlyForTheSkew(t *testing.T) {
	g := NewWithT(t)
	deferMD1 := func(c *clusterv1.Cluster) {
		c.Spec.Topology.Workers.MachineDeployments[0].Metadata.Annotations = map[string]string{clusterv1.ClusterTopologyDeferUpgradeAnnotation: ""}
	}
	bp, cur := upgradeFixture(t, deferMD1)
	md1 := cur.MachineDeployments["md-1"].Object.Name
	// Each version in turn rolls out to the control plane, md-2 and md-3; md-1 is deferred at v1.30.
	for _, v := range []string{"v1.31.0", "v1.32.0", "v1.33.0"} {
		cur.Cluster.Spec.Topology.Version = v
		for range 4 {
			cur = apply(t, cur, compute(t, bp, cur), true)
		}
		d := compute(t, bp, cur)
		g.Expect(cpVersion(t, d)).To(Equal(v), "md-1 at v1.30 is within the skew of a control plane at %s", v)
		g.Expect(mdVersions(d)).To(Equal(map[string]string{"md-1": "v1.30.0", "md-2": v, "md-3": v}))
		g.Expect(d.Upgrade.MachineDeploymentsDeferred).To(Equal([]string{md1}))
	}

	// v1.34 would put md-1 four minors behind: the workers' plan is v1.33 then v1.34, and the control
	// plane waits at v1.33 for md-1.
	cur.Cluster.Spec.Topology.Version = "v1.34.0"
	d := compute(t, bp, cur)
	g.Expect(d.Upgrade.ControlPlanePlan).To(Equal([]string{"v1.34.0"}))
	g.Expect(d.Upgrade.WorkersPlan).To(Equal([]string{"v1.33.0", "v1.34.0"}))
	g.Expect(cpVersion(t, d)).To(Equal("v1.33.0"))
	g.Expect(d.ControlPlane.Held).To(BeTrue())
	g.Expect(d.Upgrade.ControlPlaneWaitingForWorkers).To(BeTrue())
	g.Expect(d.Upgrade.ControlPlaneWaitingFor).To(Equal("MachineDeployment(s) " + md1 + " not on version v1.33.0 yet or still upgrading"))
	for _, name := range []string{"md-2", "md-3"} {
		g.Expect(d.MachineDeployments[name].Held).To(BeTrue(), "%s waits for v1.34 and gets no other change", name)
	}

	// md-1's deferral lifted: it goes from v1.30 to v1.33 in one step, not v1.34.
	cur.Cluster.Spec.Topology.Workers.MachineDeployments[0].Metadata.Annotations = nil
	d = compute(t, bp, cur)
	g.Expect(mdVersions(d)).To(Equal(map[string]string{"md-1": "v1.33.0", "md-2": "v1.33.0", "md-3": "v1.33.0"}))
	g.Expect(cpVersion(t, d)).To(Equal("v1.33.0"))
	cur = apply(t, cur, d, true, "md-1")
	d = compute(t, bp, cur)
	g.Expect(cpVersion(t, d)).To(Equal("v1.33.0"), "md-1 still rolls out")
	g.Expect(d.Upgrade.ControlPlaneWaitingFor).To(ContainSubstring(md1))

	// md-1 done: now the control plane takes v1.34, then the workers one at a time.
	cur = apply(t, cur, d, true)
	d = compute(t, bp, cur)
	g.Expect(cpVersion(t, d)).To(Equal("v1.34.0"))
	g.Expect(d.Upgrade.ControlPlaneWaitingFor).To(BeEmpty())
	for range 4 {
		cur = apply(t, cur, d, true)
		d = compute(t, bp, cur)
	}
	g.Expect(mdVersions(d)).To(HaveEach("v1.34.0"))
	g.Expect(d.Upgrade.ControlPlanePlan).To(BeEmpty())
	g.Expect(d.Upgrade.WorkersPlan).To(BeEmpty())
}

// TestHeldObjectsGetNoOtherChange: while an object waits for an upgrade (here BeforeClusterUpgrade
// blocks), topology changes to it — replicas, a patch's variable, metadata — are held; it gets them
// together with the version, so that its Machines roll out once.
func TestHeldObjectsGetNoOtherChange(t *testing.T) {
	g := NewWithT(t)
	class := workerMachineTypeClass(t)
	cluster := mustCluster(t, bookCluster)
	cluster.Spec.Topology.Version = "v1.30.0"
	bp := blueprint(t, class)
	cur := apply(t, &Current{Cluster: cluster}, compute(t, bp, &Current{Cluster: cluster}), true)
	cur = apply(t, cur, compute(t, bp, cur), true)
	before := cur.MachineDeployments["md-0"]

	// An upgrade, held by BeforeClusterUpgrade, and changes to everything.
	c := cur.Cluster
	c.Spec.Topology.Version = "v1.31.0"
	c.Spec.Topology.ControlPlane.Replicas = ptr.To[int32](5)
	c.Spec.Topology.Workers.MachineDeployments[0].Replicas = ptr.To[int32](6)
	c.Spec.Topology.Workers.MachineDeployments[0].Metadata.Labels["added"] = "yes"
	c.Spec.Topology.Variables = []clusterv1.ClusterVariable{{Name: "workerMachineType", Value: jsonValue(`"t3.xlarge"`)}}
	d := computeWithHooks(t, bp, cur, blocking(BeforeClusterUpgradeHook))
	g.Expect(d.ControlPlane.Held).To(BeTrue())
	md := d.MachineDeployments["md-0"]
	g.Expect(md.Held).To(BeTrue())
	cur = apply(t, cur, d, true)
	g.Expect(cur.MachineDeployments["md-0"].Object).To(BeIdenticalTo(before.Object), "the held MachineDeployment is left as it was")
	g.Expect(nested(t, cur.ControlPlane.Object, "spec", "replicas")).To(Equal(int64(3)))

	// The hook lets the upgrade start: the control plane takes the version and its new replicas at once;
	// the MachineDeployment still waits.
	d = computeWithHooks(t, bp, cur, blocking())
	g.Expect(d.ControlPlane.Held).To(BeFalse())
	g.Expect(cpVersion(t, d)).To(Equal("v1.31.0"))
	g.Expect(cpReplicas(t, d)).To(Equal(int64(5)))
	g.Expect(d.MachineDeployments["md-0"].Held).To(BeTrue())
	cur = apply(t, cur, d, false)
	d = computeWithHooks(t, bp, cur, blocking())
	g.Expect(d.MachineDeployments["md-0"].Held).To(BeTrue(), "held while the control plane rolls out")
	cur = apply(t, cur, d, true)

	// The control plane is done: the MachineDeployment takes the version, its replicas, labels and the
	// rotated template in one change.
	d = computeWithHooks(t, bp, cur, blocking())
	md = d.MachineDeployments["md-0"]
	g.Expect(md.Held).To(BeFalse())
	g.Expect(*md.Object.Spec.Template.Spec.Version).To(Equal("v1.31.0"))
	g.Expect(*md.Object.Spec.Replicas).To(Equal(int32(6)))
	g.Expect(md.Object.Labels).To(HaveKeyWithValue("added", "yes"))
	g.Expect(md.InfrastructureMachineTemplate.GetName()).NotTo(Equal(before.InfrastructureMachineTemplate.GetName()))
	g.Expect(nested(t, md.InfrastructureMachineTemplate, "spec", "template", "spec", "instanceType")).To(Equal("t3.xlarge"))
	g.Expect(md.Object.Spec.Template.Spec.InfrastructureRef.Name).To(Equal(md.InfrastructureMachineTemplate.GetName()))
}

// TestNewWorkersWaitForTheirTurn: a MachineDeployment or MachinePool added while the control plane waits
// for a version is created once the control plane runs it, at that version.
func TestNewWorkersWaitForTheirTurn(t *testing.T) {
	g := NewWithT(t)
	bp, cur := upgradeFixture(t, nil)
	cur.Cluster.Spec.Topology.Workers.MachineDeployments = append(cur.Cluster.Spec.Topology.Workers.MachineDeployments,
		clusterv1.MachineDeploymentTopology{Class: "default-worker", Name: "md-new"})
	d := computeWithHooks(t, bp, cur, blocking(BeforeClusterUpgradeHook))
	g.Expect(d.MachineDeployments).NotTo(HaveKey("md-new"))
	g.Expect(d.Upgrade.MachineDeploymentsPendingCreate).To(Equal([]string{"md-new"}))
	d = computeWithHooks(t, bp, cur, blocking())
	cur = apply(t, cur, d, true)
	d = computeWithHooks(t, bp, cur, blocking())
	g.Expect(d.MachineDeployments).To(HaveKey("md-new"))
	g.Expect(*d.MachineDeployments["md-new"].Object.Spec.Template.Spec.Version).To(Equal("v1.31.0"))
}

// TestRotationOnFieldRemoval: a template is rotated when a field the engine set leaves the desired
// template (a patch disabled with enabledIf, a field deleted from the class's template); fields others
// set, absent from the desired template, are not a change.
func TestRotationOnFieldRemoval(t *testing.T) {
	class := withPatches(t, `
- name: instanceType
  required: false
  schema:
    openAPIV3Schema:
      type: string
      default: ""`, `
- name: instanceType
  enabledIf: '{{ ne .instanceType "" }}'
  definitions:
    - `+workerSelector[7:]+`
      jsonPatches:
      - op: add
        path: /spec/template/spec/instanceType
        valueFrom:
          variable: instanceType`)
	tests := []struct {
		name       string
		change     func(bp *Blueprint, cur *Current)
		wantRotate bool
	}{
		{"nothing changes", func(*Blueprint, *Current) {}, false},
		{"a field defaulted by the API server is not the engine's", func(_ *Blueprint, cur *Current) {
			_ = unstructured.SetNestedField(cur.MachineDeployments["md-0"].InfrastructureMachineTemplate.Object, "defaulted", "spec", "template", "spec", "defaulted")
		}, false},
		{"the patch disabled", func(_ *Blueprint, cur *Current) {
			cur.Cluster.Spec.Topology.Variables = nil
		}, true},
		{"a field deleted from the class's template", func(bp *Blueprint, _ *Current) {
			unstructured.RemoveNestedField(bp.MachineDeployments["default-worker"].InfrastructureMachineTemplate.Object, "spec", "template", "spec", "extraMounts")
		}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			cluster := mustCluster(t, bookCluster)
			cluster.Spec.Topology.Variables = []clusterv1.ClusterVariable{{Name: "instanceType", Value: jsonValue(`"t3.large"`)}}
			bp := blueprint(t, class)
			cur := apply(t, &Current{Cluster: cluster}, compute(t, bp, &Current{Cluster: cluster}), true)
			cur = apply(t, cur, compute(t, bp, cur), true)
			name := cur.MachineDeployments["md-0"].InfrastructureMachineTemplate.GetName()
			tt.change(bp, cur)
			d := compute(t, bp, cur)
			md := d.MachineDeployments["md-0"]
			if !tt.wantRotate {
				g.Expect(md.InfrastructureMachineTemplate.GetName()).To(Equal(name))
				return
			}
			g.Expect(md.InfrastructureMachineTemplate.GetName()).NotTo(Equal(name))
			g.Expect(md.Object.Spec.Template.Spec.InfrastructureRef.Name).To(Equal(md.InfrastructureMachineTemplate.GetName()))
			g.Expect(md.BootstrapTemplate.GetName()).To(Equal(cur.MachineDeployments["md-0"].BootstrapTemplate.GetName()), "the bootstrap template did not change")
		})
	}
}

func TestHasPath(t *testing.T) {
	obj := map[string]any{"spec": map[string]any{
		"files":   []any{map[string]any{"path": "/a", "content": "x"}},
		"ports":   []any{int64(80)},
		"volumes": []any{"v"},
	}}
	key := fieldpath.KeyElementByFields("path", "/a")
	other := fieldpath.KeyElementByFields("path", "/b")
	tests := []struct {
		path fieldpath.Path
		want bool
	}{
		{fieldpath.MakePathOrDie("spec", "files", key, "content"), true},
		{fieldpath.MakePathOrDie("spec", "files", other, "content"), false},
		{fieldpath.MakePathOrDie("spec", "ports", fieldpath.ValueElement(value.NewValueInterface(int64(80)))), true},
		{fieldpath.MakePathOrDie("spec", "ports", fieldpath.ValueElement(value.NewValueInterface(int64(81)))), false},
		{fieldpath.MakePathOrDie("spec", "volumes", 0), true},
		{fieldpath.MakePathOrDie("spec", "volumes", 1), false},
		{fieldpath.MakePathOrDie("spec", "missing"), false},
	}
	for _, tt := range tests {
		if got := hasPath(obj, tt.path); got != tt.want {
			t.Errorf("hasPath(%s) = %v, want %v", tt.path, got, tt.want)
		}
	}
}
