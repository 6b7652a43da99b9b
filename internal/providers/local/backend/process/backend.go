package process

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/types"

	"github.com/capstan-dev/capstan/internal/providers/local/backend"
)

// Options configure the process backend. Zero durations take the defaults.
type Options struct {
	// DataDir holds one directory per cluster, <DataDir>/<namespace>/<localcluster>.
	DataDir string
	// KubeAPIServerPath and EtcdPath are the programs to run (see binaries.Find). A control plane machine
	// of another minor version than KubeAPIServerPath's runs kube-apiserver-v1.<minor> of the same
	// directory when there is one.
	KubeAPIServerPath, EtcdPath string

	// HeartbeatInterval is how often node leases are renewed (default 10s, the kubelet's).
	HeartbeatInterval time.Duration
	// NodeStatusInterval is how often the nodes' Ready heartbeat time is refreshed (default 1m).
	NodeStatusInterval time.Duration
	// ProbeInterval is how often a ready API server's /readyz is checked (default 1s): an API server that
	// stops answering leaves the cluster's endpoint after two failed probes, within 5.2 s.
	// StartingProbeInterval is how often while it is not ready, or after a failed probe (default 200ms).
	ProbeInterval, StartingProbeInterval time.Duration
	// NodeRefreshInterval is how often the control plane machines' mirror Pods are refreshed and the
	// heartbeats checked (default 5s); a change of a machine's processes refreshes them at once.
	NodeRefreshInterval time.Duration
	// MinRestartBackoff and MaxRestartBackoff bound the delay before a crashed process is restarted
	// (default 1s, doubling up to 30s).
	MinRestartBackoff, MaxRestartBackoff time.Duration
	// StopTimeout is how long a process may take to stop after SIGTERM before it is killed (default 10s).
	StopTimeout time.Duration

	Logger logr.Logger
}

func (o *Options) defaults() {
	def := func(d *time.Duration, v time.Duration) {
		if *d <= 0 {
			*d = v
		}
	}
	def(&o.HeartbeatInterval, 10*time.Second)
	def(&o.NodeStatusInterval, time.Minute)
	def(&o.ProbeInterval, time.Second)
	def(&o.NodeRefreshInterval, 5*time.Second)
	def(&o.StartingProbeInterval, 200*time.Millisecond)
	def(&o.MinRestartBackoff, time.Second)
	def(&o.MaxRestartBackoff, 30*time.Second)
	def(&o.StopTimeout, 10*time.Second)
}

// Backend runs each workload cluster as a load balancer in front of the etcd member and kube-apiserver
// processes of its control plane machines.
type Backend struct {
	opts Options

	binaries *apiServerBinaries

	// Listeners implement OnChange.
	backend.Listeners

	mu       sync.Mutex
	clusters map[types.NamespacedName]*cluster
	closed   bool
}

var (
	_ backend.Backend        = &Backend{}
	_ backend.EndpointLeaver = &Backend{}
)

// New returns a process backend. It starts nothing until clusters are ensured; call Shutdown (or run it as
// a manager Runnable with Start) to stop every process when the provider stops.
func New(opts Options) (*Backend, error) {
	opts.defaults()
	if opts.DataDir == "" {
		return nil, errors.New("the process backend needs a data directory")
	}
	if opts.KubeAPIServerPath == "" || opts.EtcdPath == "" {
		return nil, errors.New("the process backend needs the paths of kube-apiserver and etcd")
	}
	abs, err := filepath.Abs(opts.DataDir)
	if err != nil {
		return nil, err
	}
	opts.DataDir = abs
	if err := os.MkdirAll(opts.DataDir, 0o700); err != nil {
		return nil, fmt.Errorf("creating the data directory: %w", err)
	}
	return &Backend{opts: opts, clusters: map[types.NamespacedName]*cluster{}, binaries: &apiServerBinaries{defaultPath: opts.KubeAPIServerPath}}, nil
}

// ClusterDir returns the directory of a cluster's data.
func (b *Backend) ClusterDir(key types.NamespacedName) string {
	return filepath.Join(b.opts.DataDir, key.Namespace, key.Name)
}

func (b *Backend) get(key types.NamespacedName) *cluster {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.clusters[key]
}

