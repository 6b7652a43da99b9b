package e2e

import (
	"context"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/client"

	addonsv1 "github.com/capstan-dev/capstan/api/addons/v1beta1"
	bootstrapv1 "github.com/capstan-dev/capstan/api/bootstrap/kubeadm/v1beta1"
	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
	infrav1 "github.com/capstan-dev/capstan/api/infrastructure/local/v1alpha1"
	"github.com/capstan-dev/capstan/internal/test/stack"
)

// poolNodes returns the names of the workload cluster's Nodes of the pool, sorted by the API server.
func poolNodes(ctx context.Context, g Gomega, wc kubernetes.Interface, pool string) []string {
	nodes, err := wc.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	g.Expect(err).NotTo(HaveOccurred())
	var out []string
	for _, n := range nodes.Items {
		if strings.HasPrefix(n.Name, pool+"-") {
			out = append(out, n.Name)
		}
	}
	return out
}

// TestMachinePoolFlavor applies the machinepool flavor with 3 workers and a ClusterResourceSet selecting
// the Cluster, with the core controllers, the kubeadm providers and the local provider running: the
// MachinePool's KubeadmConfig gets join data and a bootstrap token; the MachinePool reaches Running
// with 3 Nodes in the workload cluster and status.nodeRefs set; the ClusterResourceSet's Namespace and
// ConfigMap appear in the workload API server; scaling the pool to 1 removes two Nodes.
func TestMachinePoolFlavor(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := env.NewNamespace(t)
	stack.ForTest(t, env.Config, stack.Options{Local: true, Kubeadm: true})

	objs := stack.LocalTemplate(t, "cluster-template-machinepool.yaml", map[string]string{
		"CLUSTER_NAME": "pools", "NAMESPACE": ns, "KUBERNETES_VERSION": "v1.37.1", "WORKER_MACHINE_COUNT": "3",
	})
	for _, o := range objs {
		if o.GetKind() == "Cluster" {
			o.SetLabels(map[string]string{"addons": "demo"})
		}
		g.Expect(env.Client.Create(ctx, o)).To(Succeed(), "creating %s %s", o.GetKind(), o.GetName())
	}
	g.Expect(env.Client.Create(ctx, &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "addons"},
		Data: map[string]string{"addons.yaml": "apiVersion: v1\nkind: Namespace\nmetadata: {name: addons}\n---\n" +
			"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings, namespace: addons}\ndata: {mtu: \"1450\"}\n"},
	})).To(Succeed())
	g.Expect(env.Client.Create(ctx, &addonsv1.ClusterResourceSet{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "addons"},
		Spec: addonsv1.ClusterResourceSetSpec{
			ClusterSelector: metav1.LabelSelector{MatchLabels: map[string]string{"addons": "demo"}},
			Resources:       []addonsv1.ResourceRef{{Kind: "ConfigMap", Name: "addons"}},
			Strategy:        string(addonsv1.ClusterResourceSetStrategyReconcile),
		},
	})).To(Succeed())

	mp := &clusterv1.MachinePool{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "pools-mp-0"}}
	g.Eventually(func(g Gomega) {
		g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(mp), mp)).To(Succeed())
		g.Expect(mp.Status.Phase).To(Equal(string(clusterv1.MachinePoolPhaseRunning)))
		g.Expect(mp.Status.NodeRefs).To(HaveLen(3))
		g.Expect(mp.Status.ReadyReplicas).To(BeEquivalentTo(3))
	}, 3*time.Minute, time.Second).Should(Succeed())
	wc := workloadClient(g, ns, "pools", true, clusterv1.APIEndpoint{})
	g.Expect(poolNodes(ctx, g, wc, "pools-mp-0")).To(ConsistOf("pools-mp-0-0", "pools-mp-0-1", "pools-mp-0-2"))
	node, err := wc.CoreV1().Nodes().Get(ctx, "pools-mp-0-1", metav1.GetOptions{})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(node.Annotations).To(HaveKeyWithValue(clusterv1.OwnerKindAnnotation, "MachinePool"))
	g.Expect(node.Spec.ProviderID).To(Equal(infrav1.ProviderIDPrefix + ns + "/pools/pools-mp-0-1"))

	t.Log("the pool's join data comes from its KubeadmConfig, with a bootstrap token in the workload cluster")
	g.Expect(mp.Spec.Template.Spec.Bootstrap.DataSecretName).To(HaveValue(Equal("pools-mp-0-config")))
	config := &bootstrapv1.KubeadmConfig{}
	g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "pools-mp-0-config"}, config)).To(Succeed())
	g.Expect(config.Status.Ready).To(BeTrue())
	token, err := bootstrapv1.NewBootstrapTokenString(config.Spec.JoinConfiguration.Discovery.BootstrapToken.Token)
	g.Expect(err).NotTo(HaveOccurred())
	_, err = wc.CoreV1().Secrets(metav1.NamespaceSystem).Get(ctx, "bootstrap-token-"+token.ID, metav1.GetOptions{})
	g.Expect(err).NotTo(HaveOccurred())

	t.Log("the ClusterResourceSet's objects are in the workload API server")
	g.Eventually(func(g Gomega) {
		cm, err := wc.CoreV1().ConfigMaps("addons").Get(ctx, "settings", metav1.GetOptions{})
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(cm.Data).To(HaveKeyWithValue("mtu", "1450"))
	}, 2*time.Minute, time.Second).Should(Succeed())

	t.Log("scaling the MachinePool to 1 removes two Nodes")
	g.Expect(env.Client.Patch(ctx, mp, client.RawPatch("application/merge-patch+json", []byte(`{"spec":{"replicas":1}}`)))).To(Succeed())
	g.Eventually(func(g Gomega) {
		g.Expect(poolNodes(ctx, g, wc, "pools-mp-0")).To(ConsistOf("pools-mp-0-0"))
		g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(mp), mp)).To(Succeed())
		g.Expect(mp.Status.NodeRefs).To(HaveLen(1))
		g.Expect(mp.Status.Replicas).To(BeEquivalentTo(1))
		g.Expect(mp.Status.Phase).To(Equal(string(clusterv1.MachinePoolPhaseRunning)))
	}, 2*time.Minute, time.Second).Should(Succeed())

	cluster := &clusterv1.Cluster{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "pools"}}
	g.Expect(env.Client.Delete(ctx, cluster)).To(Succeed())
	g.Eventually(func() bool {
		return apierrors.IsNotFound(env.Client.Get(ctx, client.ObjectKeyFromObject(cluster), cluster))
	}, 2*time.Minute, 500*time.Millisecond).Should(BeTrue())
}
