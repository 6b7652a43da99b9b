package localcluster

import (
	"context"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
	infrav1 "github.com/capstan-dev/capstan/api/infrastructure/local/v1alpha1"
	"github.com/capstan-dev/capstan/internal/clustersecret"
	"github.com/capstan-dev/capstan/internal/conditions"
	"github.com/capstan-dev/capstan/internal/providers/local/backend"
	"github.com/capstan-dev/capstan/internal/test/procs"
	"github.com/capstan-dev/capstan/internal/test/workload"
)

// createCluster creates a Cluster whose infrastructure is the LocalCluster of the same name, and that
// LocalCluster, owned by the Cluster when owned is true (as the core's Cluster controller would do).
func createCluster(t *testing.T, ns, name string, owned bool, mutate func(*clusterv1.Cluster, *infrav1.LocalCluster)) (*clusterv1.Cluster, *infrav1.LocalCluster) {
	t.Helper()
	ctx := context.Background()
	cluster := &clusterv1.Cluster{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: clusterv1.ClusterSpec{InfrastructureRef: &corev1.ObjectReference{
			APIVersion: infrav1.GroupVersion.String(), Kind: "LocalCluster", Name: name,
		}},
	}
	lc := &infrav1.LocalCluster{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: map[string]string{clusterv1.ClusterNameLabel: name}}}
	if mutate != nil {
		mutate(cluster, lc)
	}
	if err := env.Client.Create(ctx, cluster); err != nil {
		t.Fatal(err)
	}
	if owned {
		lc.OwnerReferences = []metav1.OwnerReference{{APIVersion: clusterv1.GroupVersion.String(), Kind: "Cluster", Name: cluster.Name, UID: cluster.UID}}
	}
	if err := env.Client.Create(ctx, lc); err != nil {
		t.Fatal(err)
	}
	return cluster, lc
}

func get(g Gomega, obj client.Object) {
	g.Expect(env.Client.Get(context.Background(), client.ObjectKeyFromObject(obj), obj)).To(Succeed())
}

// workloadClient builds the workload cluster's client the way the core writes `<cluster>-kubeconfig`:
// from the `<cluster>-ca` Secret, with an admin client certificate.
func workloadClient(g Gomega, ns, clusterName string, endpoint clusterv1.APIEndpoint) kubernetes.Interface {
	cfg, err := workload.FromCA(context.Background(), env.Client, ns, clusterName, endpoint)
	g.Expect(err).NotTo(HaveOccurred())
	return kubernetes.NewForConfigOrDie(cfg)
}

// pidOf reads the pid file of one of the processes of the control plane machine of startControlPlane.
func pidOf(g Gomega, dir, name string) int {
	pid, err := procs.ReadPidFile(filepath.Join(dir, "machines", "cp-0", name+".pid"))
	g.Expect(err).NotTo(HaveOccurred())
	return pid
}

// createMachine creates the Machine name of the LocalCluster's Cluster (the LocalCluster deletes the machines
// of Machines that are gone).
func createMachine(g Gomega, lc *infrav1.LocalCluster, name string) *clusterv1.Machine {
	clusterName := lc.Labels[clusterv1.ClusterNameLabel]
	m := &clusterv1.Machine{
		ObjectMeta: metav1.ObjectMeta{Namespace: lc.Namespace, Name: name, Labels: map[string]string{clusterv1.ClusterNameLabel: clusterName}},
		Spec: clusterv1.MachineSpec{ClusterName: clusterName, Bootstrap: clusterv1.Bootstrap{DataSecretName: ptr.To(name)},
			InfrastructureRef: corev1.ObjectReference{APIVersion: infrav1.GroupVersion.String(), Kind: "LocalMachine", Name: name}},
	}
	if err := env.Client.Create(context.Background(), m); !apierrors.IsAlreadyExists(err) {
		g.Expect(err).NotTo(HaveOccurred())
	}
	return m
}

