package machineset

import (
	"testing"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
)

func TestValidate(t *testing.T) {
	ms := func(selector map[string]string, labels map[string]string, naming string) *clusterv1.MachineSet {
		m := &clusterv1.MachineSet{
			ObjectMeta: metav1.ObjectMeta{Name: "ms"},
			Spec: clusterv1.MachineSetSpec{ClusterName: "c", Selector: metav1.LabelSelector{MatchLabels: selector},
				Template: clusterv1.MachineTemplateSpec{ObjectMeta: clusterv1.ObjectMeta{Labels: labels},
					Spec: clusterv1.MachineSpec{InfrastructureRef: corev1.ObjectReference{Kind: "FooMachineTemplate"}}}},
		}
		if naming != "" {
			m.Spec.MachineNamingStrategy = &clusterv1.MachineNamingStrategy{Template: naming}
		}
		return m
	}
	tests := []struct {
		name string
		ms   *clusterv1.MachineSet
		want string
	}{
		{name: "valid", ms: ms(map[string]string{"a": "1"}, map[string]string{"a": "1", "b": "2"}, "")},
		{name: "selector not matching", ms: ms(map[string]string{"a": "1"}, map[string]string{"a": "2"}, ""),
			want: "Spec.selector does not match the labels of spec.template.metadata"},
		{name: "invalid selector", ms: ms(map[string]string{"a b": "1"}, nil, ""), want: "Spec.selector is invalid"},
		{name: "bootstrap reference that is not a template", ms: func() *clusterv1.MachineSet {
			m := ms(map[string]string{"a": "1"}, map[string]string{"a": "1"}, "")
			m.Spec.Template.Spec.Bootstrap.ConfigRef = &corev1.ObjectReference{Kind: "FooConfig", Name: "shared"}
			return m
		}(), want: `Spec.template.spec.bootstrap.configRef must point at a template (a kind ending in Template), not at a "FooConfig"`},
		{name: "naming template without random", ms: ms(map[string]string{"a": "1"}, map[string]string{"a": "1"}, "{{ .machineSet.name }}"),
			want: "Spec.machineNamingStrategy.template is invalid: it must contain {{ .random }}"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			if tt.want == "" {
				g.Expect(validate(tt.ms)).To(BeEmpty())
				return
			}
			g.Expect(validate(tt.ms)).To(HavePrefix(tt.want))
		})
	}
}
