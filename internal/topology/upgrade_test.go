package topology

import (
	"context"
	"slices"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
)

// upgradeFixture is a running Cluster at v1.30.0 with three MachineDeployments, and its topology moved
// to v1.31.0.
func upgradeFixture(t *testing.T, mutate func(*clusterv1.Cluster)) (*Blueprint, *Current) {
	t.Helper()
	cluster := mustCluster(t, bookCluster)
	cluster.Spec.Topology.Version = "v1.30.0"
	cluster.Spec.Topology.Workers.MachineDeployments = []clusterv1.MachineDeploymentTopology{
		{Class: "default-worker", Name: "md-1"}, {Class: "default-worker", Name: "md-2"}, {Class: "default-worker", Name: "md-3"},
	}
	if mutate != nil {
		mutate(cluster)
	}
	bp := blueprint(t, mustClass(t, bookClass))
	first := compute(t, bp, &Current{Cluster: cluster})
	cur := asCurrent(t, cluster, compute(t, bp, asCurrent(t, cluster, first)))
	cur.Cluster.Spec.Topology.Version = "v1.31.0"
	return bp, cur
}

func cpVersion(t *testing.T, d *Desired) string {
	return nested(t, d.ControlPlane.Object, "spec", "version").(string)
}

func mdVersions(d *Desired) map[string]string {
	out := map[string]string{}
	for name, md := range d.MachineDeployments {
		out[name] = *md.Object.Spec.Template.Spec.Version
	}
	return out
}

// step applies a desired state as the new current state; cpDone says whether the control plane has
// finished rolling out (status.version = spec.version), and upgrading lists MachineDeployments whose
// Machines are still rolling.
func step(t *testing.T, cur *Current, d *Desired, cpDone bool, upgrading ...string) *Current {
	t.Helper()
	next := asCurrent(t, cur.Cluster, d)
	next.Cluster = cur.Cluster.DeepCopy()
	if !cpDone {
		old, _, _ := unstructured.NestedString(cur.ControlPlane.Object.Object, "status", "version")
		_ = unstructured.SetNestedField(next.ControlPlane.Object.Object, old, "status", "version")
	}
	for _, name := range upgrading {
		next.MachineDeployments[name].Upgrading = true
	}
	return next
}

func TestUpgradeSequence(t *testing.T) {
	g := NewWithT(t)
	bp, cur := upgradeFixture(t, nil)

	// The control plane picks up the version first; workers wait.
	d := compute(t, bp, cur)
	g.Expect(cpVersion(t, d)).To(Equal("v1.31.0"))
	g.Expect(d.Upgrade.ControlPlaneStartingUpgrade).To(BeTrue())
	g.Expect(mdVersions(d)).To(Equal(map[string]string{"md-1": "v1.30.0", "md-2": "v1.30.0", "md-3": "v1.30.0"}))
	g.Expect(d.Upgrade.MachineDeploymentsPendingUpgrade).To(HaveLen(3))

	// While the control plane rolls out, workers still wait.
	cur = step(t, cur, d, false)
	d = compute(t, bp, cur)
	g.Expect(d.Upgrade.ControlPlaneUpgrading).To(BeTrue())
	g.Expect(mdVersions(d)).To(HaveEach("v1.30.0"))

	// Once it is done, the first MachineDeployment upgrades, one at a time.
	cur = step(t, cur, d, true)
	d = compute(t, bp, cur)
	g.Expect(mdVersions(d)).To(Equal(map[string]string{"md-1": "v1.31.0", "md-2": "v1.30.0", "md-3": "v1.30.0"}))

	// md-2 waits while md-1 rolls out.
	cur = step(t, cur, d, true, "md-1")
	d = compute(t, bp, cur)
	g.Expect(mdVersions(d)).To(Equal(map[string]string{"md-1": "v1.31.0", "md-2": "v1.30.0", "md-3": "v1.30.0"}))
	g.Expect(d.Upgrade.MachineDeploymentsUpgrading).To(ConsistOf(cur.MachineDeployments["md-1"].Object.Name))

	// md-1 done: md-2 goes, then md-3.
	cur = step(t, cur, d, true)
	d = compute(t, bp, cur)
	g.Expect(mdVersions(d)).To(Equal(map[string]string{"md-1": "v1.31.0", "md-2": "v1.31.0", "md-3": "v1.30.0"}))
	cur = step(t, cur, d, true)
	d = compute(t, bp, cur)
	g.Expect(mdVersions(d)).To(HaveEach("v1.31.0"))
	g.Expect(d.Upgrade.MachineDeploymentsPendingUpgrade).To(BeEmpty())
}

