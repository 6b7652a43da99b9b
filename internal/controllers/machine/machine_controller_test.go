package machine

import (
	"context"
	"fmt"
	"net"
	"os"
	"sync"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/retry"
	"k8s.io/klog/v2"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
	"github.com/capstan-dev/capstan/internal/clustercache"
	"github.com/capstan-dev/capstan/internal/conditions"
	"github.com/capstan-dev/capstan/internal/contract"
	"github.com/capstan-dev/capstan/internal/reconciler"
	"github.com/capstan-dev/capstan/internal/test/builder"
	"github.com/capstan-dev/capstan/internal/test/envtest"
)

const (
	timeout  = 30 * time.Second
	interval = 100 * time.Millisecond
)

var (
	// env is the management cluster, workload a workload cluster the test Clusters point at.
	env, workload *envtest.Environment
	// machines is the Machine controller the manager runs; clusterCache its ClusterCache.
	machines     *Reconciler
	clusterCache *clustercache.ClusterCache
)

func TestMain(m *testing.M) {
	ctrl.SetLogger(klog.Background())
	os.Exit(envtest.RunAll(m, []envtest.Options{{CRDs: builder.CRDs()}, {}}, func(ctx context.Context, envs []*envtest.Environment) error {
		env, workload = envs[0], envs[1]
		_, err := startManager(ctx)
		return err
	}))
}

func startManager(ctx context.Context) (<-chan struct{}, error) {
	mgr, err := ctrl.NewManager(env.Config, ctrl.Options{
		Scheme:                 env.Scheme,
		Metrics:                server.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
		// As capstan manager: Secrets and ConfigMaps uncached, unstructured objects not read from the cache.
		Client:     client.Options{Cache: &client.CacheOptions{DisableFor: []client.Object{&corev1.Secret{}, &corev1.ConfigMap{}}}},
		Controller: config.Controller{UsePriorityQueue: ptr.To(true)},
	})
	if err != nil {
		return nil, err
	}
	// Connection attempts to a blackhole last the whole test, so tests can rely on them being stuck.
	clusterCache, err = clustercache.New(mgr, clustercache.Options{ConnectionTimeout: 10 * time.Minute, HealthProbeTimeout: 10 * time.Minute})
	if err != nil {
		return nil, err
	}
	machines = &Reconciler{
		Client:                      mgr.GetClient(),
		Contracts:                   &contract.Resolver{Client: mgr.GetClient()},
		ClusterCache:                clusterCache,
		DrainRetryInterval:          500 * time.Millisecond,
		VolumeDetachRetryInterval:   500 * time.Millisecond,
		ExternalObjectRetryInterval: 2 * time.Second,
		NodeDeletionRetryInterval:   500 * time.Millisecond,
		InPlaceUpdater:              updaters,
	}
	if err := machines.SetupWithManager(ctx, mgr, controller.Options{MaxConcurrentReconciles: 10}); err != nil {
		return nil, err
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := mgr.Start(ctx); err != nil {
			fmt.Fprintf(os.Stderr, "Manager: %v\n", err)
		}
	}()
	return done, nil
}

