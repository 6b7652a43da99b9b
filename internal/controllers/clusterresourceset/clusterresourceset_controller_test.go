package clusterresourceset_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	addonsv1 "github.com/capstan-dev/capstan/api/addons/v1beta1"
	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
	"github.com/capstan-dev/capstan/internal/conditions"
	"github.com/capstan-dev/capstan/internal/test/builder"
)

// newCluster creates a Cluster of the test provider with labels; every Cluster's workload cluster is the
// workload test API server.
func newCluster(ctx context.Context, g Gomega, ns, name string, labels map[string]string) *clusterv1.Cluster {
	infra := builder.V1Beta1.InfraCluster(ns, name)
	g.Expect(env.Client.Create(ctx, infra)).To(Succeed())
	c := builder.Cluster(ns, name, infra, nil)
	c.Labels = labels
	g.Expect(env.Client.Create(ctx, c)).To(Succeed())
	return c
}

// addons is the data of a ConfigMap resource: a Namespace and a ConfigMap in it, holding value.
func addons(wns, value string) string {
	return fmt.Sprintf(`apiVersion: v1
kind: ConfigMap
metadata: {name: cni-config, namespace: %[1]s}
data: {value: %[2]q}
---
apiVersion: v1
kind: Namespace
metadata: {name: %[1]s}
`, wns, value)
}

// workloadValue returns the value of the ConfigMap the resource put in the workload cluster, "" when it is
// not there.
func workloadValue(ctx context.Context, g Gomega, wns string) string {
	cm := &corev1.ConfigMap{}
	err := workload.Client.Get(ctx, client.ObjectKey{Namespace: wns, Name: "cni-config"}, cm)
	if apierrors.IsNotFound(err) {
		return ""
	}
	g.Expect(err).NotTo(HaveOccurred())
	return cm.Data["value"]
}

func getBinding(ctx context.Context, g Gomega, ns, cluster string) *addonsv1.ClusterResourceSetBinding {
	b := &addonsv1.ClusterResourceSetBinding{}
	g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: cluster}, b)).To(Succeed())
	return b
}

func bindingGone(ctx context.Context, g Gomega, ns, cluster string) {
	err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: cluster}, &addonsv1.ClusterResourceSetBinding{})
	g.Expect(apierrors.IsNotFound(err)).To(BeTrue(), "binding of %s: got %v", cluster, err)
}