func TestUpgradeControlPlaneWaitsForWorkers(t *testing.T) {
	g := NewWithT(t)
	bp, cur := upgradeFixture(t, nil)
	cur.Cluster.Spec.Topology.Version = "v1.30.0"
	cur.MachineDeployments["md-2"].Upgrading = true
	cur.Cluster.Spec.Topology.Version = "v1.31.0"
	d := compute(t, bp, cur)
	g.Expect(cpVersion(t, d)).To(Equal("v1.30.0"), "the control plane does not move while workers roll out")
	g.Expect(d.Upgrade.ControlPlanePendingUpgrade).To(BeTrue())
}

func TestUpgradeConcurrencyDeferAndHold(t *testing.T) {
	tests := []struct {
		name     string
		mutate   func(*clusterv1.Cluster)
		want     map[string]string
		deferred int
	}{
		{
			name:   "upgrade-concurrency 2",
			mutate: func(c *clusterv1.Cluster) { c.Annotations = map[string]string{UpgradeConcurrencyAnnotation: "2"} },
			want:   map[string]string{"md-1": "v1.31.0", "md-2": "v1.31.0", "md-3": "v1.30.0"},
		},
		{
			name: "defer-upgrade skips one MachineDeployment",
			mutate: func(c *clusterv1.Cluster) {
				c.Spec.Topology.Workers.MachineDeployments[0].Metadata.Annotations = map[string]string{clusterv1.ClusterTopologyDeferUpgradeAnnotation: ""}
			},
			want:     map[string]string{"md-1": "v1.30.0", "md-2": "v1.31.0", "md-3": "v1.30.0"},
			deferred: 1,
		},
		{
			name: "hold-upgrade-sequence holds it and every later one",
			mutate: func(c *clusterv1.Cluster) {
				c.Spec.Topology.Workers.MachineDeployments[1].Metadata.Annotations = map[string]string{clusterv1.ClusterTopologyHoldUpgradeSequenceAnnotation: ""}
			},
			want:     map[string]string{"md-1": "v1.31.0", "md-2": "v1.30.0", "md-3": "v1.30.0"},
			deferred: 2,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			bp, cur := upgradeFixture(t, tt.mutate)
			d := compute(t, bp, cur)
			cur = step(t, cur, d, true)
			d = compute(t, bp, cur)
			g.Expect(mdVersions(d)).To(Equal(tt.want))
			g.Expect(d.Upgrade.MachineDeploymentsDeferred).To(HaveLen(tt.deferred))
			for _, md := range d.MachineDeployments {
				g.Expect(md.Object.Annotations).NotTo(HaveKey(clusterv1.ClusterTopologyDeferUpgradeAnnotation), "the annotations stay on the topology")
				g.Expect(md.Object.Annotations).NotTo(HaveKey(clusterv1.ClusterTopologyHoldUpgradeSequenceAnnotation))
			}
		})
	}
}

func TestNewMachineDeploymentsWaitForTheControlPlane(t *testing.T) {
	g := NewWithT(t)
	bp, cur := upgradeFixture(t, nil)
	cur.Cluster.Spec.Topology.Version = "v1.30.0"
	cur.Cluster.Spec.Topology.Workers.MachineDeployments = append(cur.Cluster.Spec.Topology.Workers.MachineDeployments,
		clusterv1.MachineDeploymentTopology{Class: "default-worker", Name: "md-new"})
	// The control plane is still provisioning.
	unstructured.RemoveNestedField(cur.ControlPlane.Object.Object, "status", "version")
	d := compute(t, bp, cur)
	g.Expect(d.MachineDeployments).NotTo(HaveKey("md-new"))
	g.Expect(d.Upgrade.MachineDeploymentsPendingCreate).To(Equal([]string{"md-new"}))

	_ = unstructured.SetNestedField(cur.ControlPlane.Object.Object, "v1.30.0", "status", "version")
	d = compute(t, bp, cur)
	g.Expect(d.MachineDeployments).To(HaveKey("md-new"))

	// A MachineDeployment removed from the topology is not in the desired state.
	cur.Cluster.Spec.Topology.Workers.MachineDeployments = cur.Cluster.Spec.Topology.Workers.MachineDeployments[1:]
	d = compute(t, bp, cur)
	g.Expect(d.MachineDeployments).NotTo(HaveKey("md-1"))
}

