package machinedeployment

import (
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
	"github.com/capstan-dev/capstan/internal/rollout"
)

func testTemplate() clusterv1.MachineTemplateSpec {
	return clusterv1.MachineTemplateSpec{
		ObjectMeta: clusterv1.ObjectMeta{Labels: map[string]string{"pool": "a"}},
		Spec: clusterv1.MachineSpec{
			ClusterName: "c",
			Version:     ptr.To("v1.31.0"),
			InfrastructureRef: corev1.ObjectReference{APIVersion: "infrastructure.cluster.x-k8s.io/v1beta1",
				Kind: "GenericInfrastructureMachineTemplate", Name: "infra"},
			Bootstrap: clusterv1.Bootstrap{ConfigRef: &corev1.ObjectReference{APIVersion: "bootstrap.cluster.x-k8s.io/v1beta1",
				Kind: "GenericBootstrapConfigTemplate", Name: "bootstrap"}},
		},
	}
}

func TestTemplateDiff(t *testing.T) {
	tests := []struct {
		name   string
		change func(*clusterv1.MachineTemplateSpec)
		want   []string
	}{
		{name: "labels and annotations are propagated in place", change: func(t *clusterv1.MachineTemplateSpec) {
			t.Labels["tier"] = "gold"
			t.Annotations = map[string]string{"a": "b"}
		}},
		{name: "node timeouts and readiness gates are propagated in place", change: func(t *clusterv1.MachineTemplateSpec) {
			t.Spec.NodeDrainTimeout = &metav1.Duration{Duration: time.Minute}
			t.Spec.NodeDeletionTimeout = &metav1.Duration{Duration: time.Minute}
			t.Spec.NodeVolumeDetachTimeout = &metav1.Duration{Duration: time.Minute}
			t.Spec.ReadinessGates = []clusterv1.MachineReadinessGate{{ConditionType: "X"}}
		}},
		{name: "taints are propagated in place", change: func(t *clusterv1.MachineTemplateSpec) {
			t.Spec.Taints = []clusterv1.MachineTaint{{Key: "dedicated", Value: "gpu", Effect: corev1.TaintEffectNoSchedule, Propagation: clusterv1.MachineTaintPropagationAlways}}
		}},
		{name: "a new API version of the same template is no rollout", change: func(t *clusterv1.MachineTemplateSpec) {
			t.Spec.InfrastructureRef.APIVersion = "infrastructure.cluster.x-k8s.io/v1beta2"
			t.Spec.InfrastructureRef.Namespace = "ns"
		}},
		{name: "version", change: func(t *clusterv1.MachineTemplateSpec) { t.Spec.Version = ptr.To("v1.32.0") },
			want: []string{"Version v1.31.0, v1.32.0 required"}},
		{name: "infrastructure template", change: func(t *clusterv1.MachineTemplateSpec) { t.Spec.InfrastructureRef.Name = "infra-2" },
			want: []string{"GenericInfrastructureMachine is not up-to-date"}},
		{name: "bootstrap template", change: func(t *clusterv1.MachineTemplateSpec) { t.Spec.Bootstrap.ConfigRef.Name = "bootstrap-2" },
			want: []string{"GenericBootstrapConfig is not up-to-date"}},
		{name: "failure domain", change: func(t *clusterv1.MachineTemplateSpec) { t.Spec.FailureDomain = ptr.To("fd1") },
			want: []string{"Failure domain nil, fd1 required"}},
		{name: "another field", change: func(t *clusterv1.MachineTemplateSpec) { t.Spec.ProviderID = ptr.To("x") },
			want: []string{"Machine spec is not up-to-date"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			current, desired := testTemplate(), testTemplate()
			tt.change(&desired)
			g.Expect(rollout.TemplateDiff(&current, &desired)).To(Equal(tt.want))
			if len(tt.want) == 0 {
				g.Expect(templateHash(&current)).To(Equal(templateHash(&desired)))
			} else {
				g.Expect(templateHash(&current)).NotTo(Equal(templateHash(&desired)))
			}
		})
	}
}

func TestFindNewMachineSet(t *testing.T) {
	withTemplate := func(ms *clusterv1.MachineSet, version string) *clusterv1.MachineSet {
		ms.Spec.Template = testTemplate()
		ms.Spec.Template.Spec.Version = ptr.To(version)
		return ms
	}
	md := &clusterv1.MachineDeployment{Spec: clusterv1.MachineDeploymentSpec{Template: testTemplate()}}
	now := base
	tests := []struct {
		name         string
		rolloutAfter *metav1.Time
		machineSets  []*clusterv1.MachineSet
		want         string
	}{
		{name: "none matches", machineSets: []*clusterv1.MachineSet{withTemplate(testMS("old", 10, 3, 3, 3), "v1.30.0")}},
		{name: "the matching one", machineSets: []*clusterv1.MachineSet{
			withTemplate(testMS("old", 10, 3, 3, 3), "v1.30.0"), withTemplate(testMS("new", 5, 0, 0, 0), "v1.31.0"),
		}, want: "new"},
		{name: "of several matching, the largest", machineSets: []*clusterv1.MachineSet{
			withTemplate(testMS("a", 10, 1, 1, 1), "v1.31.0"), withTemplate(testMS("b", 5, 2, 2, 2), "v1.31.0"),
		}, want: "b"},
		{name: "of several matching of the same size, the oldest", machineSets: []*clusterv1.MachineSet{
			withTemplate(testMS("b", 5, 2, 2, 2), "v1.31.0"), withTemplate(testMS("a", 10, 2, 2, 2), "v1.31.0"),
		}, want: "a"},
		{name: "rolloutAfter in the future changes nothing", rolloutAfter: ptr.To(metav1.NewTime(now.Add(time.Hour))),
			machineSets: []*clusterv1.MachineSet{withTemplate(testMS("a", 10, 2, 2, 2), "v1.31.0")}, want: "a"},
		{name: "rolloutAfter passed: MachineSets created before it do not match", rolloutAfter: ptr.To(metav1.NewTime(now.Add(-time.Minute))),
			machineSets: []*clusterv1.MachineSet{withTemplate(testMS("a", 10, 2, 2, 2), "v1.31.0")}},
		{name: "rolloutAfter passed: a MachineSet created after it matches", rolloutAfter: ptr.To(metav1.NewTime(now.Add(-5 * time.Minute))),
			machineSets: []*clusterv1.MachineSet{withTemplate(testMS("a", 10, 2, 2, 2), "v1.31.0"), withTemplate(testMS("b", 1, 0, 0, 0), "v1.31.0")},
			want:        "b"},
		{name: "rolloutAfter passed: a MachineSet created in the same second matches", rolloutAfter: ptr.To(metav1.NewTime(now.Add(-time.Minute))),
			machineSets: []*clusterv1.MachineSet{withTemplate(testMS("b", 1, 0, 0, 0), "v1.31.0")},
			want:        "b"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			md.Spec.RolloutAfter = tt.rolloutAfter
			got := findNewMachineSet(md, tt.machineSets, now)
			if tt.want == "" {
				g.Expect(got).To(BeNil())
				return
			}
			g.Expect(got).NotTo(BeNil())
			g.Expect(got.Name).To(Equal(tt.want))
		})
	}
}
