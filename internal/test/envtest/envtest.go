package envtest

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	utilrand "k8s.io/apimachinery/pkg/util/rand"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	crenvtest "sigs.k8s.io/controller-runtime/pkg/envtest"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	addonsv1 "github.com/capstan-dev/capstan/api/addons/v1beta1"
	addonsv1beta2 "github.com/capstan-dev/capstan/api/addons/v1beta2"
	bootstrapv1 "github.com/capstan-dev/capstan/api/bootstrap/kubeadm/v1beta1"
	bootstrapv1beta2 "github.com/capstan-dev/capstan/api/bootstrap/kubeadm/v1beta2"
	clusterctlv1 "github.com/capstan-dev/capstan/api/clusterctl/v1alpha3"
	controlplanev1 "github.com/capstan-dev/capstan/api/controlplane/kubeadm/v1beta1"
	controlplanev1beta2 "github.com/capstan-dev/capstan/api/controlplane/kubeadm/v1beta2"
	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
	clusterv1beta2 "github.com/capstan-dev/capstan/api/core/v1beta2"
	ipamv1alpha1 "github.com/capstan-dev/capstan/api/ipam/v1alpha1"
	ipamv1 "github.com/capstan-dev/capstan/api/ipam/v1beta1"
	ipamv1beta2 "github.com/capstan-dev/capstan/api/ipam/v1beta2"
	runtimev1 "github.com/capstan-dev/capstan/api/runtime/v1alpha1"
	runtimev1beta2 "github.com/capstan-dev/capstan/api/runtime/v1beta2"
	"github.com/capstan-dev/capstan/config/crd"
	"github.com/capstan-dev/capstan/internal/cborclient"
	"github.com/capstan-dev/capstan/internal/localnet"
	"github.com/capstan-dev/capstan/internal/test/procs"
)

// AssetsEnv names the environment variable that overrides where kube-apiserver and etcd are found.
const AssetsEnv = "CAPSTAN_TEST_ASSETS"

// CBORFeatureGate is the kube-apiserver feature gate the harness starts the API server with, as capstan's
// embedded management cluster does: CBORServingAndStorage (alpha in Kubernetes 1.37) serves custom resources
// in CBOR to the clients that ask for it and stores them in CBOR.
const CBORFeatureGate = "CBORServingAndStorage=true"

// Environment is a running etcd and kube-apiserver with capstan's CRDs installed.
type Environment struct {
	// Config reaches the API server as an administrator.
	Config *rest.Config
	// Client is a client on Config with Scheme; it reads straight from the API server.
	Client client.Client
	// Scheme knows the Kubernetes built-in types, apiextensions and capstan's API types.
	Scheme *runtime.Scheme

	env *crenvtest.Environment
	// conversion calls the harness's conversion webhook (serveConversion).
	conversion *apiextensionsv1.CustomResourceConversion
	// stopLocal stops what runs in the test process for the API server: its conversion webhook and egress proxy.
	stopLocal func()
}

// Options tune an Environment.
type Options struct {
	// CRDs are installed in addition to capstan's own, for example a test provider's.
	CRDs []*apiextensionsv1.CustomResourceDefinition
	// SchemeBuilders add more types to the Scheme.
	SchemeBuilders []func(*runtime.Scheme) error
	// APIServerFlags are extra kube-apiserver flags.
	APIServerFlags map[string]string
	// WithoutCBOR starts the API server without the CBORServingAndStorage feature (see CBORFeatureGate):
	// one that serves JSON only, as Kubernetes 1.37 does by default.
	WithoutCBOR bool
	// PodNetwork makes the API server call webhooks as the embedded management cluster's does: through
	// the EndpointSlices of their Service (--enable-aggregator-routing), whose addresses in the pod network
	// of package localnet stand for 127.0.0.1 (an egress proxy connects there).
	PodNetwork bool
}

// NewScheme returns a scheme with the Kubernetes built-in types, apiextensions and capstan's API types
// (core, clusterctl, kubeadm bootstrap and control plane, addons, IPAM, runtime; every version served).
func NewScheme() (*runtime.Scheme, error) {
	scheme := runtime.NewScheme()
	add := runtime.NewSchemeBuilder(clientgoscheme.AddToScheme, apiextensionsv1.AddToScheme, clusterv1.AddToScheme, clusterv1beta2.AddToScheme,
		clusterctlv1.AddToScheme, bootstrapv1.AddToScheme, bootstrapv1beta2.AddToScheme, controlplanev1.AddToScheme, controlplanev1beta2.AddToScheme,
		addonsv1.AddToScheme, addonsv1beta2.AddToScheme, ipamv1.AddToScheme, ipamv1alpha1.AddToScheme, ipamv1beta2.AddToScheme,
		runtimev1.AddToScheme, runtimev1beta2.AddToScheme)
	if err := add.AddToScheme(scheme); err != nil {
		return nil, err
	}
	return scheme, nil
}

