package process

import (
	"context"
	"encoding/pem"
	"errors"
	"fmt"
	"net/http"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	infrav1 "github.com/capstan-dev/capstan/api/infrastructure/local/v1alpha1"
	"github.com/capstan-dev/capstan/internal/kubeconfig"
	"github.com/capstan-dev/capstan/internal/loopback"
	"github.com/capstan-dev/capstan/internal/providers/local/backend"
	"github.com/capstan-dev/capstan/internal/supervisor"
)

// cluster is one workload cluster: its directory, its two supervised processes, its admin client, its
// readiness and its registered nodes.
type cluster struct {
	b   *Backend
	key types.NamespacedName
	dir string
	pki pkiFiles
	log logr.Logger

	// mu serialises EnsureCluster, DeleteCluster and reconfiguration.
	mu      sync.Mutex
	started bool
	// removed: the cluster was stopped for good (deleted, released, or the backend shut down); it never
	// starts again.
	removed bool
	// lock is held on the cluster directory while the cluster runs (see handover.go).
	lock        *dirLock
	clusterName string
	caDER       []byte
	st          state
	etcd        *supervisor.Process
	apiserver   *supervisor.Process
	stopLoop    context.CancelFunc
	loopDone    chan struct{}

	// statusMu guards what the probe loop and the supervisors report.
	statusMu sync.Mutex
	client   kubernetes.Interface
	apiPort  int32
	status   backend.ClusterStatus
	notified bool
	wake     chan struct{}
	nodes    map[string]backend.Node
	// nodeOps serialises node registrations, deletions and heartbeats.
	nodeOps   sync.Mutex
	lastBeat  time.Time
	lastNodes time.Time
}

func newCluster(b *Backend, key types.NamespacedName) *cluster {
	dir := filepath.Join(b.opts.DataDir, key.Namespace, key.Name)
	return &cluster{
		b: b, key: key, dir: dir, pki: pkiFiles{dir: filepath.Join(dir, "pki")},
		log:   b.opts.Logger.WithValues("LocalCluster", key.String()),
		wake:  make(chan struct{}, 1),
		nodes: map[string]backend.Node{},
	}
}

// ensure starts the cluster, or reconfigures it when its CA or port changed.
func (c *cluster) ensure(spec backend.Cluster) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.removed {
		return errors.New("the cluster was stopped by a deletion or a shutdown")
	}
	if !c.started {
		if err := c.start(spec); err != nil {
			c.lock.release()
			c.lock = nil
			return err
		}
		return nil
	}
	caChanged := spec.ClusterName != c.clusterName || string(spec.CA.Cert.Raw) != string(c.caDER)
	portChanged := spec.Port != 0 && int(spec.Port) != c.st.APIServerPort
	if !caChanged && !portChanged {
		return nil
	}
	// Stop kube-apiserver before changing what it reads (certificates, port), then start it again.
	c.apiserver.Stop()
	if caChanged {
		c.log.Info("Reissuing the API server certificates", "reason", "the cluster CA or name changed")
		if err := c.writePKI(spec); err != nil {
			return err
		}
	}
	if portChanged {
		c.log.Info("Moving kube-apiserver to a new port", "port", spec.Port)
		c.st.APIServerPort = int(spec.Port)
		if err := writeState(c.dir, c.st); err != nil {
			return err
		}
	}
	if err := c.newClient(spec.CA); err != nil {
		return err
	}
	c.runAPIServer()
	return nil
}