// startControlPlane runs a control plane machine cp-0 in the LocalCluster's cluster, as the LocalMachine
// controller does for a control plane Machine, until its Node is registered.
func startControlPlane(g Gomega, p *provider, lc *infrav1.LocalCluster) {
	key := client.ObjectKeyFromObject(lc)
	createMachine(g, lc, "cp-0")
	g.Eventually(func(g Gomega) {
		st, err := p.backend.EnsureMachine(context.Background(), key, backend.Machine{
			Name: "cp-0", NodeName: "cp-0", ProviderID: "local://" + key.Namespace + "/" + key.Name + "/cp-0",
			Version: "v1.37.1", DefaultTaints: true, ControlPlane: &backend.ControlPlane{},
		})
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(st.NodeRegistered).To(BeTrue(), "%s: %s", st.Reason, st.Message)
	}, 90*time.Second, 200*time.Millisecond).Should(Succeed())
}

func TestLocalClusterLifecycle(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := env.NewNamespace(t)
	p := startProvider(t, t.TempDir())
	_, lc := createCluster(t, ns, "c1", true, func(_ *clusterv1.Cluster, lc *infrav1.LocalCluster) {
		lc.Spec.FailureDomains = clusterv1.FailureDomains{"fd1": {ControlPlane: true}, "fd2": {Attributes: map[string]string{"rack": "2"}}}
	})

	t.Log("the LocalCluster is provisioned: endpoint, ready, failure domains, conditions")
	g.Eventually(func(g Gomega) {
		get(g, lc)
		g.Expect(lc.Status.Ready).To(BeTrue())
	}, 60*time.Second, 200*time.Millisecond).Should(Succeed())
	g.Expect(lc.Finalizers).To(ContainElement(infrav1.LocalClusterFinalizer))
	g.Expect(lc.Spec.ControlPlaneEndpoint.Host).To(Equal("127.0.0.1"))
	g.Expect(lc.Spec.ControlPlaneEndpoint.Port).NotTo(BeZero())
	g.Expect(lc.Status.Initialization).To(Equal(&infrav1.LocalClusterInitializationStatus{Provisioned: ptr.To(true)}))
	g.Expect(lc.Status.FailureDomains).To(Equal(lc.Spec.FailureDomains))
	g.Expect(conditions.IsTrue(lc, clusterv1.ReadyCondition)).To(BeTrue())
	g.Expect(conditions.IsTrue(lc, infrav1.ProcessesRunningCondition)).To(BeTrue())
	g.Expect(conditions.IsV1Beta2True(lc, string(clusterv1.ReadyCondition))).To(BeTrue())
	g.Expect(conditions.GetV1Beta2(lc, clusterv1.PausedV1Beta2Condition)).To(HaveField("Status", metav1.ConditionFalse))
	g.Expect(lc.Status.FailureReason).To(BeNil())

	t.Log("the certificate Secrets were created, owned by the LocalCluster, and the API servers trust them")
	for _, purpose := range []string{"ca", "etcd", "proxy", "sa"} {
		secret := &corev1.Secret{}
		g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "c1-" + purpose}, secret)).To(Succeed())
		g.Expect(secret.Labels).To(HaveKeyWithValue(clusterv1.ClusterNameLabel, "c1"))
		g.Expect(secret.OwnerReferences).To(ContainElement(HaveField("Name", "c1")))
		g.Expect(secret.Type).To(Equal(clustersecret.Type))
		g.Expect(secret.Data).To(HaveKey("tls.crt"))
		g.Expect(secret.Data).To(HaveKey("tls.key"))
	}
	startControlPlane(g, p, lc)
	wc := workloadClient(g, ns, "c1", lc.Spec.ControlPlaneEndpoint)
	_, err := wc.CoreV1().Namespaces().Get(ctx, "default", metav1.GetOptions{})
	g.Expect(err).NotTo(HaveOccurred())
	dir := p.backend.ClusterDir(types.NamespacedName{Namespace: ns, Name: "c1"})

	t.Log("deleting the LocalCluster stops its processes and removes its data before the finalizer goes")
	etcdPid, apiPid := pidOf(g, dir, "etcd"), pidOf(g, dir, "kube-apiserver")
	g.Expect(env.Client.Delete(ctx, lc)).To(Succeed())
	g.Eventually(func() bool {
		return apierrors.IsNotFound(env.Client.Get(ctx, client.ObjectKeyFromObject(lc), lc))
	}, 30*time.Second, 100*time.Millisecond).Should(BeTrue())
	g.Expect(procs.Alive(etcdPid)).To(BeFalse())
	g.Expect(procs.Alive(apiPid)).To(BeFalse())
	g.Expect(dir).NotTo(BeAnExistingFile())
}

