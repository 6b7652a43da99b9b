package e2e

import (
	"context"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	controlplanev1 "github.com/capstan-dev/capstan/api/controlplane/kubeadm/v1beta1"
	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
	"github.com/capstan-dev/capstan/internal/conditions"
	"github.com/capstan-dev/capstan/internal/test/procs"
	"github.com/capstan-dev/capstan/internal/test/stack"
)

// TestClusterTemplateProvisions renders the released cluster-template.yaml for a cluster with one control
// plane Machine and 2 workers and applies it with the core controllers, the kubeadm bootstrap and control
// plane providers and the local provider running: the Cluster becomes Available, its kubeconfig (written by
// the KubeadmControlPlane) reaches the workload kube-apiserver run by the control plane Machine, which lists
// 3 Ready nodes, the KubeadmControlPlane has 1 ready replica, the workers carry the labels
// (kubeletExtraArgs node-labels) and the taint their KubeadmConfigTemplate asks for, and deleting the
// Cluster stops its processes and removes its data.
func TestClusterTemplateProvisions(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := env.NewNamespace(t)
	b := stack.ForTest(t, env.Config, stack.Options{Local: true, Kubeadm: true}).Backend

	objs := stack.LocalTemplate(t, "cluster-template.yaml", map[string]string{
		"CLUSTER_NAME": "e2e", "NAMESPACE": ns, "KUBERNETES_VERSION": "v1.37.1",
		"CONTROL_PLANE_MACHINE_COUNT": "1", "WORKER_MACHINE_COUNT": "2",
	})
	for _, o := range objs {
		if o.GetKind() == "KubeadmConfigTemplate" {
			// The workers' node registration, as a user would write it.
			g.Expect(unstructured.SetNestedField(o.Object, map[string]any{
				"kubeletExtraArgs": map[string]any{"node-labels": "tier=edge,example.com/pool=md-0"},
				"taints":           []any{map[string]any{"key": "dedicated", "value": "edge", "effect": "NoSchedule"}},
			}, "spec", "template", "spec", "joinConfiguration", "nodeRegistration")).To(Succeed())
		}
		g.Expect(env.Client.Create(ctx, o)).To(Succeed(), "creating %s %s", o.GetKind(), o.GetName())
	}

	cluster := &clusterv1.Cluster{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "e2e"}}
	g.Eventually(func(g Gomega) {
		g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(cluster), cluster)).To(Succeed())
		g.Expect(cluster.Status.Phase).To(Equal(string(clusterv1.ClusterPhaseProvisioned)))
		g.Expect(conditions.IsV1Beta2True(cluster, clusterv1.ClusterAvailableV1Beta2Condition)).To(BeTrue(), "%+v", cluster.Status.V1Beta2)
	}, 3*time.Minute, 500*time.Millisecond).Should(Succeed())
	kcp := &controlplanev1.KubeadmControlPlane{}
	g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "e2e-control-plane"}, kcp)).To(Succeed())
	g.Expect(kcp.Status.Initialized).To(BeTrue())
	g.Expect(kcp.Status.ReadyReplicas).To(BeEquivalentTo(1))

	g.Eventually(func(g Gomega) {
		wc := workloadClient(g, ns, "e2e", true, clusterv1.APIEndpoint{})
		nodes, err := wc.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(nodes.Items).To(HaveLen(3))
		workers := 0
		for _, n := range nodes.Items {
			g.Expect(n.Status.Conditions).To(ContainElement(And(HaveField("Type", corev1.NodeReady), HaveField("Status", corev1.ConditionTrue))), "node %s", n.Name)
			if _, cp := n.Labels["node-role.kubernetes.io/control-plane"]; cp {
				g.Expect(n.Labels).NotTo(HaveKey("tier"), "node %s", n.Name)
				continue
			}
			workers++
			g.Expect(n.Labels).To(HaveKeyWithValue("tier", "edge"), "node %s", n.Name)
			g.Expect(n.Labels).To(HaveKeyWithValue("example.com/pool", "md-0"), "node %s", n.Name)
			g.Expect(n.Spec.Taints).To(ContainElement(corev1.Taint{Key: "dedicated", Value: "edge", Effect: corev1.TaintEffectNoSchedule}), "node %s", n.Name)
		}
		g.Expect(workers).To(Equal(2))
	}, 2*time.Minute, time.Second).Should(Succeed())

	dir := b.ClusterDir(types.NamespacedName{Namespace: ns, Name: "e2e"})
	g.Expect(procs.Find("etcd", dir)).To(HaveLen(1))
	g.Expect(procs.Find("kube-apiserver", dir)).To(HaveLen(1))

	g.Expect(env.Client.Delete(ctx, cluster)).To(Succeed())
	g.Eventually(func() bool {
		return apierrors.IsNotFound(env.Client.Get(ctx, client.ObjectKeyFromObject(cluster), cluster))
	}, 2*time.Minute, 500*time.Millisecond).Should(BeTrue())
	g.Expect(procs.Find("etcd", dir)).To(BeEmpty())
	g.Expect(procs.Find("kube-apiserver", dir)).To(BeEmpty())
	g.Expect(dir).NotTo(BeAnExistingFile())
}
