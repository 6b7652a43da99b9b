package topology

import (
	"testing"

	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
)

func TestCheckVersionChange(t *testing.T) {
	tests := []struct {
		name     string
		old, new string
		mutate   func(*Current)
		want     string
	}{
		{name: "same version", old: "v1.30.0", new: "v1.30.0"},
		{name: "a patch release", old: "v1.30.0", new: "v1.30.4"},
		{name: "the next minor", old: "v1.30.0", new: "v1.31.0"},
		{name: "a decrease", old: "v1.30.0", new: "v1.29.9", want: `version cannot be decreased from "v1.30.0" to "v1.29.9"`},
		{name: "two minors up", old: "v1.30.0", new: "v1.32.0", want: `version cannot be increased from "v1.30.0" to "v1.32.0"`},
		{name: "the control plane is not on the old version", old: "v1.31.0", new: "v1.32.0",
			want: "version cannot be changed: [Cluster.spec.topology.version v1.31.0 was not propagated to control plane yet (control plane version v1.30.0), " +
				"there are still MachineDeployments completing a previous upgrade: [MD1, MD2, MD3]]"},
		{name: "the control plane is upgrading", old: "v1.30.0", new: "v1.31.0", mutate: func(c *Current) {
			_ = unstructured.SetNestedField(c.ControlPlane.Object.Object, "v1.29.0", "status", "version")
		}, want: "version cannot be changed: control plane is still completing a previous upgrade"},
		{name: "the control plane is provisioning", old: "v1.30.0", new: "v1.31.0", mutate: func(c *Current) {
			unstructured.RemoveNestedField(c.ControlPlane.Object.Object, "status", "version")
		}, want: "version cannot be changed: control plane is currently provisioning"},
		{name: "a MachineDeployment upgrading", old: "v1.30.0", new: "v1.31.0", mutate: func(c *Current) {
			c.MachineDeployments["md-2"].Upgrading = true
		}, want: "version cannot be changed: there are still MachineDeployments completing a previous upgrade: [MD2]"},
		{name: "a MachinePool behind", old: "v1.30.0", new: "v1.31.0", mutate: func(c *Current) {
			c.MachinePools = map[string]*MachinePoolState{"mp": {Object: mustMachinePool("pool", "v1.29.0")}}
		}, want: "version cannot be changed: there are still MachinePools completing a previous upgrade: [pool]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			_, cur := upgradeFixture(t, nil)
			for name, md := range cur.MachineDeployments {
				md.Object.Name = map[string]string{"md-1": "MD1", "md-2": "MD2", "md-3": "MD3"}[name]
			}
			if tt.mutate != nil {
				tt.mutate(cur)
			}
			err := CheckVersionChange(cur, tt.old, tt.new)
			if tt.want == "" {
				g.Expect(err).NotTo(HaveOccurred())
				return
			}
			g.Expect(err).To(MatchError(tt.want))
		})
	}
}

func mustMachinePool(name, version string) *clusterv1.MachinePool {
	return &clusterv1.MachinePool{ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: clusterv1.MachinePoolSpec{Template: clusterv1.MachineTemplateSpec{Spec: clusterv1.MachineSpec{Version: &version}}}}
}
