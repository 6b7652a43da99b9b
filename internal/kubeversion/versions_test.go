package kubeversion

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
)

func TestAggregate(t *testing.T) {
	tests := []struct {
		name string
		in   []clusterv1.StatusVersion
		want []clusterv1.StatusVersion
	}{
		{name: "none", in: nil, want: nil},
		{name: "only entries without a version", in: []clusterv1.StatusVersion{{Replicas: 2}}, want: nil},
		{
			name: "the same version merged, replicas added up",
			in:   []clusterv1.StatusVersion{{Version: "v1.31.1", Replicas: 1}, {Version: "v1.32.0", Replicas: 3}, {Version: "v1.31.1", Replicas: 2}, {Version: "v1.33.0"}},
			want: []clusterv1.StatusVersion{{Version: "v1.31.1", Replicas: 3}, {Version: "v1.32.0", Replicas: 3}, {Version: "v1.33.0"}},
		},
		{
			name: "semantic versions in order, before the others in text order",
			in:   []clusterv1.StatusVersion{{Version: "foo", Replicas: 1}, {Version: "v1.30.10", Replicas: 1}, {Version: "v1.30.2", Replicas: 1}, {Version: "bar", Replicas: 1}},
			want: []clusterv1.StatusVersion{{Version: "v1.30.2", Replicas: 1}, {Version: "v1.30.10", Replicas: 1}, {Version: "bar", Replicas: 1}, {Version: "foo", Replicas: 1}},
		},
		{
			name: "the same version written differently in text order; unorderable build metadata as it first appears",
			in:   []clusterv1.StatusVersion{{Version: "v1.30.0+bbb", Replicas: 1}, {Version: "v1.30.0+aaa", Replicas: 1}, {Version: "v1.30.0", Replicas: 1}, {Version: "1.30.0", Replicas: 1}},
			want: []clusterv1.StatusVersion{{Version: "1.30.0", Replicas: 1}, {Version: "v1.30.0", Replicas: 1}, {Version: "v1.30.0+bbb", Replicas: 1}, {Version: "v1.30.0+aaa", Replicas: 1}},
		},
		{
			name: "versions written differently are not merged",
			in:   []clusterv1.StatusVersion{{Version: "v1.30.0", Replicas: 1}, {Version: "1.30.0", Replicas: 2}},
			want: []clusterv1.StatusVersion{{Version: "1.30.0", Replicas: 2}, {Version: "v1.30.0", Replicas: 1}},
		},
		{
			name: "pre-releases before the release, numeric build metadata in order",
			in:   []clusterv1.StatusVersion{{Version: "v1.31.0+10", Replicas: 1}, {Version: "v1.31.0", Replicas: 1}, {Version: "v1.31.0-rc.1", Replicas: 1}, {Version: "v1.31.0+2", Replicas: 1}},
			want: []clusterv1.StatusVersion{{Version: "v1.31.0-rc.1", Replicas: 1}, {Version: "v1.31.0", Replicas: 1}, {Version: "v1.31.0+2", Replicas: 1}, {Version: "v1.31.0+10", Replicas: 1}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Aggregate(tt.in)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Aggregate (-want +got):\n%s", diff)
			}
			if tt.want == nil && got != nil {
				t.Errorf("Aggregate = %#v, want nil", got)
			}
		})
	}
}

func TestFromMachines(t *testing.T) {
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	machine := func(name string, created time.Duration, version, kubelet string) *clusterv1.Machine {
		m := &clusterv1.Machine{ObjectMeta: metav1.ObjectMeta{Name: name, CreationTimestamp: metav1.NewTime(base.Add(created))}}
		if version != "" {
			m.Spec.Version = ptr.To(version)
		}
		if kubelet != "" {
			m.Status.NodeInfo = &corev1.NodeSystemInfo{KubeletVersion: kubelet}
		}
		return m
	}
	tests := []struct {
		name     string
		machines []*clusterv1.Machine
		want     []clusterv1.StatusVersion
	}{
		{name: "no Machines", want: nil},
		{name: "no Machine with a version", machines: []*clusterv1.Machine{machine("a", 0, "", "")}, want: nil},
		{
			name: "counted by version, oldest version first; the kubelet's version once known",
			machines: []*clusterv1.Machine{
				machine("a", 0, "", ""),
				machine("b", 0, "v1.32.0", ""),
				machine("c", 0, "v1.31.1", ""),
				machine("d", 0, "v1.31.1", ""),
				machine("e", 0, "v1.31.1", "v1.30.0"), // the Node still runs the old kubelet
				machine("f", 0, "v1.31.1", "v1.31.1"),
			},
			want: []clusterv1.StatusVersion{{Version: "v1.30.0", Replicas: 1}, {Version: "v1.31.1", Replicas: 3}, {Version: "v1.32.0", Replicas: 1}},
		},
		{
			name: "unorderable build metadata: the older Machine's version first",
			machines: []*clusterv1.Machine{
				machine("newer", time.Minute, "v1.32.0+aaa", ""),
				machine("older", 0, "v1.32.0+bbb", ""),
			},
			want: []clusterv1.StatusVersion{{Version: "v1.32.0+bbb", Replicas: 1}, {Version: "v1.32.0+aaa", Replicas: 1}},
		},
		{
			name: "unorderable build metadata, Machines created at once: by name",
			machines: []*clusterv1.Machine{
				machine("b", 0, "v1.32.0+aaa", ""),
				machine("a", 0, "v1.32.0+bbb", ""),
			},
			want: []clusterv1.StatusVersion{{Version: "v1.32.0+bbb", Replicas: 1}, {Version: "v1.32.0+aaa", Replicas: 1}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			before := append([]*clusterv1.Machine(nil), tt.machines...)
			got := FromMachines(tt.machines)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("FromMachines (-want +got):\n%s", diff)
			}
			if tt.want == nil {
				g.Expect(got).To(BeNil())
			}
			g.Expect(tt.machines).To(Equal(before), "FromMachines reordered its argument")
		})
	}
}