// createCluster creates a Cluster whose control plane is initialized and whose kubeconfig points at
// workloadConfig.
func createCluster(t *testing.T, ns, name string, workloadConfig *rest.Config) *clusterv1.Cluster {
	t.Helper()
	g := NewWithT(t)
	ctx := context.Background()
	cluster := &clusterv1.Cluster{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
	g.Expect(env.Client.Create(ctx, cluster)).To(Succeed())
	cluster.Status.InfrastructureReady = true
	cluster.Status.ControlPlaneReady = true
	conditions.MarkTrue(cluster, clusterv1.ControlPlaneInitializedCondition)
	g.Expect(env.Client.Status().Update(ctx, cluster)).To(Succeed())
	g.Expect(envtest.WriteKubeconfigSecret(ctx, env.Client, ns, name, workloadConfig)).To(Succeed())
	return cluster
}

// testMachine is a Machine with its test-provider bootstrap config and InfraMachine.
type testMachine struct {
	provider  builder.Provider
	machine   *clusterv1.Machine
	bootstrap *unstructured.Unstructured
	infra     *unstructured.Unstructured
}

func createMachine(t *testing.T, p builder.Provider, ns, name, clusterName string, mutate ...func(*clusterv1.Machine)) *testMachine {
	t.Helper()
	g := NewWithT(t)
	ctx := context.Background()
	tm := &testMachine{provider: p, bootstrap: p.BootstrapConfig(ns, name), infra: p.InfraMachine(ns, name)}
	g.Expect(env.Client.Create(ctx, tm.bootstrap)).To(Succeed())
	g.Expect(env.Client.Create(ctx, tm.infra)).To(Succeed())
	tm.machine = builder.Machine(ns, name, clusterName, tm.infra, tm.bootstrap)
	for _, f := range mutate {
		f(tm.machine)
	}
	g.Expect(env.Client.Create(ctx, tm.machine)).To(Succeed())
	return tm
}

// patchStatus merges status into an object's status, as its provider would.
func patchStatus(t *testing.T, obj *unstructured.Unstructured, status map[string]any) {
	t.Helper()
	g := NewWithT(t)
	ctx := context.Background()
	g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(obj), obj)).To(Succeed())
	before := obj.DeepCopy()
	for k, v := range status {
		g.Expect(unstructured.SetNestedField(obj.Object, v, "status", k)).To(Succeed())
	}
	g.Expect(env.Client.Status().Patch(ctx, obj, client.MergeFrom(before))).To(Succeed())
}

// bootstrapReady makes the bootstrap provider report its data secret.
func (tm *testMachine) bootstrapReady(t *testing.T, secret string) {
	status := map[string]any{"dataSecretName": secret}
	if tm.provider.Contract == contract.V1Beta2 {
		status["initialization"] = map[string]any{"dataSecretCreated": true}
	} else {
		status["ready"] = true
	}
	patchStatus(t, tm.bootstrap, status)
}

// infraReady makes the infrastructure provider report the machine provisioned with a providerID.
func (tm *testMachine) infraReady(t *testing.T, providerID string) {
	t.Helper()
	g := NewWithT(t)
	ctx := context.Background()
	g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(tm.infra), tm.infra)).To(Succeed())
	before := tm.infra.DeepCopy()
	g.Expect(unstructured.SetNestedField(tm.infra.Object, providerID, "spec", "providerID")).To(Succeed())
	g.Expect(unstructured.SetNestedField(tm.infra.Object, "zone-a", "spec", "failureDomain")).To(Succeed())
	g.Expect(env.Client.Patch(ctx, tm.infra, client.MergeFrom(before))).To(Succeed())
	status := map[string]any{"addresses": []any{
		map[string]any{"type": "InternalIP", "address": "10.0.0.7"},
		map[string]any{"type": "Hostname", "address": tm.infra.GetName()},
	}}
	if tm.provider.Contract == contract.V1Beta2 {
		status["initialization"] = map[string]any{"provisioned": true}
	} else {
		status["ready"] = true
	}
	patchStatus(t, tm.infra, status)
}

// createNode creates a ready Node in the workload cluster.
func createNode(t *testing.T, name, providerID string) *corev1.Node {
	t.Helper()
	g := NewWithT(t)
	ctx := context.Background()
	node := &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"set-by": "kubelet"}},
		Spec: corev1.NodeSpec{ProviderID: providerID, Taints: []corev1.Taint{
			{Key: clusterv1.NodeUninitializedTaintKey, Effect: corev1.TaintEffectNoSchedule},
		}},
	}
	g.Expect(workload.Client.Create(ctx, node)).To(Succeed())
	before := node.DeepCopy()
	node.Status = corev1.NodeStatus{
		Conditions: []corev1.NodeCondition{
			{Type: corev1.NodeReady, Status: corev1.ConditionTrue, Reason: "KubeletReady", Message: "kubelet is posting ready status"},
			{Type: corev1.NodeMemoryPressure, Status: corev1.ConditionFalse},
			{Type: corev1.NodeDiskPressure, Status: corev1.ConditionFalse},
			{Type: corev1.NodePIDPressure, Status: corev1.ConditionFalse},
		},
		NodeInfo: corev1.NodeSystemInfo{KubeletVersion: "v1.31.0", OSImage: "capstan", Architecture: "amd64", OperatingSystem: "linux"},
	}
	g.Expect(workload.Client.Status().Patch(ctx, node, client.MergeFrom(before))).To(Succeed())
	t.Cleanup(func() { _ = workload.Client.Delete(context.Background(), node) })
	return node
}