// computeWithHooks computes as the topology controller does with the Runtime SDK on: the hooks the
// engine asks for are answered by answer, and it computes again with the answers.
func computeWithHooks(t *testing.T, bp *Blueprint, cur *Current, answer func(HookCall) HookResponse) *Desired {
	t.Helper()
	cur.HookResponses = map[string]HookResponse{}
	for range 7 {
		d, err := Compute(context.Background(), bp, cur, Options{RuntimeHooks: true})
		if err != nil {
			t.Fatal(err)
		}
		if len(d.Hooks.Call) == 0 {
			return d
		}
		for _, call := range d.Hooks.Call {
			cur.HookResponses[call.Hook] = answer(call)
		}
	}
	t.Fatal("the engine keeps asking for hooks")
	return nil
}

func blocking(hooks ...string) func(HookCall) HookResponse {
	return func(call HookCall) HookResponse {
		if slices.Contains(hooks, call.Hook) {
			return HookResponse{RetryAfter: 10 * time.Second, Message: "waiting for " + call.Hook}
		}
		return HookResponse{}
	}
}

func TestUpgradeHooks(t *testing.T) {
	g := NewWithT(t)
	bp, cur := upgradeFixture(t, nil)
	plan := []string{"v1.31.0"}

	// Compute asks for BeforeClusterUpgrade and changes nothing until it has the answer.
	d, err := Compute(context.Background(), bp, cur, Options{RuntimeHooks: true})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(d.Hooks.Call).To(Equal([]HookCall{{Hook: BeforeClusterUpgradeHook, FromVersion: "v1.30.0", ToVersion: "v1.31.0",
		ControlPlaneUpgrades: plan, WorkersUpgrades: plan}}))
	g.Expect(cpVersion(t, d)).To(Equal("v1.30.0"))
	g.Expect(d.ControlPlane.Held).To(BeTrue())

	d = computeWithHooks(t, bp, cur, blocking(BeforeClusterUpgradeHook))
	g.Expect(cpVersion(t, d)).To(Equal("v1.30.0"))
	g.Expect(d.Upgrade.BlockingHook).To(Equal(BeforeClusterUpgradeHook))
	g.Expect(d.Upgrade.HookMessage).To(Equal("waiting for BeforeClusterUpgrade"))
	g.Expect(d.Upgrade.HookRetryAfter).To(Equal(10 * time.Second))
	g.Expect(d.Hooks.MarkPending).To(BeEmpty())

	// Let through, BeforeControlPlaneUpgrade blocks the step.
	d = computeWithHooks(t, bp, cur, blocking(BeforeControlPlaneUpgradeHook))
	g.Expect(cpVersion(t, d)).To(Equal("v1.30.0"))
	g.Expect(d.Upgrade.BlockingHook).To(Equal(BeforeControlPlaneUpgradeHook))
	g.Expect(d.Hooks.MarkPending).To(Equal([]string{AfterClusterUpgradeHook}))

	// Both let through: the control plane takes the version; the hooks of the step become pending, the
	// workers' ones too as the workers take the same version.
	d = computeWithHooks(t, bp, cur, blocking())
	g.Expect(cpVersion(t, d)).To(Equal("v1.31.0"))
	g.Expect(d.Hooks.MarkPending).To(Equal([]string{AfterClusterUpgradeHook, AfterControlPlaneUpgradeHook, BeforeWorkersUpgradeHook, AfterWorkersUpgradeHook}))

	// Once the control plane runs it, AfterControlPlaneUpgrade holds the workers while it blocks.
	cur = step(t, cur, d, true)
	cur.Cluster.Annotations = map[string]string{"runtime.cluster.x-k8s.io/pending-hooks": "AfterClusterUpgrade,AfterControlPlaneUpgrade,AfterWorkersUpgrade,BeforeWorkersUpgrade"}
	d = computeWithHooks(t, bp, cur, blocking(AfterControlPlaneUpgradeHook))
	g.Expect(d.Upgrade.BlockingHook).To(Equal(AfterControlPlaneUpgradeHook))
	g.Expect(d.Upgrade.HookRetryAfter).To(Equal(10 * time.Second))
	g.Expect(mdVersions(d)).To(HaveEach("v1.30.0"))
	g.Expect(d.Hooks.MarkDone).To(BeEmpty())

	// Then BeforeWorkersUpgrade, asked with the workers' version, holds them.
	var calls []HookCall
	d = computeWithHooks(t, bp, cur, func(call HookCall) HookResponse {
		calls = append(calls, call)
		return blocking(BeforeWorkersUpgradeHook)(call)
	})
	g.Expect(calls).To(Equal([]HookCall{
		{Hook: AfterControlPlaneUpgradeHook, ToVersion: "v1.31.0", WorkersUpgrades: plan},
		{Hook: BeforeWorkersUpgradeHook, FromVersion: "v1.30.0", ToVersion: "v1.31.0", WorkersUpgrades: plan},
	}))
	g.Expect(d.Upgrade.BlockingHook).To(Equal(BeforeWorkersUpgradeHook))
	g.Expect(mdVersions(d)).To(HaveEach("v1.30.0"))
	g.Expect(d.Upgrade.MachineDeploymentsPendingUpgrade).To(HaveLen(3))
	g.Expect(d.Hooks.MarkDone).To(Equal([]string{AfterControlPlaneUpgradeHook}))

	// Let through: both are done, the workers follow.
	d = computeWithHooks(t, bp, cur, blocking())
	g.Expect(d.Hooks.MarkDone).To(Equal([]string{AfterControlPlaneUpgradeHook, BeforeWorkersUpgradeHook}))
	g.Expect(mdVersions(d)).To(ContainElement("v1.31.0"))
	g.Expect(d.Hooks.CallAfterApply).To(BeEmpty(), "AfterClusterUpgrade waits for every worker")

	// Once every worker runs the version, AfterWorkersUpgrade is asked, then AfterClusterUpgrade is called
	// after the apply.
	cur.Cluster.Annotations = map[string]string{"runtime.cluster.x-k8s.io/pending-hooks": "AfterClusterUpgrade,AfterWorkersUpgrade"}
	for range 3 {
		cur = step(t, cur, d, true)
		d = computeWithHooks(t, bp, cur, blocking(AfterWorkersUpgradeHook))
	}
	g.Expect(mdVersions(d)).To(HaveEach("v1.31.0"))
	g.Expect(d.Upgrade.BlockingHook).To(Equal(AfterWorkersUpgradeHook))
	g.Expect(d.Hooks.CallAfterApply).To(BeEmpty(), "AfterClusterUpgrade waits for AfterWorkersUpgrade")
	d = computeWithHooks(t, bp, cur, blocking())
	g.Expect(d.Hooks.MarkDone).To(Equal([]string{AfterWorkersUpgradeHook}))
	g.Expect(d.Hooks.CallAfterApply).To(Equal([]HookCall{{Hook: AfterClusterUpgradeHook, ToVersion: "v1.31.0"}}))

	// Without the Runtime SDK no hook is asked for.
	_, cur = upgradeFixture(t, nil)
	d = compute(t, bp, cur)
	g.Expect(d.Hooks).To(Equal(HookActions{}))
	g.Expect(cpVersion(t, d)).To(Equal("v1.31.0"))
}