func TestClusterResourceSetReconcileStrategy(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := env.NewNamespace(t)
	wns := "addons-" + ns

	source := &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "cni"},
		Data:       map[string]string{"cni.yaml": addons(wns, "one")},
	}
	g.Expect(env.Client.Create(ctx, source)).To(Succeed())
	crs := &addonsv1.ClusterResourceSet{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "cni"},
		Spec: addonsv1.ClusterResourceSetSpec{
			ClusterSelector: metav1.LabelSelector{MatchLabels: map[string]string{"cni": "calico"}},
			Resources:       []addonsv1.ResourceRef{{Kind: "ConfigMap", Name: "cni"}},
			Strategy:        string(addonsv1.ClusterResourceSetStrategyReconcile),
		},
	}
	g.Expect(env.Client.Create(ctx, crs)).To(Succeed())
	newCluster(ctx, g, ns, "c1", map[string]string{"cni": "calico"})
	newCluster(ctx, g, ns, "other", map[string]string{"cni": "none"})

	t.Log("the objects appear in the matching Cluster's workload cluster and the binding lists them")
	var firstHash string
	g.Eventually(func(g Gomega) {
		g.Expect(workloadValue(ctx, g, wns)).To(Equal("one"))
		b := getBinding(ctx, g, ns, "c1")
		g.Expect(b.Spec.ClusterName).To(Equal("c1"))
		g.Expect(b.Spec.Bindings).To(HaveLen(1))
		g.Expect(b.Spec.Bindings[0].ClusterResourceSetName).To(Equal("cni"))
		g.Expect(b.Spec.Bindings[0].Resources).To(HaveLen(1))
		r := b.Spec.Bindings[0].Resources[0]
		g.Expect(r.ResourceRef).To(Equal(addonsv1.ResourceRef{Kind: "ConfigMap", Name: "cni"}))
		g.Expect(r.Applied).To(BeTrue())
		g.Expect(r.Hash).To(HavePrefix("sha256:"))
		g.Expect(r.LastAppliedTime).NotTo(BeNil())
		firstHash = r.Hash
		g.Expect(b.OwnerReferences).To(ContainElement(HaveField("Kind", "ClusterResourceSet")))
		g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(crs), crs)).To(Succeed())
		g.Expect(conditions.IsTrue(crs, addonsv1.ResourcesAppliedCondition)).To(BeTrue())
		g.Expect(conditions.IsV1Beta2True(crs, addonsv1.ResourcesAppliedV1Beta2Condition)).To(BeTrue())
	}, 60*time.Second, 250*time.Millisecond).Should(Succeed())
	g.Expect(crs.Finalizers).To(ContainElement(addonsv1.ClusterResourceSetFinalizer))
	g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(source), source)).To(Succeed())
	g.Expect(source.OwnerReferences).To(ContainElement(HaveField("Name", "cni")), "the resource is owned by the set")
	err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "other"}, &addonsv1.ClusterResourceSetBinding{})
	g.Expect(apierrors.IsNotFound(err)).To(BeTrue(), "a Cluster the selector does not match gets no binding")
	ns1 := &corev1.Namespace{}
	g.Expect(workload.Client.Get(ctx, client.ObjectKey{Name: wns}, ns1)).To(Succeed())

	t.Log("changing the ConfigMap updates the objects and the binding's hash")
	source.Data["cni.yaml"] = addons(wns, "two")
	g.Expect(env.Client.Update(ctx, source)).To(Succeed())
	g.Eventually(func(g Gomega) {
		g.Expect(workloadValue(ctx, g, wns)).To(Equal("two"))
		r := getBinding(ctx, g, ns, "c1").Spec.Bindings[0].Resources[0]
		g.Expect(r.Applied).To(BeTrue())
		g.Expect(r.Hash).NotTo(Equal(firstHash))
	}, 60*time.Second, 250*time.Millisecond).Should(Succeed())

	t.Log("a new matching Cluster gets them")
	newCluster(ctx, g, ns, "c2", map[string]string{"cni": "calico"})
	g.Eventually(func(g Gomega) {
		b := getBinding(ctx, g, ns, "c2")
		g.Expect(b.Spec.Bindings).To(HaveLen(1))
		g.Expect(b.Spec.Bindings[0].Resources).To(ConsistOf(HaveField("Applied", true)))
	}, 60*time.Second, 250*time.Millisecond).Should(Succeed())

	t.Log("a Cluster that stops matching leaves the set's binding")
	c1 := &clusterv1.Cluster{}
	g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "c1"}, c1)).To(Succeed())
	c1.Labels["cni"] = "cilium"
	g.Expect(env.Client.Update(ctx, c1)).To(Succeed())
	g.Eventually(func(g Gomega) { bindingGone(ctx, g, ns, "c1") }, 60*time.Second, 250*time.Millisecond).Should(Succeed())

	t.Log("deleting the Cluster deletes its binding")
	g.Expect(env.Client.Delete(ctx, &clusterv1.Cluster{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "c2"}})).To(Succeed())
	g.Eventually(func(g Gomega) { bindingGone(ctx, g, ns, "c2") }, 60*time.Second, 250*time.Millisecond).Should(Succeed())
}