// update reads the object of key into obj, changes it and updates it, again while the update conflicts
// with a write of the controllers (which keep writing a running Machine's status for a while).
func update(g Gomega, key client.ObjectKey, obj client.Object, change func()) {
	g.Expect(retry.RetryOnConflict(retry.DefaultRetry, func() error {
		if err := env.Client.Get(context.Background(), key, obj); err != nil {
			return err
		}
		change()
		return env.Client.Update(context.Background(), obj)
	})).To(Succeed())
}

func getMachine(g Gomega, m *clusterv1.Machine) *clusterv1.Machine {
	out := &clusterv1.Machine{}
	g.Expect(env.Client.Get(context.Background(), client.ObjectKeyFromObject(m), out)).To(Succeed())
	return out
}

func v1beta2Status(m *clusterv1.Machine, t string) metav1.ConditionStatus {
	if c := conditions.GetV1Beta2(m, t); c != nil {
		return c.Status
	}
	return ""
}

// runningMachine creates a Cluster on the workload cluster and a Machine of it that reaches Running.
func runningMachine(t *testing.T, p builder.Provider, ns string, mutate ...func(*clusterv1.Machine)) (*clusterv1.Cluster, *testMachine, *corev1.Node) {
	t.Helper()
	g := NewWithT(t)
	cluster := createCluster(t, ns, "workload", workload.Config)
	tm := createMachine(t, p, ns, "worker", cluster.Name, mutate...)
	tm.bootstrapReady(t, "worker-bootstrap")
	providerID := "test://" + ns + "/worker"
	tm.infraReady(t, providerID)
	node := createNode(t, ns+"-worker", providerID)
	g.Eventually(func(g Gomega) {
		g.Expect(getMachine(g, tm.machine).Status.Phase).To(Equal(string(clusterv1.MachinePhaseRunning)))
	}, timeout, interval).Should(Succeed())
	return cluster, tm, node
}

