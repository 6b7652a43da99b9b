package machineset

import (
	"context"
	"testing"
	"time"

	"github.com/blang/semver/v4"
	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
	"github.com/capstan-dev/capstan/internal/conditions"
	"github.com/capstan-dev/capstan/internal/test/apicount"
	"github.com/capstan-dev/capstan/internal/test/builder"
)

func TestVersionSkewPreflightChecks(t *testing.T) {
	kubeadm := &clusterv1.MachineSet{}
	kubeadm.Spec.Template.Spec.Bootstrap.ConfigRef = builder.Ref(builder.V1Beta1.BootstrapTemplate("ns", "t"))
	kubeadm.Spec.Template.Spec.Bootstrap.ConfigRef.APIVersion = "bootstrap.cluster.x-k8s.io/v1beta1"
	kubeadm.Spec.Template.Spec.Bootstrap.ConfigRef.Kind = "KubeadmConfigTemplate"
	other := &clusterv1.MachineSet{}
	tests := []struct {
		name            string
		cp, ms          string
		set             *clusterv1.MachineSet
		wantKubernetes  string
		wantKubeadmSkew bool
	}{
		{name: "same version", cp: "1.31.2", ms: "1.31.0", set: kubeadm},
		{name: "newer than the control plane", cp: "1.31.0", ms: "1.32.0", set: other, wantKubernetes: "MachineSet version is higher than ControlPlane version"},
		{name: "three minors older from v1.28", cp: "1.31.0", ms: "1.28.0", set: other},
		{name: "four minors older", cp: "1.31.0", ms: "1.27.0", set: other, wantKubernetes: "more than 3 minor versions older"},
		{name: "three minors older before v1.28", cp: "1.27.0", ms: "1.24.0", set: other, wantKubernetes: "more than 2 minor versions older"},
		{name: "kubeadm joins only at the control plane's minor", cp: "1.31.0", ms: "1.30.0", set: kubeadm, wantKubeadmSkew: true},
		{name: "another bootstrap provider may be older", cp: "1.31.0", ms: "1.30.0", set: other},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			cp, ms := semver.MustParse(tt.cp), semver.MustParse(tt.ms)
			if tt.wantKubernetes == "" {
				g.Expect(kubernetesVersionSkew(cp, ms)).To(BeEmpty())
			} else {
				g.Expect(kubernetesVersionSkew(cp, ms)).To(And(ContainSubstring(tt.wantKubernetes), ContainSubstring(`"KubernetesVersionSkew" preflight check failed`)))
			}
			if tt.wantKubeadmSkew {
				g.Expect(kubeadmVersionSkew(cp, ms, tt.set)).To(ContainSubstring(`"KubeadmVersionSkew" preflight check failed`))
			} else {
				g.Expect(kubeadmVersionSkew(cp, ms, tt.set)).To(BeEmpty())
			}
		})
	}
}

// TestControlPlaneStableDuringChainedUpgrade: a control plane behind spec.topology.version holds the
// MachineSets, unless it has the version of the Cluster's current upgrade step (upstream v1.12's chained
// upgrades).
func TestControlPlaneStableDuringChainedUpgrade(t *testing.T) {
	cp := &unstructured.Unstructured{Object: map[string]any{
		"kind": "KubeadmControlPlane", "metadata": map[string]any{"namespace": "ns", "name": "cp"},
		"spec": map[string]any{"version": "v1.36.3"}, "status": map[string]any{"version": "v1.36.3"},
	}}
	tests := []struct {
		name, step, want string
	}{
		{name: "no upgrade step", want: `KubeadmControlPlane ns/cp has a pending version upgrade to v1.37.1 ("ControlPlaneIsStable" preflight check failed)`},
		{name: "at the current step", step: "v1.36.3"},
		{name: "behind the current step", step: "v1.37.0", want: `KubeadmControlPlane ns/cp has a pending version upgrade to v1.37.0 ("ControlPlaneIsStable" preflight check failed)`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cluster := &clusterv1.Cluster{Spec: clusterv1.ClusterSpec{Topology: &clusterv1.Topology{Version: "v1.37.1"}}}
			if tt.step != "" {
				cluster.Annotations = map[string]string{clusterv1.ClusterTopologyUpgradeStepAnnotation: tt.step}
			}
			NewWithT(t).Expect(controlPlaneStable(cp, cluster, "v1.36.3")).To(Equal(tt.want))
		})
	}
}

// TestPreflightChecksHoldUpScalingUp: a MachineSet of a Cluster whose control plane is provisioning (no
// status.version) creates no Machine and says why in MachinesCreated; the annotation
// machineset.cluster.x-k8s.io/skip-preflight-checks lifts the check and the Machine is created. The checks
// read the control plane from the manager's cache: no GET of it reaches the API server.
func TestPreflightChecksHoldUpScalingUp(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	f := newFixture(t)
	cp := builder.V1Beta1.ControlPlane(f.namespace, "cp")
	g.Expect(unstructured.SetNestedField(cp.Object, "v1.31.0", "spec", "version")).To(Succeed())
	g.Expect(env.Client.Create(ctx, cp)).To(Succeed())
	patch := client.MergeFrom(f.cluster.DeepCopy())
	f.cluster.Spec.ControlPlaneRef = builder.Ref(cp)
	g.Expect(env.Client.Patch(ctx, f.cluster, patch)).To(Succeed())

	ms := f.machineSet("held", 1)
	g.Expect(env.Client.Create(ctx, ms)).To(Succeed())
	g.Eventually(func(g Gomega) {
		g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(ms), ms)).To(Succeed())
		c := conditions.Get(ms, clusterv1.MachineSetMachinesCreatedCondition)
		g.Expect(c).NotTo(BeNil())
		g.Expect(c.Reason).To(Equal(preflightFailedReason))
		g.Expect(c.Message).To(ContainSubstring(`is provisioning ("ControlPlaneIsStable" preflight check failed)`))
	}, 30*time.Second, 250*time.Millisecond).Should(Succeed())
	g.Consistently(func(g Gomega) {
		g.Expect(machinesOf(g, ms)).To(BeEmpty())
	}, 3*time.Second, 500*time.Millisecond).Should(Succeed())
	mapping, err := env.Client.RESTMapper().RESTMapping(cp.GroupVersionKind().GroupKind())
	g.Expect(err).NotTo(HaveOccurred())
	cpGets := f.requests.Snapshot().Sum(func(k apicount.Key) bool {
		return k.Action == "get" && k.Resource == mapping.Resource.Group+"/"+mapping.Resource.Resource
	})
	g.Expect(cpGets).To(BeZero(), "the preflight checks read the control plane from the cache")

	patch = client.MergeFrom(ms.DeepCopy())
	ms.Annotations = map[string]string{clusterv1.MachineSetSkipPreflightChecksAnnotation: string(clusterv1.MachineSetPreflightCheckControlPlaneIsStable)}
	g.Expect(env.Client.Patch(ctx, ms, patch)).To(Succeed())
	g.Eventually(func(g Gomega) {
		g.Expect(machinesOf(g, ms)).To(HaveLen(1))
		g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(ms), ms)).To(Succeed())
		g.Expect(conditions.IsTrue(ms, clusterv1.MachineSetMachinesCreatedCondition)).To(BeTrue())
	}, 30*time.Second, 250*time.Millisecond).Should(Succeed())
}
