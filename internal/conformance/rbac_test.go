package conformance

import (
	"testing"

	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	configcore "github.com/capstan-dev/capstan/config/core"
	"github.com/capstan-dev/capstan/internal/manifest"
)

// TestCoreRoleGrantsWhatTheAPIGroupRuleClaims: the API group rule passes a provider whose kinds are in
// infrastructure.cluster.x-k8s.io without RBAC of its own, because Cluster API's core has full access to
// that group; capstan's core ClusterRole must grant it (as upstream's grants the provider groups), or
// providers that pass the kit would be forbidden under capstan's RBAC-enforcing runtime.
func TestCoreRoleGrantsWhatTheAPIGroupRuleClaims(t *testing.T) {
	g := NewWithT(t)
	data, err := configcore.Files.ReadFile("rbac.yaml")
	g.Expect(err).NotTo(HaveOccurred())
	objs, err := manifest.Parse(data)
	g.Expect(err).NotTo(HaveOccurred())
	var coreRole *unstructured.Unstructured
	for i := range objs {
		if objs[i].GetKind() == "ClusterRole" && objs[i].GetName() == "capi-manager-role" {
			coreRole = &objs[i]
		}
	}
	g.Expect(coreRole).NotTo(BeNil(), "config/core/rbac.yaml has the capi-manager-role ClusterRole")
	g.Expect(coreRole.GetLabels()).To(HaveKeyWithValue(aggregateToManagerLabel, "true"))
	rs := rules(coreRole)
	all := []string{"create", "delete", "get", "list", "patch", "update", "watch"}
	for _, group := range []string{infrastructureGroup, "bootstrap.cluster.x-k8s.io", "controlplane.cluster.x-k8s.io"} {
		g.Expect(lackingVerbs(rs, group, "anykinds", all)).To(BeEmpty(), "the core's ClusterRole on %s", group)
	}
}
