package kubeadmcontrolplane_test

import (
	"context"
	"crypto/x509"
	"slices"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	bootstrapv1 "github.com/capstan-dev/capstan/api/bootstrap/kubeadm/v1beta1"
	controlplanev1 "github.com/capstan-dev/capstan/api/controlplane/kubeadm/v1beta1"
	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
	"github.com/capstan-dev/capstan/internal/clustersecret"
	"github.com/capstan-dev/capstan/internal/conditions"
	"github.com/capstan-dev/capstan/internal/kubeconfig"
	"github.com/capstan-dev/capstan/internal/pki"
	"github.com/capstan-dev/capstan/internal/providers/kubeadm/certs"
	"github.com/capstan-dev/capstan/internal/test/builder"
	"github.com/capstan-dev/capstan/internal/test/envtest"
)

const (
	timeout  = 90 * time.Second
	interval = 200 * time.Millisecond
)

// newControlPlane creates a Cluster of the test provider with failure domains fds and a KubeadmControlPlane
// of replicas Machines with an external etcd (the test API server has no etcd members to reach). The
// Cluster's kubeconfig is the user's (an Opaque Secret the provider leaves alone), pointing at the workload
// API server; its CA is the user's too, which the provider adopts.
func newControlPlane(ctx context.Context, g Gomega, ns, name string, replicas int32, fds ...string) (*clusterv1.Cluster, *controlplanev1.KubeadmControlPlane) {
	key := client.ObjectKey{Namespace: ns, Name: name}
	// The tests share the workload API server: the control plane Nodes of an earlier test would count as
	// this control plane's (status.readyReplicas counts the Ready control plane Nodes).
	g.Expect(workloadClient.DeleteAllOf(ctx, &corev1.Node{})).To(Succeed())
	kc, err := envtest.Kubeconfig(workloadEnv.Config, name)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(env.Client.Create(ctx, &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: clustersecret.Name(name, clustersecret.Kubeconfig), Labels: map[string]string{clusterv1.ClusterNameLabel: name}},
		Type:       corev1.SecretTypeOpaque, Data: map[string][]byte{"value": kc},
	})).To(Succeed())
	ca, err := kubeconfig.NewCASecret(key, nil, time.Now())
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(env.Client.Create(ctx, ca)).To(Succeed())
	etcdCA, err := pki.NewCA("etcd-ca")
	g.Expect(err).NotTo(HaveOccurred())
	etcdClient, err := etcdCA.Sign(pki.CertConfig{CommonName: "kube-apiserver-etcd-client", Usages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(env.Client.Create(ctx, (&certs.Certificate{Purpose: clustersecret.EtcdCA, Cert: etcdCA.CertPEM()}).Secret(key, nil))).To(Succeed())
	g.Expect(env.Client.Create(ctx, (&certs.Certificate{Purpose: clustersecret.APIServerEtcdClient, Cert: etcdClient.CertPEM(), Key: etcdClient.KeyPEM()}).Secret(key, nil))).To(Succeed())

	p := builder.V1Beta1
	infra := p.InfraCluster(ns, name)
	g.Expect(env.Client.Create(ctx, infra)).To(Succeed())
	if len(fds) > 0 {
		domains := map[string]any{}
		for _, fd := range fds {
			domains[fd] = map[string]any{"controlPlane": true}
		}
		before := infra.DeepCopy()
		g.Expect(unstructured.SetNestedField(infra.Object, domains, "status", "failureDomains")).To(Succeed())
		g.Expect(env.Client.Status().Patch(ctx, infra, client.MergeFrom(before))).To(Succeed())
	}
	tpl := p.InfraMachineTemplate(ns, name+"-cp")
	g.Expect(env.Client.Create(ctx, tpl)).To(Succeed())

	kcp := &controlplanev1.KubeadmControlPlane{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name + "-cp"},
		Spec: controlplanev1.KubeadmControlPlaneSpec{
			Replicas: ptr.To(replicas),
			Version:  "v1.36.0",
			MachineTemplate: controlplanev1.KubeadmControlPlaneMachineTemplate{
				ObjectMeta:        clusterv1.ObjectMeta{Labels: map[string]string{"tier": "cp"}},
				InfrastructureRef: *builder.Ref(tpl),
			},
			KubeadmConfigSpec: bootstrapv1.KubeadmConfigSpec{
				ClusterConfiguration: &bootstrapv1.ClusterConfiguration{Etcd: bootstrapv1.Etcd{External: &bootstrapv1.ExternalEtcd{
					Endpoints: []string{"https://127.0.0.1:2379"}, CAFile: "/etc/kubernetes/pki/etcd/ca.crt",
					CertFile: "/etc/kubernetes/pki/apiserver-etcd-client.crt", KeyFile: "/etc/kubernetes/pki/apiserver-etcd-client.key",
				}}},
				InitConfiguration: &bootstrapv1.InitConfiguration{},
				JoinConfiguration: &bootstrapv1.JoinConfiguration{},
			},
		},
	}
	g.Expect(env.Client.Create(ctx, kcp)).To(Succeed())
	cluster := builder.Cluster(ns, name, infra, nil)
	cluster.Spec.ControlPlaneRef = &corev1.ObjectReference{APIVersion: controlplanev1.GroupVersion.String(), Kind: "KubeadmControlPlane", Name: kcp.Name, Namespace: ns}
	g.Expect(env.Client.Create(ctx, cluster)).To(Succeed())
	return cluster, kcp
}

