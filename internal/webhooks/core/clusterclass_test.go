package core

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	. "github.com/onsi/gomega"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
	clusterv1beta2 "github.com/capstan-dev/capstan/api/core/v1beta2"
	runtimev1 "github.com/capstan-dev/capstan/api/runtime/v1alpha1"
	"github.com/capstan-dev/capstan/internal/test/builder"
	"github.com/capstan-dev/capstan/internal/webhooks/webhookstest"
)

func TestKubernetesVersionsOfClusters(t *testing.T) {
	cluster := func(name, version string) clusterv1.Cluster {
		return clusterv1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: clusterv1.ClusterSpec{Topology: &clusterv1.Topology{Class: "class", Version: version}}}
	}
	tests := []struct {
		name     string
		versions []string
		clusters []clusterv1.Cluster
		want     []string
	}{
		{name: "the class lists no versions", clusters: []clusterv1.Cluster{cluster("a", "v1.30.0")}},
		{name: "every Cluster's version listed", versions: []string{"v1.30.0", "v1.31.2"},
			clusters: []clusterv1.Cluster{cluster("a", "v1.30.0"), cluster("b", "v1.31.2")}},
		{name: "a Cluster's version left out", versions: []string{"v1.31.2", "v1.32.0"},
			clusters: []clusterv1.Cluster{cluster("a", "v1.30.0"), cluster("b", "v1.31.2")},
			want:     []string{`spec.kubernetesVersions: Forbidden: Kubernetes Version v1.30.0 is used by Cluster "a" but not set in ClusterClass`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			cc := &clusterv1.ClusterClass{Spec: clusterv1.ClusterClassSpec{KubernetesVersions: tt.versions}}
			var got []string
			for _, e := range kubernetesVersionsOfClusters(cc, tt.clusters) {
				got = append(got, e.Error())
			}
			g.Expect(got).To(Equal(tt.want), cmp.Diff(tt.want, got))
		})
	}
}

