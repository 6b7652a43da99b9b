package core

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
	"github.com/capstan-dev/capstan/internal/feature"
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

// The webhooks check kubernetesVersions as upstream's do. The CRD refuses them for now (the topology
// engine does not use them yet), so the checks are called here without the API server.
func TestKubernetesVersionsAtAdmission(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	gates := &feature.Gates{}

	bad := topologyClass("ns")
	bad.Spec.KubernetesVersions = []string{"v1.30.0", "v1.32.0"}
	_, err := ClusterClass{FeatureGates: gates}.ValidateCreate(ctx, bad)
	g.Expect(err).To(MatchError(ContainSubstring(`spec.kubernetesVersion[1]: Invalid value: "v1.32.0": expecting a version with minor 30 or 31, found version 1.32.0`)))

	class := topologyClass("ns")
	class.Spec.KubernetesVersions = []string{"v1.30.0", "v1.31.2"}
	_, err = ClusterClass{FeatureGates: gates}.ValidateCreate(ctx, class)
	g.Expect(err).NotTo(HaveOccurred())

	scheme := runtime.NewScheme()
	g.Expect(clusterv1.AddToScheme(scheme)).To(Succeed())
	w := Cluster{Client: fake.NewClientBuilder().WithScheme(scheme).WithObjects(class).Build(), FeatureGates: gates}
	_, err = w.ValidateCreate(ctx, topologyCluster("ns", "listed", "v1.31.2", `3`))
	g.Expect(err).NotTo(HaveOccurred())
	_, err = w.ValidateCreate(ctx, topologyCluster("ns", "not-listed", "v1.31.0", `3`))
	g.Expect(err).To(MatchError(ContainSubstring(`spec.topology.version: Invalid value: "v1.31.0": version must match one of the versions defined in the ClusterClass`)))
}
