package cluster

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/event"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
	"github.com/capstan-dev/capstan/internal/conditions"
	"github.com/capstan-dev/capstan/internal/contract"
	runtimeclient "github.com/capstan-dev/capstan/internal/runtime/client"
	"github.com/capstan-dev/capstan/internal/runtime/registry"
	"github.com/capstan-dev/capstan/internal/test/builder"
	"github.com/capstan-dev/capstan/internal/test/envtest"
)

var (
	env *envtest.Environment
	// hookRegistry and runtimeClient are the Runtime SDK registry and client of the Cluster controller
	// under test; tests register their Extensions' handlers with a namespaceSelector of their namespace.
	hookRegistry  *registry.Registry
	runtimeClient *runtimeclient.Client
)

const (
	timeout  = 30 * time.Second
	interval = 100 * time.Millisecond
	// holdFinalizer keeps test objects around until the test lets them go, since no other controller runs.
	holdFinalizer = "test.capstan.dev/hold"
)

func TestMain(m *testing.M) {
	os.Exit(envtest.RunAll(m, []envtest.Options{{CRDs: builder.CRDs()}}, func(ctx context.Context, envs []*envtest.Environment) error {
		env = envs[0]
		mgr, err := ctrl.NewManager(env.Config, ctrl.Options{
			Scheme:  env.Scheme,
			Metrics: metricsserver.Options{BindAddress: "0"},
			// As the capstan manager: Secrets are read from the API server, not cached.
			Client:     client.Options{Cache: &client.CacheOptions{DisableFor: []client.Object{&corev1.Secret{}, &corev1.ConfigMap{}}}},
			Controller: config.Controller{UsePriorityQueue: ptr.To(true)},
		})
		if err != nil {
			return fmt.Errorf("creating the manager: %w", err)
		}
		hookRegistry = registry.New()
		if err := hookRegistry.WarmUp(nil); err != nil {
			return fmt.Errorf("warming up the Runtime SDK registry: %w", err)
		}
		runtimeClient = &runtimeclient.Client{Registry: hookRegistry, Namespaces: mgr.GetClient()}
		r := &Reconciler{
			RuntimeClient:      runtimeClient,
			Client:             mgr.GetClient(),
			APIReader:          mgr.GetAPIReader(),
			Contracts:          &contract.Resolver{Client: mgr.GetClient()},
			RequeueAfter:       500 * time.Millisecond,
			DeleteRequeueAfter: 200 * time.Millisecond,
			// Short, so that the tests see the held-back status of a deleting Cluster soon.
			DeletingStatusInterval: 2 * time.Second,
		}
		if err := r.SetupWithManager(ctx, mgr, controller.Options{MaxConcurrentReconciles: 5}); err != nil {
			return fmt.Errorf("setting up the Cluster controller: %w", err)
		}
		go func() {
			if err := mgr.Start(ctx); err != nil {
				fmt.Fprintf(os.Stderr, "Running the manager: %v\n", err)
			}
		}()
		return nil
	}))
}

// create creates objects and fails the test on error.
func create(t *testing.T, objs ...client.Object) {
	t.Helper()
	for _, obj := range objs {
		if err := env.Client.Create(context.Background(), obj); err != nil {
			t.Fatalf("creating %s %s: %v", obj.GetObjectKind().GroupVersionKind().Kind, obj.GetName(), err)
		}
	}
}

// setStatus merges status into a provider object's status.
func setStatus(t *testing.T, obj *unstructured.Unstructured, status map[string]any) {
	t.Helper()
	ctx := context.Background()
	latest := obj.DeepCopy()
	if err := env.Client.Get(ctx, client.ObjectKeyFromObject(obj), latest); err != nil {
		t.Fatal(err)
	}
	before := latest.DeepCopy()
	current, _, _ := unstructured.NestedMap(latest.Object, "status")
	if current == nil {
		current = map[string]any{}
	}
	for k, v := range status {
		current[k] = v
	}
	if err := unstructured.SetNestedMap(latest.Object, current, "status"); err != nil {
		t.Fatal(err)
	}
	if err := env.Client.Status().Patch(ctx, latest, client.MergeFrom(before)); err != nil {
		t.Fatalf("patching the status of %s %s: %v", obj.GetKind(), obj.GetName(), err)
	}
}

