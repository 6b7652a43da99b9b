package core_test

import (
	"context"
	"fmt"
	"net"
	"os"
	"sort"
	"sync"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
	"github.com/capstan-dev/capstan/internal/test/apicount"
	"github.com/capstan-dev/capstan/internal/test/builder"
	"github.com/capstan-dev/capstan/internal/test/envtest"
	"github.com/capstan-dev/capstan/internal/test/scrape"
	"github.com/capstan-dev/capstan/internal/test/stack"
)

var (
	env      *envtest.Environment
	workload *envtest.Environment
	// requests counts the stack's requests to the management API server (the core's and the test
	// provider's, told apart by user agent).
	requests = apicount.New()
)

// TestMain starts the management API server with the core controllers and the test provider, and a second
// API server that is the workload cluster of every Cluster. CAPSTAN_TEST_LOGS=1 shows the controllers' logs.
func TestMain(m *testing.M) {
	envtest.SetupLogging()
	runCoreIfChild() // BenchmarkClustersToRunning's core process
	os.Exit(envtest.RunAll(m, []envtest.Options{{CRDs: builder.CRDs()}, {}}, func(ctx context.Context, envs []*envtest.Environment) error {
		env, workload = envs[0], envs[1]
		if os.Getenv("CAPSTAN_BENCH_WRITES") != "" {
			requests.Bodies = printWrite
		}
		cfg := rest.CopyConfig(env.Config)
		cfg.Wrap(requests.Wrap)
		_, err := stack.StartWatched(ctx, cfg, stack.Options{Workload: workload.Config})
		return err
	}))
}

// newCluster creates a Cluster with an InfraCluster and a MachineDeployment of the test provider.
func newCluster(ctx context.Context, g Gomega, ns, name string, replicas int32) (*clusterv1.Cluster, *clusterv1.MachineDeployment) {
	return newClusterIn(ctx, g, env.Client, ns, name, replicas)
}

// newClusterIn is newCluster with client c.
func newClusterIn(ctx context.Context, g Gomega, c client.Client, ns, name string, replicas int32) (*clusterv1.Cluster, *clusterv1.MachineDeployment) {
	p := builder.V1Beta1
	infra := p.InfraCluster(ns, name)
	g.Expect(c.Create(ctx, infra)).To(Succeed())
	infraTpl := p.InfraMachineTemplate(ns, name+"-md")
	g.Expect(c.Create(ctx, infraTpl)).To(Succeed())
	bootTpl := p.BootstrapTemplate(ns, name+"-md")
	g.Expect(c.Create(ctx, bootTpl)).To(Succeed())
	cluster := builder.Cluster(ns, name, infra, nil)
	g.Expect(c.Create(ctx, cluster)).To(Succeed())
	md := builder.MachineDeployment(ns, name+"-md", name, replicas, infraTpl, bootTpl)
	g.Expect(c.Create(ctx, md)).To(Succeed())
	return cluster, md
}

func machinesOf(ctx context.Context, g Gomega, ns, cluster string) []clusterv1.Machine {
	list := &clusterv1.MachineList{}
	g.Expect(env.Client.List(ctx, list, client.InNamespace(ns), client.MatchingLabels{clusterv1.ClusterNameLabel: cluster})).To(Succeed())
	return list.Items
}

func running(machines []clusterv1.Machine) int {
	n := 0
	for _, m := range machines {
		if m.Status.Phase == string(clusterv1.MachinePhaseRunning) && m.Status.NodeRef != nil {
			n++
		}
	}
	return n
}

func TestMachineDeploymentMachinesReachRunning(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := env.NewNamespace(t)
	cluster, _ := newCluster(ctx, g, ns, "c1", 3)

	g.Eventually(func(g Gomega) {
		ms := machinesOf(ctx, g, ns, "c1")
		g.Expect(ms).To(HaveLen(3))
		g.Expect(running(ms)).To(Equal(3))
		for _, m := range ms {
			node := &corev1.Node{}
			g.Expect(workload.Client.Get(ctx, client.ObjectKey{Name: m.Status.NodeRef.Name}, node)).To(Succeed())
			g.Expect(node.Spec.ProviderID).To(Equal(ptr.Deref(m.Spec.ProviderID, "")))
		}
	}, 90*time.Second, 250*time.Millisecond).Should(Succeed())

	g.Eventually(func(g Gomega) {
		g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(cluster), cluster)).To(Succeed())
		g.Expect(cluster.Status.Phase).To(Equal(string(clusterv1.ClusterPhaseProvisioned)))
		g.Expect(cluster.Status.InfrastructureReady).To(BeTrue())
	}, 30*time.Second).Should(Succeed())
}

