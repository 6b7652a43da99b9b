package topology

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
)

func TestComputeBookBasicClusterClass(t *testing.T) {
	g := NewWithT(t)
	class := mustClass(t, bookClass)
	cluster := mustCluster(t, bookCluster)
	bp := blueprint(t, class)

	// First reconcile: the control plane does not exist, so MachineDeployments wait.
	d := compute(t, bp, &Current{Cluster: cluster})
	g.Expect(d.MachineDeployments).To(BeEmpty())
	g.Expect(d.Upgrade.MachineDeploymentsPendingCreate).To(Equal([]string{"md-0"}))

	infra := d.InfrastructureCluster
	g.Expect(infra.GetKind()).To(Equal("DockerCluster"))
	g.Expect(infra.GetAPIVersion()).To(Equal("infrastructure.cluster.x-k8s.io/v1beta1"))
	g.Expect(infra.GetName()).To(MatchRegexp(`^my-docker-cluster-[bcdfghjklmnpqrstvwxz2456789]{5}$`))
	g.Expect(infra.GetLabels()).To(Equal(map[string]string{
		"fromTemplate": "yes", clusterv1.ClusterNameLabel: "my-docker-cluster", clusterv1.ClusterTopologyOwnedLabel: "",
	}))
	g.Expect(infra.GetAnnotations()).To(HaveKeyWithValue(clusterv1.TemplateClonedFromNameAnnotation, "docker-clusterclass-v0.1.0-control-plane"))
	g.Expect(infra.GetAnnotations()).To(HaveKeyWithValue(clusterv1.TemplateClonedFromGroupKindAnnotation, "DockerClusterTemplate.infrastructure.cluster.x-k8s.io"))
	g.Expect(nested(t, infra, "spec", "loadBalancer")).To(Equal(map[string]any{}))

	cp := d.ControlPlane.Object
	g.Expect(cp.GetKind()).To(Equal("KubeadmControlPlane"))
	g.Expect(nested(t, cp, "spec", "version")).To(Equal("v1.22.4"))
	g.Expect(nested(t, cp, "spec", "replicas")).To(Equal(int64(3)))
	g.Expect(cp.GetLabels()).To(HaveKeyWithValue("cpLabel", "cpLabelValue"))
	g.Expect(cp.GetAnnotations()).To(HaveKeyWithValue("cpAnnotation", "cpAnnotationValue"))
	g.Expect(nested(t, cp, "spec", "kubeadmConfigSpec", "clusterConfiguration", "controllerManager", "extraArgs", "enable-hostpath-provisioner")).To(Equal("true"))
	g.Expect(nested(t, cp, "spec", "machineTemplate", "metadata", "labels")).To(HaveKeyWithValue("cpLabel", "cpLabelValue"))
	infraRef := nested(t, cp, "spec", "machineTemplate", "infrastructureRef").(map[string]any)
	g.Expect(infraRef["kind"]).To(Equal("DockerMachineTemplate"))
	g.Expect(infraRef["name"]).To(Equal(d.ControlPlane.InfrastructureMachineTemplate.GetName()))
	g.Expect(d.ControlPlane.InfrastructureMachineTemplate.GetOwnerReferences()).To(HaveLen(1))

	g.Expect(d.ControlPlane.MachineHealthCheck).NotTo(BeNil())
	g.Expect(d.ControlPlane.MachineHealthCheck.Name).To(Equal(cp.GetName()))
	g.Expect(d.ControlPlane.MachineHealthCheck.Spec.MaxUnhealthy.String()).To(Equal("33%"))
	g.Expect(d.ControlPlane.MachineHealthCheck.Spec.Selector.MatchLabels).To(HaveKey(clusterv1.MachineControlPlaneLabel))

	g.Expect(d.Cluster.Spec.InfrastructureRef.Name).To(Equal(infra.GetName()))
	g.Expect(d.Cluster.Spec.ControlPlaneRef.Name).To(Equal(cp.GetName()))
	g.Expect(d.Cluster.Labels).To(HaveKey(clusterv1.ClusterTopologyOwnedLabel))

	// Once the control plane is initialized, the MachineDeployment is created.
	d2 := compute(t, bp, asCurrent(t, cluster, d))
	g.Expect(d2.InfrastructureCluster.GetName()).To(Equal(infra.GetName()), "names are kept")
	g.Expect(d2.ControlPlane.InfrastructureMachineTemplate.GetName()).To(Equal(d.ControlPlane.InfrastructureMachineTemplate.GetName()))
	md := d2.MachineDeployments["md-0"]
	g.Expect(md).NotTo(BeNil())
	g.Expect(md.Object.Name).To(MatchRegexp(`^my-docker-cluster-md-0-[a-z0-9]{5}$`))
	g.Expect(*md.Object.Spec.Replicas).To(Equal(int32(4)))
	g.Expect(*md.Object.Spec.Template.Spec.FailureDomain).To(Equal("region"))
	g.Expect(*md.Object.Spec.Template.Spec.Version).To(Equal("v1.22.4"))
	g.Expect(md.Object.Labels).To(HaveKeyWithValue("mdLabel", "mdLabelValue"))
	g.Expect(md.Object.Labels).To(HaveKeyWithValue(clusterv1.ClusterTopologyMachineDeploymentNameLabel, "md-0"))
	g.Expect(md.Object.Annotations).To(HaveKeyWithValue("mdAnnotation", "mdAnnotationValue"))
	g.Expect(md.Object.Spec.Template.Labels).To(HaveKeyWithValue("mdLabel", "mdLabelValue"))
	g.Expect(md.Object.Spec.Template.Spec.Bootstrap.ConfigRef.Name).To(Equal(md.BootstrapTemplate.GetName()))
	g.Expect(md.Object.Spec.Template.Spec.InfrastructureRef.Name).To(Equal(md.InfrastructureMachineTemplate.GetName()))
	g.Expect(md.BootstrapTemplate.GetName()).To(HavePrefix("my-docker-cluster-md-0-"))
	g.Expect(md.BootstrapTemplate.GetLabels()).To(HaveKeyWithValue(clusterv1.ClusterTopologyMachineDeploymentNameLabel, "md-0"))
	g.Expect(md.MachineHealthCheck).NotTo(BeNil())
	g.Expect(*md.MachineHealthCheck.Spec.UnhealthyRange).To(Equal("[0-2]"))
	g.Expect(md.MachineHealthCheck.Spec.Selector.MatchLabels).To(HaveKeyWithValue(clusterv1.ClusterTopologyMachineDeploymentNameLabel, "md-0"))

	// A steady state computes the same objects again: nothing would change.
	d3 := compute(t, bp, asCurrent(t, cluster, d2))
	g.Expect(d3.MachineDeployments["md-0"].Object.Name).To(Equal(md.Object.Name))
	g.Expect(d3.MachineDeployments["md-0"].InfrastructureMachineTemplate.GetName()).To(Equal(md.InfrastructureMachineTemplate.GetName()))
	if diff := cmp.Diff(d2.ControlPlane.Object.Object, d3.ControlPlane.Object.Object); diff != "" {
		t.Fatalf("steady state changed the control plane:\n%s", diff)
	}
}