func (c *cluster) start(spec backend.Cluster) error {
	lock, err := c.claim(spec.DataDir)
	if err != nil {
		return err
	}
	c.lock = lock
	for _, name := range []string{"kube-apiserver", "etcd"} {
		killed, err := supervisor.KillStale(pidFile(c.dir, name), c.dir, c.b.opts.StopTimeout)
		if err != nil {
			return err
		}
		if killed {
			c.log.Info("Killed a process left by an earlier run of the provider", "process", name)
		}
	}
	st, err := readState(c.dir)
	if err != nil {
		return err
	}
	switch {
	case spec.Port != 0:
		st.APIServerPort = int(spec.Port)
	case st.APIServerPort == 0:
		if st.APIServerPort, err = loopback.FreePort(); err != nil {
			return err
		}
	}
	if st.EtcdPort == 0 || st.EtcdPort == st.APIServerPort || !loopback.PortFree(st.EtcdPort) {
		if st.EtcdPort, err = loopback.FreePort(); err != nil {
			return err
		}
	}
	c.st = st
	if err := c.writePKI(spec); err != nil {
		return err
	}
	if err := c.pki.ensureServiceAccountKey(); err != nil {
		return err
	}
	if err := c.newClient(spec.CA); err != nil {
		return err
	}
	if err := writeState(c.dir, c.st); err != nil {
		return err
	}
	c.log.Info("Starting etcd and kube-apiserver", "port", c.st.APIServerPort, "dir", c.dir)
	etcdPort := c.st.EtcdPort
	etcd := c.run("etcd", c.b.opts.EtcdPath, c.etcdArgs(), func(context.Context) error {
		if !loopback.PortFree(etcdPort) {
			return &portInUseError{port: etcdPort}
		}
		return nil
	})
	c.statusMu.Lock()
	c.etcd = etcd
	c.statusMu.Unlock()
	c.runAPIServer()
	loopCtx, stopLoop := context.WithCancel(context.Background())
	c.stopLoop, c.loopDone = stopLoop, make(chan struct{})
	go c.loop(loopCtx)
	c.started = true
	return nil
}

func (c *cluster) writePKI(spec backend.Cluster) error {
	if _, err := c.pki.writeCA(spec.CA); err != nil {
		return fmt.Errorf("storing the cluster CA: %w", err)
	}
	if err := c.pki.writeServing(spec.CA, spec.ClusterName, time.Now()); err != nil {
		return fmt.Errorf("issuing the API server certificate: %w", err)
	}
	c.clusterName, c.caDER = spec.ClusterName, spec.CA.Cert.Raw
	return nil
}

// newClient builds the provider's admin client of the cluster.
func (c *cluster) newClient(ca *kubeconfig.CA) error {
	certPEM, keyPEM, err := clientCertificate(ca, time.Now())
	if err != nil {
		return err
	}
	cfg := &rest.Config{
		Host: "https://127.0.0.1:" + strconv.Itoa(c.st.APIServerPort),
		TLSClientConfig: rest.TLSClientConfig{
			CAData:   pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: ca.Cert.Raw}),
			CertData: certPEM,
			KeyData:  keyPEM,
		},
		QPS: 20, Burst: 30, Timeout: 10 * time.Second,
		UserAgent: "capstan-infra-local",
	}
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	c.statusMu.Lock()
	c.client, c.apiPort = client, int32(c.st.APIServerPort) //nolint:gosec // a port fits
	c.statusMu.Unlock()
	return nil
}

func (c *cluster) runAPIServer() {
	s := c.run("kube-apiserver", c.b.opts.KubeAPIServerPath, c.apiServerArgs(), c.waitForEtcd)
	c.statusMu.Lock()
	c.apiserver = s
	c.statusMu.Unlock()
}

// run supervises one of the cluster's processes until it is stopped: its pid file is <dir>/<name>.pid,
// its log <dir>/logs/<name>.log. Every change of its state pokes the probe loop.
func (c *cluster) run(name, path string, args []string, ready func(context.Context) error) *supervisor.Process {
	return supervisor.Run(context.Background(), supervisor.Spec{
		Name: name, Path: path, Args: args, Dir: c.dir, Ready: ready,
		LogFile: filepath.Join(c.dir, "logs", name+".log"), MaxLogSize: maxLogSize, PidFile: pidFile(c.dir, name),
	}, supervisor.Options{
		MinBackoff: c.b.opts.MinRestartBackoff, MaxBackoff: c.b.opts.MaxRestartBackoff,
		// A process that ran for a while and exits is a new crash, not a crash loop.
		StableAfter: 2 * c.b.opts.MaxRestartBackoff,
		StopTimeout: c.b.opts.StopTimeout, OnChange: c.poke, Log: c.log,
	})
}

