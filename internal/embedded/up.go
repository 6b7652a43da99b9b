package embedded

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	clusterctlv1 "github.com/capstan-dev/capstan/api/clusterctl/v1alpha3"
	"github.com/capstan-dev/capstan/internal/clusterctl/cluster"
	"github.com/capstan-dev/capstan/internal/embedded/deployments"
	"github.com/capstan-dev/capstan/internal/loopback"
	"github.com/capstan-dev/capstan/internal/manifest"
	"github.com/capstan-dev/capstan/internal/release"
	"github.com/capstan-dev/capstan/internal/supervisor"
)

// UpOptions configure Up.
type UpOptions struct {
	Name     string
	State    State
	Binaries Binaries
	// Capstan is the capstan executable the local runtime runs; the running executable when empty.
	Capstan string
	// Out receives the instructions for the user; Log the progress.
	Out io.Writer
	Log logr.Logger
	// EtcdUnsafeNoFsync trades durability on machine crashes for speed.
	EtcdUnsafeNoFsync bool
	// Operator applies the provider operator's manifests, which the local runtime then runs.
	Operator bool
	// Executables maps image repositories other than capstan's (without tag) to local executables the
	// local runtime runs for their containers.
	Executables map[string]string
	// Ready, when set, is called once the cluster and its local runtime run, with the administrator's
	// REST configuration.
	Ready func(cfg *rest.Config)
}

// Up runs the embedded management cluster until ctx is done: the cluster's processes, the local runtime,
// and the local repository of capstan's providers. It returns after everything has stopped.
func Up(ctx context.Context, o UpOptions) error {
	if err := os.MkdirAll(o.State.Dir, 0o700); err != nil {
		return err
	}
	if err := o.State.WritePid(); err != nil {
		return err
	}
	defer o.State.RemovePid()

	if o.Capstan == "" {
		self, err := os.Executable()
		if err != nil {
			return err
		}
		o.Capstan = self
	}
	if err := WriteRepository(o.State); err != nil {
		return fmt.Errorf("writing the local provider repository: %w", err)
	}

	o.Log.Info("Starting etcd, kube-apiserver and kube-controller-manager", "stateDir", o.State.Dir)
	c, err := Start(ctx, o.Name, o.State, StartOptions{Binaries: o.Binaries, Log: o.Log, EtcdUnsafeNoFsync: o.EtcdUnsafeNoFsync})
	if err != nil {
		return err
	}
	defer c.Stop()

	rt, mgr, err := newRuntime(c, o)
	if err != nil {
		return err
	}
	defer rt.Stop()
	mgrDone := make(chan error, 1)
	mgrCtx, stopMgr := context.WithCancel(ctx)
	defer stopMgr()
	go func() { mgrDone <- mgr.Start(mgrCtx) }()

	if o.Operator {
		if err := InstallOperator(ctx, c); err != nil {
			return err
		}
		o.Log.Info("The provider operator runs: create CoreProvider, InfrastructureProvider, ... objects to install providers")
	}

	PrintInstructions(o.Out, o.Name, c.State, c.Ports, true)
	if o.Ready != nil {
		cfg, err := c.RESTConfig()
		if err != nil {
			return err
		}
		o.Ready(cfg)
	}

	select {
	case <-ctx.Done():
		o.Log.Info("Stopping the management cluster")
	case err := <-mgrDone:
		if err != nil {
			return fmt.Errorf("the local runtime stopped: %w", err)
		}
	}
	stopMgr()
	rt.Stop()
	return nil
}

func newRuntime(c *Cluster, o UpOptions) (*deployments.Runtime, ctrl.Manager, error) {
	cfg, err := c.RESTConfig()
	if err != nil {
		return nil, nil, err
	}
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		return nil, nil, err
	}
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Scheme:  scheme,
		Metrics: metricsserver.Options{BindAddress: "0"},
		Logger:  o.Log.WithName("local-runtime"),
	})
	if err != nil {
		return nil, nil, fmt.Errorf("creating the local runtime: %w", err)
	}
	rt := &deployments.Runtime{
		Client:      mgr.GetClient(),
		Capstan:     o.Capstan,
		Images:      []string{release.Image},
		Executables: o.Executables,
		Dir:         o.State.RuntimeDir(),
		Server:      cfg.Host,
		CAData:      cfg.CAData,
		FreePort:    loopback.FreePort,
		Supervisor:  supervisor.Options{Log: o.Log.WithName("local-runtime")},
	}
	if err := rt.SetupWithManager(mgr); err != nil {
		return nil, nil, err
	}
	return rt, mgr, nil
}