// Start starts etcd and kube-apiserver and installs the CRDs; call Stop when done. The clients of the test
// process accept CBOR from then on, as capstan's binaries do (package cborclient).
func Start(opts Options) (*Environment, error) {
	cborclient.Enable()
	assets, err := AssetsDir()
	if err != nil {
		return nil, err
	}
	scheme, err := NewScheme()
	if err != nil {
		return nil, err
	}
	for _, add := range opts.SchemeBuilders {
		if err := add(scheme); err != nil {
			return nil, err
		}
	}
	crds, err := crd.All()
	if err != nil {
		return nil, err
	}
	crds = append(crds, opts.CRDs...)

	env := &crenvtest.Environment{
		BinaryAssetsDirectory: assets,
		Scheme:                scheme,
		CRDInstallOptions: crenvtest.CRDInstallOptions{
			CRDs:               crds,
			ErrorIfPathMissing: true,
		},
		ControlPlaneStartTimeout: 90 * time.Second,
		ControlPlaneStopTimeout:  30 * time.Second,
	}
	flags := map[string]string{}
	if !opts.WithoutCBOR {
		flags["feature-gates"] = CBORFeatureGate
	}
	for k, v := range opts.APIServerFlags {
		if k == "feature-gates" && flags[k] != "" {
			v = flags[k] + "," + v
		}
		flags[k] = v
	}
	for k, v := range flags {
		env.ControlPlane.GetAPIServer().Configure().Set(k, v)
	}
	var c client.Client // The API server's, once it runs.
	conversion, stopConversion, err := serveConversion(scheme, func() client.Reader { return c })
	if err != nil {
		return nil, err
	}
	stopLocal := stopConversion
	if opts.PodNetwork {
		flags, stop, err := podNetwork()
		if err != nil {
			stopConversion()
			return nil, err
		}
		stopLocal = func() { stop(); stopConversion() }
		for k, v := range flags {
			env.ControlPlane.GetAPIServer().Configure().Set(k, v)
		}
	}
	cfg, err := env.Start()
	if err != nil {
		stopLocal()
		// Start leaves the processes running when a later step (installing the CRDs) fails.
		_ = env.Stop()
		return nil, fmt.Errorf("starting kube-apiserver and etcd from %s: %w", assets, err)
	}
	cfg.QPS, cfg.Burst = 500, 1000
	c, err = client.New(cfg, client.Options{Scheme: scheme})
	if err == nil {
		err = convertThrough(context.Background(), c, crds, conversion)
	}
	if err != nil {
		_ = env.Stop()
		stopLocal()
		return nil, err
	}
	return &Environment{Config: cfg, Client: c, Scheme: scheme, env: env, conversion: conversion, stopLocal: stopLocal}, nil
}

// Pids returns the process ids of the API server and of etcd, for benchmarks that read what they use from
// /proc (package procstat).
func (e *Environment) Pids() (apiserver, etcd int, err error) {
	find := func(program, arg string) (int, error) {
		pids := procs.FindWithArg(program, arg)
		if len(pids) != 1 {
			return 0, fmt.Errorf("%d %s processes with argument %s, want one", len(pids), program, arg)
		}
		return pids[0], nil
	}
	if apiserver, err = find("kube-apiserver", "--cert-dir="+e.env.ControlPlane.APIServer.CertDir); err != nil {
		return 0, 0, err
	}
	if etcd, err = find("etcd", "--data-dir="+e.env.ControlPlane.Etcd.DataDir); err != nil {
		return 0, 0, err
	}
	return apiserver, etcd, nil
}

// Stop stops kube-apiserver and etcd and removes their data.
func (e *Environment) Stop() error {
	err := e.env.Stop()
	e.stopLocal()
	return err
}

// podNetwork starts an egress proxy to the pod network and returns the API server flags that use it.
func podNetwork() (map[string]string, func(), error) {
	dir, err := os.MkdirTemp("", "egress-")
	if err != nil {
		return nil, nil, err
	}
	socket := filepath.Join(dir, "proxy.sock")
	l, err := net.Listen("unix", socket)
	if err != nil {
		_ = os.RemoveAll(dir)
		return nil, nil, err
	}
	file := filepath.Join(dir, "egress-selector.yaml")
	if err := os.WriteFile(file, localnet.EgressSelectorConfiguration(socket), 0o600); err != nil {
		_ = l.Close()
		_ = os.RemoveAll(dir)
		return nil, nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	go func() { _ = localnet.ServeProxy(ctx, l) }()
	stop := func() { cancel(); _ = os.RemoveAll(dir) }
	return map[string]string{"enable-aggregator-routing": "true", "egress-selector-config-file": file}, stop, nil
}

// NewNamespace creates a namespace with a random name for one test and deletes it when the test ends.
func (e *Environment) NewNamespace(t testing.TB) string {
	t.Helper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "test-" + strings.ToLower(utilrand.String(8))}}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := e.Client.Create(ctx, ns); err != nil {
		t.Fatalf("creating namespace: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := e.Client.Delete(ctx, ns); err != nil && !apierrors.IsNotFound(err) {
			t.Logf("deleting namespace %s: %v", ns.Name, err)
		}
	})
	return ns.Name
}

