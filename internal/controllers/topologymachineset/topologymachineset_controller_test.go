package topologymachineset

import (
	"context"
	"os"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
	"github.com/capstan-dev/capstan/internal/test/envtest"
)

var env *envtest.Environment

func TestMain(m *testing.M) {
	os.Exit(envtest.Run(m, envtest.Options{}, func(e *envtest.Environment) { env = e }))
}

func template(g Gomega, ns, kind, name string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{"template": map[string]any{"spec": map[string]any{}}}}}
	switch kind {
	case "LocalMachineTemplate":
		u.SetAPIVersion("infrastructure.cluster.x-k8s.io/v1alpha1")
	default:
		u.SetAPIVersion("bootstrap.cluster.x-k8s.io/v1beta1")
	}
	u.SetKind(kind)
	u.SetNamespace(ns)
	u.SetName(name)
	g.Expect(env.Client.Create(context.Background(), u)).To(Succeed())
	return u
}

func machineSpec(bootstrap, infra *unstructured.Unstructured) clusterv1.MachineSpec {
	return clusterv1.MachineSpec{
		ClusterName: "c",
		Bootstrap: clusterv1.Bootstrap{ConfigRef: &corev1.ObjectReference{
			APIVersion: bootstrap.GetAPIVersion(), Kind: bootstrap.GetKind(), Name: bootstrap.GetName(), Namespace: bootstrap.GetNamespace()}},
		InfrastructureRef: corev1.ObjectReference{APIVersion: infra.GetAPIVersion(), Kind: infra.GetKind(), Name: infra.GetName(), Namespace: infra.GetNamespace()},
	}
}

func exists(g Gomega, u *unstructured.Unstructured) bool {
	got := &unstructured.Unstructured{}
	got.SetGroupVersionKind(u.GroupVersionKind())
	err := env.Client.Get(context.Background(), client.ObjectKeyFromObject(u), got)
	if apierrors.IsNotFound(err) {
		return false
	}
	g.Expect(err).NotTo(HaveOccurred())
	return true
}

