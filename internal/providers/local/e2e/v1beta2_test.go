package e2e

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	controlplanev1 "github.com/capstan-dev/capstan/api/controlplane/kubeadm/v1beta1"
	controlplanev1beta2 "github.com/capstan-dev/capstan/api/controlplane/kubeadm/v1beta2"
	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
	clusterv1beta2 "github.com/capstan-dev/capstan/api/core/v1beta2"
	"github.com/capstan-dev/capstan/internal/manifest"
	"github.com/capstan-dev/capstan/internal/test/stack"
)

// TestV1beta2ClusterProvisions applies a cluster written against v1beta2 (testdata/cluster-v1beta2.yaml:
// references by apiGroup, the control plane's rollout, kubelet arguments as name/value pairs) while the
// controllers read and write v1beta1: the Cluster becomes Available, its worker's Node carries the label
// the v1beta2 kubelet arguments ask for, and each object reads back in v1beta2 as it was written and in
// v1beta1 as its conversion (a reference's apiVersion is the version the provider's CRD serves for the
// contract).
func TestV1beta2ClusterProvisions(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := env.NewNamespace(t)
	stack.ForTest(t, env.Config, stack.Options{Local: true, Kubeadm: true})

	data, err := os.ReadFile("testdata/cluster-v1beta2.yaml")
	g.Expect(err).NotTo(HaveOccurred())
	objs, err := manifest.Parse([]byte(strings.ReplaceAll(string(data), "NAMESPACE", ns)))
	g.Expect(err).NotTo(HaveOccurred())
	for i := range objs {
		g.Expect(env.Client.Create(ctx, &objs[i])).To(Succeed(), "creating %s %s %s", objs[i].GetAPIVersion(), objs[i].GetKind(), objs[i].GetName())
	}

	key := client.ObjectKey{Namespace: ns, Name: "v2"}
	cluster := &clusterv1beta2.Cluster{}
	g.Eventually(func(g Gomega) {
		g.Expect(env.Client.Get(ctx, key, cluster)).To(Succeed())
		g.Expect(apimeta.IsStatusConditionTrue(cluster.Status.Conditions, "Available")).To(BeTrue(), "%+v", cluster.Status.Conditions)
	}, 3*time.Minute, 500*time.Millisecond).Should(Succeed())
	g.Expect(cluster.Status.Initialization.InfrastructureProvisioned).To(HaveValue(BeTrue()))
	g.Expect(cluster.Status.Initialization.ControlPlaneInitialized).To(HaveValue(BeTrue()))
	g.Expect(cluster.Spec.ControlPlaneRef).To(Equal(clusterv1beta2.ContractVersionedObjectReference{
		APIGroup: "controlplane.cluster.x-k8s.io", Kind: "KubeadmControlPlane", Name: "v2-control-plane"}))

	old := &clusterv1.Cluster{}
	g.Expect(env.Client.Get(ctx, key, old)).To(Succeed())
	g.Expect(old.Status.Phase).To(Equal(string(clusterv1.ClusterPhaseProvisioned)))
	g.Expect(old.Spec.ControlPlaneRef).To(HaveValue(Equal(corev1.ObjectReference{APIVersion: "controlplane.cluster.x-k8s.io/v1beta1", Kind: "KubeadmControlPlane", Namespace: ns, Name: "v2-control-plane"})))
	g.Expect(old.Spec.InfrastructureRef).To(HaveValue(Equal(corev1.ObjectReference{APIVersion: "infrastructure.cluster.x-k8s.io/v1alpha1", Kind: "LocalCluster", Namespace: ns, Name: "v2"})))

	kcp := &controlplanev1beta2.KubeadmControlPlane{}
	g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "v2-control-plane"}, kcp)).To(Succeed())
	g.Expect(kcp.Status.ReadyReplicas).To(HaveValue(BeEquivalentTo(1)))
	g.Expect(kcp.Spec.Rollout.Strategy.RollingUpdate.MaxSurge).To(HaveValue(Equal(intstr.FromInt32(1))))
	oldKCP := &controlplanev1.KubeadmControlPlane{}
	g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(kcp), oldKCP)).To(Succeed())
	g.Expect(oldKCP.Spec.RolloutStrategy.RollingUpdate.MaxSurge).To(HaveValue(Equal(intstr.FromInt32(1))))
	g.Expect(oldKCP.Spec.MachineTemplate.InfrastructureRef.APIVersion).To(Equal("infrastructure.cluster.x-k8s.io/v1alpha1"))

	g.Eventually(func(g Gomega) {
		wc := workloadClient(g, ns, "v2", true, clusterv1.APIEndpoint{})
		nodes, err := wc.CoreV1().Nodes().List(ctx, metav1.ListOptions{LabelSelector: "tier=edge"})
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(nodes.Items).To(HaveLen(1), "the worker's Node has the label of the v1beta2 kubeletExtraArgs")
	}, 2*time.Minute, time.Second).Should(Succeed())

	g.Expect(env.Client.Delete(ctx, cluster)).To(Succeed())
	g.Eventually(func() bool {
		return apierrors.IsNotFound(env.Client.Get(ctx, key, &clusterv1beta2.Cluster{}))
	}, 2*time.Minute, 500*time.Millisecond).Should(BeTrue())
}