// The webhooks check kubernetesVersions and chained upgrades as upstream v1.14's, through the API server:
// the ClusterClass's list (v1beta1 or v1beta2), a Cluster's version against it, a version change of
// several minors (allowed by the list or a GenerateUpgradePlan extension), and the AfterClusterUpgrade
// hook of the previous upgrade holding the next.
func TestKubernetesVersionsAtAdmission(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := env.NewNamespace(t)
	install(t, ns)
	webhookstest.Convert(t, env, ns, Webhooks(nil))
	startManager(t, ns)

	// A list that skips a minor is refused; one that goes through every minor is accepted.
	bad := topologyClass(ns)
	bad.Spec.KubernetesVersions = []string{"v1.30.0", "v1.32.0"}
	err := env.Client.Create(ctx, bad)
	g.Expect(apierrors.IsInvalid(err)).To(BeTrue(), "%v", err)
	g.Expect(err.Error()).To(ContainSubstring(`spec.kubernetesVersion[1]: Invalid value: "v1.32.0": expecting a version with minor 30 or 31, found version 1.32.0`))
	class := topologyClass(ns)
	class.Spec.KubernetesVersions = []string{"v1.30.0", "v1.31.2", "v1.32.0"}
	g.Expect(env.Client.Create(ctx, class)).To(Succeed())
	reconciled(ctx, g, class, nil)

	// The same in v1beta2.
	v1beta2 := func(name string, versions ...string) *clusterv1beta2.ClusterClass {
		return &clusterv1beta2.ClusterClass{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Spec: clusterv1beta2.ClusterClassSpec{
			Infrastructure: clusterv1beta2.InfrastructureClass{TemplateRef: clusterv1beta2.ClusterClassTemplateReference{
				APIVersion: builder.V1Beta1.Infrastructure + "/v1beta1", Kind: builder.InfraClusterTemplateKind, Name: "infra"}},
			ControlPlane: clusterv1beta2.ControlPlaneClass{TemplateRef: clusterv1beta2.ClusterClassTemplateReference{
				APIVersion: builder.V1Beta1.ControlPlaneGroup + "/v1beta1", Kind: builder.ControlPlaneTemplateKind, Name: "cp"}},
			KubernetesVersions: versions,
		}}
	}
	err = env.Client.Create(ctx, v1beta2("bad-v1beta2", "v1.31.0", "v1.30.0"))
	g.Expect(apierrors.IsInvalid(err)).To(BeTrue(), "%v", err)
	g.Expect(err.Error()).To(ContainSubstring(`spec.kubernetesVersion[1]: Invalid value: "v1.30.0": version must be greater than v1.31.0`))
	g.Expect(env.Client.Create(ctx, v1beta2("v1beta2", "v1.31.0", "v1.32.0"))).To(Succeed())

	// A Cluster's version must be one of the class's.
	err = env.Client.Create(ctx, topologyCluster(ns, "not-listed", "v1.31.0", `3`))
	g.Expect(apierrors.IsInvalid(err)).To(BeTrue(), "%v", err)
	g.Expect(err.Error()).To(ContainSubstring(`spec.topology.version: Invalid value: "v1.31.0": version must match one of the versions defined in the ClusterClass`))
	cluster := topologyCluster(ns, "listed", "v1.30.0", `3`)
	cluster.Annotations = map[string]string{runtimev1.PendingHooksAnnotation: "AfterClusterUpgrade"}
	g.Expect(env.Client.Create(ctx, cluster)).To(Succeed())

	// While AfterClusterUpgrade is pending the version stays; then it may go up two minors at once, to a
	// listed version.
	update := func(mutate func(*clusterv1.Cluster)) error {
		c := &clusterv1.Cluster{}
		g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(cluster), c)).To(Succeed())
		mutate(c)
		return env.Client.Update(ctx, c)
	}
	err = update(func(c *clusterv1.Cluster) { c.Spec.Topology.Version = "v1.32.0" })
	g.Expect(apierrors.IsInvalid(err)).To(BeTrue(), "%v", err)
	g.Expect(err.Error()).To(ContainSubstring(`spec.topology.version: Invalid value: "v1.32.0": version cannot be changed when the "AfterClusterUpgrade" hook is still blocking`))
	g.Expect(update(func(c *clusterv1.Cluster) { delete(c.Annotations, runtimev1.PendingHooksAnnotation) })).To(Succeed())
	err = update(func(c *clusterv1.Cluster) { c.Spec.Topology.Version = "v1.32.1" })
	g.Expect(err).To(MatchError(ContainSubstring("version must match one of the versions defined in the ClusterClass")))
	g.Expect(err).NotTo(MatchError(ContainSubstring("cannot be increased")), "no ceiling with kubernetesVersions")
	g.Expect(update(func(c *clusterv1.Cluster) { c.Spec.Topology.Version = "v1.32.0" })).To(Succeed(), "two minors at once")
	err = update(func(c *clusterv1.Cluster) { c.Spec.Topology.Version = "v1.31.2" })
	g.Expect(err).To(MatchError(ContainSubstring(`version cannot be decreased from "v1.32.0" to "v1.31.2"`)))

	// The class must keep the versions its Clusters use.
	cc := &clusterv1.ClusterClass{}
	g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(class), cc)).To(Succeed())
	cc.Spec.KubernetesVersions = []string{"v1.30.0", "v1.31.2"}
	err = env.Client.Update(ctx, cc)
	g.Expect(err).To(MatchError(ContainSubstring(`spec.kubernetesVersions: Forbidden: Kubernetes Version v1.32.0 is used by Cluster "listed" but not set in ClusterClass`)))

	// A class with a GenerateUpgradePlan extension lifts the ceiling too, without a list.
	ext := topologyClass(ns)
	ext.Name = "ext"
	ext.Spec.Upgrade.External.GenerateUpgradePlanExtension = "plan.ext"
	g.Expect(env.Client.Create(ctx, ext)).To(Succeed())
	reconciled(ctx, g, ext, nil)
	extCluster := topologyCluster(ns, "ext", "v1.30.0", `3`)
	extCluster.Spec.Topology.Class = "ext"
	g.Expect(env.Client.Create(ctx, extCluster)).To(Succeed())
	extCluster.Spec.Topology.Version = "v1.33.0"
	g.Expect(env.Client.Update(ctx, extCluster)).To(Succeed(), "three minors at once")
}
