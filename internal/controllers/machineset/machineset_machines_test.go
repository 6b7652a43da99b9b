package machineset

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/utils/ptr"

	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
)

func TestMachineName(t *testing.T) {
	long := strings.Repeat("x", 70)
	tests := []struct {
		name     string
		template string
		msName   string
		want     string
		wantErr  bool
	}{
		{name: "default", template: defaultMachineNameTemplate, msName: "workers", want: "workers-abcde"},
		{name: "custom", template: "{{ .cluster.name }}-{{ .machineSet.name }}-{{ .random }}", msName: "workers", want: "prod-workers-abcde"},
		{name: "too long is cut and gets the random suffix", template: defaultMachineNameTemplate, msName: long,
			want: strings.Repeat("x", 58) + "abcde"},
		{name: "random is required", template: "{{ .machineSet.name }}", msName: "workers", wantErr: true},
		{name: "unknown field", template: "{{ .machine.name }}-{{ .random }}", msName: "workers", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			ms := &clusterv1.MachineSet{ObjectMeta: metav1.ObjectMeta{Name: tt.msName}, Spec: clusterv1.MachineSetSpec{ClusterName: "prod"}}
			got, err := machineName(tt.template, ms, "abcde")
			if tt.wantErr {
				g.Expect(err).To(HaveOccurred())
				return
			}
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(got).To(Equal(tt.want))
		})
	}
}

func TestMachineLabelsHashALongMachineSetName(t *testing.T) {
	g := NewWithT(t)
	ms := &clusterv1.MachineSet{ObjectMeta: metav1.ObjectMeta{Name: strings.Repeat("a", 100)}}
	got := machineLabels(ms)[clusterv1.MachineSetNameLabel]
	// "hash_" + base64url(fnv32a) + "_z", as upstream formats it.
	g.Expect(got).To(Equal("hash_Cgux2Q_z"))
	g.Expect(validation.IsValidLabelValue(got)).To(BeEmpty())
}

func TestNewMachine(t *testing.T) {
	g := NewWithT(t)
	ms := &clusterv1.MachineSet{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "workers-x1", UID: "ms-uid",
			Labels: map[string]string{clusterv1.MachineDeploymentNameLabel: "workers", "not": "copied"}},
		Spec: clusterv1.MachineSetSpec{
			ClusterName: "prod",
			Selector:    metav1.LabelSelector{MatchLabels: map[string]string{"pool": "a"}},
			Template: clusterv1.MachineTemplateSpec{
				ObjectMeta: clusterv1.ObjectMeta{Labels: map[string]string{"pool": "a"}, Annotations: map[string]string{"note": "n"}},
				Spec: clusterv1.MachineSpec{
					Version:           ptr.To("v1.31.0"),
					InfrastructureRef: corev1.ObjectReference{Kind: "InfraTemplate", Name: "t"},
					Bootstrap:         clusterv1.Bootstrap{ConfigRef: &corev1.ObjectReference{Kind: "BootstrapTemplate", Name: "b"}},
					NodeDrainTimeout:  &metav1.Duration{Duration: 5},
				},
			},
		},
	}
	m, err := newMachine(ms, "abcde")
	g.Expect(err).NotTo(HaveOccurred())
	want := &clusterv1.Machine{
		TypeMeta: metav1.TypeMeta{APIVersion: "cluster.x-k8s.io/v1beta1", Kind: "Machine"},
		ObjectMeta: metav1.ObjectMeta{
			Namespace: "ns", Name: "workers-x1-abcde",
			Labels: map[string]string{"pool": "a", clusterv1.ClusterNameLabel: "prod", clusterv1.MachineSetNameLabel: "workers-x1",
				clusterv1.MachineDeploymentNameLabel: "workers"},
			Annotations: map[string]string{"note": "n"},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "cluster.x-k8s.io/v1beta1", Kind: "MachineSet", Name: "workers-x1", UID: "ms-uid",
				Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true)}},
			Finalizers: []string{clusterv1.MachineFinalizer},
		},
		Spec: clusterv1.MachineSpec{ClusterName: "prod", Version: ptr.To("v1.31.0"), NodeDrainTimeout: &metav1.Duration{Duration: 5}},
	}
	g.Expect(m).To(Equal(want), cmp.Diff(want, m))
}

func TestMachineLabelsOfMachineSetWithEmptySelector(t *testing.T) {
	g := NewWithT(t)
	// Upstream's webhook selects a MachineSet's own Machines when its selector is empty.
	ms := &clusterv1.MachineSet{ObjectMeta: metav1.ObjectMeta{Name: "solo"}, Spec: clusterv1.MachineSetSpec{ClusterName: "prod",
		Template: clusterv1.MachineTemplateSpec{Spec: clusterv1.MachineSpec{InfrastructureRef: corev1.ObjectReference{Kind: "FooMachineTemplate"}}}}}
	g.Expect(validate(ms)).To(BeEmpty())
	sel, err := effectiveSelector(ms)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(sel.String()).To(Equal("cluster.x-k8s.io/cluster-name=prod,cluster.x-k8s.io/set-name=solo"))
	g.Expect(machineLabels(ms)).To(Equal(map[string]string{clusterv1.ClusterNameLabel: "prod", clusterv1.MachineSetNameLabel: "solo"}))
}
