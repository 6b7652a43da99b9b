package core

import (
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
)

func TestValidateMachineDeployment(t *testing.T) {
	md := func(mutate func(*clusterv1.MachineDeployment)) *clusterv1.MachineDeployment {
		m := &clusterv1.MachineDeployment{ObjectMeta: metav1.ObjectMeta{Name: "md", Namespace: "ns"}, Spec: clusterv1.MachineDeploymentSpec{
			ClusterName: "c", Selector: metav1.LabelSelector{MatchLabels: map[string]string{"pool": "a"}},
			Template: clusterv1.MachineTemplateSpec{ObjectMeta: clusterv1.ObjectMeta{Labels: map[string]string{"pool": "a"}}},
		}}
		mutate(m)
		return m
	}
	tests := []struct {
		name string
		md   *clusterv1.MachineDeployment
		want []string
	}{
		{"valid", md(func(*clusterv1.MachineDeployment) {}), nil},
		{"empty selector matches every template", md(func(m *clusterv1.MachineDeployment) { m.Spec.Selector = metav1.LabelSelector{} }), nil},
		{"the cluster-name label is implied", md(func(m *clusterv1.MachineDeployment) {
			m.Spec.Selector.MatchLabels[clusterv1.ClusterNameLabel] = "c"
		}), nil},
		{"selector not matching the template", md(func(m *clusterv1.MachineDeployment) { m.Spec.Template.Labels = map[string]string{"pool": "b"} }),
			[]string{`spec.template.metadata.labels: Invalid value: {"pool":"b"}: must match spec.selector "cluster.x-k8s.io/cluster-name=c,pool=a"`}},
		{"invalid selector", md(func(m *clusterv1.MachineDeployment) {
			m.Spec.Selector.MatchExpressions = []metav1.LabelSelectorRequirement{{Key: "pool", Operator: "Around"}}
		}), []string{"spec.selector: Invalid value"}},
		{"bad maxSurge", md(func(m *clusterv1.MachineDeployment) {
			m.Spec.Strategy = &clusterv1.MachineDeploymentStrategy{RollingUpdate: &clusterv1.MachineRollingUpdateDeployment{MaxSurge: ptr.To(intstr.FromString("lots"))}}
		}), []string{`spec.strategy.rollingUpdate.maxSurge: Invalid value: "lots": must be an integer or a percentage`}},
		{"naming template without random part", md(func(m *clusterv1.MachineDeployment) {
			m.Spec.MachineNamingStrategy = &clusterv1.MachineNamingStrategy{Template: "{{ .machineSet.name }}"}
		}), []string{"spec.machineNamingStrategy.template", "{{ .random }} is missing"}},
		{"name that is not a label value", md(func(m *clusterv1.MachineDeployment) { m.Name = strings.Repeat("a", 64) }),
			[]string{"metadata.name: Invalid value", "must be a valid label value"}},
		{"bad template label", md(func(m *clusterv1.MachineDeployment) { m.Spec.Template.Labels["bad key!"] = "x" }),
			[]string{"spec.template.metadata.labels: Invalid value: \"bad key!\""}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			err := invalid("MachineDeployment", tt.md.Name, validateMachineDeployment(tt.md))
			if tt.want == nil {
				g.Expect(err).NotTo(HaveOccurred())
				return
			}
			g.Expect(err).To(HaveOccurred())
			for _, w := range tt.want {
				g.Expect(err.Error()).To(ContainSubstring(w))
			}
		})
	}
}

func TestValidateMachineHealthCheck(t *testing.T) {
	mhc := func(mutate func(*clusterv1.MachineHealthCheck)) *clusterv1.MachineHealthCheck {
		m := &clusterv1.MachineHealthCheck{ObjectMeta: metav1.ObjectMeta{Name: "mhc", Namespace: "ns"}, Spec: clusterv1.MachineHealthCheckSpec{
			ClusterName: "c", Selector: metav1.LabelSelector{MatchLabels: map[string]string{"pool": "a"}},
		}}
		mutate(m)
		return m
	}
	tests := []struct {
		name string
		mhc  *clusterv1.MachineHealthCheck
		want string
	}{
		{"valid", mhc(func(*clusterv1.MachineHealthCheck) {}), ""},
		{"nodeStartupTimeout 0 disables the check", mhc(func(m *clusterv1.MachineHealthCheck) { m.Spec.NodeStartupTimeout = &metav1.Duration{} }), ""},
		{"short nodeStartupTimeout", mhc(func(m *clusterv1.MachineHealthCheck) {
			m.Spec.NodeStartupTimeout = &metav1.Duration{Duration: 10 * time.Second}
		}), `spec.nodeStartupTimeout: Invalid value: "10s": must be at least 30s`},
		{"another cluster in the selector", mhc(func(m *clusterv1.MachineHealthCheck) {
			m.Spec.Selector.MatchLabels[clusterv1.ClusterNameLabel] = "other"
		}),
			"spec.selector.matchLabels[cluster.x-k8s.io/cluster-name]: Invalid value: \"other\": cannot specify a cluster selector other than the one specified by ClusterName"},
		{"bad maxUnhealthy", mhc(func(m *clusterv1.MachineHealthCheck) { m.Spec.MaxUnhealthy = ptr.To(intstr.FromString("many")) }),
			`spec.maxUnhealthy: Invalid value: "many"`},
		{"remediation template of another namespace", mhc(func(m *clusterv1.MachineHealthCheck) {
			m.Spec.RemediationTemplate = &corev1.ObjectReference{Namespace: "other", Name: "t"}
		}), `spec.remediationTemplate.namespace: Invalid value: "other": must match metadata.namespace (ns)`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			err := invalid("MachineHealthCheck", tt.mhc.Name, validateMachineHealthCheck(tt.mhc))
			if tt.want == "" {
				g.Expect(err).NotTo(HaveOccurred())
				return
			}
			g.Expect(err).To(MatchError(ContainSubstring(tt.want)))
		})
	}
}