// update applies change to the latest version of obj, retrying on conflicts.
func update[T client.Object](t *testing.T, obj T, change func(T)) {
	t.Helper()
	ctx := context.Background()
	NewWithT(t).Eventually(func() error {
		if err := env.Client.Get(ctx, client.ObjectKeyFromObject(obj), obj); err != nil {
			return err
		}
		change(obj)
		return env.Client.Update(ctx, obj)
	}).WithTimeout(timeout).WithPolling(interval).Should(Succeed())
}

// getCluster returns the latest version of a Cluster.
func getCluster(g Gomega, c *clusterv1.Cluster) *clusterv1.Cluster {
	latest := &clusterv1.Cluster{}
	g.Expect(env.Client.Get(context.Background(), client.ObjectKeyFromObject(c), latest)).To(Succeed())
	return latest
}

func v1beta2Condition(c *clusterv1.Cluster, t string) metav1.Condition {
	if cond := conditions.GetV1Beta2(c, t); cond != nil {
		return *cond
	}
	return metav1.Condition{}
}

func infraWithEndpoint(p builder.Provider, ns, name, host string, port int64) *unstructured.Unstructured {
	infra := p.InfraCluster(ns, name)
	_ = unstructured.SetNestedMap(infra.Object, map[string]any{"host": host, "port": port}, "spec", "controlPlaneEndpoint")
	return infra
}

func TestProvisionedByContract(t *testing.T) {
	tests := []struct {
		name     string
		provider builder.Provider
		// refVersion is the apiVersion the Cluster's infrastructureRef starts with.
		refVersion string
		ready      map[string]any
	}{
		{
			name:       "v1beta1 contract: status.ready, failure domains as a map",
			provider:   builder.V1Beta1,
			refVersion: builder.InfrastructureGroup + "/v1alpha1",
			ready: map[string]any{
				"ready": true,
				"failureDomains": map[string]any{
					"fd-a": map[string]any{"controlPlane": true, "attributes": map[string]any{"zone": "a"}},
					"fd-b": map[string]any{},
				},
			},
		},
		{
			name:       "v1beta2 contract: status.initialization.provisioned, failure domains as a list",
			provider:   builder.V1Beta2,
			refVersion: builder.InfrastructureV2Group + "/v1beta2",
			ready: map[string]any{
				"initialization": map[string]any{"provisioned": true},
				"failureDomains": []any{
					map[string]any{"name": "fd-a", "controlPlane": true, "attributes": map[string]any{"zone": "a"}},
					map[string]any{"name": "fd-b"},
				},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			ns := env.NewNamespace(t)
			infra := infraWithEndpoint(tt.provider, ns, "infra", "10.0.0.1", 6443)
			create(t, infra)
			cluster := builder.Cluster(ns, "c1", infra, nil)
			cluster.Spec.InfrastructureRef.APIVersion = tt.refVersion
			create(t, cluster)

			g.Eventually(func(g Gomega) {
				c := getCluster(g, cluster)
				g.Expect(c.Finalizers).To(ContainElement(clusterv1.ClusterFinalizer))
				g.Expect(c.Spec.InfrastructureRef.APIVersion).To(Equal(infra.GetAPIVersion()), "the reference is bumped to the contract's newest version")
				g.Expect(c.Status.Phase).To(Equal(string(clusterv1.ClusterPhaseProvisioning)))
				g.Expect(c.Status.InfrastructureReady).To(BeFalse())
				g.Expect(c.Spec.ControlPlaneEndpoint.IsZero()).To(BeTrue(), "the endpoint is adopted only once the infrastructure is provisioned")
				g.Expect(v1beta2Condition(c, clusterv1.ClusterInfrastructureReadyV1Beta2Condition).Reason).To(Equal(clusterv1.ClusterInfrastructureNotReadyV1Beta2Reason))

				got := infra.DeepCopy()
				g.Expect(env.Client.Get(context.Background(), client.ObjectKeyFromObject(infra), got)).To(Succeed())
				g.Expect(got.GetLabels()).To(HaveKeyWithValue(clusterv1.ClusterNameLabel, "c1"))
				g.Expect(got.GetOwnerReferences()).To(ConsistOf(metav1.OwnerReference{
					APIVersion: clusterv1.GroupVersion.String(), Kind: "Cluster", Name: "c1", UID: c.UID,
					Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true),
				}))
			}).WithTimeout(timeout).WithPolling(interval).Should(Succeed())

			setStatus(t, infra, tt.ready)

			g.Eventually(func(g Gomega) {
				c := getCluster(g, cluster)
				g.Expect(c.Status.Phase).To(Equal(string(clusterv1.ClusterPhaseProvisioned)))
				g.Expect(c.Status.InfrastructureReady).To(BeTrue())
				g.Expect(c.Spec.ControlPlaneEndpoint).To(Equal(clusterv1.APIEndpoint{Host: "10.0.0.1", Port: 6443}))
				g.Expect(c.Status.FailureDomains).To(Equal(clusterv1.FailureDomains{
					"fd-a": {ControlPlane: true, Attributes: map[string]string{"zone": "a"}},
					"fd-b": {},
				}))
				g.Expect(conditions.IsTrue(c, clusterv1.InfrastructureReadyCondition)).To(BeTrue())
				g.Expect(conditions.IsTrue(c, clusterv1.ReadyCondition)).To(BeTrue())
				g.Expect(v1beta2Condition(c, clusterv1.ClusterInfrastructureReadyV1Beta2Condition).Status).To(Equal(metav1.ConditionTrue))
				g.Expect(v1beta2Condition(c, clusterv1.PausedV1Beta2Condition).Reason).To(Equal(clusterv1.NotPausedV1Beta2Reason))
				g.Expect(c.Status.ObservedGeneration).To(Equal(c.Generation))
			}).WithTimeout(timeout).WithPolling(interval).Should(Succeed())
		})
	}
}

