package machineset

import (
	"testing"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/sets"

	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
)

func TestSyncMetadata(t *testing.T) {
	tests := []struct {
		name    string
		current map[string]string
		want    map[string]string
		owned   []string
		result  map[string]string
	}{
		{name: "adds and updates", current: map[string]string{"a": "1", "user": "x"}, want: map[string]string{"a": "2", "b": "3"},
			result: map[string]string{"a": "2", "b": "3", "user": "x"}},
		{name: "removes what it set and no longer wants", current: map[string]string{"a": "1", "old": "o", "user": "x"}, owned: []string{"a", "old"},
			want: map[string]string{"a": "1"}, result: map[string]string{"a": "1", "user": "x"}},
		{name: "removing the last one", current: map[string]string{"old": "o"}, owned: []string{"old"}, result: nil},
		{name: "nothing to do", current: nil, result: nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			g.Expect(syncMetadata(tt.current, tt.want, sets.New(tt.owned...))).To(Equal(tt.result))
		})
	}
}

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