func TestRolloutNeverDropsBelowDesiredAvailability(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := env.NewNamespace(t)
	_, md := newCluster(ctx, g, ns, "roll", 3)
	g.Eventually(func(g Gomega) {
		g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(md), md)).To(Succeed())
		g.Expect(md.Status.AvailableReplicas).To(BeEquivalentTo(3))
	}, 90*time.Second, 250*time.Millisecond).Should(Succeed())

	// Observe the Machines during the rollout: how many are available (not deleting, Available) and how many
	// exist in all.
	type sample struct{ available, total int }
	var (
		mu      sync.Mutex
		samples []sample
	)
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			select {
			case <-stop:
				return
			case <-time.After(50 * time.Millisecond):
			}
			list := &clusterv1.MachineList{}
			if err := env.Client.List(ctx, list, client.InNamespace(ns)); err != nil {
				continue
			}
			s := sample{total: len(list.Items)}
			for _, m := range list.Items {
				if m.DeletionTimestamp.IsZero() && m.Status.NodeRef != nil && availableCondition(&m) {
					s.available++
				}
			}
			mu.Lock()
			samples = append(samples, s)
			mu.Unlock()
		}
	}()

	g.Expect(env.Client.Patch(ctx, md, client.RawPatch("application/merge-patch+json", []byte(`{"spec":{"template":{"spec":{"version":"v1.32.0"}}}}`)))).To(Succeed())
	g.Eventually(func(g Gomega) {
		ms := machinesOf(ctx, g, ns, "roll")
		g.Expect(ms).To(HaveLen(3))
		for _, m := range ms {
			g.Expect(ptr.Deref(m.Spec.Version, "")).To(Equal("v1.32.0"))
			g.Expect(m.Status.Phase).To(Equal(string(clusterv1.MachinePhaseRunning)))
		}
	}, 3*time.Minute, 250*time.Millisecond).Should(Succeed())
	close(stop)
	<-done

	mu.Lock()
	defer mu.Unlock()
	g.Expect(len(samples)).To(BeNumerically(">", 10))
	for i, s := range samples {
		g.Expect(s.available).To(BeNumerically(">=", 3), "sample %d of %d: %+v", i, len(samples), s)
		g.Expect(s.total).To(BeNumerically("<=", 4), "maxSurge 1: sample %d of %d: %+v", i, len(samples), s)
	}
}

func availableCondition(m *clusterv1.Machine) bool {
	for _, c := range m.GetV1Beta2Conditions() {
		if c.Type == "Available" {
			return c.Status == metav1.ConditionTrue
		}
	}
	return false
}

// clusterObjects lists the Cluster API and provider objects of a namespace.
func clusterObjects(ctx context.Context, g Gomega, ns string) []client.Object {
	var out []client.Object
	for _, list := range []client.ObjectList{&clusterv1.ClusterList{}, &clusterv1.MachineDeploymentList{}, &clusterv1.MachineSetList{}, &clusterv1.MachineList{}} {
		g.Expect(env.Client.List(ctx, list, client.InNamespace(ns))).To(Succeed())
		items, _ := metaItems(list)
		out = append(out, items...)
	}
	p := builder.V1Beta1
	for _, kind := range []struct{ group, kind string }{
		{p.Infrastructure, builder.InfraClusterKind}, {p.Infrastructure, builder.InfraMachineKind}, {p.Bootstrap, builder.BootstrapConfigKind},
	} {
		list := &unstructured.UnstructuredList{}
		list.SetAPIVersion(kind.group + "/" + p.Version)
		list.SetKind(kind.kind + "List")
		g.Expect(env.Client.List(ctx, list, client.InNamespace(ns))).To(Succeed())
		for i := range list.Items {
			out = append(out, &list.Items[i])
		}
	}
	return out
}

func metaItems(list client.ObjectList) ([]client.Object, error) {
	var out []client.Object
	switch l := list.(type) {
	case *clusterv1.ClusterList:
		for i := range l.Items {
			out = append(out, &l.Items[i])
		}
	case *clusterv1.MachineDeploymentList:
		for i := range l.Items {
			out = append(out, &l.Items[i])
		}
	case *clusterv1.MachineSetList:
		for i := range l.Items {
			out = append(out, &l.Items[i])
		}
	case *clusterv1.MachineList:
		for i := range l.Items {
			out = append(out, &l.Items[i])
		}
	default:
		return nil, fmt.Errorf("unexpected list %T", list)
	}
	return out, nil
}

