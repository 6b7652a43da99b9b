package e2e

import (
	"context"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	bootstrapv1 "github.com/capstan-dev/capstan/api/bootstrap/kubeadm/v1beta1"
	controlplanev1 "github.com/capstan-dev/capstan/api/controlplane/kubeadm/v1beta1"
	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
	hooksv1 "github.com/capstan-dev/capstan/api/runtime/hooks/v1alpha1"
	runtimev1 "github.com/capstan-dev/capstan/api/runtime/v1alpha1"
	"github.com/capstan-dev/capstan/internal/conditions"
	"github.com/capstan-dev/capstan/internal/core"
	"github.com/capstan-dev/capstan/internal/runtime/runtimetest"
	"github.com/capstan-dev/capstan/internal/test/builder"
	"github.com/capstan-dev/capstan/internal/test/envtest"
	"github.com/capstan-dev/capstan/pkg/extension"
	"github.com/capstan-dev/capstan/pkg/extension/sample"
)

const (
	interval     = 250 * time.Millisecond
	pendingHooks = runtimev1.PendingHooksAnnotation
)

// TestTopologyHooks runs the core (core.Setup, Runtime SDK on) against a kube-apiserver with the sample
// Extension and two slow Extensions on loopback: the lifecycle hooks of the topology controller, the
// external patches and variables of a ClusterClass, and failure policies.
func TestTopologyHooks(t *testing.T) {
	if testing.Short() {
		t.Skip("runs kube-apiserver and etcd")
	}
	g := NewWithT(t)
	env, err := envtest.Start(envtest.Options{CRDs: builder.CRDs()})
	g.Expect(err).NotTo(HaveOccurred())
	t.Cleanup(func() { _ = env.Stop() })
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	c := env.Client

	scheme, err := core.NewScheme()
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(bootstrapv1.AddToScheme(scheme)).To(Succeed())
	g.Expect(controlplanev1.AddToScheme(scheme)).To(Succeed())
	mgr, err := ctrl.NewManager(env.Config, ctrl.Options{
		Scheme: scheme, Metrics: metricsserver.Options{BindAddress: "0"}, HealthProbeBindAddress: "0",
		Controller: config.Controller{UsePriorityQueue: ptr.To(true), SkipNameValidation: ptr.To(true)},
	})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(core.Setup(ctx, mgr, core.Options{Concurrency: core.DefaultConcurrency()})).To(Succeed())
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = mgr.Start(ctx)
	}()
	t.Cleanup(func() { cancel(); <-done })

	// The sample Extension, and two Extensions whose BeforeClusterCreate takes longer than its timeout,
	// one with failurePolicy Fail, one with Ignore, each selecting the namespaces of its label.
	ext := runtimetest.Start(t)
	g.Expect(sample.Register(ext.Server)).To(Succeed())
	slow := func(policy hooksv1.FailurePolicy) *runtimetest.Extension {
		e := runtimetest.Start(t)
		g.Expect(extension.AddHandler(e.Server, extension.Handler[*hooksv1.BeforeClusterCreateRequest, *hooksv1.BeforeClusterCreateResponse]{
			Hook: hooksv1.BeforeClusterCreate, Name: "slow-create", TimeoutSeconds: ptr.To[int32](1), FailurePolicy: &policy,
			// It answers after 3 seconds whatever its context says: the Extension server cancels the
			// context at the call's 1-second timeout, and a handler that returned then would answer
			// Success at about the moment the core gives up, which a loaded machine can let through.
			Func: func(context.Context, *hooksv1.BeforeClusterCreateRequest, *hooksv1.BeforeClusterCreateResponse) {
				time.Sleep(3 * time.Second)
			},
		})).To(Succeed())
		return e
	}
	extensionConfig := func(name string, e *runtimetest.Extension, selector map[string]string) {
		ec := &runtimev1.ExtensionConfig{ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec: runtimev1.ExtensionConfigSpec{ClientConfig: runtimev1.ClientConfig{URL: ptr.To(e.URL), CABundle: e.CA}}}
		if selector != nil {
			ec.Spec.NamespaceSelector = &metav1.LabelSelector{MatchLabels: selector}
		}
		g.Expect(c.Create(ctx, ec)).To(Succeed())
	}
	// A fourth Extension counts the calls of the After... upgrade hooks.
	recorder := runtimetest.Start(t)
	var calls sync.Map // hook -> *atomic.Int32
	count := func(hook hooksv1.Hook) *atomic.Int32 {
		n, _ := calls.LoadOrStore(hook, &atomic.Int32{})
		return n.(*atomic.Int32)
	}
	g.Expect(extension.AddHandler(recorder.Server, extension.Handler[*hooksv1.AfterControlPlaneUpgradeRequest, *hooksv1.AfterControlPlaneUpgradeResponse]{
		Hook: hooksv1.AfterControlPlaneUpgrade, Name: "after-cp",
		Func: func(_ context.Context, req *hooksv1.AfterControlPlaneUpgradeRequest, _ *hooksv1.AfterControlPlaneUpgradeResponse) {
			if req.KubernetesVersion == "v1.31.0" {
				count(hooksv1.AfterControlPlaneUpgrade).Add(1)
			}
		},
	})).To(Succeed())
	g.Expect(extension.AddHandler(recorder.Server, extension.Handler[*hooksv1.AfterClusterUpgradeRequest, *hooksv1.AfterClusterUpgradeResponse]{
		Hook: hooksv1.AfterClusterUpgrade, Name: "after-cluster",
		Func: func(_ context.Context, req *hooksv1.AfterClusterUpgradeRequest, _ *hooksv1.AfterClusterUpgradeResponse) {
			if req.KubernetesVersion == "v1.31.0" {
				count(hooksv1.AfterClusterUpgrade).Add(1)
			}
		},
	})).To(Succeed())
	extensionConfig("recorder", recorder, nil)
	extensionConfig("sample", ext, nil)
	extensionConfig("slow-fail", slow(hooksv1.FailurePolicyFail), map[string]string{"hooks": "fail"})
	extensionConfig("slow-ignore", slow(hooksv1.FailurePolicyIgnore), map[string]string{"hooks": "ignore"})
	g.Eventually(func(g Gomega) {
		for _, name := range []string{"sample", "slow-fail", "slow-ignore", "recorder"} {
			ec := &runtimev1.ExtensionConfig{}
			g.Expect(c.Get(ctx, client.ObjectKey{Name: name}, ec)).To(Succeed())
			g.Expect(conditions.IsV1Beta2True(ec, runtimev1.ExtensionConfigDiscoveredV1Beta2Condition)).To(BeTrue(), name)
		}
	}, timeout, interval).Should(Succeed())

	namespace := func(name string, labels map[string]string) string {
		g.Expect(c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}})).To(Succeed())
		classFixture(ctx, g, c, name)
		return name
	}
	ns := namespace("hooks", nil)

	// The class's external patch declares its variable: status.variables lists it from the patch.
	g.Eventually(func(g Gomega) {
		class := &clusterv1.ClusterClass{}
		g.Expect(c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "sample-class"}, class)).To(Succeed())
		g.Expect(class.Status.ObservedGeneration).To(Equal(class.Generation))
		g.Expect(conditions.IsV1Beta2True(class, clusterv1.ClusterClassVariablesReadyV1Beta2Condition)).To(BeTrue())
		g.Expect(class.Status.Variables).To(ContainElement(And(
			HaveField("Name", sample.BannerVariable),
			HaveField("Definitions", ConsistOf(HaveField("From", "sample-patch"))),
		)))
	}, timeout, interval).Should(Succeed())

	// BeforeClusterCreate answers retryAfterSeconds 5 while the Cluster has the hold-create annotation:
	// nothing is created and TopologyReconciled names the hook.
	cluster := &clusterv1.Cluster{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "demo", Annotations: map[string]string{sample.HoldCreateAnnotation: "5"}},
		Spec: clusterv1.ClusterSpec{Topology: &clusterv1.Topology{
			Class: "sample-class", Version: "v1.30.0",
			ControlPlane: clusterv1.ControlPlaneTopology{Replicas: ptr.To[int32](1)},
			Variables:    []clusterv1.ClusterVariable{{Name: sample.BannerVariable, Value: apiextensionsv1.JSON{Raw: []byte(`"hello from the extension"`)}}},
		}},
	}
	g.Expect(c.Create(ctx, cluster)).To(Succeed())
	key := client.ObjectKeyFromObject(cluster)
	blocking := func(g Gomega, reason, message string) {
		got := &clusterv1.Cluster{}
		g.Expect(c.Get(ctx, key, got)).To(Succeed())
		cond := conditions.GetV1Beta2(got, clusterv1.ClusterTopologyReconciledV1Beta2Condition)
		g.Expect(cond).NotTo(BeNil())
		g.Expect(cond.Status).To(Equal(metav1.ConditionFalse))
		g.Expect(cond.Reason).To(Equal(reason))
		g.Expect(cond.Message).To(Equal(message))
		v1 := conditions.Get(got, "TopologyReconciled")
		g.Expect(v1).NotTo(BeNil())
		g.Expect(v1.Reason).To(Equal(reason))
		g.Expect(v1.Message).To(Equal(message))
	}
	g.Eventually(func(g Gomega) {
		blocking(g, "ClusterCreating", "Following hooks are blocking Cluster topology creation: BeforeClusterCreate: Cluster has the "+sample.HoldCreateAnnotation+" annotation")
	}, timeout, interval).Should(Succeed())
	g.Consistently(func(g Gomega) {
		got := &clusterv1.Cluster{}
		g.Expect(c.Get(ctx, key, got)).To(Succeed())
		g.Expect(got.Spec.ControlPlaneRef).To(BeNil())
		g.Expect(got.Spec.InfrastructureRef).To(BeNil())
	}, 3*time.Second, interval).Should(Succeed())
	setAnnotation(ctx, g, c, key, sample.HoldCreateAnnotation, "")

	// Released, the topology is created, with the extension's patch in the control plane.
	cpGVK := schema.GroupVersionKind{Group: controlplanev1.GroupVersion.Group, Version: controlplanev1.GroupVersion.Version, Kind: "KubeadmControlPlane"}
	var cpName string
	g.Eventually(func(g Gomega) {
		got := &clusterv1.Cluster{}
		g.Expect(c.Get(ctx, key, got)).To(Succeed())
		g.Expect(got.Spec.ControlPlaneRef).NotTo(BeNil())
		cpName = got.Spec.ControlPlaneRef.Name
		cp := getU(ctx, g, c, cpGVK, ns, cpName)
		cmds, _, _ := unstructured.NestedStringSlice(cp.Object, "spec", "kubeadmConfigSpec", "preKubeadmCommands")
		g.Expect(cmds).To(Equal([]string{"echo hello from the extension"}))
	}, timeout, interval).Should(Succeed())

	// The control plane runs v1.30.0; an upgrade to v1.31.0 waits while BeforeClusterUpgrade blocks.
	g.Eventually(func(g Gomega) {
		cp := getU(ctx, g, c, cpGVK, ns, cpName)
		_ = unstructured.SetNestedField(cp.Object, "v1.30.0", "status", "version")
		_ = unstructured.SetNestedField(cp.Object, true, "status", "initialized")
		for _, f := range []string{"replicas", "updatedReplicas", "readyReplicas"} {
			_ = unstructured.SetNestedField(cp.Object, int64(1), "status", f)
		}
		g.Expect(c.Status().Update(ctx, cp)).To(Succeed())
	}, timeout, interval).Should(Succeed())
	g.Eventually(func(g Gomega) {
		got := &clusterv1.Cluster{}
		g.Expect(c.Get(ctx, key, got)).To(Succeed())
		if got.Annotations == nil {
			got.Annotations = map[string]string{}
		}
		got.Annotations[sample.HoldUpgradeAnnotation] = "5"
		got.Spec.Topology.Version = "v1.31.0"
		g.Expect(c.Update(ctx, got)).To(Succeed())
	}, timeout, interval).Should(Succeed())
	g.Eventually(func(g Gomega) {
		blocking(g, "ClusterUpgrading", "Cluster is upgrading to v1.31.0\n"+
			"  * Following hooks are blocking upgrade: BeforeClusterUpgrade: Cluster has the "+sample.HoldUpgradeAnnotation+" annotation\n"+
			"  * KubeadmControlPlane pending upgrade to version v1.31.0")
	}, timeout, interval).Should(Succeed())
	g.Consistently(func(g Gomega) {
		cp := getU(ctx, g, c, cpGVK, ns, cpName)
		g.Expect(str(cp.Object, "spec", "version")).To(Equal("v1.30.0"))
	}, 3*time.Second, interval).Should(Succeed())

	// Answering success starts the upgrade; AfterControlPlaneUpgrade and AfterClusterUpgrade are pending.
	setAnnotation(ctx, g, c, key, sample.HoldUpgradeAnnotation, "")
	g.Eventually(func(g Gomega) {
		cp := getU(ctx, g, c, cpGVK, ns, cpName)
		g.Expect(str(cp.Object, "spec", "version")).To(Equal("v1.31.0"))
		got := &clusterv1.Cluster{}
		g.Expect(c.Get(ctx, key, got)).To(Succeed())
		g.Expect(strings.Split(got.Annotations[pendingHooks], ",")).To(ContainElements("AfterClusterUpgrade", "AfterControlPlaneUpgrade"))
	}, timeout, interval).Should(Succeed())
	// Once the control plane runs v1.31.0, both are called, once, and no longer pending.
	g.Eventually(func(g Gomega) {
		cp := getU(ctx, g, c, cpGVK, ns, cpName)
		_ = unstructured.SetNestedField(cp.Object, "v1.31.0", "status", "version")
		g.Expect(c.Status().Update(ctx, cp)).To(Succeed())
	}, timeout, interval).Should(Succeed())
	g.Eventually(func(g Gomega) {
		got := &clusterv1.Cluster{}
		g.Expect(c.Get(ctx, key, got)).To(Succeed())
		g.Expect(got.Annotations).NotTo(HaveKey(pendingHooks))
		cond := conditions.GetV1Beta2(got, clusterv1.ClusterTopologyReconciledV1Beta2Condition)
		g.Expect(cond.Status).To(Equal(metav1.ConditionTrue), "%+v", cond)
	}, timeout, interval).Should(Succeed())
	setAnnotation(ctx, g, c, key, "poke", "1")
	g.Consistently(func(g Gomega) {
		g.Expect(count(hooksv1.AfterControlPlaneUpgrade).Load()).To(Equal(int32(1)))
		g.Expect(count(hooksv1.AfterClusterUpgrade).Load()).To(Equal(int32(1)))
	}, 3*time.Second, interval).Should(Succeed())

	// A chained upgrade planned by the sample's GenerateUpgradePlan: v1.31.0 to v1.33.2 through v1.32.0,
	// with the second step held by BeforeControlPlaneUpgrade while the Cluster has the sample's annotation.
	g.Eventually(func(g Gomega) {
		class := &clusterv1.ClusterClass{}
		g.Expect(c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "sample-class"}, class)).To(Succeed())
		class.Spec.Upgrade.External.GenerateUpgradePlanExtension = "generate-upgrade-plan.sample"
		g.Expect(c.Update(ctx, class)).To(Succeed())
	}, timeout, interval).Should(Succeed())
	g.Eventually(func(g Gomega) {
		class := &clusterv1.ClusterClass{}
		g.Expect(c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "sample-class"}, class)).To(Succeed())
		g.Expect(class.Status.ObservedGeneration).To(Equal(class.Generation))
	}, timeout, interval).Should(Succeed())
	controlPlaneRuns := func(version string) {
		g.Eventually(func(g Gomega) {
			cp := getU(ctx, g, c, cpGVK, ns, cpName)
			g.Expect(str(cp.Object, "spec", "version")).To(Equal(version))
			_ = unstructured.SetNestedField(cp.Object, version, "status", "version")
			g.Expect(c.Status().Update(ctx, cp)).To(Succeed())
		}, timeout, interval).Should(Succeed())
	}
	g.Eventually(func(g Gomega) {
		got := &clusterv1.Cluster{}
		g.Expect(c.Get(ctx, key, got)).To(Succeed())
		got.Annotations[sample.HoldControlPlaneUpgradeAnnotation] = "2"
		got.Spec.Topology.Version = "v1.33.2"
		g.Expect(c.Update(ctx, got)).To(Succeed())
	}, timeout, interval).Should(Succeed())
	// The first step is held too: the hold is on every step while the annotation is there.
	g.Eventually(func(g Gomega) {
		blocking(g, "ClusterUpgrading", "Cluster is upgrading to v1.33.2\n"+
			"  * Following hooks are blocking upgrade: BeforeControlPlaneUpgrade: Cluster has the "+sample.HoldControlPlaneUpgradeAnnotation+" annotation\n"+
			"  * KubeadmControlPlane pending upgrade to version v1.32.0, v1.33.2")
		got := &clusterv1.Cluster{}
		g.Expect(c.Get(ctx, key, got)).To(Succeed())
		g.Expect(got.Status.V1Beta2.ControlPlane.UpgradePlan).To(Equal([]clusterv1.StatusUpgradePlanVersion{{Version: "v1.32.0"}, {Version: "v1.33.2"}}))
	}, timeout, interval).Should(Succeed())
	g.Expect(str(getU(ctx, g, c, cpGVK, ns, cpName).Object, "spec", "version")).To(Equal("v1.31.0"))
	setAnnotation(ctx, g, c, key, sample.HoldControlPlaneUpgradeAnnotation, "")
	controlPlaneRuns("v1.32.0")
	controlPlaneRuns("v1.33.2")
	g.Eventually(func(g Gomega) {
		got := &clusterv1.Cluster{}
		g.Expect(c.Get(ctx, key, got)).To(Succeed())
		g.Expect(got.Annotations).NotTo(HaveKey(pendingHooks))
		g.Expect(got.Status.V1Beta2.ControlPlane.UpgradePlan).To(BeEmpty())
		cond := conditions.GetV1Beta2(got, clusterv1.ClusterTopologyReconciledV1Beta2Condition)
		g.Expect(cond.Status).To(Equal(metav1.ConditionTrue), "%+v", cond)
	}, timeout, interval).Should(Succeed())

	// failurePolicy: with Fail, a handler that does not answer in time keeps the Cluster from being created
	// and its condition names the handler; with Ignore, the Cluster is created without it.
	for _, policy := range []string{"fail", "ignore"} {
		pns := namespace("hooks-"+policy, map[string]string{"hooks": policy})
		g.Expect(c.Create(ctx, &clusterv1.Cluster{ObjectMeta: metav1.ObjectMeta{Namespace: pns, Name: "demo"},
			Spec: clusterv1.ClusterSpec{Topology: &clusterv1.Topology{Class: "sample-class", Version: "v1.30.0"}}})).To(Succeed())
	}
	g.Eventually(func(g Gomega) {
		got := &clusterv1.Cluster{}
		g.Expect(c.Get(ctx, client.ObjectKey{Namespace: "hooks-ignore", Name: "demo"}, got)).To(Succeed())
		g.Expect(got.Spec.ControlPlaneRef).NotTo(BeNil())
	}, timeout, interval).Should(Succeed())
	g.Eventually(func(g Gomega) {
		got := &clusterv1.Cluster{}
		g.Expect(c.Get(ctx, client.ObjectKey{Namespace: "hooks-fail", Name: "demo"}, got)).To(Succeed())
		g.Expect(got.Spec.ControlPlaneRef).To(BeNil())
		cond := conditions.GetV1Beta2(got, clusterv1.ClusterTopologyReconciledV1Beta2Condition)
		g.Expect(cond).NotTo(BeNil())
		g.Expect(cond.Reason).To(Equal("ReconcileFailed"))
		g.Expect(cond.Message).To(ContainSubstring(`BeforeClusterCreate handler "slow-create.slow-fail" of ExtensionConfig slow-fail failed`))
	}, timeout, interval).Should(Succeed())
}

