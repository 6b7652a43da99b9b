package local_test

import (
	"context"
	"os"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
	infrav1 "github.com/capstan-dev/capstan/api/infrastructure/local/v1alpha1"
	"github.com/capstan-dev/capstan/config/crd"
	"github.com/capstan-dev/capstan/internal/conformance"
	"github.com/capstan-dev/capstan/internal/providers/local/backend/memory"
	"github.com/capstan-dev/capstan/internal/release"
	"github.com/capstan-dev/capstan/internal/test/cabpk"
	"github.com/capstan-dev/capstan/internal/test/conformancetest"
	"github.com/capstan-dev/capstan/internal/test/envtest"
	"github.com/capstan-dev/capstan/internal/test/stack"
)

var env *envtest.Environment

func TestMain(m *testing.M) {
	os.Exit(envtest.Run(m, envtest.Options{SchemeBuilders: []func(*runtime.Scheme) error{infrav1.AddToScheme}}, func(e *envtest.Environment) { env = e }))
}

func newObject(kind, namespace, name string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetAPIVersion(infrav1.GroupVersion.String())
	u.SetKind(kind)
	u.SetNamespace(namespace)
	u.SetName(name)
	u.Object["spec"] = map[string]any{}
	return u
}

// TestConformance checks the provider, its CRDs and its release artifacts against the provider contract
// rules, with the provider's controllers and process backend running.
func TestConformance(t *testing.T) {
	runConformance(t, func() stack.Options {
		return stack.Options{Local: true, LocalDataDir: t.TempDir(), WithoutCore: true}
	})
}

// TestConformanceMemory runs the conformance kit with the memory backend.
func TestConformanceMemory(t *testing.T) {
	runConformance(t, func() stack.Options {
		return stack.Options{Local: true, LocalMemory: &memory.Options{}, WithoutCore: true}
	})
}

// runConformance runs the kit on the provider started with the options newOptions returns (a data
// directory of its own for each start).
func runConformance(t *testing.T, newOptions func() stack.Options) {
	crds, err := crd.Local()
	if err != nil {
		t.Fatal(err)
	}
	p, err := release.Local()
	if err != nil {
		t.Fatal(err)
	}
	repo := t.TempDir()
	if err := release.WriteRepository(repo, release.DefaultVersion, p); err != nil {
		t.Fatal(err)
	}
	report := conformancetest.Run(t, conformance.Provider{
		Name:       p.Name,
		CRDs:       crds,
		Repository: os.DirFS(repo),
		NewInfraCluster: func(namespace, name string) *unstructured.Unstructured {
			lc := newObject("LocalCluster", namespace, name)
			lc.Object["spec"] = map[string]any{"failureDomains": map[string]any{
				"fd-a": map[string]any{"controlPlane": true}, "fd-b": map[string]any{"attributes": map[string]any{"rack": "b"}},
			}}
			return lc
		},
		NewInfraMachine: func(namespace, name string) *unstructured.Unstructured {
			return newObject("LocalMachine", namespace, name)
		},
		InfraMachinePool: infrav1.GroupVersion.WithKind("LocalMachinePool"),
		Start:            func(ctx context.Context, cfg *rest.Config) error { return runProvider(ctx, cfg, newOptions()) },
		// As the provider's manager started with --namespace and --watch-filter.
		StartScoped: func(ctx context.Context, cfg *rest.Config, scope conformance.Scope) error {
			opts := newOptions()
			opts.Namespace, opts.WatchFilter = scope.Namespace, scope.WatchFilter
			return runProvider(ctx, cfg, opts)
		},
		// The API behind a LocalCluster's endpoint is run by its control plane Machines, which a control
		// plane provider creates: the kit's Machines are workers, whose Nodes wait for one.
		InfrastructureReady: createControlPlaneMachine,
	}, conformance.Options{Config: env.Config, Timeout: 90 * time.Second})
	// Every rule is checked: the provider has every kind, a ClusterClass, StartScoped.
	for _, res := range report.With(conformance.Skip, conformance.Warn) {
		t.Errorf("%s %s: %s", res.Status, res.Rule, res.Message)
	}
}

// createControlPlaneMachine does what a control plane provider would: a control plane Machine with kubeadm
// init bootstrap data, and its LocalMachine.
func createControlPlaneMachine(ctx context.Context, c client.Client, cluster *clusterv1.Cluster) error {
	name := cluster.Name + "-control-plane"
	data := cabpk.CloudConfig(cabpk.Data{Init: true, Kubeadm: cabpk.InitConfiguration(cluster.Name, "v1.37.1", "", "", name)})
	if err := c.Create(ctx, cabpk.Secret(cluster.Namespace, name, cluster.Name, data)); err != nil {
		return err
	}
	m := &clusterv1.Machine{
		ObjectMeta: metav1.ObjectMeta{Namespace: cluster.Namespace, Name: name, Labels: map[string]string{
			clusterv1.ClusterNameLabel: cluster.Name, clusterv1.MachineControlPlaneLabel: "",
		}},
		Spec: clusterv1.MachineSpec{
			ClusterName: cluster.Name, Version: ptr.To("v1.37.1"),
			Bootstrap:         clusterv1.Bootstrap{DataSecretName: ptr.To(name)},
			InfrastructureRef: corev1.ObjectReference{APIVersion: infrav1.GroupVersion.String(), Kind: "LocalMachine", Name: name},
		},
	}
	if err := c.Create(ctx, m); err != nil {
		return err
	}
	// Unstructured: the kit's client knows only Kubernetes' and Cluster API's types.
	lm := newObject("LocalMachine", cluster.Namespace, name)
	lm.SetLabels(map[string]string{clusterv1.ClusterNameLabel: cluster.Name})
	lm.SetOwnerReferences([]metav1.OwnerReference{{APIVersion: clusterv1.GroupVersion.String(), Kind: "Machine", Name: name, UID: m.UID}})
	return c.Create(ctx, lm)
}

// runProvider runs the provider alone, as its Deployment does, until ctx is done.
func runProvider(ctx context.Context, cfg *rest.Config, opts stack.Options) error {
	s, err := stack.Start(ctx, cfg, opts)
	if err != nil {
		return err
	}
	return s.Wait()
}
