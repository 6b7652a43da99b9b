package core_test

import (
	"context"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
	"github.com/capstan-dev/capstan/internal/conditions"
	"github.com/capstan-dev/capstan/internal/contract"
	"github.com/capstan-dev/capstan/internal/test/builder"
)

// setNodeReady sets a Node's Ready condition in the workload cluster, as a kubelet would.
func setNodeReady(ctx context.Context, g Gomega, name string, status corev1.ConditionStatus) {
	g.Eventually(func() error {
		node := &corev1.Node{}
		if err := workload.Client.Get(ctx, client.ObjectKey{Name: name}, node); err != nil {
			return err
		}
		for i := range node.Status.Conditions {
			if node.Status.Conditions[i].Type == corev1.NodeReady {
				node.Status.Conditions[i].Status = status
				node.Status.Conditions[i].Reason = "KubeletReady"
				if status != corev1.ConditionTrue {
					node.Status.Conditions[i].Reason = "KubeletNotReady"
				}
				node.Status.Conditions[i].LastTransitionTime = metav1.Now()
			}
		}
		return workload.Client.Status().Update(ctx, node)
	}, 30*time.Second, 250*time.Millisecond).Should(Succeed())
}

// TestExternalRemediationCreatesARequest: a MachineHealthCheck with spec.remediationTemplate hands an
// unhealthy Machine to an external remediation controller: it creates the remediation request from the
// template (named after the Machine, owned by it), leaves the Machine to it (the MachineSet does not
// delete it), and deletes the request once the Machine is healthy again.
func TestExternalRemediationCreatesARequest(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := env.NewNamespace(t)
	group := builder.V1Beta1.Infrastructure
	for _, kind := range []string{"InfraRemediation", "InfraRemediationTemplate"} {
		crd := builder.GenericCRD(group, "v1beta1", kind, contract.V1Beta1)
		err := env.Client.Create(ctx, crd)
		if !apierrors.IsAlreadyExists(err) {
			g.Expect(err).NotTo(HaveOccurred())
		}
	}
	tpl := builder.V1Beta1.Object(group, "InfraRemediationTemplate", ns, "reboot")
	g.Expect(unstructured.SetNestedField(tpl.Object, map[string]any{"strategy": "Reboot"}, "spec", "template", "spec")).To(Succeed())
	g.Expect(env.CreateServed(ctx, tpl)).To(Succeed())

	_, md := newClusterWithControlPlane(ctx, g, ns, "ext", 1)
	waitForRunning(ctx, g, ns, "ext", 2)
	victim := workers(ctx, g, md)[0]
	mhc := machineHealthCheck(ns, "ext", md, nil)
	mhc.Spec.RemediationTemplate = builder.Ref(tpl)
	g.Expect(env.Client.Create(ctx, mhc)).To(Succeed())
	g.Eventually(func(g Gomega) {
		g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(mhc), mhc)).To(Succeed())
		g.Expect(mhc.Status.CurrentHealthy).To(Equal(int32(1)))
	}, 60*time.Second, 250*time.Millisecond).Should(Succeed())

	setNodeReady(ctx, g, victim.Status.NodeRef.Name, corev1.ConditionFalse)
	request := &unstructured.Unstructured{}
	request.SetAPIVersion(tpl.GetAPIVersion())
	request.SetKind("InfraRemediation")
	g.Eventually(func(g Gomega) {
		g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: victim.Name}, request)).To(Succeed())
		strategy, _, _ := unstructured.NestedString(request.Object, "spec", "strategy")
		g.Expect(strategy).To(Equal("Reboot"))
		g.Expect(request.GetOwnerReferences()).To(ContainElement(And(HaveField("Kind", "Machine"), HaveField("Name", victim.Name))))
		m := &clusterv1.Machine{}
		g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(&victim), m)).To(Succeed())
		c := conditions.GetV1Beta2(m, clusterv1.MachineExternallyRemediatedV1Beta2Condition)
		g.Expect(c).NotTo(BeNil())
		g.Expect(c.Reason).To(Equal(clusterv1.MachineExternallyRemediatedWaitingForRemediationV1Beta2Reason))
	}, 60*time.Second, 250*time.Millisecond).Should(Succeed())
	g.Consistently(func(g Gomega) {
		m := &clusterv1.Machine{}
		g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(&victim), m)).To(Succeed())
		g.Expect(m.DeletionTimestamp).To(BeNil(), "the external remediation, not the MachineSet, acts on the Machine")
	}, 5*time.Second, 500*time.Millisecond).Should(Succeed())

	setNodeReady(ctx, g, victim.Status.NodeRef.Name, corev1.ConditionTrue)
	g.Eventually(func() bool {
		return apierrors.IsNotFound(env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: victim.Name}, request))
	}, 60*time.Second, 250*time.Millisecond).Should(BeTrue(), "the request is deleted once the Machine is healthy")
}