func TestBeforeUpgradeAnnotationHolds(t *testing.T) {
	g := NewWithT(t)
	bp, cur := upgradeFixture(t, nil)
	cur.Cluster.Annotations = map[string]string{BeforeClusterUpgradeHookAnnotationPrefix + "/backup": ""}
	d := computeWithHooks(t, bp, cur, blocking())
	g.Expect(d.Upgrade.BlockingHook).To(Equal(BeforeClusterUpgradeHook))
	g.Expect(d.Upgrade.HookMessage).To(Equal("annotation before-upgrade.hook.cluster.cluster.x-k8s.io/backup is set"))
	g.Expect(cpVersion(t, d)).To(Equal("v1.30.0"))
}

func TestBeforeClusterCreate(t *testing.T) {
	g := NewWithT(t)
	bp := blueprint(t, mustClass(t, bookClass))
	cur := &Current{Cluster: mustCluster(t, bookCluster)}
	d, err := Compute(context.Background(), bp, cur, Options{RuntimeHooks: true})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(d.Hooks.Call).To(Equal([]HookCall{{Hook: BeforeClusterCreateHook}}))
	g.Expect(d.HoldCreate).To(BeTrue())
	d = computeWithHooks(t, bp, cur, blocking(BeforeClusterCreateHook))
	g.Expect(d.HoldCreate).To(BeTrue())
	g.Expect(d.Upgrade.BlockingHook).To(Equal(BeforeClusterCreateHook))
	d = computeWithHooks(t, bp, cur, blocking())
	g.Expect(d.HoldCreate).To(BeFalse())
	g.Expect(d.ControlPlane.Object).NotTo(BeNil())
}