func getKCP(ctx context.Context, g Gomega, kcp *controlplanev1.KubeadmControlPlane) *controlplanev1.KubeadmControlPlane {
	out := &controlplanev1.KubeadmControlPlane{}
	g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(kcp), out)).To(Succeed())
	return out
}

func controlPlaneMachines(ctx context.Context, g Gomega, ns, cluster string) []clusterv1.Machine {
	list := &clusterv1.MachineList{}
	g.Expect(env.Client.List(ctx, list, client.InNamespace(ns), client.MatchingLabels{clusterv1.ClusterNameLabel: cluster}, client.HasLabels{clusterv1.MachineControlPlaneLabel})).To(Succeed())
	return list.Items
}

// readyKCP waits until the KubeadmControlPlane has replicas Machines, all ready and up to date, and says
// in status.observedGeneration that this is the state of its current spec (as upstream's, which tools such
// as kubectl wait and clusterctl rely on).
func readyKCP(ctx context.Context, g Gomega, kcp *controlplanev1.KubeadmControlPlane, replicas int32, version string) {
	g.Eventually(func(g Gomega) {
		got := getKCP(ctx, g, kcp)
		g.Expect(got.Status.ObservedGeneration).To(Equal(got.Generation), "status.observedGeneration")
		g.Expect(got.Status.Replicas).To(Equal(replicas))
		g.Expect(got.Status.ReadyReplicas).To(Equal(replicas))
		g.Expect(got.Status.UpdatedReplicas).To(Equal(replicas))
		g.Expect(got.Status.Version).To(Equal(ptr.To(version)))
		// status.versions counts every Machine by the version it runs: the kubelet's once its Node is known,
		// and the test provider's Nodes all report a v1.31.0 kubelet (the unit tests check the rest).
		g.Expect(got.Status.Versions).To(Equal([]clusterv1.StatusVersion{{Version: "v1.31.0", Replicas: replicas}}))
		g.Expect(conditions.IsV1Beta2True(got, controlplanev1.KubeadmControlPlaneAvailableV1Beta2Condition)).To(BeTrue(), "%v", got.Status.V1Beta2)
		g.Expect(conditions.IsTrue(got, controlplanev1.ControlPlaneComponentsHealthyCondition)).To(BeTrue())
	}, timeout, interval).Should(Succeed())
}