func TestComputeIsDeterministic(t *testing.T) {
	g := NewWithT(t)
	bp := blueprint(t, mustClass(t, bookClass))
	cluster := mustCluster(t, bookCluster)
	a := compute(t, bp, &Current{Cluster: cluster})
	b := compute(t, bp, &Current{Cluster: cluster})
	g.Expect(a.InfrastructureCluster.GetName()).To(Equal(b.InfrastructureCluster.GetName()))
	g.Expect(a.ControlPlane.Object.GetName()).To(Equal(b.ControlPlane.Object.GetName()))

	other := cluster.DeepCopy()
	other.UID = "another-uid"
	c := compute(t, bp, &Current{Cluster: other})
	g.Expect(c.ControlPlane.Object.GetName()).NotTo(Equal(a.ControlPlane.Object.GetName()), "a recreated Cluster gets new names")
}

func TestComputeMachineHealthCheckTopology(t *testing.T) {
	tests := []struct {
		name    string
		enable  *bool
		wantCP  bool
		noClass bool
	}{
		{name: "class defines it", wantCP: true},
		{name: "topology disables it", enable: ptrTo(false), wantCP: false},
		{name: "no health check in the class", noClass: true, wantCP: false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			class := mustClass(t, bookClass)
			if tt.noClass {
				class.Spec.ControlPlane.MachineHealthCheck = nil
			}
			cluster := mustCluster(t, bookCluster)
			if tt.enable != nil {
				cluster.Spec.Topology.ControlPlane.MachineHealthCheck = &clusterv1.MachineHealthCheckTopology{Enable: tt.enable}
			}
			d := compute(t, blueprint(t, class), &Current{Cluster: cluster})
			g.Expect(d.ControlPlane.MachineHealthCheck != nil).To(Equal(tt.wantCP))
		})
	}
}