func TestMachineReachesRunning(t *testing.T) {
	for _, p := range []builder.Provider{builder.V1Beta1, builder.V1Beta2} {
		t.Run(string(p.Contract)+" contract", func(t *testing.T) {
			g := NewWithT(t)
			ctx := context.Background()
			ns := env.NewNamespace(t)
			cluster := createCluster(t, ns, "workload", workload.Config)
			tm := createMachine(t, p, ns, "worker", cluster.Name)

			// The Machine is set up and waits for its bootstrap data.
			g.Eventually(func(g Gomega) {
				m := getMachine(g, tm.machine)
				g.Expect(m.Finalizers).To(ContainElement(clusterv1.MachineFinalizer))
				g.Expect(m.Labels).To(HaveKeyWithValue(clusterv1.ClusterNameLabel, cluster.Name))
				g.Expect(m.OwnerReferences).To(ContainElement(HaveField("Kind", "Cluster")))
				g.Expect(m.Status.Phase).To(Equal(string(clusterv1.MachinePhasePending)))
				g.Expect(v1beta2Status(m, clusterv1.MachineBootstrapConfigReadyV1Beta2Condition)).To(Equal(metav1.ConditionFalse))
				g.Expect(v1beta2Status(m, clusterv1.MachineReadyV1Beta2Condition)).To(Equal(metav1.ConditionFalse))
			}, timeout, interval).Should(Succeed())
			for _, obj := range []*unstructured.Unstructured{tm.bootstrap, tm.infra} {
				g.Eventually(func(g Gomega) {
					g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(obj), obj)).To(Succeed())
					owner := metav1.GetControllerOf(obj)
					g.Expect(owner).NotTo(BeNil())
					g.Expect(owner.Kind).To(Equal("Machine"))
					g.Expect(owner.Name).To(Equal(tm.machine.Name))
					g.Expect(obj.GetLabels()).To(HaveKeyWithValue(clusterv1.ClusterNameLabel, cluster.Name))
				}, timeout, interval).Should(Succeed())
			}

			tm.bootstrapReady(t, "worker-bootstrap")
			g.Eventually(func(g Gomega) {
				m := getMachine(g, tm.machine)
				g.Expect(m.Spec.Bootstrap.DataSecretName).To(Equal(ptr.To("worker-bootstrap")))
				g.Expect(m.Status.BootstrapReady).To(BeTrue())
				g.Expect(m.Status.Phase).To(Equal(string(clusterv1.MachinePhaseProvisioning)))
			}, timeout, interval).Should(Succeed())

			providerID := "test://" + ns + "/worker"
			tm.infraReady(t, providerID)
			g.Eventually(func(g Gomega) {
				m := getMachine(g, tm.machine)
				g.Expect(m.Spec.ProviderID).To(Equal(ptr.To(providerID)))
				g.Expect(m.Spec.FailureDomain).To(Equal(ptr.To("zone-a")))
				g.Expect(m.Status.InfrastructureReady).To(BeTrue())
				g.Expect(m.Status.Phase).To(Equal(string(clusterv1.MachinePhaseProvisioned)))
				g.Expect(conditions.GetV1Beta2(m, clusterv1.MachineNodeHealthyV1Beta2Condition).Message).To(
					Equal("Waiting for a Node with spec.providerID " + providerID + " to exist"))
			}, timeout, interval).Should(Succeed())

			node := createNode(t, ns+"-worker", providerID)
			g.Eventually(func(g Gomega) {
				m := getMachine(g, tm.machine)
				g.Expect(m.Status.Phase).To(Equal(string(clusterv1.MachinePhaseRunning)))
				g.Expect(m.Status.NodeRef).To(Equal(&corev1.ObjectReference{APIVersion: "v1", Kind: "Node", Name: node.Name, UID: node.UID}))
				g.Expect(m.Status.NodeInfo).To(Equal(&node.Status.NodeInfo))
				g.Expect(m.Status.Addresses).To(Equal(clusterv1.MachineAddresses{
					{Type: clusterv1.MachineInternalIP, Address: "10.0.0.7"}, {Type: clusterv1.MachineHostName, Address: "worker"},
				}))
				g.Expect(m.Status.LastUpdated).NotTo(BeNil())
				g.Expect(m.Status.ObservedGeneration).To(Equal(m.Generation))
				for _, c := range []string{
					clusterv1.MachineBootstrapConfigReadyV1Beta2Condition, clusterv1.MachineInfrastructureReadyV1Beta2Condition,
					clusterv1.MachineNodeHealthyV1Beta2Condition, clusterv1.MachineNodeReadyV1Beta2Condition,
					clusterv1.MachineReadyV1Beta2Condition, clusterv1.MachineAvailableV1Beta2Condition, clusterv1.MachineUpToDateV1Beta2Condition,
				} {
					g.Expect(v1beta2Status(m, c)).To(Equal(metav1.ConditionTrue), c)
				}
				g.Expect(v1beta2Status(m, clusterv1.PausedV1Beta2Condition)).To(Equal(metav1.ConditionFalse))
				g.Expect(v1beta2Status(m, clusterv1.MachineDeletingV1Beta2Condition)).To(Equal(metav1.ConditionFalse))
				g.Expect(conditions.IsTrue(m, clusterv1.ReadyCondition)).To(BeTrue())
				g.Expect(conditions.IsTrue(m, clusterv1.MachineNodeHealthyCondition)).To(BeTrue())
			}, timeout, interval).Should(Succeed())

			// The Node is linked back to the Machine and initialized.
			g.Eventually(func(g Gomega) {
				n := &corev1.Node{}
				g.Expect(workload.Client.Get(ctx, client.ObjectKeyFromObject(node), n)).To(Succeed())
				g.Expect(n.Annotations).To(HaveKeyWithValue(clusterv1.ClusterNameAnnotation, cluster.Name))
				g.Expect(n.Annotations).To(HaveKeyWithValue(clusterv1.ClusterNamespaceAnnotation, ns))
				g.Expect(n.Annotations).To(HaveKeyWithValue(clusterv1.MachineAnnotation, tm.machine.Name))
				g.Expect(n.Spec.Taints).NotTo(ContainElement(HaveField("Key", clusterv1.NodeUninitializedTaintKey)))
				g.Expect(n.Labels).To(HaveKeyWithValue("set-by", "kubelet"))
			}, timeout, interval).Should(Succeed())

			// The Node going unhealthy shows on the Machine.
			n := &corev1.Node{}
			g.Expect(workload.Client.Get(ctx, client.ObjectKeyFromObject(node), n)).To(Succeed())
			n.Status.Conditions[0].Status = corev1.ConditionFalse
			n.Status.Conditions[0].Message = "kubelet stopped posting"
			g.Expect(workload.Client.Status().Update(ctx, n)).To(Succeed())
			g.Eventually(func(g Gomega) {
				m := getMachine(g, tm.machine)
				g.Expect(v1beta2Status(m, clusterv1.MachineNodeHealthyV1Beta2Condition)).To(Equal(metav1.ConditionFalse))
				ready := conditions.GetV1Beta2(m, clusterv1.MachineReadyV1Beta2Condition)
				g.Expect(ready.Status).To(Equal(metav1.ConditionFalse))
				g.Expect(ready.Message).To(Equal("* NodeHealthy:\n  * Node.Ready: kubelet stopped posting"))
				g.Expect(v1beta2Status(m, clusterv1.MachineAvailableV1Beta2Condition)).To(Equal(metav1.ConditionFalse))
			}, timeout, interval).Should(Succeed())
		})
	}
}