func TestLocalClusterSurvivesProviderRestart(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := env.NewNamespace(t)
	dataDir := t.TempDir()
	p := startProvider(t, dataDir)
	_, lc := createCluster(t, ns, "c1", true, nil)
	g.Eventually(func(g Gomega) {
		get(g, lc)
		g.Expect(conditions.IsTrue(lc, clusterv1.ReadyCondition)).To(BeTrue())
	}, 60*time.Second, 200*time.Millisecond).Should(Succeed())
	endpoint := lc.Spec.ControlPlaneEndpoint
	startControlPlane(g, p, lc)
	wc := workloadClient(g, ns, "c1", endpoint)
	_, err := wc.CoreV1().ConfigMaps("default").Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "kept"}}, metav1.CreateOptions{})
	g.Expect(err).NotTo(HaveOccurred())

	t.Log("stopping the provider stops the processes")
	dir := p.backend.ClusterDir(client.ObjectKeyFromObject(lc))
	apiPid := pidOf(g, dir, "kube-apiserver")
	p.stop()
	g.Expect(procs.Alive(apiPid)).To(BeFalse())

	t.Log("a new provider starts the cluster again from its data, on the same port")
	p = startProvider(t, dataDir)
	g.Eventually(func(g Gomega) {
		get(g, lc)
		g.Expect(conditions.IsTrue(lc, clusterv1.ReadyCondition)).To(BeTrue())
	}, 60*time.Second, 200*time.Millisecond).Should(Succeed())
	startControlPlane(g, p, lc)
	g.Eventually(func(g Gomega) {
		_, err := wc.CoreV1().ConfigMaps("default").Get(ctx, "kept", metav1.GetOptions{})
		g.Expect(err).NotTo(HaveOccurred())
	}, 60*time.Second, 200*time.Millisecond).Should(Succeed())
	get(g, lc)
	g.Expect(lc.Spec.ControlPlaneEndpoint).To(Equal(endpoint))
	g.Expect(env.Client.Delete(ctx, lc)).To(Succeed())
	g.Eventually(func() bool {
		return apierrors.IsNotFound(env.Client.Get(ctx, client.ObjectKeyFromObject(lc), lc))
	}, 30*time.Second, 100*time.Millisecond).Should(BeTrue())
}

