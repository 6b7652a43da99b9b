package machineset

import (
	"context"
	"os"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
	"github.com/capstan-dev/capstan/internal/contract"
	"github.com/capstan-dev/capstan/internal/controllermanager"
	"github.com/capstan-dev/capstan/internal/test/apicount"
	"github.com/capstan-dev/capstan/internal/test/builder"
	"github.com/capstan-dev/capstan/internal/test/envtest"
)

var env *envtest.Environment

func TestMain(m *testing.M) {
	os.Exit(envtest.Run(m, envtest.Options{CRDs: builder.CRDs()}, func(e *envtest.Environment) { env = e }))
}

// startManager runs a manager with the MachineSet controller, watching only namespace (as --namespace
// does), until the test ends; it returns the counter of the manager's requests to the API server.
func startManager(t *testing.T, namespace string) *apicount.Counter {
	t.Helper()
	requests := apicount.New()
	cfg := rest.CopyConfig(env.Config)
	cfg.Wrap(requests.Wrap)
	mgr, err := ctrl.NewManager(cfg, controllermanager.ManagerOptions(ctrl.Options{
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
	r := &Reconciler{
		Client: mgr.GetClient(), Contracts: &contract.Resolver{Client: mgr.GetClient()},
	}
	if err := r.SetupWithManager(ctx, mgr, controller.Options{MaxConcurrentReconciles: 5}); err != nil {
		t.Fatalf("setting up the controller: %v", err)
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
	return requests
}

// fixture is a Cluster with an infrastructure and a bootstrap template of the test provider.
type fixture struct {
	namespace         string
	cluster           *clusterv1.Cluster
	infraTemplate     *unstructured.Unstructured
	bootstrapTemplate *unstructured.Unstructured
	// requests counts the manager's requests to the API server.
	requests *apicount.Counter
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
	g.Expect(unstructured.SetNestedField(f.infraTemplate.Object, map[string]any{"labels": map[string]any{"from-infra-template": "yes"}},
		"spec", "template", "metadata")).To(Succeed())
	g.Expect(unstructured.SetNestedField(f.infraTemplate.Object, "small", "spec", "template", "spec", "size")).To(Succeed())
	g.Expect(env.Client.Create(ctx, f.infraTemplate)).To(Succeed())
	f.bootstrapTemplate = builder.V1Beta1.BootstrapTemplate(ns, "bootstrap-template")
	g.Expect(env.Client.Create(ctx, f.bootstrapTemplate)).To(Succeed())
	f.requests = startManager(t, ns)
	return f
}

// machineSet returns a MachineSet of the fixture's Cluster.
func (f *fixture) machineSet(name string, replicas int32) *clusterv1.MachineSet {
	labels := map[string]string{"set": name}
	return &clusterv1.MachineSet{
		ObjectMeta: metav1.ObjectMeta{Namespace: f.namespace, Name: name},
		Spec: clusterv1.MachineSetSpec{
			ClusterName: f.cluster.Name,
			Replicas:    ptr.To(replicas),
			Selector:    metav1.LabelSelector{MatchLabels: labels},
			Template: clusterv1.MachineTemplateSpec{
				ObjectMeta: clusterv1.ObjectMeta{Labels: labels, Annotations: map[string]string{"note": "hello"}},
				Spec: clusterv1.MachineSpec{
					ClusterName:       f.cluster.Name,
					Version:           ptr.To("v1.31.0"),
					InfrastructureRef: *builder.Ref(f.infraTemplate),
					Bootstrap:         clusterv1.Bootstrap{ConfigRef: builder.Ref(f.bootstrapTemplate)},
				},
			},
		},
	}
}

// machinesOf lists the Machines a MachineSet controls, straight from the API server.
func machinesOf(g Gomega, ms *clusterv1.MachineSet) []clusterv1.Machine {
	list := &clusterv1.MachineList{}
	g.Expect(env.Client.List(context.Background(), list, client.InNamespace(ms.Namespace))).To(Succeed())
	var out []clusterv1.Machine
	for _, m := range list.Items {
		if ref := metav1.GetControllerOf(&m); ref != nil && ref.Name == ms.Name && ref.Kind == "MachineSet" {
			out = append(out, m)
		}
	}
	return out
}

// markReady does what the Machine controller does once a Machine's Node is up: nodeRef, phase Running,
// and True Ready, Available and UpToDate conditions.
func markReady(g Gomega, m *clusterv1.Machine) {
	ctx := context.Background()
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
	g.Expect(env.Client.Status().Patch(ctx, m, client.MergeFrom(before))).To(Succeed())
}

// removeFinalizers lets a deleting Machine go, as the Machine controller does once it has cleaned up.
func removeFinalizers(g Gomega, m *clusterv1.Machine) {
	before := m.DeepCopy()
	m.Finalizers = nil
	g.Expect(client.IgnoreNotFound(env.Client.Patch(context.Background(), m, client.MergeFrom(before)))).To(Succeed())
}

const (
	timeout  = 30 * time.Second
	interval = 100 * time.Millisecond
)