func TestTemplateRotation(t *testing.T) {
	g := NewWithT(t)
	class := workerMachineTypeClass(t)
	cluster := mustCluster(t, bookCluster)
	bp := blueprint(t, class)
	first := compute(t, bp, &Current{Cluster: cluster})
	d := compute(t, bp, asCurrent(t, cluster, first))
	before := d.MachineDeployments["md-0"]

	// Unchanged: same names; fields the API server defaulted in the current template do not count.
	cur := asCurrent(t, cluster, d)
	_ = unstructured.SetNestedField(cur.MachineDeployments["md-0"].InfrastructureMachineTemplate.Object, "defaulted", "spec", "template", "spec", "defaultedField")
	same := compute(t, bp, cur)
	g.Expect(same.MachineDeployments["md-0"].InfrastructureMachineTemplate.GetName()).To(Equal(before.InfrastructureMachineTemplate.GetName()))

	// A variable change rotates the infrastructure template only, and the MachineDeployment follows.
	cur.Cluster.Spec.Topology.Variables = []clusterv1.ClusterVariable{{Name: "workerMachineType", Value: jsonValue(`"t3.xlarge"`)}}
	rotated := compute(t, bp, cur)
	md := rotated.MachineDeployments["md-0"]
	g.Expect(md.InfrastructureMachineTemplate.GetName()).NotTo(Equal(before.InfrastructureMachineTemplate.GetName()))
	g.Expect(md.InfrastructureMachineTemplate.GetName()).To(HavePrefix("my-docker-cluster-md-0-"))
	g.Expect(md.Object.Spec.Template.Spec.InfrastructureRef.Name).To(Equal(md.InfrastructureMachineTemplate.GetName()))
	g.Expect(md.BootstrapTemplate.GetName()).To(Equal(before.BootstrapTemplate.GetName()))
	g.Expect(md.Object.Name).To(Equal(before.Object.Name))
	g.Expect(nested(t, md.InfrastructureMachineTemplate, "spec", "template", "spec", "instanceType")).To(Equal("t3.xlarge"))
}

func TestVersionChecksWithoutAdmission(t *testing.T) {
	tests := []struct {
		version string
		wantErr string
	}{
		{"v1.29.9", "is lower than the control plane's version v1.30.0"},
		{"v1.32.0", "spec.topology.version v1.32.0 skips a minor version: the control plane KubeadmControlPlane my-docker-cluster-"},
		{"v1.30.7", ""},
	}
	for _, tt := range tests {
		t.Run(tt.version, func(t *testing.T) {
			g := NewWithT(t)
			bp, cur := upgradeFixture(t, nil)
			cur.Cluster.Spec.Topology.Version = tt.version
			_, err := Compute(context.Background(), bp, cur, Options{})
			if tt.wantErr == "" {
				g.Expect(err).NotTo(HaveOccurred())
				return
			}
			g.Expect(err).To(MatchError(ContainSubstring(tt.wantErr)))
		})
	}
}