func TestLocalClusterIsLeftAlone(t *testing.T) {
	ns := env.NewNamespace(t)
	startProvider(t, t.TempDir())
	tests := []struct {
		name   string
		owned  bool
		mutate func(*clusterv1.Cluster, *infrav1.LocalCluster)
		// paused: the Paused condition is set to True, nothing else.
		paused bool
	}{
		{name: "without a Cluster owner", owned: false},
		{name: "externally managed (label)", owned: true, mutate: func(_ *clusterv1.Cluster, lc *infrav1.LocalCluster) {
			lc.Labels[clusterv1.ManagedByAnnotation] = "someone-else"
		}},
		{name: "externally managed (annotation)", owned: true, mutate: func(_ *clusterv1.Cluster, lc *infrav1.LocalCluster) {
			lc.Annotations = map[string]string{clusterv1.ManagedByAnnotation: "someone-else"}
		}},
		{name: "paused Cluster", owned: true, paused: true, mutate: func(c *clusterv1.Cluster, _ *infrav1.LocalCluster) {
			c.Spec.Paused = true
		}},
		{name: "paused annotation", owned: true, paused: true, mutate: func(_ *clusterv1.Cluster, lc *infrav1.LocalCluster) {
			lc.Annotations = map[string]string{clusterv1.PausedAnnotation: ""}
		}},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			_, lc := createCluster(t, ns, "c"+strconv.Itoa(i), tt.owned, tt.mutate)
			if tt.paused {
				g.Eventually(func(g Gomega) {
					get(g, lc)
					g.Expect(conditions.GetV1Beta2(lc, clusterv1.PausedV1Beta2Condition)).To(HaveField("Status", metav1.ConditionTrue))
				}, 10*time.Second, 100*time.Millisecond).Should(Succeed())
			}
			g.Consistently(func(g Gomega) {
				get(g, lc)
				g.Expect(lc.Finalizers).To(BeEmpty())
				g.Expect(lc.Spec.ControlPlaneEndpoint.Port).To(BeZero())
				g.Expect(lc.Status.Ready).To(BeFalse())
				g.Expect(lc.Status.Conditions).To(BeEmpty())
				if !tt.paused {
					g.Expect(lc.Status.V1Beta2).To(BeNil())
				}
			}, 2*time.Second, 200*time.Millisecond).Should(Succeed())
		})
	}
}

func TestLocalClusterTerminalFailure(t *testing.T) {
	g := NewWithT(t)
	ns := env.NewNamespace(t)
	startProvider(t, t.TempDir())
	_, lc := createCluster(t, ns, "c1", true, func(_ *clusterv1.Cluster, lc *infrav1.LocalCluster) {
		lc.Spec.ControlPlaneEndpoint = clusterv1.APIEndpoint{Host: "10.1.2.3", Port: 6443}
	})
	g.Eventually(func(g Gomega) {
		get(g, lc)
		g.Expect(lc.Status.FailureReason).To(HaveValue(Equal(clusterv1.InvalidConfigurationClusterError)))
	}, 10*time.Second, 100*time.Millisecond).Should(Succeed())
	g.Expect(lc.Status.FailureMessage).To(HaveValue(ContainSubstring(`"10.1.2.3"`)))
	g.Expect(lc.Status.Ready).To(BeFalse())
	ready := conditions.Get(lc, clusterv1.ReadyCondition)
	g.Expect(ready).NotTo(BeNil())
	g.Expect(ready.Reason).To(Equal(infrav1.InvalidConfigurationReason))
	g.Expect(ready.Severity).To(Equal(clusterv1.ConditionSeverityError))
}

func TestLocalClusterWatchFilter(t *testing.T) {
	g := NewWithT(t)
	ns := env.NewNamespace(t)
	startProvider(t, t.TempDir(), "mine")
	_, other := createCluster(t, ns, "other", true, nil)
	_, mine := createCluster(t, ns, "mine", true, func(_ *clusterv1.Cluster, lc *infrav1.LocalCluster) {
		lc.Labels[clusterv1.WatchLabel] = "mine"
		// Paused, so that the test checks the filter without starting processes.
		lc.Annotations = map[string]string{clusterv1.PausedAnnotation: ""}
	})
	g.Eventually(func(g Gomega) {
		get(g, mine)
		g.Expect(conditions.GetV1Beta2(mine, clusterv1.PausedV1Beta2Condition)).NotTo(BeNil())
	}, 10*time.Second, 100*time.Millisecond).Should(Succeed())
	g.Consistently(func(g Gomega) {
		get(g, other)
		g.Expect(other.Status.V1Beta2).To(BeNil())
		g.Expect(other.Finalizers).To(BeEmpty())
	}, 2*time.Second, 200*time.Millisecond).Should(Succeed())
}