// EnsureCluster implements backend.Backend.
func (b *Backend) EnsureCluster(_ context.Context, spec backend.Cluster) (backend.ClusterStatus, error) {
	if err := validCertificates(spec.Certificates); err != nil {
		return backend.ClusterStatus{}, err
	}
	b.mu.Lock()
	if b.closed {
		b.mu.Unlock()
		return backend.ClusterStatus{}, errors.New("the process backend is shut down")
	}
	c, ok := b.clusters[spec.Key]
	if !ok {
		c = newCluster(b, spec.Key)
		b.clusters[spec.Key] = c
	}
	b.mu.Unlock()
	if err := c.ensure(spec); err != nil {
		var inUse *dataInUseError
		if errors.As(err, &inUse) {
			return inUse.status(), nil
		}
		return backend.ClusterStatus{}, fmt.Errorf("starting cluster %s: %w", spec.Key, err)
	}
	status := c.currentStatus()
	status.DataDir = c.dir
	return status, nil
}

// StoredCertificates implements backend.Backend.
func (b *Backend) StoredCertificates(key types.NamespacedName) (backend.Certificates, error) {
	return pkiFiles{dir: filepath.Join(b.ClusterDir(key), "pki")}.readCertificates()
}

// DeleteCluster implements backend.Backend.
func (b *Backend) DeleteCluster(_ context.Context, key types.NamespacedName) error {
	b.mu.Lock()
	c := b.clusters[key]
	delete(b.clusters, key)
	b.mu.Unlock()
	if c != nil {
		c.stop()
	}
	dir := b.ClusterDir(key)
	lock, err := b.lockForDeletion(dir)
	if lock == nil {
		return err
	}
	defer lock.release()
	if _, err := killStale(dir, b.opts.StopTimeout); err != nil {
		return err
	}
	if err := os.RemoveAll(dir); err != nil {
		return fmt.Errorf("removing the data of cluster %s: %w", key, err)
	}
	// Remove the namespace directory too once its last cluster is gone.
	_ = os.Remove(filepath.Dir(dir))
	return nil
}

// EnsureMachine implements backend.Backend.
func (b *Backend) EnsureMachine(ctx context.Context, key types.NamespacedName, spec backend.Machine) (backend.MachineStatus, error) {
	c := b.get(key)
	if c == nil {
		return backend.MachineStatus{}, backend.ErrClusterNotReady
	}
	return c.ensureMachine(ctx, spec)
}

// Machines implements backend.Backend.
func (b *Backend) Machines(_ context.Context, key types.NamespacedName) ([]string, error) {
	if c := b.get(key); c != nil {
		return c.machineNames(), nil
	}
	st, err := readState(b.ClusterDir(key))
	if err != nil {
		return nil, nil //nolint:nilerr // No state: the backend keeps nothing of the cluster.
	}
	return slices.Sorted(maps.Keys(st.Machines)), nil
}

// DeleteMachine implements backend.Backend.
func (b *Backend) DeleteMachine(ctx context.Context, key types.NamespacedName, name string) error {
	c := b.get(key)
	if c == nil {
		st, err := readState(b.ClusterDir(key))
		if err == nil && st.Machines[name] != nil {
			return backend.ErrClusterNotReady
		}
		return nil
	}
	return c.deleteMachine(ctx, name)
}

// LeaveEndpoint implements backend.EndpointLeaver.
func (b *Backend) LeaveEndpoint(_ context.Context, key types.NamespacedName, name string) (bool, error) {
	c := b.get(key)
	if c == nil {
		return true, nil
	}
	return c.leaveEndpoint(name), nil
}

// Shutdown stops the processes of every cluster, keeping their data, and refuses to start new ones.
func (b *Backend) Shutdown() {
	b.mu.Lock()
	b.closed = true
	clusters := slices.Collect(maps.Values(b.clusters))
	b.clusters = map[types.NamespacedName]*cluster{}
	b.mu.Unlock()
	var wg sync.WaitGroup
	for _, c := range clusters {
		wg.Go(c.stop)
	}
	wg.Wait()
}

// Start implements manager.Runnable: it waits for ctx to end, then shuts the backend down, so the
// processes stop with the provider.
func (b *Backend) Start(ctx context.Context) error {
	<-ctx.Done()
	b.opts.Logger.Info("Stopping the workload clusters' processes")
	b.Shutdown()
	return nil
}

// NeedLeaderElection implements manager.LeaderElectionRunnable: the backend must stop its processes even
// on a replica that never led.
func (b *Backend) NeedLeaderElection() bool { return false }