func TestRestoresOwnershipAndFinalizer(t *testing.T) {
	g := NewWithT(t)
	ns := env.NewNamespace(t)
	infra := builder.V1Beta1.InfraCluster(ns, "infra")
	create(t, infra)
	cluster := builder.Cluster(ns, "c1", infra, nil)
	create(t, cluster)

	owned := func(g Gomega) {
		c := getCluster(g, cluster)
		g.Expect(c.Finalizers).To(ContainElement(clusterv1.ClusterFinalizer))
		got := infra.DeepCopy()
		g.Expect(env.Client.Get(context.Background(), client.ObjectKeyFromObject(infra), got)).To(Succeed())
		g.Expect(metav1.IsControlledBy(got, c)).To(BeTrue())
	}
	g.Eventually(owned).WithTimeout(timeout).WithPolling(interval).Should(Succeed())

	update(t, infra, func(u *unstructured.Unstructured) { u.SetOwnerReferences(nil) })
	update(t, cluster, func(c *clusterv1.Cluster) { c.Finalizers = nil })

	g.Eventually(owned).WithTimeout(timeout).WithPolling(interval).Should(Succeed())
}

func TestPause(t *testing.T) {
	g := NewWithT(t)
	ns := env.NewNamespace(t)
	infra := infraWithEndpoint(builder.V1Beta1, ns, "infra", "10.0.0.2", 6443)
	create(t, infra)
	cluster := builder.Cluster(ns, "c1", infra, nil)
	create(t, cluster)
	g.Eventually(func(g Gomega) {
		g.Expect(getCluster(g, cluster).Status.Phase).To(Equal(string(clusterv1.ClusterPhaseProvisioning)))
	}).WithTimeout(timeout).WithPolling(interval).Should(Succeed())

	update(t, cluster, func(c *clusterv1.Cluster) { c.Spec.Paused = true })
	g.Eventually(func(g Gomega) {
		cond := v1beta2Condition(getCluster(g, cluster), clusterv1.PausedV1Beta2Condition)
		g.Expect(cond.Status).To(Equal(metav1.ConditionTrue))
		g.Expect(cond.Reason).To(Equal(clusterv1.PausedV1Beta2Reason))
		g.Expect(cond.Message).To(Equal("Cluster spec.paused is set to true"))
	}).WithTimeout(timeout).WithPolling(interval).Should(Succeed())

	setStatus(t, infra, map[string]any{"ready": true})
	g.Consistently(func(g Gomega) {
		c := getCluster(g, cluster)
		g.Expect(c.Status.InfrastructureReady).To(BeFalse())
		g.Expect(c.Status.Phase).To(Equal(string(clusterv1.ClusterPhaseProvisioning)))
		g.Expect(c.Spec.ControlPlaneEndpoint.IsZero()).To(BeTrue())
	}).WithTimeout(2 * time.Second).WithPolling(interval).Should(Succeed())

	update(t, cluster, func(c *clusterv1.Cluster) { c.Spec.Paused = false })
	g.Eventually(func(g Gomega) {
		c := getCluster(g, cluster)
		g.Expect(c.Status.Phase).To(Equal(string(clusterv1.ClusterPhaseProvisioned)))
		g.Expect(c.Spec.ControlPlaneEndpoint.Host).To(Equal("10.0.0.2"))
		g.Expect(v1beta2Condition(c, clusterv1.PausedV1Beta2Condition).Status).To(Equal(metav1.ConditionFalse))
	}).WithTimeout(timeout).WithPolling(interval).Should(Succeed())
}