// TestComputeMachineHealthCheckMachineConditions: the unhealthyMachineConditions of a class's health check
// reach the MachineHealthCheck the topology writes, and a topology's health check that sets only them
// overrides the class's (as any of its fields does).
func TestComputeMachineHealthCheckMachineConditions(t *testing.T) {
	g := NewWithT(t)
	class := mustClass(t, bookClass)
	diskPressure := []clusterv1.UnhealthyMachineCondition{{Type: "DiskPressure", Status: metav1.ConditionTrue, Timeout: metav1.Duration{Duration: 5 * time.Minute}}}
	class.Spec.ControlPlane.MachineHealthCheck.UnhealthyMachineConditions = diskPressure
	cluster := mustCluster(t, bookCluster)
	d := compute(t, blueprint(t, class), &Current{Cluster: cluster})
	g.Expect(d.ControlPlane.MachineHealthCheck).NotTo(BeNil())
	g.Expect(d.ControlPlane.MachineHealthCheck.Spec.UnhealthyMachineConditions).To(Equal(diskPressure))
	g.Expect(d.ControlPlane.MachineHealthCheck.Spec.UnhealthyConditions).To(HaveLen(2), "the class's Node conditions stay beside them")

	etcd := []clusterv1.UnhealthyMachineCondition{{Type: "EtcdMemberHealthy", Status: metav1.ConditionFalse, Timeout: metav1.Duration{Duration: time.Minute}}}
	cluster.Spec.Topology.Workers.MachineDeployments[0].MachineHealthCheck = &clusterv1.MachineHealthCheckTopology{
		MachineHealthCheckClass: clusterv1.MachineHealthCheckClass{UnhealthyMachineConditions: etcd}}
	bp := blueprint(t, class)
	d = compute(t, bp, asCurrent(t, cluster, compute(t, bp, &Current{Cluster: cluster}))) // the workers come once the control plane is up
	md := d.MachineDeployments["md-0"]
	g.Expect(md.MachineHealthCheck).NotTo(BeNil())
	g.Expect(md.MachineHealthCheck.Spec.UnhealthyMachineConditions).To(Equal(etcd))
	g.Expect(md.MachineHealthCheck.Spec.UnhealthyConditions).To(BeEmpty(), "the topology's health check replaces the class's")
	g.Expect(md.MachineHealthCheck.Spec.UnhealthyRange).To(BeNil())
}

