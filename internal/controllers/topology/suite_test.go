package topology

import (
	"context"
	"os"
	"testing"
	"time"

	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/capstan-dev/capstan/internal/contract"
	"github.com/capstan-dev/capstan/internal/controllers/clusterclass"
	"github.com/capstan-dev/capstan/internal/test/apicount"
	"github.com/capstan-dev/capstan/internal/test/builder"
	"github.com/capstan-dev/capstan/internal/test/envtest"
)

var env *envtest.Environment

const (
	timeout  = 60 * time.Second
	interval = 200 * time.Millisecond
)

func TestMain(m *testing.M) {
	os.Exit(envtest.Run(m, envtest.Options{CRDs: builder.CRDs()}, func(e *envtest.Environment) { env = e }))
}

// startManager runs the ClusterClass and topology controllers on namespace until the test ends, the
// topology controller set up as options say. It returns the counter of the manager's requests to the
// API server.
func startManager(t *testing.T, namespace string, options ...func(*Reconciler)) *apicount.Counter {
	t.Helper()
	counter := apicount.New()
	cfg := rest.CopyConfig(env.Config)
	cfg.Wrap(counter.Wrap)
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Scheme:                 env.Scheme,
		Cache:                  cache.Options{DefaultNamespaces: map[string]cache.Config{namespace: {}}},
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
		Controller:             config.Controller{UsePriorityQueue: ptr.To(true), SkipNameValidation: ptr.To(true)},
	})
	if err != nil {
		t.Fatalf("creating the manager: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	if err := (&clusterclass.Reconciler{Client: mgr.GetClient(), Contracts: &contract.Resolver{Client: mgr.GetAPIReader()}}).
		SetupWithManager(ctx, mgr, controller.Options{MaxConcurrentReconciles: 2}); err != nil {
		t.Fatalf("setting up the ClusterClass controller: %v", err)
	}
	r := &Reconciler{Client: mgr.GetClient()}
	for _, o := range options {
		o(r)
	}
	if err := r.SetupWithManager(ctx, mgr, controller.Options{MaxConcurrentReconciles: 2}); err != nil {
		t.Fatalf("setting up the topology controller: %v", err)
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
	return counter
}