func TestTerminalFailure(t *testing.T) {
	g := NewWithT(t)
	ns := env.NewNamespace(t)
	infra := builder.V1Beta1.InfraCluster(ns, "infra")
	create(t, infra)
	cluster := builder.Cluster(ns, "c1", infra, nil)
	create(t, cluster)
	g.Eventually(func(g Gomega) {
		g.Expect(getCluster(g, cluster).Status.Phase).To(Equal(string(clusterv1.ClusterPhaseProvisioning)))
	}).WithTimeout(timeout).WithPolling(interval).Should(Succeed())

	setStatus(t, infra, map[string]any{"failureReason": "CreateError", "failureMessage": "Quota exceeded"})
	g.Eventually(func(g Gomega) {
		c := getCluster(g, cluster)
		g.Expect(c.Status.Phase).To(Equal(string(clusterv1.ClusterPhaseFailed)))
		g.Expect(c.Status.FailureReason).To(Equal(ptr.To(clusterv1.CreateClusterError)))
		g.Expect(c.Status.FailureMessage).To(Equal(ptr.To(
			`Failure detected from referenced resource infrastructure.cluster.x-k8s.io/v1beta1, Kind=GenericInfrastructureCluster with name "infra": Quota exceeded`)))
	}).WithTimeout(timeout).WithPolling(interval).Should(Succeed())

	// A terminal failure stays, even when the provider clears it.
	setStatus(t, infra, map[string]any{"failureReason": nil, "failureMessage": nil, "ready": true})
	g.Consistently(func(g Gomega) {
		g.Expect(getCluster(g, cluster).Status.Phase).To(Equal(string(clusterv1.ClusterPhaseFailed)))
	}).WithTimeout(time.Second).WithPolling(interval).Should(Succeed())
}

func TestExternallyManagedInfrastructure(t *testing.T) {
	g := NewWithT(t)
	ns := env.NewNamespace(t)
	infra := infraWithEndpoint(builder.V1Beta1, ns, "infra", "10.0.0.3", 6443)
	infra.SetAnnotations(map[string]string{clusterv1.ManagedByAnnotation: "my-system"})
	create(t, infra)
	// The external system provisions it; the Cluster's own endpoint, set by the user, is kept.
	setStatus(t, infra, map[string]any{"ready": true})
	cluster := builder.Cluster(ns, "c1", infra, nil)
	cluster.Spec.ControlPlaneEndpoint = clusterv1.APIEndpoint{Host: "lb.example.com", Port: 443}
	create(t, cluster)

	g.Eventually(func(g Gomega) {
		c := getCluster(g, cluster)
		g.Expect(c.Status.Phase).To(Equal(string(clusterv1.ClusterPhaseProvisioned)))
		g.Expect(c.Spec.ControlPlaneEndpoint).To(Equal(clusterv1.APIEndpoint{Host: "lb.example.com", Port: 443}))
	}).WithTimeout(timeout).WithPolling(interval).Should(Succeed())

	got := infra.DeepCopy()
	g.Expect(env.Client.Get(context.Background(), client.ObjectKeyFromObject(infra), got)).To(Succeed())
	g.Expect(got.Object["spec"]).To(Equal(infra.Object["spec"]), "the Cluster never writes the InfraCluster's spec")
	g.Expect(got.Object["status"]).To(Equal(map[string]any{"ready": true}), "nor its status")
	g.Expect(got.GetAnnotations()).To(Equal(infra.GetAnnotations()))
	g.Expect(got.GetLabels()).To(Equal(map[string]string{clusterv1.ClusterNameLabel: "c1"}))
}

