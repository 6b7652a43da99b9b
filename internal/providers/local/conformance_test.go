package local_test

import (
	"context"
	"os"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"

	infrav1 "github.com/capstan-dev/capstan/api/infrastructure/local/v1alpha1"
	"github.com/capstan-dev/capstan/config/crd"
	"github.com/capstan-dev/capstan/internal/binaries"
	"github.com/capstan-dev/capstan/internal/controllermanager"
	"github.com/capstan-dev/capstan/internal/providers/local"
	"github.com/capstan-dev/capstan/internal/providers/local/backend/process"
	"github.com/capstan-dev/capstan/internal/release"
	"github.com/capstan-dev/capstan/internal/test/conformance"
	"github.com/capstan-dev/capstan/internal/test/envtest"
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
	dataDir := t.TempDir()
	conformance.Run(t, conformance.Provider{
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
		Start: func(ctx context.Context, cfg *rest.Config) error { return runProvider(ctx, cfg, dataDir) },
	}, conformance.Options{Config: env.Config, Timeout: 90 * time.Second})
}

// runProvider runs the provider as `capstan infra-local` does, until ctx is done.
func runProvider(ctx context.Context, cfg *rest.Config, dataDir string) error {
	apiserver, err := binaries.Find("kube-apiserver", "")
	if err != nil {
		return err
	}
	etcd, err := binaries.Find("etcd", "")
	if err != nil {
		return err
	}
	b, err := process.New(process.Options{DataDir: dataDir, KubeAPIServerPath: apiserver, EtcdPath: etcd, StopTimeout: 5 * time.Second})
	if err != nil {
		return err
	}
	defer b.Shutdown()
	scheme, err := local.NewScheme()
	if err != nil {
		return err
	}
	opts := controllermanager.DefaultOptions("conformance-infra-local")
	opts.MetricsBindAddr, opts.HealthAddr = "0", "0"
	mgr, err := opts.New(cfg, scheme)
	if err != nil {
		return err
	}
	if err := mgr.Add(b); err != nil {
		return err
	}
	if err := local.Setup(ctx, mgr, local.Options{Backend: b}); err != nil {
		return err
	}
	return mgr.Start(ctrl.LoggerInto(ctx, ctrl.Log))
}