// InstallOperator applies the provider operator's manifests (release.OperatorComponents) to the cluster:
// its CRDs, namespace, RBAC and Deployment, which the local runtime runs as `capstan operator`. Applying
// them again on every start updates them to this build's.
func InstallOperator(ctx context.Context, c *Cluster) error {
	cfg, err := c.RESTConfig()
	if err != nil {
		return err
	}
	data, err := release.OperatorComponents(release.Version())
	if err != nil {
		return err
	}
	objs, err := manifest.Parse(data)
	if err != nil {
		return err
	}
	if err := cluster.NewForConfig(cfg).Apply(ctx, objs); err != nil {
		return fmt.Errorf("installing the provider operator: %w", err)
	}
	return nil
}

// WriteRepository writes the release artifacts of capstan's providers into the state's local repository
// and a clusterctl configuration that points at it.
func WriteRepository(s State) error {
	providers, err := release.Providers()
	if err != nil {
		return err
	}
	version := release.Version()
	if err := release.WriteRepository(s.RepositoryDir(), version, providers...); err != nil {
		return err
	}
	data, err := release.ProvidersConfig(func(p release.Provider) string {
		return filepath.Join(s.RepositoryDir(), p.Label(), "latest", p.ComponentsFile())
	}, providers...)
	if err != nil {
		return err
	}
	header := "# Written by `capstan up`: capstan's own providers, from the local repository of this management cluster.\n" +
		"# Use it with `clusterctl --config " + s.ClusterctlConfig() + " ...`; other providers keep their usual repositories.\n"
	return os.WriteFile(s.ClusterctlConfig(), append([]byte(header), data...), 0o600)
}

// PrintInstructions tells the user how to reach a running management cluster; foreground says whether
// Ctrl-C stops it.
func PrintInstructions(out io.Writer, name string, state State, ports Ports, foreground bool) {
	home, _ := os.UserHomeDir()
	short := func(p string) string {
		if home != "" && strings.HasPrefix(p, home+string(os.PathSeparator)) {
			return "~" + p[len(home):]
		}
		return p
	}
	infra := clusterctlv1.ManifestLabel("local", clusterctlv1.InfrastructureProviderType)
	stop := "Stop it with `capstan down`"
	if foreground {
		stop = "Press Ctrl-C to stop it, or run `capstan down`"
	}
	fmt.Fprintf(out, `capstan management cluster %q is running.
  API server:  https://127.0.0.1:%d
  kubeconfig:  %s
  logs:        %s

To use it:
  export KUBECONFIG=%s
  clusterctl init --config %s --infrastructure local

The local repository in %s holds cluster-api, bootstrap-kubeadm, control-plane-kubeadm and %s.
%s; `+"`capstan up`"+` again resumes with every object kept.
`, name, ports.APIServer, short(state.Kubeconfig()), short(state.LogDir()),
		short(state.Kubeconfig()), short(state.ClusterctlConfig()), short(state.RepositoryDir()), infra, stop)
}

// Ready checks once that the API server of a state directory answers /readyz.
func Ready(ctx context.Context, s State) error {
	c := &Cluster{State: s}
	return c.waitReady(ctx, 0)
}

// Down stops the capstan up running for a state directory and waits until it has exited; after a timeout it
// is killed (its children die with it).
func Down(s State, timeout time.Duration) (int, error) {
	pid, err := s.RunningPid()
	if err != nil {
		return 0, err
	}
	p, err := os.FindProcess(pid)
	if err != nil {
		return 0, err
	}
	if err := p.Signal(os.Interrupt); err != nil {
		return pid, fmt.Errorf("signalling capstan up (pid %d): %w", pid, err)
	}
	deadline := time.Now().Add(timeout)
	for processAlive(pid) {
		if time.Now().After(deadline) {
			_ = p.Kill()
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	for i := 0; i < 50 && processAlive(pid); i++ {
		time.Sleep(100 * time.Millisecond)
	}
	if processAlive(pid) {
		return pid, errors.New("capstan up did not exit")
	}
	_ = os.Remove(s.PidFile())
	return pid, nil
}