func TestControlPlaneAndWorkers(t *testing.T) {
	g := NewWithT(t)
	ns := env.NewNamespace(t)
	infra := builder.V1Beta1.InfraCluster(ns, "infra")
	cp := builder.V1Beta1.ControlPlane(ns, "cp")
	_ = unstructured.SetNestedMap(cp.Object, map[string]any{"host": "cp.example.com", "port": int64(6443)}, "spec", "controlPlaneEndpoint")
	_ = unstructured.SetNestedField(cp.Object, int64(3), "spec", "replicas")
	create(t, infra, cp)
	setStatus(t, infra, map[string]any{"ready": true})
	cluster := builder.Cluster(ns, "c1", infra, cp)
	create(t, cluster)

	infraMachine := builder.V1Beta1.InfraMachine(ns, "im")
	var workers []*clusterv1.Machine
	for i, ready := range []bool{true, false} {
		m := builder.Machine(ns, fmt.Sprintf("w-%d", i), "c1", infraMachine, nil)
		create(t, m)
		if ready {
			m.Status.V1Beta2 = &clusterv1.MachineV1Beta2Status{Conditions: []metav1.Condition{
				{Type: "Ready", Status: metav1.ConditionTrue, Reason: "Ready", LastTransitionTime: metav1.Now()},
				{Type: "Available", Status: metav1.ConditionTrue, Reason: "Available", LastTransitionTime: metav1.Now()},
			}}
			g.Expect(env.Client.Status().Update(context.Background(), m)).To(Succeed())
		}
		workers = append(workers, m)
	}

	g.Eventually(func(g Gomega) {
		c := getCluster(g, cluster)
		g.Expect(c.Status.Phase).To(Equal(string(clusterv1.ClusterPhaseProvisioning)), "no endpoint yet")
		g.Expect(c.Status.ControlPlaneReady).To(BeFalse())
		g.Expect(conditions.Get(c, clusterv1.ControlPlaneInitializedCondition).Reason).To(Equal(clusterv1.WaitingForControlPlaneProviderInitializedReason))
		g.Expect(c.Status.V1Beta2.Workers).To(Equal(&clusterv1.WorkersStatus{
			DesiredReplicas: ptr.To[int32](2), Replicas: ptr.To[int32](2), ReadyReplicas: ptr.To[int32](1),
			AvailableReplicas: ptr.To[int32](1), UpToDateReplicas: ptr.To[int32](0),
			Versions: []clusterv1.StatusVersion{{Version: "v1.31.0", Replicas: 2}},
		}))
	}).WithTimeout(timeout).WithPolling(interval).Should(Succeed())

	setStatus(t, cp, map[string]any{"ready": true, "initialized": true, "replicas": int64(3), "readyReplicas": int64(2),
		"v1beta2":  map[string]any{"availableReplicas": int64(2), "upToDateReplicas": int64(3)},
		"versions": []any{map[string]any{"version": "v1.30.2", "replicas": int64(1)}, map[string]any{"version": "v1.31.0", "replicas": int64(2)}}})
	g.Eventually(func(g Gomega) {
		c := getCluster(g, cluster)
		g.Expect(c.Status.Phase).To(Equal(string(clusterv1.ClusterPhaseProvisioned)))
		g.Expect(c.Spec.ControlPlaneEndpoint).To(Equal(clusterv1.APIEndpoint{Host: "cp.example.com", Port: 6443}), "the control plane provides the endpoint")
		g.Expect(c.Status.ControlPlaneReady).To(BeTrue())
		g.Expect(conditions.IsTrue(c, clusterv1.ControlPlaneInitializedCondition)).To(BeTrue())
		g.Expect(conditions.IsTrue(c, clusterv1.ControlPlaneReadyCondition)).To(BeTrue())
		g.Expect(v1beta2Condition(c, clusterv1.ClusterControlPlaneInitializedV1Beta2Condition).Status).To(Equal(metav1.ConditionTrue))
		g.Expect(v1beta2Condition(c, clusterv1.ClusterControlPlaneAvailableV1Beta2Condition).Status).To(Equal(metav1.ConditionTrue))
		g.Expect(c.Status.V1Beta2.ControlPlane).To(Equal(&clusterv1.ClusterControlPlaneStatus{
			DesiredReplicas: ptr.To[int32](3), Replicas: ptr.To[int32](3), ReadyReplicas: ptr.To[int32](2),
			AvailableReplicas: ptr.To[int32](2), UpToDateReplicas: ptr.To[int32](3),
			Versions: []clusterv1.StatusVersion{{Version: "v1.30.2", Replicas: 1}, {Version: "v1.31.0", Replicas: 2}},
		}))
		available := v1beta2Condition(c, clusterv1.ClusterAvailableV1Beta2Condition)
		g.Expect(available.Status).To(Equal(metav1.ConditionTrue), available.Message)
	}).WithTimeout(timeout).WithPolling(interval).Should(Succeed())

	// A worker Machine becoming ready is counted.
	m := workers[1]
	g.Expect(env.Client.Get(context.Background(), client.ObjectKeyFromObject(m), m)).To(Succeed())
	m.Status.V1Beta2 = &clusterv1.MachineV1Beta2Status{Conditions: []metav1.Condition{
		{Type: "Ready", Status: metav1.ConditionTrue, Reason: "Ready", LastTransitionTime: metav1.Now()},
	}}
	g.Expect(env.Client.Status().Update(context.Background(), m)).To(Succeed())
	g.Eventually(func(g Gomega) {
		g.Expect(getCluster(g, cluster).Status.V1Beta2.Workers.ReadyReplicas).To(Equal(ptr.To[int32](2)))
	}).WithTimeout(timeout).WithPolling(interval).Should(Succeed())
}

