// Package infralocal is the `capstan infra-local` command: the controller manager of capstan's local
// infrastructure provider (infrastructure-local), which runs each workload cluster's etcd and
// kube-apiserver as local processes and registers simulated Nodes for its machines.
package infralocal

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/capstan-dev/capstan/internal/binaries"
	"github.com/capstan-dev/capstan/internal/cli/iostreams"
	"github.com/capstan-dev/capstan/internal/controllermanager"
	"github.com/capstan-dev/capstan/internal/providers/local"
	"github.com/capstan-dev/capstan/internal/providers/local/backend"
	"github.com/capstan-dev/capstan/internal/providers/local/backend/memory"
	"github.com/capstan-dev/capstan/internal/providers/local/backend/process"
	"github.com/capstan-dev/capstan/internal/webhooks"
	localwebhooks "github.com/capstan-dev/capstan/internal/webhooks/local"
)

// ManagerName names the provider's manager (and its leader election lease), as its Deployment is named.
const ManagerName = "capl-controller-manager"

// Options are the flags of `capstan infra-local`.
type Options struct {
	Manager     *controllermanager.Options
	Concurrency local.Concurrency
	// DataDir holds the workload clusters' data; DefaultDataDir() when empty.
	DataDir string
	// Backend is the backend that runs workload clusters: "process" or "memory".
	Backend string
	// Memory configures the memory backend.
	Memory memory.Options
	// KubeAPIServerPath and EtcdPath override where the programs are found (see binaries.Find).
	KubeAPIServerPath, EtcdPath string
	// Webhooks are the flags of the webhook server, which refuses the extra arguments the provider does
	// not run (package internal/webhooks/local).
	Webhooks webhooks.Options
}

// NewCommand returns `capstan infra-local`.
func NewCommand(streams iostreams.Streams) *cobra.Command {
	o := &Options{
		Manager:     controllermanager.DefaultOptions(ManagerName),
		Concurrency: local.DefaultConcurrency(),
		Backend:     "process",
		Webhooks:    webhooks.DefaultOptions(),
	}
	cmd := o.Manager.Command(&cobra.Command{
		Use:   "infra-local",
		Short: "Run the local infrastructure provider (LocalCluster, LocalMachine): workload control planes as local processes",
		Long: `Run the controllers of capstan's local infrastructure provider, infrastructure-local.

Each LocalCluster gets its own etcd and kube-apiserver, run as child processes on 127.0.0.1 with their
data under --data-dir; each LocalMachine becomes a simulated Node (no kubelet, no containers) in that
API server. kube-apiserver and etcd are found with --kube-apiserver-path and --etcd-path, else next to
this binary, else in a bin/ directory of the working directory or a parent, else in PATH (run
` + "`make tools`" + ` in the capstan repository to build them into bin/).`,
	}, streams.ErrOut, o.Run)
	fs := cmd.Flags()
	o.Concurrency.AddFlags(fs)
	o.Webhooks.AddFlags(fs)
	fs.StringVar(&o.DataDir, "data-dir", "", "Directory of the workload clusters' data (one <namespace>/<localcluster> directory each); $HOME/.capstan/infra-local when empty, or capstan-infra-local in the temporary directory when there is no home directory.")
	fs.StringVar(&o.Backend, "backend", o.Backend, "What runs the workload clusters: process (etcd and kube-apiserver as local processes) or memory (every workload cluster's API served from memory by this process, for scale tests; nothing survives a restart).")
	fs.DurationVar(&o.Memory.StartupDelay, "memory-startup-delay", 0, "With --backend=memory: how long a machine takes to start (its Node to register, a control plane machine's API server and etcd member to run).")
	fs.DurationVar(&o.Memory.StartupJitter, "memory-startup-jitter", 0, "With --backend=memory: a random extra start-up time, up to this duration, for each machine.")
	fs.StringVar(&o.KubeAPIServerPath, "kube-apiserver-path", "", "Path of the kube-apiserver binary; looked up next to capstan, in bin/ directories above the working directory, then in PATH when empty.")
	fs.StringVar(&o.EtcdPath, "etcd-path", "", "Path of the etcd binary; looked up like kube-apiserver when empty.")
	return cmd
}

// DefaultDataDir returns $HOME/.capstan/infra-local, or capstan-infra-local in the temporary directory when
// there is no usable home directory (for example in a container running as an arbitrary user).
func DefaultDataDir() string {
	if home, err := os.UserHomeDir(); err == nil && home != "" && home != "/" {
		return filepath.Join(home, ".capstan", "infra-local")
	}
	return filepath.Join(os.TempDir(), "capstan-infra-local")
}

// Run starts the provider and blocks until ctx is done; the workload clusters' processes stop with it.
func (o *Options) Run(ctx context.Context) error {
	log := ctrl.Log.WithName("setup")
	var b backend.Backend
	var logValues []any
	switch o.Backend {
	case "memory":
		if o.Memory.StartupDelay < 0 || o.Memory.StartupJitter < 0 {
			return errors.New("--memory-startup-delay and --memory-startup-jitter must not be negative")
		}
		o.Memory.Log = ctrl.Log.WithName("memory-backend")
		mb := memory.New(o.Memory)
		defer mb.Shutdown()
		b = mb
		logValues = []any{"backend", "memory", "startupDelay", o.Memory.StartupDelay, "startupJitter", o.Memory.StartupJitter}
	case "process":
		pb, values, err := o.processBackend()
		if err != nil {
			return err
		}
		defer pb.Shutdown()
		b, logValues = pb, values
	default:
		return fmt.Errorf("unknown backend %q: use --backend=process or --backend=memory", o.Backend)
	}

	cfg, err := o.Manager.RESTConfig()
	if err != nil {
		return err
	}
	scheme, err := local.NewScheme()
	if err != nil {
		return err
	}
	log.Info("Starting the local infrastructure provider", logValues...)
	// The workload clusters run in this process (their processes are its children, their endpoints its
	// load balancers): a manager that loses its lease is followed by another in the same process, and the
	// workload clusters keep running meanwhile; they stop only when the process ends.
	err = o.Manager.RunAcrossLeaseLoss(ctx, cfg, scheme, func(mgr ctrl.Manager) error {
		if err := local.Setup(ctx, mgr, local.Options{WatchFilter: o.Manager.WatchFilter, Concurrency: o.Concurrency, Backend: b}); err != nil {
			return err
		}
		return o.Manager.SetupWebhooks(mgr, localwebhooks.Webhooks(mgr.GetClient()), o.Webhooks)
	})
	log.Info("Stopping the workload clusters' processes")
	return err
}

// processBackend returns the process backend of the flags, and what to log of it.
func (o *Options) processBackend() (*process.Backend, []any, error) {
	apiserver, err := binaries.Find("kube-apiserver", o.KubeAPIServerPath)
	if err != nil {
		return nil, nil, err
	}
	etcd, err := binaries.Find("etcd", o.EtcdPath)
	if err != nil {
		return nil, nil, err
	}
	if o.DataDir == "" {
		o.DataDir = DefaultDataDir()
	}
	b, err := process.New(process.Options{
		DataDir: o.DataDir, KubeAPIServerPath: apiserver, EtcdPath: etcd,
		Logger: ctrl.Log.WithName("process-backend"),
	})
	if err != nil {
		return nil, nil, err
	}
	return b, []any{"backend", "process", "dataDir", o.DataDir, "kubeAPIServer", apiserver, "etcd", etcd}, nil
}
