// Package stack starts capstan's core controllers and, optionally, the kubeadm bootstrap and control plane
// providers, the local infrastructure provider (with its process backend) or the test provider of package
// provider, in one controller-runtime manager against an envtest Environment, for end-to-end tests: what
// the providers' Deployments would run, which the test API server cannot run.
package stack

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	bootstrapv1 "github.com/capstan-dev/capstan/api/bootstrap/kubeadm/v1beta1"
	controlplanev1 "github.com/capstan-dev/capstan/api/controlplane/kubeadm/v1beta1"
	infrav1 "github.com/capstan-dev/capstan/api/infrastructure/local/v1alpha1"
	configlocal "github.com/capstan-dev/capstan/config/local"
	"github.com/capstan-dev/capstan/internal/binaries"
	"github.com/capstan-dev/capstan/internal/clusterctl/yamlprocessor"
	"github.com/capstan-dev/capstan/internal/controllermanager"
	"github.com/capstan-dev/capstan/internal/core"
	"github.com/capstan-dev/capstan/internal/manifest"
	"github.com/capstan-dev/capstan/internal/providers/kubeadm/bootstrap"
	"github.com/capstan-dev/capstan/internal/providers/kubeadm/controlplane"
	"github.com/capstan-dev/capstan/internal/providers/local"
	"github.com/capstan-dev/capstan/internal/providers/local/backend"
	"github.com/capstan-dev/capstan/internal/providers/local/backend/memory"
	"github.com/capstan-dev/capstan/internal/providers/local/backend/process"
	"github.com/capstan-dev/capstan/internal/test/provider"
)

// Options say what runs next to the core controllers.
type Options struct {
	// Local runs the local infrastructure provider with a process backend whose data directory is
	// LocalDataDir (a temporary directory of the test when empty and the stack is started with ForTest).
	Local        bool
	LocalDataDir string
	// LocalMemory, with Local, runs the local provider with a memory backend of these options instead
	// (no processes, no data directory).
	LocalMemory *memory.Options
	// LocalBackend, with Local, runs the local provider with this backend instead, which the caller runs
	// and stops (for example a memory backend in another process, see package remotebackend).
	LocalBackend backend.Backend
	// Workload, when set, runs the test provider, whose Nodes register in the API server of Workload.
	Workload *rest.Config
	// WithoutCore leaves the core controllers out, to run a provider alone as its own Deployment would.
	WithoutCore bool
	// Kubeadm runs the kubeadm bootstrap and control plane providers.
	Kubeadm bool
	// ControlPlaneHealthInterval, with Kubeadm, is the control plane provider's
	// --control-plane-health-interval; 0 keeps its default (5m).
	ControlPlaneHealthInterval time.Duration
	// Namespace restricts the manager to one namespace, as --namespace does; "" watches every namespace.
	Namespace string
	// WatchFilter restricts the local provider's controllers to objects labelled
	// cluster.x-k8s.io/watch-filter with this value, as --watch-filter does.
	WatchFilter string
	// Transport, when set, wraps the HTTP transport of each component's client to the API server
	// ("core", "bootstrap", "controlplane", "local": the client its controllers read uncached objects
	// and write with) and of what the components share ("manager": the informers, the event recorder),
	// so that a benchmark can tell which component makes which request. The components still share
	// one manager and one cache, as without it.
	Transport func(component string) func(http.RoundTripper) http.RoundTripper
}

// ProviderUserAgent is the user agent of the test provider's requests to the management API server.
const ProviderUserAgent = "capstan-test-provider"

// Stack is a running manager.
type Stack struct {
	// Manager runs the controllers.
	Manager ctrl.Manager
	// Backend is the local provider's backend; nil unless Options.Local.
	Backend *process.Backend
	// MemoryBackend is the local provider's memory backend; nil unless Options.LocalMemory.
	MemoryBackend *memory.Backend

	done chan struct{}
	err  error

	cfg       *rest.Config
	transport func(component string) func(http.RoundTripper) http.RoundTripper
}

// componentManager is the manager as the component sees it: with Options.Transport, its client and
// API reader go through the component's transport; everything else is the shared manager.
type componentManager struct {
	ctrl.Manager
	client client.Client
	reader client.Reader
}

func (m *componentManager) GetClient() client.Client    { return m.client }
func (m *componentManager) GetAPIReader() client.Reader { return m.reader }

