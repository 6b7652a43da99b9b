package machinedeployment

import (
	"context"
	"os"
	"sync"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
	"github.com/capstan-dev/capstan/internal/conditions"
	"github.com/capstan-dev/capstan/internal/contract"
	"github.com/capstan-dev/capstan/internal/controllermanager"
	"github.com/capstan-dev/capstan/internal/controllers/machineset"
	"github.com/capstan-dev/capstan/internal/test/builder"
	"github.com/capstan-dev/capstan/internal/test/envtest"
)

var env *envtest.Environment

const (
	timeout  = 60 * time.Second
	interval = 100 * time.Millisecond
)

func TestMain(m *testing.M) {
	os.Exit(envtest.Run(m, envtest.Options{CRDs: builder.CRDs()}, func(e *envtest.Environment) { env = e }))
}

// startManager runs a manager with the MachineDeployment and MachineSet controllers, watching only
// namespace (as --namespace does), until the test ends.
func startManager(t *testing.T, namespace string) {
	t.Helper()
	mgr, err := ctrl.NewManager(env.Config, controllermanager.ManagerOptions(ctrl.Options{
		Scheme:                 env.Scheme,
		Cache:                  cache.Options{DefaultNamespaces: map[string]cache.Config{namespace: {}}},
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
		Controller:             config.Controller{UsePriorityQueue: ptr.To(true), SkipNameValidation: ptr.To(true)},
	}))
	if err != nil {
		t.Fatalf("creating the manager: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	contracts := &contract.Resolver{Client: mgr.GetClient()}
	if err := (&Reconciler{Client: mgr.GetClient(), Contracts: contracts, TopologyFinalizer: true}).
		SetupWithManager(ctx, mgr, controller.Options{MaxConcurrentReconciles: 5}); err != nil {
		t.Fatalf("setting up the MachineDeployment controller: %v", err)
	}
	if err := (&machineset.Reconciler{Client: mgr.GetClient(), Contracts: contracts}).
		SetupWithManager(ctx, mgr, controller.Options{MaxConcurrentReconciles: 5}); err != nil {
		t.Fatalf("setting up the MachineSet controller: %v", err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := mgr.Start(ctx); err != nil {
			t.Errorf("running the manager: %v", err)
		}
	}()
	t.Cleanup(func() {
		cancel()
		<-done
	})
}

// fixture is a namespace with a Cluster, an infrastructure and a bootstrap template of the test provider,
// the two controllers, and a simulated Machine controller.
type fixture struct {
	namespace         string
	cluster           *clusterv1.Cluster
	infraTemplate     *unstructured.Unstructured
	bootstrapTemplate *unstructured.Unstructured
	machines          *machineSimulator
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	g := NewWithT(t)
	ctx := context.Background()
	ns := env.NewNamespace(t)
	f := &fixture{namespace: ns}
	f.cluster = builder.Cluster(ns, "cluster", nil, nil)
	g.Expect(env.Client.Create(ctx, f.cluster)).To(Succeed())
	f.infraTemplate = builder.V1Beta1.InfraMachineTemplate(ns, "infra-template")
	g.Expect(env.Client.Create(ctx, f.infraTemplate)).To(Succeed())
	f.bootstrapTemplate = builder.V1Beta1.BootstrapTemplate(ns, "bootstrap-template")
	g.Expect(env.Client.Create(ctx, f.bootstrapTemplate)).To(Succeed())
	startManager(t, ns)
	f.machines = startMachineSimulator(t, ns)
	return f
}

// machineDeployment returns a MachineDeployment of the fixture's Cluster.
func (f *fixture) machineDeployment(name string, replicas int32) *clusterv1.MachineDeployment {
	return builder.MachineDeployment(f.namespace, name, f.cluster.Name, replicas, f.infraTemplate, f.bootstrapTemplate)
}

// machineSimulator plays the Machine controller: it marks new Machines Ready, Available and UpToDate with a
// Node, and lets deleting Machines go by removing their finalizers. It watches the Machines and records
// every (available, total) pair it sees.
type machineSimulator struct {
	mu       sync.Mutex
	samples  []sample
	machines map[string]*clusterv1.Machine
}

// sample is what the simulator saw at one moment: Machines that are available and not being deleted, and
// all Machines.
type sample struct{ available, total int }

func startMachineSimulator(t *testing.T, namespace string) *machineSimulator {
	t.Helper()
	wc, err := client.NewWithWatch(env.Config, client.Options{Scheme: env.Scheme})
	if err != nil {
		t.Fatalf("creating a watching client: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	sim := &machineSimulator{machines: map[string]*clusterv1.Machine{}}
	w, err := wc.Watch(ctx, &clusterv1.MachineList{}, client.InNamespace(namespace))
	if err != nil {
		t.Fatalf("watching Machines: %v", err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for ev := range w.ResultChan() {
			m, ok := ev.Object.(*clusterv1.Machine)
			if !ok {
				continue
			}
			sim.observe(string(ev.Type), m)
			sim.act(ctx, m)
		}
	}()
	t.Cleanup(func() {
		cancel()
		w.Stop()
		<-done
	})
	return sim
}

func (s *machineSimulator) observe(eventType string, m *clusterv1.Machine) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if eventType == "DELETED" {
		delete(s.machines, m.Name)
	} else {
		s.machines[m.Name] = m.DeepCopy()
	}
	cur := sample{total: len(s.machines)}
	for _, m := range s.machines {
		if m.DeletionTimestamp.IsZero() && conditions.IsV1Beta2True(m, "Available") {
			cur.available++
		}
	}
	if n := len(s.samples); n == 0 || s.samples[n-1] != cur {
		s.samples = append(s.samples, cur)
	}
}

func (s *machineSimulator) act(ctx context.Context, m *clusterv1.Machine) {
	switch {
	case !m.DeletionTimestamp.IsZero() && len(m.Finalizers) > 0:
		before := m.DeepCopy()
		m.Finalizers = nil
		_ = env.Client.Patch(ctx, m, client.MergeFrom(before))
	case m.DeletionTimestamp.IsZero() && !conditions.IsV1Beta2True(m, "Ready"):
		markReady(ctx, m)
	}
}

// resetSamples forgets the samples seen so far.
func (s *machineSimulator) resetSamples() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.samples = nil
}

func (s *machineSimulator) getSamples() []sample {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]sample(nil), s.samples...)
}

// markReady does what the Machine controller does once a Machine's Node is up.
func markReady(ctx context.Context, m *clusterv1.Machine) {
	before := m.DeepCopy()
	m.Status.NodeRef = &corev1.ObjectReference{Kind: "Node", Name: m.Name}
	m.Status.Phase = string(clusterv1.MachinePhaseRunning)
	now := metav1.Now()
	m.Status.V1Beta2 = &clusterv1.MachineV1Beta2Status{Conditions: []metav1.Condition{
		{Type: "Ready", Status: metav1.ConditionTrue, Reason: "Ready", LastTransitionTime: now},
		{Type: "Available", Status: metav1.ConditionTrue, Reason: "Available", LastTransitionTime: now},
		{Type: "UpToDate", Status: metav1.ConditionTrue, Reason: "UpToDate", LastTransitionTime: now},
		{Type: "NodeReady", Status: metav1.ConditionTrue, Reason: "NodeReady", LastTransitionTime: now},
	}}
	_ = env.Client.Status().Patch(ctx, m, client.MergeFrom(before))
}

// machinesOf lists the Machines of a MachineDeployment, straight from the API server, by MachineSet name.
func machinesOf(g Gomega, md *clusterv1.MachineDeployment) map[string][]clusterv1.Machine {
	list := &clusterv1.MachineList{}
	g.Expect(env.Client.List(context.Background(), list, client.InNamespace(md.Namespace),
		client.MatchingLabels{clusterv1.MachineDeploymentNameLabel: md.Name})).To(Succeed())
	out := map[string][]clusterv1.Machine{}
	for _, m := range list.Items {
		if ref := metav1.GetControllerOf(&m); ref != nil {
			out[ref.Name] = append(out[ref.Name], m)
		}
	}
	return out
}

// machineSetsOf lists the MachineSets a MachineDeployment controls, straight from the API server.
func machineSetsOf(g Gomega, md *clusterv1.MachineDeployment) []clusterv1.MachineSet {
	list := &clusterv1.MachineSetList{}
	g.Expect(env.Client.List(context.Background(), list, client.InNamespace(md.Namespace))).To(Succeed())
	var out []clusterv1.MachineSet
	for _, ms := range list.Items {
		if ref := metav1.GetControllerOf(&ms); ref != nil && ref.UID == md.UID {
			out = append(out, ms)
		}
	}
	return out
}

func patchMD(g Gomega, md *clusterv1.MachineDeployment, mutate func(*clusterv1.MachineDeployment)) {
	g.Eventually(func() error {
		if err := env.Client.Get(context.Background(), client.ObjectKeyFromObject(md), md); err != nil {
			return err
		}
		before := md.DeepCopy()
		mutate(md)
		return env.Client.Patch(context.Background(), md, client.MergeFromWithOptions(before, client.MergeFromWithOptimisticLock{}))
	}, timeout, interval).Should(Succeed())
}

// waitForRunning waits until the MachineDeployment has replicas Machines, all in one MachineSet, all
// available, and reports phase Running; it returns that MachineSet's name.
func waitForRunning(g Gomega, md *clusterv1.MachineDeployment, replicas int32) string {
	var name string
	g.Eventually(func(g Gomega) {
		g.Expect(env.Client.Get(context.Background(), client.ObjectKeyFromObject(md), md)).To(Succeed())
		g.Expect(md.Status.ObservedGeneration).To(Equal(md.Generation))
		g.Expect(md.Status.Replicas).To(Equal(replicas))
		g.Expect(md.Status.UpdatedReplicas).To(Equal(replicas))
		g.Expect(md.Status.ReadyReplicas).To(Equal(replicas))
		g.Expect(md.Status.AvailableReplicas).To(Equal(replicas))
		g.Expect(md.Status.Phase).To(Equal(string(clusterv1.MachineDeploymentPhaseRunning)))
		machines := machinesOf(g, md)
		g.Expect(machines).To(HaveLen(1))
		for ms, list := range machines {
			g.Expect(list).To(HaveLen(int(replicas)))
			name = ms
		}
	}, timeout, interval).Should(Succeed())
	return name
}