// CreateServed creates obj, an object of a kind whose CRD was just created or updated: the API server may
// take a moment to serve it, and the client's RESTMapper to discover it, so a create that fails because the
// kind is unknown is tried again, for up to 30 seconds. Other errors are returned at once.
func (e *Environment) CreateServed(ctx context.Context, obj client.Object) error {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	for {
		err := e.Client.Create(ctx, obj)
		if err == nil || (!meta.IsNoMatchError(err) && !apierrors.IsNotFound(err)) {
			return err
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("creating %s %s, retried for 30s while the kind might not be served yet: %w",
				obj.GetObjectKind().GroupVersionKind().Kind, client.ObjectKeyFromObject(obj), err)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// Run is for TestMain: it sets up logging (SetupLogging: a logger set before stays), starts an Environment,
// passes it to setup (which usually stores it in a package variable), runs the tests and stops the
// Environment. It returns the exit code for os.Exit.
func Run(m *testing.M, opts Options, setup func(*Environment)) int {
	SetupLogging()
	env, err := Start(opts)
	if err != nil {
		fmt.Fprintf(os.Stderr, "Starting the test API server: %v\n", err)
		return 1
	}
	setup(env)
	code := m.Run()
	if err := env.Stop(); err != nil {
		fmt.Fprintf(os.Stderr, "Stopping the test API server: %v\n", err)
	}
	return code
}

// RunAll is TestMain's helper for the packages whose tests need several API servers (or one) and
// something running against them: it sets up logging (SetupLogging: a logger set before stays), starts one
// Environment per Options at once (StartAll), calls start with them and a context that is cancelled when
// the tests end, before the API servers stop, runs the tests and stops everything. An error of start fails
// the run:
//
//	func TestMain(m *testing.M) {
//		os.Exit(envtest.RunAll(m, []envtest.Options{{CRDs: builder.CRDs()}, {}}, func(ctx context.Context, envs []*envtest.Environment) error {
//			env, workload = envs[0], envs[1]
//			_, err := stack.StartWatched(ctx, env.Config, stack.Options{Workload: workload.Config})
//			return err
//		}))
//	}
func RunAll(m *testing.M, opts []Options, start func(ctx context.Context, envs []*Environment) error) int {
	SetupLogging()
	envs, err := StartAll(opts...)
	if err != nil {
		fmt.Fprintf(os.Stderr, "Starting the test API servers: %v\n", err)
		return 1
	}
	defer StopAll(envs)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if err := start(ctx, envs); err != nil {
		fmt.Fprintf(os.Stderr, "Setting up the tests: %v\n", err)
		return 1
	}
	return m.Run()
}

// SetupLogging is for TestMain: controller-runtime's logs are shown on stderr when CAPSTAN_TEST_LOGS is set
// (CAPSTAN_TEST_LOGS=1 go test ./internal/core/...); otherwise their last lines at the info level are kept
// in memory, for DumpOnFailure.
func SetupLogging() {
	if os.Getenv("CAPSTAN_TEST_LOGS") != "" {
		ctrl.SetLogger(zap.New(zap.WriteTo(os.Stderr), zap.UseDevMode(true)))
		return
	}
	ctrl.SetLogger(zap.New(zap.WriteTo(recentLogs), zap.ConsoleEncoder()))
}

// StartAll starts one Environment per Options at once (each API server takes seconds to start). When one
// fails, the others are stopped and the first error is returned.
func StartAll(opts ...Options) ([]*Environment, error) {
	envs := make([]*Environment, len(opts))
	errs := make(chan error, len(opts))
	for i := range opts {
		go func() {
			env, err := Start(opts[i])
			envs[i] = env
			errs <- err
		}()
	}
	var first error
	for range opts {
		if err := <-errs; err != nil && first == nil {
			first = err
		}
	}
	if first != nil {
		StopAll(envs)
		return nil, first
	}
	return envs, nil
}

// StopAll stops every Environment that is not nil, reporting failures on stderr.
func StopAll(envs []*Environment) {
	for _, env := range envs {
		if env == nil {
			continue
		}
		if err := env.Stop(); err != nil {
			fmt.Fprintf(os.Stderr, "Stopping a test API server: %v\n", err)
		}
	}
}

// AssetsDir returns the directory that holds kube-apiserver and etcd: $CAPSTAN_TEST_ASSETS when set,
// otherwise bin/ at the root of the repository.
func AssetsDir() (string, error) {
	dir := os.Getenv(AssetsEnv)
	if dir == "" {
		root, err := repositoryRoot()
		if err != nil {
			return "", err
		}
		dir = filepath.Join(root, "bin")
	}
	for _, name := range []string{"kube-apiserver", "etcd"} {
		if _, err := exec.LookPath(filepath.Join(dir, name)); err != nil {
			return "", fmt.Errorf("%s not found in %s: run `make tools` first (or set %s)", name, dir, AssetsEnv)
		}
	}
	return dir, nil
}

// repositoryRoot walks up from the working directory to the directory holding the root module's go.mod.
func repositoryRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		data, err := os.ReadFile(filepath.Join(dir, "go.mod"))
		if err == nil && strings.HasPrefix(string(data), "module github.com/capstan-dev/capstan\n") {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("cannot find the root of the capstan repository above the working directory")
		}
		dir = parent
	}
}