func TestControlPlaneLifecycle(t *testing.T) {
	g := NewWithT(t)
	ctx := t.Context()
	ns := env.NewNamespace(t)
	cluster, kcp := newControlPlane(ctx, g, ns, "lifecycle", 1, "fd-a", "fd-b", "fd-c")

	// One Machine first, with the init configuration; the cluster certificates exist, the user's CA is
	// adopted, and the control plane becomes initialized and available.
	readyKCP(ctx, g, kcp, 1, "v1.36.0")
	machines := controlPlaneMachines(ctx, g, ns, cluster.Name)
	g.Expect(machines).To(HaveLen(1))
	first := machines[0]
	g.Expect(first.Labels).To(HaveKeyWithValue("tier", "cp"))
	g.Expect(first.Labels).To(HaveKeyWithValue(clusterv1.MachineControlPlaneNameLabel, kcp.Name))
	g.Expect(first.Annotations).To(HaveKey(controlplanev1.PreTerminateHookCleanupAnnotation))
	g.Expect(first.Finalizers).To(ContainElement(clusterv1.MachineFinalizer),
		"created with the core's finalizer (no core Machine controller runs here), which saves the core a write")
	g.Expect(first.Spec.Version).To(Equal(ptr.To("v1.36.0")))
	g.Expect(first.Spec.FailureDomain).To(Equal(ptr.To("fd-a")))
	cfg := &bootstrapv1.KubeadmConfig{}
	g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: first.Spec.Bootstrap.ConfigRef.Name}, cfg)).To(Succeed())
	g.Expect(cfg.Spec.InitConfiguration).NotTo(BeNil())
	g.Expect(cfg.Spec.JoinConfiguration).To(BeNil())
	infra := &unstructured.Unstructured{}
	infra.SetAPIVersion(first.Spec.InfrastructureRef.APIVersion)
	infra.SetKind(first.Spec.InfrastructureRef.Kind)
	g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: first.Spec.InfrastructureRef.Name}, infra)).To(Succeed())
	g.Expect(infra.GetAnnotations()).To(HaveKeyWithValue(clusterv1.TemplateClonedFromNameAnnotation, kcp.Spec.MachineTemplate.InfrastructureRef.Name))
	for _, p := range []clustersecret.Purpose{clustersecret.ClusterCA, clustersecret.FrontProxyCA, clustersecret.ServiceAccount} {
		s := &corev1.Secret{}
		g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: clustersecret.Name(cluster.Name, p)}, s)).To(Succeed())
		g.Expect(metav1.GetControllerOf(s)).NotTo(BeNil(), "Secret %s", s.Name)
		g.Expect(metav1.GetControllerOf(s).Kind).To(Equal("KubeadmControlPlane"))
	}
	userKubeconfig := &corev1.Secret{}
	g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: clustersecret.Name(cluster.Name, clustersecret.Kubeconfig)}, userKubeconfig)).To(Succeed())
	g.Expect(userKubeconfig.OwnerReferences).To(BeEmpty(), "an Opaque kubeconfig is the user's, left alone")
	g.Eventually(func(g Gomega) {
		c := &clusterv1.Cluster{}
		g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(cluster), c)).To(Succeed())
		g.Expect(c.Status.ControlPlaneReady).To(BeTrue())
	}, timeout, interval).Should(Succeed())

	// Scale to 3: one Machine at a time, each joining, spread across the failure domains.
	patchKCP(ctx, g, kcp, func(k *controlplanev1.KubeadmControlPlane) { k.Spec.Replicas = ptr.To[int32](3) })
	maxMachines := watchMachineCount(ctx, t, ns, cluster.Name)
	readyKCP(ctx, g, kcp, 3, "v1.36.0")
	machines = controlPlaneMachines(ctx, g, ns, cluster.Name)
	var domains []string
	for _, m := range machines {
		domains = append(domains, ptr.Deref(m.Spec.FailureDomain, ""))
		if m.Name == first.Name {
			continue
		}
		cfg := &bootstrapv1.KubeadmConfig{}
		g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: m.Spec.Bootstrap.ConfigRef.Name}, cfg)).To(Succeed())
		g.Expect(cfg.Spec.InitConfiguration).To(BeNil())
		g.Expect(cfg.Spec.JoinConfiguration).NotTo(BeNil())
	}
	slices.Sort(domains)
	g.Expect(domains).To(Equal([]string{"fd-a", "fd-b", "fd-c"}))
	g.Expect(maxMachines()).To(Equal(3))

	// A rolling upgrade with maxSurge 1: one extra Machine at most, every Machine replaced.
	patchKCP(ctx, g, kcp, func(k *controlplanev1.KubeadmControlPlane) { k.Spec.Version = "v1.37.0" })
	maxMachines = watchMachineCount(ctx, t, ns, cluster.Name)
	readyKCP(ctx, g, kcp, 3, "v1.37.0")
	for _, m := range controlPlaneMachines(ctx, g, ns, cluster.Name) {
		g.Expect(m.Spec.Version).To(Equal(ptr.To("v1.37.0")))
		for _, old := range machines {
			g.Expect(m.Name).NotTo(Equal(old.Name))
		}
	}
	g.Expect(maxMachines()).To(Equal(4))
	events := &corev1.EventList{}
	g.Expect(env.Client.List(ctx, events, client.InNamespace(ns))).To(Succeed())
	var reasons []string
	for _, e := range events.Items {
		reasons = append(reasons, e.Reason)
	}
	g.Expect(reasons).To(ContainElements("SuccessfulScaleUp", "SuccessfulScaleDown"))

	// Scale down to 1: the Machines go one at a time.
	patchKCP(ctx, g, kcp, func(k *controlplanev1.KubeadmControlPlane) { k.Spec.Replicas = ptr.To[int32](1) })
	readyKCP(ctx, g, kcp, 1, "v1.37.0")

	// The machine template's taints reach the Machines in place, without a rollout.
	before := controlPlaneMachines(ctx, g, ns, cluster.Name)
	taints := []clusterv1.MachineTaint{{Key: "example.com/cp", Effect: corev1.TaintEffectNoSchedule, Propagation: clusterv1.MachineTaintPropagationAlways}}
	patchKCP(ctx, g, kcp, func(k *controlplanev1.KubeadmControlPlane) { k.Spec.MachineTemplate.Taints = taints })
	g.Eventually(func(g Gomega) {
		for _, m := range controlPlaneMachines(ctx, g, ns, cluster.Name) {
			g.Expect(m.Spec.Taints).To(Equal(taints))
		}
	}, timeout, interval).Should(Succeed())
	g.Expect(controlPlaneMachines(ctx, g, ns, cluster.Name)).To(HaveLen(1))
	g.Expect(controlPlaneMachines(ctx, g, ns, cluster.Name)[0].Name).To(Equal(before[0].Name), "no Machine is replaced")

	// Deleting the KubeadmControlPlane deletes its Machines.
	g.Expect(env.Client.Delete(ctx, getKCP(ctx, g, kcp))).To(Succeed())
	g.Eventually(func(g Gomega) {
		g.Expect(controlPlaneMachines(ctx, g, ns, cluster.Name)).To(BeEmpty())
	}, timeout, interval).Should(Succeed())
}