// TestComputeRolloutAfter: the topology's rollout.after of the control plane and of a MachineDeployment
// becomes the control plane's and the MachineDeployment's rolloutAfter, which replace the Machines created
// before it; without it neither is set.
func TestComputeRolloutAfter(t *testing.T) {
	g := NewWithT(t)
	class := mustClass(t, bookClass)
	bp := blueprint(t, class)
	cluster := mustCluster(t, bookCluster)
	d := compute(t, bp, asCurrent(t, cluster, compute(t, bp, &Current{Cluster: cluster})))
	_, found, _ := unstructured.NestedFieldNoCopy(d.ControlPlane.Object.Object, "spec", "rolloutAfter")
	g.Expect(found).To(BeFalse())
	g.Expect(d.MachineDeployments["md-0"].Object.Spec.RolloutAfter).To(BeNil())

	after := metav1.NewTime(time.Date(2026, 3, 9, 9, 0, 0, 0, time.UTC))
	cluster.Spec.Topology.ControlPlane.Rollout.After = after
	cluster.Spec.Topology.Workers.MachineDeployments[0].Rollout.After = metav1.NewTime(after.Add(time.Hour))
	d = compute(t, bp, asCurrent(t, cluster, compute(t, bp, &Current{Cluster: cluster})))
	g.Expect(nested(t, d.ControlPlane.Object, "spec", "rolloutAfter")).To(Equal("2026-03-09T09:00:00Z"))
	g.Expect(d.MachineDeployments["md-0"].Object.Spec.RolloutAfter).To(Equal(&metav1.Time{Time: after.Add(time.Hour)}))
}

// TestComputeTaints: the class's taints reach the control plane's machine template and the
// MachineDeployment's Machine template; a topology's taints replace the class's.
func TestComputeTaints(t *testing.T) {
	g := NewWithT(t)
	class := mustClass(t, bookClass)
	classTaint := clusterv1.MachineTaint{Key: "class", Effect: corev1.TaintEffectNoSchedule, Propagation: clusterv1.MachineTaintPropagationAlways}
	topologyTaint := clusterv1.MachineTaint{Key: "topology", Value: "x", Effect: corev1.TaintEffectNoExecute, Propagation: clusterv1.MachineTaintPropagationOnInitialization}
	class.Spec.ControlPlane.Taints = []clusterv1.MachineTaint{classTaint}
	class.Spec.Workers.MachineDeployments[0].Taints = []clusterv1.MachineTaint{classTaint}
	bp := blueprint(t, class)
	cluster := mustCluster(t, bookCluster)
	d := compute(t, bp, asCurrent(t, cluster, compute(t, bp, &Current{Cluster: cluster})))
	g.Expect(nested(t, d.ControlPlane.Object, "spec", "machineTemplate", "taints")).To(Equal([]any{
		map[string]any{"key": "class", "effect": "NoSchedule", "propagation": "Always"}}))
	g.Expect(d.MachineDeployments["md-0"].Object.Spec.Template.Spec.Taints).To(Equal([]clusterv1.MachineTaint{classTaint}))

	cluster.Spec.Topology.ControlPlane.Taints = []clusterv1.MachineTaint{topologyTaint}
	cluster.Spec.Topology.Workers.MachineDeployments[0].Taints = []clusterv1.MachineTaint{topologyTaint}
	d = compute(t, bp, asCurrent(t, cluster, compute(t, bp, &Current{Cluster: cluster})))
	g.Expect(nested(t, d.ControlPlane.Object, "spec", "machineTemplate", "taints")).To(Equal([]any{
		map[string]any{"key": "topology", "value": "x", "effect": "NoExecute", "propagation": "OnInitialization"}}))
	g.Expect(d.MachineDeployments["md-0"].Object.Spec.Template.Spec.Taints).To(Equal([]clusterv1.MachineTaint{topologyTaint}))
}

func ptrTo[T any](v T) *T { return &v }