func TestMachineWithDataSecretAndNoBootstrapConfig(t *testing.T) {
	g := NewWithT(t)
	ns := env.NewNamespace(t)
	cluster := createCluster(t, ns, "workload", workload.Config)
	infra := builder.V1Beta1.InfraMachine(ns, "byo")
	g.Expect(env.Client.Create(context.Background(), infra)).To(Succeed())
	m := builder.Machine(ns, "byo", cluster.Name, infra, nil)
	m.Spec.Bootstrap.DataSecretName = ptr.To("my-data")
	g.Expect(env.Client.Create(context.Background(), m)).To(Succeed())
	g.Eventually(func(g Gomega) {
		got := getMachine(g, m)
		g.Expect(got.Status.BootstrapReady).To(BeTrue())
		g.Expect(got.Status.Phase).To(Equal(string(clusterv1.MachinePhaseProvisioning)))
		c := conditions.GetV1Beta2(got, clusterv1.MachineBootstrapConfigReadyV1Beta2Condition)
		g.Expect(c).NotTo(BeNil())
		g.Expect(c.Reason).To(Equal(clusterv1.MachineBootstrapDataSecretProvidedV1Beta2Reason))
	}, timeout, interval).Should(Succeed())
}

func TestMachineRestoresWhatItOwns(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := env.NewNamespace(t)
	_, tm, _ := runningMachine(t, builder.V1Beta1, ns)

	m := &clusterv1.Machine{}
	update(g, client.ObjectKeyFromObject(tm.machine), m, func() { m.Finalizers = nil })
	update(g, client.ObjectKeyFromObject(tm.infra), tm.infra, func() { tm.infra.SetOwnerReferences(nil) })

	g.Eventually(func(g Gomega) {
		g.Expect(getMachine(g, tm.machine).Finalizers).To(ContainElement(clusterv1.MachineFinalizer))
		g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(tm.infra), tm.infra)).To(Succeed())
		owner := metav1.GetControllerOf(tm.infra)
		g.Expect(owner).NotTo(BeNil())
		g.Expect(owner.UID).To(Equal(m.UID))
	}, timeout, interval).Should(Succeed())
}

func TestMachineRespectsPause(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := env.NewNamespace(t)
	cluster, tm, _ := runningMachine(t, builder.V1Beta1, ns)

	update(g, client.ObjectKeyFromObject(cluster), cluster, func() { cluster.Spec.Paused = true })
	g.Eventually(func(g Gomega) {
		c := conditions.GetV1Beta2(getMachine(g, tm.machine), clusterv1.PausedV1Beta2Condition)
		g.Expect(c).NotTo(BeNil())
		g.Expect(c.Status).To(Equal(metav1.ConditionTrue))
		g.Expect(c.Message).To(Equal("Cluster spec.paused is set to true"))
	}, timeout, interval).Should(Succeed())

	// While paused, the Machine does not follow its providers.
	m := &clusterv1.Machine{}
	update(g, client.ObjectKeyFromObject(tm.machine), m, func() { m.Labels["node-role.kubernetes.io/paused"] = "" })
	g.Consistently(func(g Gomega) {
		n := &corev1.Node{}
		g.Expect(workload.Client.Get(ctx, client.ObjectKey{Name: m.Status.NodeRef.Name}, n)).To(Succeed())
		g.Expect(n.Labels).NotTo(HaveKey("node-role.kubernetes.io/paused"))
	}, 2*time.Second, interval).Should(Succeed())

	update(g, client.ObjectKeyFromObject(cluster), cluster, func() { cluster.Spec.Paused = false })
	g.Eventually(func(g Gomega) {
		g.Expect(v1beta2Status(getMachine(g, tm.machine), clusterv1.PausedV1Beta2Condition)).To(Equal(metav1.ConditionFalse))
		n := &corev1.Node{}
		g.Expect(workload.Client.Get(ctx, client.ObjectKey{Name: m.Status.NodeRef.Name}, n)).To(Succeed())
		g.Expect(n.Labels).To(HaveKey("node-role.kubernetes.io/paused"))
	}, timeout, interval).Should(Succeed())
}