func (s *Stack) managerFor(component string) (ctrl.Manager, error) {
	if s.transport == nil {
		return s.Manager, nil
	}
	cfg := rest.CopyConfig(s.cfg)
	cfg.Wrap(s.transport(component))
	reader, err := client.New(cfg, client.Options{Scheme: s.Manager.GetScheme(), Mapper: s.Manager.GetRESTMapper()})
	if err != nil {
		return nil, err
	}
	clientOpts := controllermanager.ClientOptions()
	clientOpts.Scheme, clientOpts.Mapper, clientOpts.Cache.Reader = s.Manager.GetScheme(), s.Manager.GetRESTMapper(), s.Manager.GetCache()
	c, err := controllermanager.NewClient(cfg, clientOpts)
	if err != nil {
		return nil, err
	}
	return &componentManager{Manager: s.Manager, client: c, reader: reader}, nil
}

// Start starts the stack against the API server of cfg; it runs until ctx is done (see Wait).
func Start(ctx context.Context, cfg *rest.Config, opts Options) (*Stack, error) {
	if _, err := logr.FromContext(ctx); err != nil {
		ctx = ctrl.LoggerInto(ctx, ctrl.Log)
	}
	scheme, err := core.NewScheme()
	if err != nil {
		return nil, err
	}
	if opts.Local {
		if err := infrav1.AddToScheme(scheme); err != nil {
			return nil, err
		}
	}
	if opts.Kubeadm {
		if err := bootstrapv1.AddToScheme(scheme); err != nil {
			return nil, err
		}
		if err := controlplanev1.AddToScheme(scheme); err != nil {
			return nil, err
		}
	}
	mgrCfg := cfg
	if opts.Transport != nil {
		mgrCfg = rest.CopyConfig(cfg)
		mgrCfg.Wrap(opts.Transport("manager"))
	}
	mgrOpts := ctrl.Options{
		Scheme:  scheme,
		Metrics: metricsserver.Options{BindAddress: "0"},
		// Tests may run several stacks in one process, each with controllers of the same names.
		Controller: config.Controller{UsePriorityQueue: ptr.To(true), SkipNameValidation: ptr.To(true)},
	}
	if opts.Namespace != "" {
		mgrOpts.Cache.DefaultNamespaces = map[string]cache.Config{opts.Namespace: {}}
	}
	// As controllermanager: provider objects and labelled Secrets read from the cache.
	mgr, err := ctrl.NewManager(mgrCfg, controllermanager.ManagerOptions(mgrOpts))
	if err != nil {
		return nil, err
	}
	s := &Stack{Manager: mgr, done: make(chan struct{}), cfg: cfg, transport: opts.Transport}
	if err := s.setup(ctx, opts); err != nil {
		if s.Backend != nil {
			s.Backend.Shutdown()
		}
		return nil, err
	}
	go func() {
		defer close(s.done)
		s.err = mgr.Start(ctx)
		if s.Backend != nil {
			s.Backend.Shutdown()
		}
	}()
	return s, nil
}