func TestComputeNamingStrategies(t *testing.T) {
	tests := []struct {
		name      string
		cp, md    string
		infra     string
		wantCP    string
		wantMD    string
		wantInfra string
		wantErr   string
	}{
		{
			name:   "the book's defaults",
			cp:     "{{ .cluster.name }}-{{ .random }}",
			md:     "{{ .cluster.name }}-{{ .machineDeployment.topologyName }}-{{ .random }}",
			wantCP: `^my-docker-cluster-[a-z0-9]{5}$`, wantMD: `^my-docker-cluster-md-0-[a-z0-9]{5}$`,
		},
		{
			name:   "fixed prefixes",
			cp:     "cp-{{ .cluster.name }}",
			md:     "{{ .machineDeployment.topologyName }}-of-{{ .cluster.name }}",
			infra:  "infra-{{ .cluster.name }}",
			wantCP: `^cp-my-docker-cluster$`, wantMD: `^md-0-of-my-docker-cluster$`, wantInfra: `^infra-my-docker-cluster$`,
		},
		{
			name:   "too long names are cut and given a random suffix",
			cp:     strings.Repeat("x", 70),
			wantCP: `^x{58}[a-z0-9]{5}$`,
		},
		{
			name:    "unknown key",
			md:      "{{ .machinePool.topologyName }}",
			wantErr: "rendering naming template",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			class := mustClass(t, bookClass)
			if tt.cp != "" {
				class.Spec.ControlPlane.NamingStrategy = &clusterv1.ControlPlaneClassNamingStrategy{Template: &tt.cp}
			}
			if tt.md != "" {
				class.Spec.Workers.MachineDeployments[0].NamingStrategy = &clusterv1.MachineDeploymentClassNamingStrategy{Template: &tt.md}
			}
			if tt.infra != "" {
				class.Spec.InfrastructureNamingStrategy = &clusterv1.InfrastructureNamingStrategy{Template: &tt.infra}
			}
			bp := blueprint(t, class)
			cluster := mustCluster(t, bookCluster)
			first := compute(t, bp, &Current{Cluster: cluster})
			d, err := Compute(context.Background(), bp, asCurrent(t, cluster, first), Options{})
			if tt.wantErr != "" {
				g.Expect(err).To(MatchError(ContainSubstring(tt.wantErr)))
				return
			}
			g.Expect(err).NotTo(HaveOccurred())
			if tt.wantCP != "" {
				g.Expect(d.ControlPlane.Object.GetName()).To(MatchRegexp(tt.wantCP))
			}
			if tt.wantMD != "" {
				g.Expect(d.MachineDeployments["md-0"].Object.Name).To(MatchRegexp(tt.wantMD))
			}
			if tt.wantInfra != "" {
				g.Expect(d.InfrastructureCluster.GetName()).To(MatchRegexp(tt.wantInfra))
			}
		})
	}
}

func TestComputeRefusesBadInput(t *testing.T) {
	tests := []struct {
		name    string
		mutate  func(*clusterv1.Cluster)
		wantErr string
	}{
		{"unknown MachineDeployment class", func(c *clusterv1.Cluster) { c.Spec.Topology.Workers.MachineDeployments[0].Class = "nope" }, `uses class "nope", which ClusterClass docker-clusterclass-v0.1.0 does not define`},
		{"undefined variable", func(c *clusterv1.Cluster) {
			c.Spec.Topology.Variables = append(c.Spec.Topology.Variables, clusterv1.ClusterVariable{Name: "nope", Value: jsonValue(`1`)})
		}, `variable "nope" is not defined`},
		{"undefined MachinePool class", func(c *clusterv1.Cluster) {
			c.Spec.Topology.Workers.MachinePools = []clusterv1.MachinePoolTopology{{Class: "default-worker", Name: "mp-0"}}
		}, `MachinePool "mp-0" uses class "default-worker", which ClusterClass docker-clusterclass-v0.1.0 does not define`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			cluster := mustCluster(t, bookCluster)
			tt.mutate(cluster)
			_, err := Compute(context.Background(), blueprint(t, mustClass(t, bookClass)), &Current{Cluster: cluster}, Options{})
			g.Expect(err).To(MatchError(ContainSubstring(tt.wantErr)))
		})
	}
}

// keep unstructured imported for helpers used across test files.
var _ = unstructured.Unstructured{}