// TestVersionChangesReachTheCluster: an update of a descendant that changes only what the Cluster's
// status.v1beta2 versions are made of (a Machine's kubelet version, a MachineSet's, MachineDeployment's or
// MachinePool's status.versions) reconciles the Cluster; one that changes nothing it reads does not.
func TestVersionChangesReachTheCluster(t *testing.T) {
	v := func(version string, replicas int32) []clusterv1.StatusVersion {
		return []clusterv1.StatusVersion{{Version: version, Replicas: replicas}}
	}
	machine := &clusterv1.Machine{Spec: clusterv1.MachineSpec{Version: ptr.To("v1.33.1")}}
	upgradedNode := machine.DeepCopy()
	upgradedNode.Status.NodeInfo = &corev1.NodeSystemInfo{KubeletVersion: "v1.32.4"}
	sameVersionNode := machine.DeepCopy()
	sameVersionNode.Status.NodeInfo = &corev1.NodeSystemInfo{KubeletVersion: "v1.33.1", OSImage: "Ubuntu"}
	ms := &clusterv1.MachineSet{Status: clusterv1.MachineSetStatus{Versions: v("v1.32.4", 1)}}
	md := &clusterv1.MachineDeployment{Status: clusterv1.MachineDeploymentStatus{Versions: v("v1.32.4", 1)}}
	mp := &clusterv1.MachinePool{Status: clusterv1.MachinePoolStatus{Versions: v("v1.32.4", 1)}}
	tests := []struct {
		name          string
		before, after client.Object
		want          bool
	}{
		{name: "a Machine's kubelet version", before: machine, after: upgradedNode, want: true},
		{name: "a Machine's Node reporting its spec.version", before: machine, after: sameVersionNode, want: false},
		{name: "a MachineSet's versions", before: ms, after: &clusterv1.MachineSet{Status: clusterv1.MachineSetStatus{Versions: v("v1.33.1", 1)}}, want: true},
		{name: "a MachineSet's versions unchanged", before: ms, after: ms.DeepCopy(), want: false},
		{name: "a MachineDeployment's versions", before: md, after: &clusterv1.MachineDeployment{Status: clusterv1.MachineDeploymentStatus{Versions: v("v1.32.4", 2)}}, want: true},
		{name: "a MachinePool's versions", before: mp, after: &clusterv1.MachinePool{}, want: true},
		{name: "a MachinePool's phase", before: mp, after: &clusterv1.MachinePool{Status: clusterv1.MachinePoolStatus{Versions: v("v1.32.4", 1), Phase: "Running"}}, want: false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			var p interface {
				Update(event.UpdateEvent) bool
			}
			switch tt.before.(type) {
			case *clusterv1.Machine:
				p = machineCountersChanged()
			case *clusterv1.MachineSet:
				p = machineSetFactsChanged()
			case *clusterv1.MachineDeployment:
				p = machineDeploymentFactsChanged()
			case *clusterv1.MachinePool:
				p = machinePoolFactsChanged()
			}
			g.Expect(p.Update(event.UpdateEvent{ObjectOld: tt.before, ObjectNew: tt.after})).To(Equal(tt.want))
		})
	}
}