// maxLogSize is the size above which a process's log file is truncated when the process starts again.
const maxLogSize = 10 << 20

// pidFile is where a cluster's process records its pid, for KillStale after a provider restart.
func pidFile(dir, name string) string { return filepath.Join(dir, name+".pid") }

// portInUseError says a process cannot start because its port is taken by another process.
type portInUseError struct{ port int }

func (e *portInUseError) Error() string {
	return fmt.Sprintf("port %d is in use by another process", e.port)
}

func (c *cluster) etcdArgs() []string {
	client := "http://127.0.0.1:" + strconv.Itoa(c.st.EtcdPort)
	return []string{
		"--name=default",
		"--data-dir=" + filepath.Join(c.dir, "etcd"),
		"--listen-client-urls=" + client,
		"--advertise-client-urls=" + client,
		// A single member: its peer port is never used, so let the kernel pick it.
		"--listen-peer-urls=http://127.0.0.1:0",
		"--initial-advertise-peer-urls=http://127.0.0.1:2380",
		"--initial-cluster=default=http://127.0.0.1:2380",
		// A development cluster on one machine: skipping fsync makes writes fast; a process crash loses
		// nothing, a power cut may.
		"--unsafe-no-fsync=true",
		"--log-level=warn",
	}
}

func (c *cluster) apiServerArgs() []string {
	return []string{
		"--advertise-address=127.0.0.1",
		"--bind-address=127.0.0.1",
		"--secure-port=" + strconv.Itoa(c.st.APIServerPort),
		"--etcd-servers=http://127.0.0.1:" + strconv.Itoa(c.st.EtcdPort),
		"--tls-cert-file=" + c.pki.servingCert(),
		"--tls-private-key-file=" + c.pki.servingKey(),
		"--client-ca-file=" + c.pki.caCert(),
		"--service-account-key-file=" + c.pki.serviceAccountPub(),
		"--service-account-signing-key-file=" + c.pki.serviceAccount(),
		"--service-account-issuer=https://kubernetes.default.svc.cluster.local",
		"--service-cluster-ip-range=" + serviceCIDR,
		"--authorization-mode=RBAC",
		"--allow-privileged=true",
		// Lean: one client (plus users), no kubelets, no controller-manager.
		"--enable-priority-and-fairness=false",
		// The API server listens on loopback only, which the `kubernetes` Service's endpoints may not hold;
		// nothing in the cluster runs pods that would use them.
		"--endpoint-reconciler-type=none",
		"--profiling=false",
		// No controller-manager creates the default ServiceAccounts nor removes the not-ready taint of new
		// Nodes, so the admission plugins that rely on them are off.
		"--disable-admission-plugins=ServiceAccount,TaintNodesByCondition",
	}
}

// waitForEtcd delays kube-apiserver's start until etcd answers, and until its own port is free.
func (c *cluster) waitForEtcd(ctx context.Context) error {
	url := "http://127.0.0.1:" + strconv.Itoa(c.st.EtcdPort) + "/health"
	deadline := time.Now().Add(30 * time.Second)
	httpClient := &http.Client{Timeout: time.Second}
	for {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			return err
		}
		resp, err := httpClient.Do(req)
		if err == nil {
			_ = resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				break
			}
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("waiting for etcd to answer on port %d", c.st.EtcdPort)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
	if !loopback.PortFree(c.st.APIServerPort) {
		return &portInUseError{port: c.st.APIServerPort}
	}
	return nil
}

// stop stops both processes (kube-apiserver first) and the probe loop, for good.
func (c *cluster) stop() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.removed = true
	if !c.started {
		return
	}
	c.log.Info("Stopping kube-apiserver and etcd")
	c.apiserver.Stop()
	c.etcd.Stop()
	c.stopLoop()
	<-c.loopDone
	c.started = false
	c.lock.release()
	c.lock = nil
}

