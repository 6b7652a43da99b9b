package machine

import (
	"context"
	"testing"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
	ipamv1 "github.com/capstan-dev/capstan/api/ipam/v1beta1"
	"github.com/capstan-dev/capstan/internal/conditions"
	"github.com/capstan-dev/capstan/internal/test/builder"
)

// TestMachineWaitsForItsIPAddressClaims: a Machine that owns an IPAddressClaim does not hand its
// InfraMachine to the provider (no ownerReference, which providers wait for) until the claim is bound, and
// its InfrastructureReady condition says why.
func TestMachineWaitsForItsIPAddressClaims(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := env.NewNamespace(t)
	cluster := createCluster(t, ns, "workload", workload.Config)
	infra := builder.V1Beta1.InfraMachine(ns, "m")
	g.Expect(env.Client.Create(ctx, infra)).To(Succeed())
	m := builder.Machine(ns, "m", cluster.Name, infra, nil)
	m.Spec.Bootstrap.DataSecretName = ptr.To("my-data")
	// Paused while its claim is created, so that the test does not race the Machine.
	m.Annotations = map[string]string{clusterv1.PausedAnnotation: ""}
	g.Expect(env.Client.Create(ctx, m)).To(Succeed())
	claim := &ipamv1.IPAddressClaim{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "m-eth0",
			OwnerReferences: []metav1.OwnerReference{{APIVersion: clusterv1.GroupVersion.String(), Kind: "Machine", Name: m.Name, UID: m.UID}}},
		Spec: ipamv1.IPAddressClaimSpec{ClusterName: cluster.Name,
			PoolRef: corev1.TypedLocalObjectReference{APIGroup: ptr.To("ipam.cluster.x-k8s.io"), Kind: "InClusterIPPool", Name: "pool"}},
	}
	g.Expect(env.Client.Create(ctx, claim)).To(Succeed())
	// The controller writes the paused Machine too (finalizer, Paused condition): retry on conflicts.
	g.Eventually(func(g Gomega) {
		unpaused := getMachine(g, m)
		delete(unpaused.Annotations, clusterv1.PausedAnnotation)
		g.Expect(env.Client.Update(ctx, unpaused)).To(Succeed())
	}, timeout, interval).Should(Succeed())

	g.Eventually(func(g Gomega) {
		got := getMachine(g, m)
		c := conditions.GetV1Beta2(got, clusterv1.MachineInfrastructureReadyV1Beta2Condition)
		g.Expect(c).NotTo(BeNil())
		g.Expect(c.Status).To(Equal(metav1.ConditionFalse))
		g.Expect(c.Message).To(Equal("Waiting for IPAddressClaim m-eth0 to be bound to an IPAddress"))
		g.Expect(conditions.Get(got, clusterv1.InfrastructureReadyCondition)).To(HaveField("Reason", "WaitingForIPAddressClaims"))
	}, timeout, interval).Should(Succeed())
	g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(infra), infra)).To(Succeed())
	g.Expect(metav1.GetControllerOf(infra)).To(BeNil(), "the InfraMachine is not handed over while the claim is unbound")

	t.Log("once the IPAM provider binds the claim, the Machine goes on")
	claim.Status.AddressRef.Name = "m-eth0"
	g.Expect(env.Client.Status().Update(ctx, claim)).To(Succeed())
	g.Eventually(func(g Gomega) {
		g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(infra), infra)).To(Succeed())
		owner := metav1.GetControllerOf(infra)
		g.Expect(owner).NotTo(BeNil())
		g.Expect(owner.Kind).To(Equal("Machine"))
		c := conditions.GetV1Beta2(getMachine(g, m), clusterv1.MachineInfrastructureReadyV1Beta2Condition)
		g.Expect(c).NotTo(BeNil())
		g.Expect(c.Message).NotTo(ContainSubstring("IPAddressClaim"))
	}, timeout, interval).Should(Succeed())
}