// key names an object by kind and name.
func key(o client.Object) string {
	kind := o.GetObjectKind().GroupVersionKind().Kind
	if kind == "" {
		kind = fmt.Sprintf("%T", o)
	}
	return kind + "/" + o.GetName()
}

func describe(objs []client.Object) []string {
	var out []string
	for _, o := range objs {
		out = append(out, key(o))
	}
	sort.Strings(out)
	return out
}

func TestDeletingAClusterDeletesEverything(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := env.NewNamespace(t)
	cluster, _ := newCluster(ctx, g, ns, "gone", 2)
	g.Eventually(func(g Gomega) {
		g.Expect(running(machinesOf(ctx, g, ns, "gone"))).To(Equal(2))
	}, 90*time.Second, 250*time.Millisecond).Should(Succeed())
	g.Expect(env.Client.Delete(ctx, cluster)).To(Succeed())
	g.Eventually(func(g Gomega) {
		g.Expect(describe(clusterObjects(ctx, g, ns))).To(BeEmpty())
	}, 2*time.Minute, 250*time.Millisecond).Should(Succeed())

	// What is left in the namespace is owned by deleted objects, so garbage collection removes it: nothing
	// is orphaned.
	secrets := &corev1.SecretList{}
	g.Expect(env.Client.List(ctx, secrets, client.InNamespace(ns))).To(Succeed())
	for _, s := range secrets.Items {
		g.Expect(s.OwnerReferences).NotTo(BeEmpty(), "Secret %s has no owner: it would be orphaned", s.Name)
	}
}

func TestControllersRestoreOwnershipAndSettle(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := env.NewNamespace(t)
	newCluster(ctx, g, ns, "heal", 2)
	g.Eventually(func(g Gomega) {
		g.Expect(running(machinesOf(ctx, g, ns, "heal"))).To(Equal(2))
	}, 90*time.Second, 250*time.Millisecond).Should(Succeed())

	type shape struct {
		owners     []string
		finalizers []string
	}
	shapeOf := func(o client.Object) shape {
		var s shape
		for _, r := range o.GetOwnerReferences() {
			s.owners = append(s.owners, r.Kind+"/"+r.Name)
		}
		sort.Strings(s.owners)
		s.finalizers = append([]string(nil), o.GetFinalizers()...)
		sort.Strings(s.finalizers)
		return s
	}
	want := map[string]shape{}
	for _, o := range clusterObjects(ctx, g, ns) {
		want[key(o)] = shapeOf(o)
	}
	g.Expect(want).To(HaveLen(1 + 1 + 1 + 2 + 1 + 2 + 2)) // Cluster, MD, MS, Machines, InfraCluster, InfraMachines, BootstrapConfigs

	// Remove every ownerReference and finalizer.
	for _, o := range clusterObjects(ctx, g, ns) {
		patch := []byte(`{"metadata":{"ownerReferences":null,"finalizers":null}}`)
		g.Expect(env.Client.Patch(ctx, o, client.RawPatch("application/merge-patch+json", patch))).To(Succeed())
	}
	g.Eventually(func(g Gomega) {
		got := map[string]shape{}
		for _, o := range clusterObjects(ctx, g, ns) {
			got[key(o)] = shapeOf(o)
		}
		g.Expect(got).To(Equal(want))
	}, 90*time.Second, 250*time.Millisecond).Should(Succeed())

	// Once steady, nothing is written any more: no resourceVersion changes for 15 seconds.
	versions := func(g Gomega) map[string]string {
		out := map[string]string{}
		for _, o := range clusterObjects(ctx, g, ns) {
			out[key(o)] = o.GetResourceVersion()
		}
		return out
	}
	var last map[string]string
	g.Eventually(func(g Gomega) {
		first := versions(g)
		// Steady means unchanged over a while: nothing to poll for.
		time.Sleep(3 * time.Second)
		g.Expect(versions(g)).To(Equal(first))
		last = first
	}, time.Minute, time.Second).Should(Succeed())
	// The controllers' periodic work (resyncs, requeues) has time to write, which it must not.
	time.Sleep(15 * time.Second)
	g.Expect(versions(g)).To(Equal(last), "the controllers keep writing to objects that are steady")
}