// blackhole accepts TCP connections and never answers them.
func blackhole(t *testing.T) (addr string, accepted <-chan struct{}) {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ch := make(chan struct{}, 100)
	var mu sync.Mutex
	var conns []net.Conn
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
			select {
			case ch <- struct{}{}:
			default:
			}
		}
	}()
	t.Cleanup(func() {
		_ = l.Close()
		mu.Lock()
		defer mu.Unlock()
		for _, c := range conns {
			_ = c.Close()
		}
	})
	return l.Addr().String(), ch
}

func TestUnreachableWorkloadClusterDoesNotDelayOthers(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := env.NewNamespace(t)

	// Cluster A's workload cluster never answers: its connection attempt hangs for the whole test.
	addr, accepted := blackhole(t)
	holeConfig := rest.CopyConfig(workload.Config)
	holeConfig.Host = "https://" + addr
	clusterA := createCluster(t, ns, "unreachable", holeConfig)
	select {
	case <-accepted:
	case <-time.After(timeout):
		t.Fatal("no connection attempt to the unreachable workload cluster")
	}
	a := createMachine(t, builder.V1Beta1, ns, "a", clusterA.Name)
	a.bootstrapReady(t, "a-bootstrap")
	a.infraReady(t, "test://"+ns+"/a")

	// Cluster B's Machine reaches Running meanwhile.
	clusterB := createCluster(t, ns, "healthy", workload.Config)
	b := createMachine(t, builder.V1Beta1, ns, "b", clusterB.Name)
	b.bootstrapReady(t, "b-bootstrap")
	b.infraReady(t, "test://"+ns+"/b")
	createNode(t, ns+"-b", "test://"+ns+"/b")
	g.Eventually(func(g Gomega) {
		g.Expect(getMachine(g, b.machine).Status.Phase).To(Equal(string(clusterv1.MachinePhaseRunning)))
	}, timeout, interval).Should(Succeed())

	// A's Machine got as far as it can without its workload cluster, and says why.
	g.Eventually(func(g Gomega) {
		m := getMachine(g, a.machine)
		g.Expect(m.Status.Phase).To(Equal(string(clusterv1.MachinePhaseProvisioned)))
		c := conditions.GetV1Beta2(m, clusterv1.MachineNodeHealthyV1Beta2Condition)
		g.Expect(c).NotTo(BeNil())
		g.Expect(c.Reason).To(Equal(clusterv1.MachineNodeRemoteConnectionFailedV1Beta2Reason))
		g.Expect(c.Message).To(Equal("Remote connection not established yet"))
	}, timeout, interval).Should(Succeed())

	// Reconciles of both Machines return while A's connection attempt is in progress: none waits for it.
	reconcileMachine := reconciler.Guarded(machines.Client, &machines.writes, machines)
	for range 20 {
		for _, m := range []*clusterv1.Machine{a.machine, b.machine} {
			res, err := reconcileMachine.Reconcile(ctx, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(m)})
			if err != nil && !apierrors.IsConflict(err) {
				t.Fatalf("reconciling %s: %v", m.Name, err)
			}
			if m == a.machine {
				g.Expect(res.RequeueAfter).To(Equal(defaultRemoteConnectionRetryInterval))
			}
		}
	}
	g.Expect(clusterCache.Health(client.ObjectKeyFromObject(clusterA)).Connecting).To(BeTrue(),
		"cluster A's connection attempt was in progress all along")
	g.Expect(getMachine(g, b.machine).Status.Phase).To(Equal(string(clusterv1.MachinePhaseRunning)))
}
