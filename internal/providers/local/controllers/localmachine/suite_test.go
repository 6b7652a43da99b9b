package localmachine

import (
	"context"
	"os"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/controller"

	infrav1 "github.com/capstan-dev/capstan/api/infrastructure/local/v1alpha1"
	"github.com/capstan-dev/capstan/internal/binaries"
	"github.com/capstan-dev/capstan/internal/controllermanager"
	"github.com/capstan-dev/capstan/internal/providers/local/backend/process"
	"github.com/capstan-dev/capstan/internal/providers/local/controllers/localcluster"
	"github.com/capstan-dev/capstan/internal/test/envtest"
)

var env *envtest.Environment

func TestMain(m *testing.M) {
	os.Exit(envtest.Run(m, envtest.Options{SchemeBuilders: []func(*runtime.Scheme) error{infrav1.AddToScheme}}, func(e *envtest.Environment) { env = e }))
}

// provider is the LocalCluster and LocalMachine controllers running in the test, over a process backend.
type provider struct {
	backend *process.Backend
	stop    func()
}

// startProvider runs the LocalCluster and LocalMachine controllers with a process backend over dataDir until stop is called
// (or the test ends); stopping stops the workload processes too, as stopping the provider does.
func startProvider(t *testing.T, dataDir string) *provider {
	t.Helper()
	apiserver, err := binaries.Find("kube-apiserver", "")
	if err != nil {
		t.Fatal(err)
	}
	etcd, err := binaries.Find("etcd", "")
	if err != nil {
		t.Fatal(err)
	}
	b, err := process.New(process.Options{
		DataDir: dataDir, KubeAPIServerPath: apiserver, EtcdPath: etcd,
		ProbeInterval: 200 * time.Millisecond, NodeRefreshInterval: 200 * time.Millisecond, MinRestartBackoff: 100 * time.Millisecond, MaxRestartBackoff: time.Second,
		StopTimeout: 5 * time.Second,
	})
	if err != nil {
		t.Fatal(err)
	}
	opts := controllermanager.DefaultOptions("test-infra-local")
	opts.MetricsBindAddr, opts.HealthAddr = "0", "0"
	mgr, err := opts.New(env.Config, env.Scheme)
	if err != nil {
		t.Fatal(err)
	}
	if err := mgr.Add(b); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(ctrl.LoggerInto(context.Background(), ctrl.Log))
	opts2 := controller.Options{MaxConcurrentReconciles: 5, SkipNameValidation: ptr.To(true)}
	lcr := &localcluster.Reconciler{Client: mgr.GetClient(), APIReader: mgr.GetAPIReader(), Backend: b, RetryInterval: time.Second}
	if err := lcr.SetupWithManager(ctx, mgr, opts2); err != nil {
		t.Fatal(err)
	}
	r := &Reconciler{Client: mgr.GetClient(), Backend: b, RetryInterval: time.Second}
	if err := r.SetupWithManager(ctx, mgr, opts2); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := mgr.Start(ctx); err != nil {
			t.Errorf("manager: %v", err)
		}
	}()
	p := &provider{backend: b}
	stopped := false
	p.stop = func() {
		if stopped {
			return
		}
		stopped = true
		cancel()
		<-done
		b.Shutdown()
	}
	t.Cleanup(p.stop)
	return p
}