// The endpoint can be filled in once, then never changed (the API server's port and certificates are
// tied to it, and the core has copied it to the Cluster).
func TestControlPlaneEndpointIsImmutableOnceSet(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := env.NewNamespace(t)
	lc := &infrav1.LocalCluster{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "c1"}}
	g.Expect(env.Client.Create(ctx, lc)).To(Succeed())
	lc.Spec.ControlPlaneEndpoint = clusterv1.APIEndpoint{Host: "127.0.0.1", Port: 40001}
	g.Expect(env.Client.Update(ctx, lc)).To(Succeed(), "an empty endpoint can be set")
	lc.Spec.ControlPlaneEndpoint.Port = 40002
	err := env.Client.Update(ctx, lc)
	g.Expect(apierrors.IsInvalid(err)).To(BeTrue(), "got %v", err)
	g.Expect(err).To(MatchError(ContainSubstring("controlPlaneEndpoint cannot be changed")))
}

// A machine whose Machine was deleted by force (no LocalMachine deletion ran) is deleted by the
// LocalCluster: its Node, and for a control plane machine its processes, while the machines of Machines
// and of LocalMachinePools stay.
func TestMachineDeletedByForceIsStopped(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := env.NewNamespace(t)
	p := startProvider(t, t.TempDir())
	_, lc := createCluster(t, ns, "c1", true, nil)
	g.Eventually(func(g Gomega) {
		get(g, lc)
		g.Expect(lc.Status.Ready).To(BeTrue())
	}, 60*time.Second, 200*time.Millisecond).Should(Succeed())
	startControlPlane(g, p, lc)
	key := client.ObjectKeyFromObject(lc)
	g.Expect(env.Client.Create(ctx, &infrav1.LocalMachinePool{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "pool"}})).To(Succeed())
	worker := createMachine(g, lc, "w-0")
	for _, name := range []string{"w-0", "pool-0"} {
		g.Eventually(func(g Gomega) {
			st, err := p.backend.EnsureMachine(ctx, key, backend.Machine{Name: name, NodeName: name, ProviderID: "local://" + ns + "/c1/" + name, Version: "v1.37.1"})
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(st.NodeRegistered).To(BeTrue(), "%s: %s", st.Reason, st.Message)
		}, 60*time.Second, 200*time.Millisecond).Should(Succeed())
	}
	wc := workloadClient(g, ns, "c1", lc.Spec.ControlPlaneEndpoint)
	machines := func(g Gomega) []string {
		names, err := p.backend.Machines(ctx, key)
		g.Expect(err).NotTo(HaveOccurred())
		return names
	}
	g.Consistently(machines, 3*time.Second, 500*time.Millisecond).Should(Equal([]string{"cp-0", "pool-0", "w-0"}), "the machines of Machines and pools stay")

	t.Log("a worker's Machine deleted by force: its Node goes")
	g.Expect(env.Client.Delete(ctx, worker)).To(Succeed())
	g.Eventually(machines, 60*time.Second, 200*time.Millisecond).Should(Equal([]string{"cp-0", "pool-0"}))
	_, err := wc.CoreV1().Nodes().Get(ctx, "w-0", metav1.GetOptions{})
	g.Expect(apierrors.IsNotFound(err)).To(BeTrue(), "the Node is deleted: %v", err)

	t.Log("a control plane Machine deleted by force: its etcd and kube-apiserver stop")
	dir := p.backend.ClusterDir(key)
	etcdPid, apiPid := pidOf(g, dir, "etcd"), pidOf(g, dir, "kube-apiserver")
	g.Expect(env.Client.Delete(ctx, &clusterv1.Machine{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "cp-0"}})).To(Succeed())
	g.Eventually(machines, 60*time.Second, 200*time.Millisecond).Should(Equal([]string{"pool-0"}))
	g.Eventually(func() bool { return procs.Alive(etcdPid) || procs.Alive(apiPid) }, 30*time.Second, 200*time.Millisecond).Should(BeFalse())
	g.Expect(filepath.Join(dir, "machines", "cp-0")).NotTo(BeAnExistingFile())
}