func TestPausingAClusterStopsItsReconciliation(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := env.NewNamespace(t)
	cluster, md := newCluster(ctx, g, ns, "pause", 1)
	g.Eventually(func(g Gomega) {
		g.Expect(running(machinesOf(ctx, g, ns, "pause"))).To(Equal(1))
	}, 90*time.Second, 250*time.Millisecond).Should(Succeed())

	g.Expect(env.Client.Patch(ctx, cluster, client.RawPatch("application/merge-patch+json", []byte(`{"spec":{"paused":true}}`)))).To(Succeed())
	g.Eventually(func(g Gomega) {
		for _, o := range clusterObjects(ctx, g, ns) {
			if _, isUnstructured := o.(*unstructured.Unstructured); isUnstructured {
				continue // the test provider does not report pause
			}
			getter := o.(interface{ GetV1Beta2Conditions() []metav1.Condition })
			var paused *metav1.Condition
			for _, c := range getter.GetV1Beta2Conditions() {
				if c.Type == "Paused" {
					paused = &c
				}
			}
			g.Expect(paused).NotTo(BeNil(), "%T %s has no Paused condition", o, o.GetName())
			g.Expect(paused.Status).To(Equal(metav1.ConditionTrue), "%T %s", o, o.GetName())
		}
	}, 30*time.Second, 250*time.Millisecond).Should(Succeed())

	g.Expect(env.Client.Patch(ctx, md, client.RawPatch("application/merge-patch+json", []byte(`{"spec":{"replicas":3}}`)))).To(Succeed())
	g.Consistently(func(g Gomega) {
		g.Expect(machinesOf(ctx, g, ns, "pause")).To(HaveLen(1))
	}, 5*time.Second, 250*time.Millisecond).Should(Succeed())

	g.Expect(env.Client.Patch(ctx, cluster, client.RawPatch("application/merge-patch+json", []byte(`{"spec":{"paused":false}}`)))).To(Succeed())
	g.Eventually(func(g Gomega) {
		g.Expect(running(machinesOf(ctx, g, ns, "pause"))).To(Equal(3))
	}, 90*time.Second, 250*time.Millisecond).Should(Succeed())
}

// blackhole accepts connections and never answers.
func blackhole(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var conns []net.Conn
	var mu sync.Mutex
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
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
	return "https://" + l.Addr().String()
}

func TestUnreachableWorkloadClusterDoesNotSlowOthers(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := env.NewNamespace(t)

	// Cluster "stuck" has a kubeconfig pointing at a server that never answers.
	stuckCfg := rest.CopyConfig(workload.Config)
	stuckCfg.Host = blackhole(t)
	g.Expect(envtest.WriteKubeconfigSecret(ctx, env.Client, ns, "stuck", stuckCfg)).To(Succeed())
	newCluster(ctx, g, ns, "stuck", 2)
	g.Eventually(func(g Gomega) {
		ms := machinesOf(ctx, g, ns, "stuck")
		g.Expect(ms).To(HaveLen(2))
		for _, m := range ms {
			g.Expect(m.Spec.ProviderID).NotTo(BeNil())
		}
	}, 60*time.Second, 250*time.Millisecond).Should(Succeed())

	// A healthy cluster created afterwards gets its Machines running while "stuck" still has no Node.
	start := time.Now()
	newCluster(ctx, g, ns, "healthy", 2)
	g.Eventually(func(g Gomega) {
		g.Expect(running(machinesOf(ctx, g, ns, "healthy"))).To(Equal(2))
	}, 60*time.Second, 100*time.Millisecond).Should(Succeed())
	t.Logf("the healthy cluster's Machines were Running after %s", time.Since(start).Round(time.Millisecond))
	g.Expect(running(machinesOf(ctx, g, ns, "stuck"))).To(BeZero())
	for _, m := range machinesOf(ctx, g, ns, "stuck") {
		g.Expect(m.Status.NodeRef).To(BeNil())
	}
	// /metrics tells which cluster is unreachable.
	up, found, err := scrape.Value("capi_cluster_cache_connection_up", map[string]string{"cluster_name": "stuck", "cluster_namespace": ns})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(found).To(BeTrue())
	g.Expect(up).To(BeZero())
	series, err := scrape.Series("capstan_machines", map[string]string{"namespace": ns, "cluster_name": "stuck", "phase": "Running"})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(series).To(BeEmpty())
	// Deleting the stuck cluster is not held forever by its unreachable workload cluster.
	cluster := &clusterv1.Cluster{}
	g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "stuck"}, cluster)).To(Succeed())
	g.Expect(env.Client.Delete(ctx, cluster)).To(Succeed())
	g.Eventually(func() bool {
		return apierrors.IsNotFound(env.Client.Get(ctx, client.ObjectKeyFromObject(cluster), cluster))
	}, 2*time.Minute, 500*time.Millisecond).Should(BeTrue())
}
