package cluster

import (
	"testing"
	"time"

	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

func TestScaleDownAndRestore(t *testing.T) {
	g := NewWithT(t)
	c := newClient(t)
	ns := env.NewNamespace(t)
	objs := parse(t, componentsYAML, ns, "infrastructure-scale", "", "example.com")[:2]
	g.Expect(c.Apply(t.Context(), objs)).To(Succeed())
	d := &appsv1.Deployment{}
	key := client.ObjectKey{Namespace: ns, Name: "manager"}

	g.Expect(c.ScaleDownDeployments(t.Context(), "infrastructure-scale", ns)).To(Succeed())
	g.Expect(env.Client.Get(t.Context(), key, d)).To(Succeed())
	g.Expect(*d.Spec.Replicas).To(BeZero())
	g.Expect(d.Annotations).To(HaveKeyWithValue(ReplicasBeforeUpgradeAnnotation, "2"))

	// Scaling down again keeps the first record.
	g.Expect(c.ScaleDownDeployments(t.Context(), "infrastructure-scale", ns)).To(Succeed())
	g.Expect(c.RestoreDeployments(t.Context(), "infrastructure-scale", ns)).To(Succeed())
	g.Expect(env.Client.Get(t.Context(), key, d)).To(Succeed())
	g.Expect(*d.Spec.Replicas).To(Equal(int32(2)))
	g.Expect(d.Annotations).NotTo(HaveKey(ReplicasBeforeUpgradeAnnotation))
}

func TestWaitDeploymentsAvailable(t *testing.T) {
	g := NewWithT(t)
	c := newClient(t)
	ns := env.NewNamespace(t)
	g.Expect(c.Apply(t.Context(), parse(t, componentsYAML, ns, "infrastructure-wait", "", "example.com")[:1])).To(Succeed())
	key := client.ObjectKey{Namespace: ns, Name: "manager"}
	d := &appsv1.Deployment{}
	g.Expect(env.Client.Get(t.Context(), key, d)).To(Succeed())
	d.Status.ObservedGeneration = d.Generation
	d.Status.Conditions = []appsv1.DeploymentCondition{{Type: appsv1.DeploymentAvailable, Status: corev1.ConditionFalse, Reason: "MinimumReplicasUnavailable", Message: "Deployment does not have minimum availability."}}
	g.Expect(env.Client.Status().Update(t.Context(), d)).To(Succeed())

	err := c.WaitDeploymentsAvailable(t.Context(), []client.ObjectKey{key, {Namespace: ns, Name: "missing"}}, 100*time.Millisecond)
	g.Expect(err).To(MatchError("not available after 100ms: Deployment " + ns + "/manager (Available=False, MinimumReplicasUnavailable: Deployment does not have minimum availability.), Deployment " + ns + "/missing (not found): look at their Pods with kubectl describe"))

	done := make(chan error)
	go func() { done <- c.WaitDeploymentsAvailable(t.Context(), []client.ObjectKey{key}, time.Minute) }()
	d.Status.Conditions[0].Status = corev1.ConditionTrue
	g.Expect(env.Client.Status().Update(t.Context(), d)).To(Succeed())
	g.Eventually(done, 10*time.Second).Should(Receive(BeNil()))
}