// poke asks the probe loop to re-evaluate the cluster now (a process started or exited).
func (c *cluster) poke() {
	select {
	case c.wake <- struct{}{}:
	default:
	}
}

// loop probes the API server's /readyz (often while it is not ready, less often after) and drives the
// node heartbeats.
func (c *cluster) loop(ctx context.Context) {
	defer close(c.loopDone)
	for {
		c.probe(ctx)
		c.heartbeat(ctx)
		interval := c.b.opts.ProbeInterval
		c.statusMu.Lock()
		if !c.status.Ready {
			interval = c.b.opts.StartingProbeInterval
		}
		c.statusMu.Unlock()
		t := time.NewTimer(interval)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-c.wake:
			t.Stop()
		case <-t.C:
		}
	}
}

func (c *cluster) probe(ctx context.Context) {
	c.statusMu.Lock()
	etcdSup, apiSup, client, port := c.etcd, c.apiserver, c.client, c.apiPort
	c.statusMu.Unlock()
	etcd, api := etcdSup.State(), apiSup.State()
	ok, msg := false, ""
	if etcd.Running && api.Running {
		pctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		_, err := client.Discovery().RESTClient().Get().AbsPath("/readyz").DoRaw(pctx)
		cancel()
		ok = err == nil
		if err != nil {
			msg = err.Error()
		}
	}
	status := computeStatus(etcd, api, ok)
	status.Host, status.Port = "127.0.0.1", port
	c.statusMu.Lock()
	changed := status != c.status || !c.notified
	c.status, c.notified = status, true
	c.statusMu.Unlock()
	if changed {
		c.log.V(1).Info("Cluster state changed", "ready", status.Ready, "reason", status.Reason, "probe", msg)
		c.b.notify(c.key)
	}
}

// computeStatus derives a cluster's state from its processes and the API server's readiness.
func computeStatus(etcd, api supervisor.State, apiReady bool) backend.ClusterStatus {
	failed := func(format string, args ...any) backend.ClusterStatus {
		return backend.ClusterStatus{Reason: infrav1.ProcessesFailedReason, Message: fmt.Sprintf(format, args...)}
	}
	switch {
	case portInUse(etcd) != 0:
		return failed("Port %d of etcd is in use by another process", portInUse(etcd))
	case portInUse(api) != 0:
		return failed("Port %d of kube-apiserver is in use by another process", portInUse(api))
	case !etcd.Running && etcd.Err != nil && etcd.Exits > 0:
		return failed("etcd exited (%s); restarting it", etcd.Err)
	case !api.Running && api.Err != nil && api.Exits > 0:
		return failed("kube-apiserver exited (%s); restarting it", api.Err)
	case !etcd.Running && etcd.Err != nil:
		return failed("etcd cannot start: %s", etcd.Err)
	case !etcd.Running || !api.Running:
		return backend.ClusterStatus{Reason: infrav1.ProcessesStartingReason, Message: "Starting etcd and kube-apiserver"}
	case !apiReady:
		return backend.ClusterStatus{Reason: infrav1.ProcessesStartingReason, Message: "Waiting for kube-apiserver to be ready"}
	default:
		return backend.ClusterStatus{Ready: true}
	}
}

// portInUse returns the port a process cannot start on because another process holds it, 0 when none.
func portInUse(s supervisor.State) int {
	var p *portInUseError
	if errors.As(s.Err, &p) {
		return p.port
	}
	return 0
}

func (c *cluster) currentStatus() backend.ClusterStatus {
	c.statusMu.Lock()
	defer c.statusMu.Unlock()
	s := c.status
	s.Host, s.Port = "127.0.0.1", c.apiPort
	if s.Reason == "" && !s.Ready {
		s.Reason, s.Message = infrav1.ProcessesStartingReason, "Starting etcd and kube-apiserver"
	}
	return s
}

// readyClient returns the admin client while the API server is ready.
func (c *cluster) readyClient() (kubernetes.Interface, bool) {
	c.statusMu.Lock()
	defer c.statusMu.Unlock()
	return c.client, c.status.Ready
}
