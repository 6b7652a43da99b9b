package lifecycle

import (
	"context"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
	"github.com/capstan-dev/capstan/internal/topology"
)

// An annotation before-upgrade.hook.cluster.cluster.x-k8s.io/... holds an upgrade as upstream's does,
// without calling any Extension (Runtime is nil here).
func TestBeforeUpgradeAnnotationsHoldTheUpgrade(t *testing.T) {
	g := NewWithT(t)
	h := &Hooks{}
	c := &clusterv1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: "c", Annotations: map[string]string{
		BeforeClusterUpgradeHookAnnotationPrefix + "/backup": "",
	}}}
	resp, err := h.BeforeClusterUpgrade(context.Background(), c, "v1.30.0", "v1.31.0")
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(resp).To(Equal(topology.HookResponse{RetryAfter: 20 * time.Minute,
		Message: "annotation [before-upgrade.hook.cluster.cluster.x-k8s.io/backup] is set"}))

	c.Annotations[BeforeClusterUpgradeHookAnnotationPrefix+"/approval"] = ""
	resp, err = h.BeforeClusterUpgrade(context.Background(), c, "v1.30.0", "v1.31.0")
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(resp.Message).To(Equal("annotations [before-upgrade.hook.cluster.cluster.x-k8s.io/approval, before-upgrade.hook.cluster.cluster.x-k8s.io/backup] are set"))
}

func TestUpgradedWaitsForEverything(t *testing.T) {
	g := NewWithT(t)
	g.Expect(upgraded(topology.UpgradeStatus{})).To(BeTrue())
	for _, u := range []topology.UpgradeStatus{
		{ControlPlaneUpgrading: true}, {ControlPlaneScaling: true}, {ControlPlanePendingUpgrade: true},
		{ControlPlaneStartingUpgrade: true}, {ControlPlaneProvisioning: true}, {BlockingHook: "AfterControlPlaneUpgrade"},
		{MachineDeploymentsPendingCreate: []string{"md"}}, {MachineDeploymentsPendingUpgrade: []string{"md"}},
		{MachineDeploymentsDeferred: []string{"md"}}, {MachineDeploymentsUpgrading: []string{"md"}},
	} {
		g.Expect(upgraded(u)).To(BeFalse(), "%+v", u)
	}
}
