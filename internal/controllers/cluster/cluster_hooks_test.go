package cluster

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
	hooksv1 "github.com/capstan-dev/capstan/api/runtime/hooks/v1alpha1"
	runtimev1 "github.com/capstan-dev/capstan/api/runtime/v1alpha1"
	"github.com/capstan-dev/capstan/internal/runtime/runtimetest"
	"github.com/capstan-dev/capstan/internal/test/builder"
	"github.com/capstan-dev/capstan/pkg/extension"
)

// registerExtension discovers an Extension for the Clusters of namespace ns and registers its handlers,
// as the ExtensionConfig controller does; unregistered when the test ends.
func registerExtension(t *testing.T, ns, url string, ca []byte) string {
	t.Helper()
	name := "ext-" + ns
	ec := &runtimev1.ExtensionConfig{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: runtimev1.ExtensionConfigSpec{
		ClientConfig:      runtimev1.ClientConfig{URL: ptr.To(url), CABundle: ca},
		NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{corev1.LabelMetadataName: ns}},
	}}
	handlers, err := runtimeClient.Discover(context.Background(), ec)
	if err != nil {
		t.Fatalf("discovering the test Extension: %v", err)
	}
	ec.Status.Handlers = handlers
	if err := hookRegistry.Add(ec); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { hookRegistry.Remove(name) })
	return name
}

// topologyCluster is a Cluster with a managed topology whose InfraCluster and control plane exist.
func topologyCluster(t *testing.T, ns, name string) (*clusterv1.Cluster, *unstructured.Unstructured, *unstructured.Unstructured) {
	t.Helper()
	infra := builder.V1Beta1.InfraCluster(ns, name+"-infra")
	cp := builder.V1Beta1.ControlPlane(ns, name+"-cp")
	create(t, infra, cp)
	c := builder.Cluster(ns, name, infra, cp)
	c.Spec.Topology = &clusterv1.Topology{Class: "quick-start", Version: "v1.33.0"}
	create(t, c)
	return c, infra, cp
}

type beforeDelete = extension.Handler[*hooksv1.BeforeClusterDeleteRequest, *hooksv1.BeforeClusterDeleteResponse]

func TestBeforeClusterDeleteHoldsTheDeletion(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := env.NewNamespace(t)
	ext := runtimetest.Start(t)
	var hold atomic.Bool
	hold.Store(true)
	var calls atomic.Int32
	var sawCluster atomic.Value
	g.Expect(extension.AddHandler(ext.Server, beforeDelete{Hook: hooksv1.BeforeClusterDelete, Name: "cleanup",
		Func: func(_ context.Context, req *hooksv1.BeforeClusterDeleteRequest, resp *hooksv1.BeforeClusterDeleteResponse) {
			calls.Add(1)
			sawCluster.Store(req.Cluster.APIVersion + "/" + req.Cluster.Kind + " " + req.Cluster.Namespace + "/" + req.Cluster.Name)
			if hold.Load() {
				resp.RetryAfterSeconds = 1
				resp.Message = "Cleaning up add-ons"
			}
		}})).To(Succeed())
	registerExtension(t, ns, ext.URL, ext.CA)

	c, infra, cp := topologyCluster(t, ns, "managed")
	plain := builder.Cluster(ns, "plain", builder.V1Beta1.InfraCluster(ns, "plain-infra"), nil)
	create(t, plain)
	g.Eventually(func(g Gomega) {
		g.Expect(getCluster(g, c).Finalizers).To(ContainElement(clusterv1.ClusterFinalizer))
		g.Expect(getCluster(g, plain).Finalizers).To(ContainElement(clusterv1.ClusterFinalizer))
	}).WithTimeout(timeout).WithPolling(interval).Should(Succeed())

	g.Expect(env.Client.Delete(ctx, c)).To(Succeed())
	g.Expect(env.Client.Delete(ctx, plain)).To(Succeed())
	g.Eventually(func(g Gomega) {
		deleting := v1beta2Condition(getCluster(g, c), clusterv1.ClusterDeletingV1Beta2Condition)
		g.Expect(deleting.Reason).To(Equal(clusterv1.ClusterDeletingWaitingForBeforeDeleteHookV1Beta2Reason))
		g.Expect(deleting.Message).To(Equal("Waiting for BeforeClusterDelete hook: Cleaning up add-ons"))
		gone(g, plain) // a Cluster without topology is not held, and other Clusters go on
	}).WithTimeout(timeout).WithPolling(interval).Should(Succeed())
	g.Expect(sawCluster.Load()).To(Equal("cluster.x-k8s.io/v1beta1/Cluster " + ns + "/managed"))
	// While the hook holds, nothing of the Cluster is deleted; it is asked again.
	g.Consistently(func(g Gomega) {
		g.Expect(isDeleting(g, cp)).To(BeFalse())
		g.Expect(isDeleting(g, infra)).To(BeFalse())
	}).WithTimeout(2 * time.Second).WithPolling(interval).Should(Succeed())
	g.Eventually(calls.Load).WithTimeout(timeout).Should(BeNumerically(">=", 2))

	hold.Store(false)
	g.Eventually(func(g Gomega) {
		gone(g, c)
		gone(g, cp)
		gone(g, infra)
	}).WithTimeout(timeout).WithPolling(interval).Should(Succeed())
}