func (s *Stack) setup(ctx context.Context, opts Options) error {
	if !opts.WithoutCore {
		m, err := s.managerFor("core")
		if err != nil {
			return err
		}
		if err := core.Setup(ctx, m, core.Options{Concurrency: core.DefaultConcurrency()}); err != nil {
			return err
		}
	}
	if opts.Workload != nil {
		// The test provider writes with its own user agent, so that a request counter tells its requests from
		// the core's.
		cfg := rest.CopyConfig(s.Manager.GetConfig())
		cfg.UserAgent = ProviderUserAgent
		c, err := client.New(cfg, client.Options{Scheme: s.Manager.GetScheme(), Mapper: s.Manager.GetRESTMapper(),
			Cache: &client.CacheOptions{Reader: s.Manager.GetCache(), DisableFor: []client.Object{&corev1.Secret{}, &corev1.ConfigMap{}}}})
		if err != nil {
			return err
		}
		if err := (&provider.Provider{Client: c, Workload: opts.Workload}).SetupWithManager(s.Manager); err != nil {
			return err
		}
	}
	if opts.Kubeadm {
		m, err := s.managerFor("bootstrap")
		if err != nil {
			return err
		}
		if err := bootstrap.Setup(ctx, m, bootstrap.DefaultOptions()); err != nil {
			return err
		}
		if m, err = s.managerFor("controlplane"); err != nil {
			return err
		}
		cpOpts := controlplane.DefaultOptions()
		if opts.ControlPlaneHealthInterval > 0 {
			cpOpts.HealthInterval = opts.ControlPlaneHealthInterval
		}
		if err := controlplane.Setup(ctx, m, cpOpts); err != nil {
			return err
		}
	}
	localMgr, err := s.managerFor("local")
	if err != nil {
		return err
	}
	if opts.Local && opts.LocalBackend != nil {
		if err := local.Setup(ctx, localMgr, local.Options{Backend: opts.LocalBackend, WatchFilter: opts.WatchFilter}); err != nil {
			return err
		}
	} else if opts.Local && opts.LocalMemory != nil {
		b := memory.New(*opts.LocalMemory)
		s.MemoryBackend = b
		// A runnable, so that the workload clusters stop with the manager.
		if err := s.Manager.Add(b); err != nil {
			return err
		}
		if err := local.Setup(ctx, localMgr, local.Options{Backend: b, WatchFilter: opts.WatchFilter}); err != nil {
			return err
		}
	} else if opts.Local {
		if opts.LocalDataDir == "" {
			return errors.New("the local provider needs a data directory")
		}
		b, err := newBackend(opts.LocalDataDir)
		if err != nil {
			return err
		}
		s.Backend = b
		// A runnable, so that the workload clusters' processes stop with the manager.
		if err := s.Manager.Add(b); err != nil {
			return err
		}
		if err := local.Setup(ctx, localMgr, local.Options{Backend: b, WatchFilter: opts.WatchFilter}); err != nil {
			return err
		}
	}
	return nil
}

func newBackend(dataDir string) (*process.Backend, error) {
	apiserver, err := binaries.Find("kube-apiserver", "")
	if err != nil {
		return nil, err
	}
	etcd, err := binaries.Find("etcd", "")
	if err != nil {
		return nil, err
	}
	return process.New(process.Options{DataDir: dataDir, KubeAPIServerPath: apiserver, EtcdPath: etcd, StopTimeout: 5 * time.Second,
		// As capstan infra-local names it; a failed test's dump shows its lines (envtest.DumpOnFailure).
		Logger: ctrl.Log.WithName("process-backend")})
}

// StartWatched starts the stack as Start does, for a TestMain: when the stack stops with an error before ctx
// is done, the test binary panics (the tests would otherwise wait for controllers that are gone).
func StartWatched(ctx context.Context, cfg *rest.Config, opts Options) (*Stack, error) {
	s, err := Start(ctx, cfg, opts)
	if err != nil {
		return nil, err
	}
	go func() {
		if err := s.Wait(); err != nil && ctx.Err() == nil {
			panic(err)
		}
	}()
	return s, nil
}

// Wait returns once the stack has stopped (its context is done) and the local provider's processes are
// gone, with the manager's error.
func (s *Stack) Wait() error {
	<-s.done
	return s.err
}

// ForTest starts the stack for the test t against the API server of cfg and stops it when the test ends.
func ForTest(t testing.TB, cfg *rest.Config, opts Options) *Stack {
	t.Helper()
	if opts.Local && opts.LocalMemory == nil && opts.LocalBackend == nil && opts.LocalDataDir == "" {
		opts.LocalDataDir = t.TempDir()
	}
	ctx, cancel := context.WithCancel(context.Background())
	s, err := Start(ctx, cfg, opts)
	if err != nil {
		cancel()
		t.Fatal(fmt.Errorf("starting the controllers: %w", err))
	}
	t.Cleanup(func() {
		cancel()
		if err := s.Wait(); err != nil {
			t.Errorf("manager: %v", err)
		}
	})
	return s
}

// LocalTemplate renders the local provider's cluster template name (from config/local) with vars, through
// clusterctl's YAML processor as `clusterctl generate cluster` renders it, and decodes its objects. A
// required variable missing from vars fails the test.
func LocalTemplate(t testing.TB, name string, vars map[string]string) []*unstructured.Unstructured {
	t.Helper()
	data, err := configlocal.Files.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	tmpl, err := yamlprocessor.Parse(data)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	text, err := tmpl.Execute(func(v string) (string, bool) { value, ok := vars[v]; return value, ok })
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	objs, err := manifest.Parse(text)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	out := make([]*unstructured.Unstructured, len(objs))
	for i := range objs {
		out[i] = &objs[i]
	}
	return out
}