// A topology-owned MachineSet gets the finalizer; when an old MachineSet is deleted after a rotation, the
// templates only it used are deleted and those the MachineDeployment uses are kept; a MachineSet without
// the topology label gets no finalizer.
func TestRotatedTemplatesAreDeleted(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := env.NewNamespace(t)

	mgr, err := ctrl.NewManager(env.Config, ctrl.Options{
		Scheme: env.Scheme, Cache: cache.Options{DefaultNamespaces: map[string]cache.Config{ns: {}}},
		Metrics: metricsserver.Options{BindAddress: "0"}, HealthProbeBindAddress: "0",
		Controller: config.Controller{UsePriorityQueue: ptr.To(true), SkipNameValidation: ptr.To(true)},
	})
	g.Expect(err).NotTo(HaveOccurred())
	mctx, cancel := context.WithCancel(ctx)
	g.Expect((&Reconciler{Client: mgr.GetClient(), APIReader: mgr.GetAPIReader()}).SetupWithManager(mctx, mgr, controller.Options{})).To(Succeed())
	done := make(chan struct{})
	go func() { defer close(done); _ = mgr.Start(mctx) }()
	t.Cleanup(func() { cancel(); <-done })

	oldBootstrap, oldInfra := template(g, ns, "KubeadmConfigTemplate", "md-old"), template(g, ns, "LocalMachineTemplate", "md-old")
	newBootstrap, newInfra := template(g, ns, "KubeadmConfigTemplate", "md-new"), template(g, ns, "LocalMachineTemplate", "md-new")
	labels := map[string]string{clusterv1.ClusterNameLabel: "c", clusterv1.MachineDeploymentNameLabel: "md", clusterv1.ClusterTopologyOwnedLabel: ""}
	md := &clusterv1.MachineDeployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "md", Labels: labels},
		Spec: clusterv1.MachineDeploymentSpec{ClusterName: "c", Selector: metav1.LabelSelector{MatchLabels: labels},
			Template: clusterv1.MachineTemplateSpec{ObjectMeta: clusterv1.ObjectMeta{Labels: labels}, Spec: machineSpec(newBootstrap, newInfra)}},
	}
	g.Expect(env.Client.Create(ctx, md)).To(Succeed())
	ms := func(name string, spec clusterv1.MachineSpec, labels map[string]string) *clusterv1.MachineSet {
		m := &clusterv1.MachineSet{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: labels, OwnerReferences: []metav1.OwnerReference{{
				APIVersion: clusterv1.GroupVersion.String(), Kind: "MachineDeployment", Name: md.Name, UID: md.UID}}},
			Spec: clusterv1.MachineSetSpec{ClusterName: "c", Selector: metav1.LabelSelector{MatchLabels: labels},
				Template: clusterv1.MachineTemplateSpec{ObjectMeta: clusterv1.ObjectMeta{Labels: labels}, Spec: spec}},
		}
		g.Expect(env.Client.Create(ctx, m)).To(Succeed())
		return m
	}
	oldMS := ms("md-old", machineSpec(oldBootstrap, oldInfra), labels)
	newMS := ms("md-new", machineSpec(newBootstrap, newInfra), labels)
	plain := map[string]string{clusterv1.ClusterNameLabel: "c", clusterv1.MachineDeploymentNameLabel: "other"}
	unmanaged := ms("unmanaged", machineSpec(oldBootstrap, oldInfra), plain)

	for _, m := range []*clusterv1.MachineSet{oldMS, newMS} {
		g.Eventually(func(g Gomega) {
			got := &clusterv1.MachineSet{}
			g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(m), got)).To(Succeed())
			g.Expect(got.Finalizers).To(ContainElement(clusterv1.MachineSetTopologyFinalizer))
		}, 30*time.Second, 100*time.Millisecond).Should(Succeed())
	}

	// The MachineSet of another MachineDeployment, not of the topology, gets no finalizer.
	g.Expect(env.Client.Delete(ctx, oldMS)).To(Succeed())
	g.Eventually(func(g Gomega) {
		g.Expect(apierrors.IsNotFound(env.Client.Get(ctx, client.ObjectKeyFromObject(oldMS), &clusterv1.MachineSet{}))).To(BeTrue())
		g.Expect(exists(g, oldBootstrap)).To(BeFalse(), "the old KubeadmConfigTemplate is deleted")
		g.Expect(exists(g, oldInfra)).To(BeFalse(), "the old LocalMachineTemplate is deleted")
	}, 30*time.Second, 100*time.Millisecond).Should(Succeed())
	g.Expect(exists(g, newBootstrap)).To(BeTrue())
	g.Expect(exists(g, newInfra)).To(BeTrue())
	got := &clusterv1.MachineSet{}
	g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(unmanaged), got)).To(Succeed())
	g.Expect(got.Finalizers).NotTo(ContainElement(clusterv1.MachineSetTopologyFinalizer))

	// The templates the MachineDeployment uses are kept when its current MachineSet goes.
	g.Expect(env.Client.Delete(ctx, newMS)).To(Succeed())
	g.Eventually(func() bool {
		return apierrors.IsNotFound(env.Client.Get(ctx, client.ObjectKeyFromObject(newMS), &clusterv1.MachineSet{}))
	}, 30*time.Second, 100*time.Millisecond).Should(BeTrue())
	g.Expect(exists(g, newBootstrap)).To(BeTrue())
	g.Expect(exists(g, newInfra)).To(BeTrue())

	// A MachineSet whose own controller's finalizer is still there (its Machines are not all gone): its
	// templates and the topology finalizer wait for that finalizer to go, so that the two controllers do
	// not remove theirs at the same time.
	heldBootstrap, heldInfra := template(g, ns, "KubeadmConfigTemplate", "md-held"), template(g, ns, "LocalMachineTemplate", "md-held")
	held := ms("md-held", machineSpec(heldBootstrap, heldInfra), labels)
	g.Eventually(func(g Gomega) {
		got := &clusterv1.MachineSet{}
		g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(held), got)).To(Succeed())
		g.Expect(got.Finalizers).To(ContainElement(clusterv1.MachineSetTopologyFinalizer))
		got.Finalizers = append(got.Finalizers, clusterv1.MachineSetFinalizer)
		g.Expect(env.Client.Update(ctx, got)).To(Succeed())
	}, 30*time.Second, 100*time.Millisecond).Should(Succeed())
	g.Expect(env.Client.Delete(ctx, held)).To(Succeed())
	g.Consistently(func(g Gomega) {
		got := &clusterv1.MachineSet{}
		g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(held), got)).To(Succeed())
		g.Expect(got.Finalizers).To(ContainElement(clusterv1.MachineSetTopologyFinalizer))
		g.Expect(exists(g, heldBootstrap)).To(BeTrue())
	}, 2*time.Second, 200*time.Millisecond).Should(Succeed())
	g.Eventually(func(g Gomega) {
		got := &clusterv1.MachineSet{}
		g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(held), got)).To(Succeed())
		controllerutil.RemoveFinalizer(got, clusterv1.MachineSetFinalizer)
		g.Expect(env.Client.Update(ctx, got)).To(Succeed())
	}, 30*time.Second, 100*time.Millisecond).Should(Succeed())
	g.Eventually(func(g Gomega) {
		g.Expect(apierrors.IsNotFound(env.Client.Get(ctx, client.ObjectKeyFromObject(held), &clusterv1.MachineSet{}))).To(BeTrue())
		g.Expect(exists(g, heldBootstrap)).To(BeFalse())
		g.Expect(exists(g, heldInfra)).To(BeFalse())
	}, 30*time.Second, 100*time.Millisecond).Should(Succeed())
}