func TestBeforeClusterDeleteFailurePolicy(t *testing.T) {
	tests := []struct {
		policy hooksv1.FailurePolicy
		held   bool
	}{
		{policy: hooksv1.FailurePolicyFail, held: true},
		{policy: hooksv1.FailurePolicyIgnore, held: false},
	}
	for _, tt := range tests {
		t.Run(string(tt.policy), func(t *testing.T) {
			g := NewWithT(t)
			ctx := context.Background()
			ns := env.NewNamespace(t)
			ext := runtimetest.Start(t)
			g.Expect(extension.AddHandler(ext.Server, beforeDelete{Hook: hooksv1.BeforeClusterDelete, Name: "cleanup", FailurePolicy: ptr.To(tt.policy),
				Func: func(context.Context, *hooksv1.BeforeClusterDeleteRequest, *hooksv1.BeforeClusterDeleteResponse) {}})).To(Succeed())
			// Discovered while it listened; called where nothing listens.
			handlers, err := runtimeClient.Discover(ctx, &runtimev1.ExtensionConfig{ObjectMeta: metav1.ObjectMeta{Name: "ext-" + ns},
				Spec: runtimev1.ExtensionConfigSpec{ClientConfig: runtimev1.ClientConfig{URL: ptr.To(ext.URL), CABundle: ext.CA}}})
			g.Expect(err).NotTo(HaveOccurred())
			down := fmt.Sprintf("https://127.0.0.1:%d", runtimetest.FreePort(t))
			name := "ext-" + ns
			g.Expect(hookRegistry.Add(&runtimev1.ExtensionConfig{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: runtimev1.ExtensionConfigSpec{
				ClientConfig:      runtimev1.ClientConfig{URL: ptr.To(down), CABundle: ext.CA},
				NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{corev1.LabelMetadataName: ns}},
			}, Status: runtimev1.ExtensionConfigStatus{Handlers: handlers}})).To(Succeed())
			t.Cleanup(func() { hookRegistry.Remove(name) })

			c, _, _ := topologyCluster(t, ns, "managed")
			g.Eventually(func(g Gomega) {
				g.Expect(getCluster(g, c).Finalizers).To(ContainElement(clusterv1.ClusterFinalizer))
			}).WithTimeout(timeout).WithPolling(interval).Should(Succeed())
			g.Expect(env.Client.Delete(ctx, c)).To(Succeed())

			if !tt.held {
				g.Eventually(func(g Gomega) { gone(g, c) }).WithTimeout(timeout).WithPolling(interval).Should(Succeed())
				return
			}
			g.Eventually(func(g Gomega) {
				deleting := v1beta2Condition(getCluster(g, c), clusterv1.ClusterDeletingV1Beta2Condition)
				g.Expect(deleting.Reason).To(Equal(clusterv1.ClusterDeletingWaitingForBeforeDeleteHookV1Beta2Reason))
				g.Expect(deleting.Message).To(ContainSubstring(`BeforeClusterDelete handler "cleanup.` + name + `" of ExtensionConfig ` + name + ` failed: calling ` + down))
				g.Expect(deleting.Message).To(ContainSubstring("connection refused"))
				events := &corev1.EventList{}
				g.Expect(env.Client.List(ctx, events, client.InNamespace(ns))).To(Succeed())
				var reasons []string
				for _, e := range events.Items {
					reasons = append(reasons, e.Reason)
				}
				g.Expect(reasons).To(ContainElement(lifecycleHookFailedEvent))
			}).WithTimeout(timeout).WithPolling(interval).Should(Succeed())

			// The Extension is unregistered: the deletion goes on.
			hookRegistry.Remove(name)
			g.Eventually(func(g Gomega) { gone(g, c) }).WithTimeout(timeout).WithPolling(interval).Should(Succeed())
		})
	}
}

type afterInit = extension.Handler[*hooksv1.AfterControlPlaneInitializedRequest, *hooksv1.AfterControlPlaneInitializedResponse]

func TestAfterControlPlaneInitializedIsCalledOnce(t *testing.T) {
	g := NewWithT(t)
	ns := env.NewNamespace(t)
	ext := runtimetest.Start(t)
	var calls atomic.Int32
	g.Expect(extension.AddHandler(ext.Server, afterInit{Hook: hooksv1.AfterControlPlaneInitialized, Name: "install-cni",
		Func: func(_ context.Context, req *hooksv1.AfterControlPlaneInitializedRequest, _ *hooksv1.AfterControlPlaneInitializedResponse) {
			if req.Cluster.Name == "managed" {
				calls.Add(1)
			}
		}})).To(Succeed())
	registerExtension(t, ns, ext.URL, ext.CA)

	c, infra, cp := topologyCluster(t, ns, "managed")
	setStatus(t, infra, map[string]any{"ready": true})
	g.Eventually(func(g Gomega) {
		g.Expect(getCluster(g, c).Annotations).To(HaveKeyWithValue(runtimev1.PendingHooksAnnotation, "AfterControlPlaneInitialized"))
	}).WithTimeout(timeout).WithPolling(interval).Should(Succeed())
	g.Expect(calls.Load()).To(BeZero(), "not before the control plane is initialized")

	setStatus(t, cp, map[string]any{"ready": true, "initialized": true})
	g.Eventually(func(g Gomega) {
		g.Expect(getCluster(g, c).Annotations).NotTo(HaveKey(runtimev1.PendingHooksAnnotation))
	}).WithTimeout(timeout).WithPolling(interval).Should(Succeed())
	g.Expect(calls.Load()).To(Equal(int32(1)))

	// More reconciles do not call it again.
	update(t, c, func(c *clusterv1.Cluster) { c.Labels = map[string]string{"touched": "yes"} })
	g.Consistently(calls.Load).WithTimeout(2 * time.Second).WithPolling(interval).Should(Equal(int32(1)))
}