// classFixture creates, in namespace, a ClusterClass "sample-class" with the kubeadm control plane
// template and an external patch served by the sample Extension.
func classFixture(ctx context.Context, g Gomega, c client.Client, namespace string) {
	p := builder.V1Beta1
	infra := p.Object(p.Infrastructure, builder.InfraClusterTemplateKind, namespace, "infra")
	_ = unstructured.SetNestedMap(infra.Object, map[string]any{"spec": map[string]any{}}, "spec", "template")
	cpMachine := p.InfraMachineTemplate(namespace, "cp-machine")
	cp := &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{"template": map[string]any{"spec": map[string]any{
		"kubeadmConfigSpec": map[string]any{},
	}}}}}
	cp.SetGroupVersionKind(controlplanev1.GroupVersion.WithKind("KubeadmControlPlaneTemplate"))
	cp.SetNamespace(namespace)
	cp.SetName("cp")
	for _, o := range []*unstructured.Unstructured{infra, cpMachine, cp} {
		g.Expect(c.Create(ctx, o)).To(Succeed())
	}
	g.Expect(c.Create(ctx, &clusterv1.ClusterClass{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: "sample-class"},
		Spec: clusterv1.ClusterClassSpec{
			Infrastructure: clusterv1.LocalObjectTemplate{Ref: builder.Ref(infra)},
			ControlPlane: clusterv1.ControlPlaneClass{
				LocalObjectTemplate:   clusterv1.LocalObjectTemplate{Ref: builder.Ref(cp)},
				MachineInfrastructure: &clusterv1.LocalObjectTemplate{Ref: builder.Ref(cpMachine)},
			},
			Patches: []clusterv1.ClusterClassPatch{{
				Name: "sample-patch",
				External: &clusterv1.ExternalPatchDefinition{
					GenerateExtension:          ptr.To("generate-patches.sample"),
					DiscoverVariablesExtension: ptr.To("discover-variables.sample"),
				},
			}},
		},
	})).To(Succeed())
}

func setAnnotation(ctx context.Context, g Gomega, c client.Client, key client.ObjectKey, name, value string) {
	g.Eventually(func(g Gomega) {
		got := &clusterv1.Cluster{}
		g.Expect(c.Get(ctx, key, got)).To(Succeed())
		if got.Annotations == nil {
			got.Annotations = map[string]string{}
		}
		if value == "" {
			delete(got.Annotations, name)
		} else {
			got.Annotations[name] = value
		}
		g.Expect(c.Update(ctx, got)).To(Succeed())
	}, timeout, interval).Should(Succeed())
}

func getU(ctx context.Context, g Gomega, c client.Client, gvk schema.GroupVersionKind, namespace, name string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(gvk)
	g.Expect(c.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, u)).To(Succeed())
	return u
}

func str(obj map[string]any, path ...string) string {
	v, _, _ := unstructured.NestedString(obj, path...)
	return v
}