func TestClusterResourceSetApplyOnceAndDeletion(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := env.NewNamespace(t)
	wns := "addons-" + ns

	source := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "cni"},
		Type:       addonsv1.ClusterResourceSetSecretType,
		StringData: map[string]string{"cni.yaml": addons(wns, "one")},
	}
	g.Expect(env.Client.Create(ctx, source)).To(Succeed())
	wrongType := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "opaque"},
		StringData: map[string]string{"cni.yaml": addons(wns, "x")},
	}
	g.Expect(env.Client.Create(ctx, wrongType)).To(Succeed())
	selector := metav1.LabelSelector{MatchLabels: map[string]string{"cni": "calico"}}
	crs := &addonsv1.ClusterResourceSet{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "cni"},
		Spec:       addonsv1.ClusterResourceSetSpec{ClusterSelector: selector, Resources: []addonsv1.ResourceRef{{Kind: "Secret", Name: "cni"}}},
	}
	g.Expect(env.Client.Create(ctx, crs)).To(Succeed())
	bad := &addonsv1.ClusterResourceSet{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "bad"},
		Spec:       addonsv1.ClusterResourceSetSpec{ClusterSelector: selector, Resources: []addonsv1.ResourceRef{{Kind: "Secret", Name: "opaque"}}},
	}
	g.Expect(env.Client.Create(ctx, bad)).To(Succeed())
	newCluster(ctx, g, ns, "c1", map[string]string{"cni": "calico"})

	g.Eventually(func(g Gomega) {
		g.Expect(workloadValue(ctx, g, wns)).To(Equal("one"))
		b := getBinding(ctx, g, ns, "c1")
		g.Expect(b.Spec.Bindings).To(ContainElement(HaveField("ClusterResourceSetName", "cni")))
	}, 60*time.Second, 250*time.Millisecond).Should(Succeed())

	t.Log("a Secret of another type is refused, and the condition says so")
	g.Eventually(func(g Gomega) {
		g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(bad), bad)).To(Succeed())
		c := conditions.Get(bad, addonsv1.ResourcesAppliedCondition)
		g.Expect(c).NotTo(BeNil())
		g.Expect(c.Status).To(Equal(corev1.ConditionFalse))
		g.Expect(c.Reason).To(Equal(addonsv1.WrongSecretTypeReason))
		g.Expect(c.Message).To(ContainSubstring("addons.cluster.x-k8s.io/resource-set"))
	}, 60*time.Second, 250*time.Millisecond).Should(Succeed())

	t.Log("with ApplyOnce, a changed Secret is not applied again")
	g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(source), source)).To(Succeed())
	hash := getBinding(ctx, g, ns, "c1").Spec.Bindings[0].Resources[0].Hash
	g.Expect(getBinding(ctx, g, ns, "c1").Spec.Bindings).To(HaveLen(1), "the set whose Secret has the wrong type applied nothing")
	source.Data = map[string][]byte{"cni.yaml": []byte(addons(wns, "two"))}
	g.Expect(env.Client.Update(ctx, source)).To(Succeed())
	g.Consistently(func(g Gomega) {
		g.Expect(workloadValue(ctx, g, wns)).To(Equal("one"))
		g.Expect(getBinding(ctx, g, ns, "c1").Spec.Bindings[0].Resources[0].Hash).To(Equal(hash))
	}, 3*time.Second, 250*time.Millisecond).Should(Succeed())

	t.Log("deleting the set removes it from the binding, which goes when empty; the objects stay")
	g.Expect(env.Client.Delete(ctx, crs)).To(Succeed())
	g.Eventually(func(g Gomega) {
		bindingGone(ctx, g, ns, "c1")
		err := env.Client.Get(ctx, client.ObjectKeyFromObject(crs), crs)
		g.Expect(apierrors.IsNotFound(err)).To(BeTrue(), "got %v", err)
	}, 60*time.Second, 250*time.Millisecond).Should(Succeed())
	g.Expect(workloadValue(ctx, g, wns)).To(Equal("one"))
}

// TestBindingOfAnOlderClusterAPI: a binding written before spec.clusterName existed (a Cluster
// ownerReference instead) gets spec.clusterName and loses the ownerReference, and goes when its Cluster
// goes.
func TestBindingOfAnOlderClusterAPI(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := env.NewNamespace(t)
	cluster := newCluster(ctx, g, ns, "old", nil)
	binding := &addonsv1.ClusterResourceSetBinding{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "old",
		OwnerReferences: []metav1.OwnerReference{{APIVersion: clusterv1.GroupVersion.String(), Kind: "Cluster", Name: "old", UID: cluster.UID}}}}
	g.Expect(env.Client.Create(ctx, binding)).To(Succeed())
	g.Eventually(func(g Gomega) {
		b := getBinding(ctx, g, ns, "old")
		g.Expect(b.Spec.ClusterName).To(Equal("old"))
		g.Expect(b.OwnerReferences).To(BeEmpty())
	}, 60*time.Second, 250*time.Millisecond).Should(Succeed())
	g.Expect(env.Client.Delete(ctx, cluster)).To(Succeed())
	g.Eventually(func(g Gomega) { bindingGone(ctx, g, ns, "old") }, 60*time.Second, 250*time.Millisecond).Should(Succeed())
}