func patchKCP(ctx context.Context, g Gomega, kcp *controlplanev1.KubeadmControlPlane, change func(*controlplanev1.KubeadmControlPlane)) {
	g.Eventually(func() error {
		got := &controlplanev1.KubeadmControlPlane{}
		if err := env.Client.Get(ctx, client.ObjectKeyFromObject(kcp), got); err != nil {
			return err
		}
		before := got.DeepCopy()
		change(got)
		return env.Client.Patch(ctx, got, client.MergeFromWithOptions(before, client.MergeFromWithOptimisticLock{}))
	}, timeout, interval).Should(Succeed())
}

// watchMachineCount samples the number of control plane Machines until the returned function is called,
// which returns the largest count seen.
func watchMachineCount(ctx context.Context, t *testing.T, ns, cluster string) func() int {
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan int)
	go func() {
		most := 0
		ticker := time.NewTicker(50 * time.Millisecond)
		defer ticker.Stop()
		for {
			list := &clusterv1.MachineList{}
			if err := env.Client.List(ctx, list, client.InNamespace(ns), client.MatchingLabels{clusterv1.ClusterNameLabel: cluster}); err == nil {
				most = max(most, len(list.Items))
			}
			select {
			case <-ctx.Done():
				done <- most
				return
			case <-ticker.C:
			}
		}
	}()
	t.Cleanup(cancel)
	return func() int { cancel(); return <-done }
}
