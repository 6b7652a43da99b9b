package topology

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/validation/field"

	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
	runtimev1 "github.com/capstan-dev/capstan/api/runtime/v1alpha1"
)

func TestCheckVersionChange(t *testing.T) {
	versions := &clusterv1.ClusterClass{Spec: clusterv1.ClusterClassSpec{KubernetesVersions: []string{"v1.30.0", "v1.31.2", "v1.32.0"}}}
	extension := &clusterv1.ClusterClass{Spec: clusterv1.ClusterClassSpec{Upgrade: clusterv1.ClusterClassUpgrade{
		External: clusterv1.ClusterClassUpgradeExternal{GenerateUpgradePlanExtension: "plan.ext"}}}}
	const blocking = `version cannot be changed when the "AfterClusterUpgrade" hook is still blocking`
	cpUpgrading := func(c *Current) {
		_ = unstructured.SetNestedField(c.ControlPlane.Object.Object, "v1.29.0", "status", "version")
	}
	tests := []struct {
		name     string
		old, new string
		class    *clusterv1.ClusterClass
		pending  string // the Cluster's runtime.cluster.x-k8s.io/pending-hooks
		mutate   func(*Current)
		want     string
	}{
		{name: "same version", old: "v1.30.0", new: "v1.30.0"},
		{name: "a patch release", old: "v1.30.0", new: "v1.30.4"},
		{name: "the next minor", old: "v1.30.0", new: "v1.31.0"},
		{name: "a decrease", old: "v1.30.0", new: "v1.29.9", want: `version cannot be decreased from "v1.30.0" to "v1.29.9"`},
		{name: "two minors up", old: "v1.30.0", new: "v1.32.0", want: `version cannot be increased from "v1.30.0" to "v1.32.0"`},
		{name: "two minors up, a class without kubernetesVersions nor upgrade", old: "v1.30.0", new: "v1.32.0", class: &clusterv1.ClusterClass{},
			want: `version cannot be increased from "v1.30.0" to "v1.32.0"`},
		{name: "two minors up, a class with kubernetesVersions", old: "v1.30.0", new: "v1.32.0", class: versions},
		{name: "two minors up, a class with a GenerateUpgradePlan extension", old: "v1.30.0", new: "v1.32.0", class: extension},
		{name: "a decrease, a class with kubernetesVersions", old: "v1.31.2", new: "v1.30.0", class: versions,
			want: `version cannot be decreased from "v1.31.2" to "v1.30.0"`},
		{name: "two minors up, a class with kubernetesVersions, the control plane upgrading", old: "v1.30.0", new: "v1.32.0", class: versions,
			mutate: cpUpgrading,
			want:   "version cannot be changed: control plane is still completing a previous upgrade"},
		{name: "AfterClusterUpgrade pending", old: "v1.30.0", new: "v1.30.4", pending: "AfterClusterUpgrade", want: blocking},
		{name: "AfterClusterUpgrade pending among others", old: "v1.30.0", new: "v1.31.0", pending: "AfterControlPlaneUpgrade,AfterClusterUpgrade", want: blocking},
		{name: "AfterClusterUpgrade pending, before the state of the Cluster", old: "v1.30.0", new: "v1.31.0", pending: "AfterClusterUpgrade",
			mutate: cpUpgrading,
			want:   blocking},
		{name: "AfterClusterUpgrade pending, after the decrease", old: "v1.30.0", new: "v1.29.0", pending: "AfterClusterUpgrade",
			want: `version cannot be decreased from "v1.30.0" to "v1.29.0"`},
		{name: "AfterClusterUpgrade pending, the version unchanged", old: "v1.30.0", new: "v1.30.0", pending: "AfterClusterUpgrade"},
		{name: "another hook pending", old: "v1.30.0", new: "v1.31.0", pending: "AfterControlPlaneUpgrade"},
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
			cluster := &clusterv1.Cluster{}
			if tt.pending != "" {
				cluster.Annotations = map[string]string{runtimev1.PendingHooksAnnotation: tt.pending}
			}
			err := CheckVersionChange(cur, VersionChange{Old: tt.old, New: tt.new, Class: tt.class, Cluster: cluster})
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

func TestCheckKubernetesVersions(t *testing.T) {
	tests := []struct {
		name     string
		versions []string
		want     []string
	}{
		{name: "none"},
		{name: "one version", versions: []string{"v1.31.0"}},
		{name: "ascending, a minor each", versions: []string{"v1.30.2", "v1.31.0", "v1.31.4", "v1.32.1"}},
		{name: "without the v", versions: []string{"1.30.2", "v1.31.0"}},
		{name: "ordered build metadata", versions: []string{"v1.31.0+1", "v1.31.0+2"}},
		{name: "unordered build metadata", versions: []string{"v1.31.0+abc", "v1.31.0+def"}},
		{name: "not a version, and the next compared with the one before it", versions: []string{"v1.30.0", "latest", "v1.31.0"},
			want: []string{`spec.kubernetesVersion[1]: Invalid value: "latest": version must be a valid semantic version`}},
		{name: "the same version twice", versions: []string{"v1.30.0", "v1.30.0"},
			want: []string{`spec.kubernetesVersion[1]: Invalid value: "v1.30.0": version must be greater than v1.30.0`}},
		{name: "a lower version", versions: []string{"v1.30.2", "v1.30.1"},
			want: []string{`spec.kubernetesVersion[1]: Invalid value: "v1.30.1": version must be greater than v1.30.2`}},
		{name: "a lower build", versions: []string{"v1.31.0+2", "v1.31.0+1"},
			want: []string{`spec.kubernetesVersion[1]: Invalid value: "v1.31.0+1": version must be greater than v1.31.0+2`}},
		{name: "a skipped minor", versions: []string{"v1.30.0", "v1.32.0"},
			want: []string{`spec.kubernetesVersion[1]: Invalid value: "v1.32.0": expecting a version with minor 30 or 31, found version 1.32.0`}},
		{name: "a lower minor", versions: []string{"v1.31.0", "v1.29.0"}, want: []string{
			`spec.kubernetesVersion[1]: Invalid value: "v1.29.0": version must be greater than v1.31.0`,
			`spec.kubernetesVersion[1]: Invalid value: "v1.29.0": expecting a version with minor 31 or 32, found version 1.29.0`,
		}},
		{name: "a version without patch, read as upstream reads it (v1.31.0)", versions: []string{"v1.30.0", "v1.31", "v1.31.0"},
			want: []string{`spec.kubernetesVersion[2]: Invalid value: "v1.31.0": version must be greater than v1.31.0`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			var got []string
			for _, e := range CheckKubernetesVersions(tt.versions, field.NewPath("spec", "kubernetesVersion")) {
				got = append(got, e.Error())
			}
			g.Expect(got).To(Equal(tt.want), cmp.Diff(tt.want, got))
		})
	}
}

func TestCheckVersionInClass(t *testing.T) {
	tests := []struct {
		name     string
		version  string
		versions []string
		wantErr  bool
	}{
		{name: "the class lists no versions", version: "v1.33.0"},
		{name: "a listed version", version: "v1.31.4", versions: []string{"v1.30.2", "v1.31.4"}},
		{name: "a version not listed", version: "v1.31.0", versions: []string{"v1.30.2", "v1.31.4"}, wantErr: true},
		{name: "a listed version written otherwise", version: "1.31.4", versions: []string{"v1.30.2", "v1.31.4"}, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			err := CheckVersionInClass(tt.version, tt.versions)
			if !tt.wantErr {
				g.Expect(err).NotTo(HaveOccurred())
				return
			}
			g.Expect(err).To(MatchError("version must match one of the versions defined in the ClusterClass"))
		})
	}
}
