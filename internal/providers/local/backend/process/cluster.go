package process

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"sync"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	infrav1 "github.com/capstan-dev/capstan/api/infrastructure/local/v1alpha1"
	"github.com/capstan-dev/capstan/internal/loopback"
	"github.com/capstan-dev/capstan/internal/providers/local/backend"
	"github.com/capstan-dev/capstan/internal/supervisor"
)

// cluster is one workload cluster: its directory, its load balancer, its machines, its admin client
// (through the load balancer) and its probe loop.
type cluster struct {
	b   *Backend
	key types.NamespacedName
	dir string
	pki pkiFiles
	log logr.Logger

	// mu serialises EnsureCluster, DeleteCluster, the machine operations and the probe loop's reads of
	// the machines.
	mu      sync.Mutex
	started bool
	// removed: the cluster was stopped for good (deleted, released, or the backend shut down); it never
	// starts again.
	removed bool
	// lock is held on the cluster directory while the cluster runs (see handover.go).
	lock         *dirLock
	clusterName  string
	certs        backend.Certificates
	certsVersion string
	etcdTLS      *tls.Config
	st           state
	lb           *loadBalancer
	lbErr        error
	machines     map[string]*machine
	stopLoop     context.CancelFunc
	loopDone     chan struct{}

	// statusMu guards what the probe loop reports and the heartbeats read.
	statusMu   sync.Mutex
	client     kubernetes.Interface
	httpClient *http.Client
	status     backend.ClusterStatus
	apiReady   bool
	notified   bool
	wake       chan struct{}
	nodesWake  chan struct{}
	nodes      map[string]nodeSpec
	// nodeOps serialises node registrations, deletions and heartbeats.
	nodeOps   sync.Mutex
	lastBeat  time.Time
	lastNodes time.Time
}

func newCluster(b *Backend, key types.NamespacedName) *cluster {
	dir := filepath.Join(b.opts.DataDir, key.Namespace, key.Name)
	return &cluster{
		b: b, key: key, dir: dir, pki: pkiFiles{dir: filepath.Join(dir, "pki")},
		log:       b.opts.Logger.WithValues("LocalCluster", key.String()),
		wake:      make(chan struct{}, 1),
		nodesWake: make(chan struct{}, 1),
		nodes:     map[string]nodeSpec{},
		machines:  map[string]*machine{},
	}
}

// ensure starts the cluster's endpoint, or reconfigures the cluster when its certificates, name or port
// changed.
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
	if spec.ClusterName != c.clusterName || !sameCertificates(spec.Certificates, c.certs) {
		c.log.Info("The cluster's certificates or name changed: reissuing the machines' certificates")
		if err := c.setCertificates(spec); err != nil {
			return err
		}
		// The machines pick the change up at their next EnsureMachine.
	}
	if spec.Port != 0 && int(spec.Port) != c.st.APIServerPort {
		c.log.Info("Moving the endpoint to a new port", "port", spec.Port)
		c.st.APIServerPort = int(spec.Port)
		if err := c.saveState(); err != nil {
			return err
		}
		if c.lb != nil {
			c.lb.close()
			c.lb = nil
		}
		if err := c.newClient(); err != nil {
			return err
		}
	}
	c.listen()
	return nil
}

func (c *cluster) start(spec backend.Cluster) error {
	lock, err := c.claim(spec.DataDir)
	if err != nil {
		return err
	}
	c.lock = lock
	killed, err := killStale(c.dir, c.b.opts.StopTimeout)
	if err != nil {
		return err
	}
	if killed {
		c.log.Info("Killed processes left by an earlier run of the provider")
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
	if st.Machines == nil {
		st.Machines = map[string]*machineState{}
	}
	c.st = st
	if err := c.setCertificates(spec); err != nil {
		return err
	}
	if err := c.saveState(); err != nil {
		return err
	}
	if err := c.newClient(); err != nil {
		return err
	}
	c.log.Info("Starting the cluster's endpoint", "port", c.st.APIServerPort, "dir", c.dir)
	c.listen()
	loopCtx, stopLoop := context.WithCancel(context.Background())
	c.stopLoop, c.loopDone = stopLoop, make(chan struct{})
	go c.loop(loopCtx)
	c.started = true
	return nil
}

// listen starts the load balancer when it does not listen yet.
func (c *cluster) listen() {
	if c.lb != nil {
		return
	}
	lb, err := listenLoadBalancer(c.st.APIServerPort, c.log)
	c.statusMu.Lock()
	c.lb, c.lbErr = lb, err
	c.statusMu.Unlock()
	if err != nil {
		c.log.Info("Cannot listen on the cluster's endpoint", "port", c.st.APIServerPort, "error", err.Error())
		return
	}
	c.updateBackends()
}

func (c *cluster) setCertificates(spec backend.Cluster) error {
	if err := c.pki.writeCertificates(spec.Certificates); err != nil {
		return fmt.Errorf("storing the cluster's certificates: %w", err)
	}
	etcdTLS, err := etcdClientTLS(spec.Certificates.EtcdCA, time.Now())
	if err != nil {
		return err
	}
	c.clusterName, c.certs, c.etcdTLS = spec.ClusterName, spec.Certificates, etcdTLS
	c.certsVersion = hashOf(string(spec.Certificates.CA.Cert.Raw), string(spec.Certificates.EtcdCA.Cert.Raw),
		string(spec.Certificates.FrontProxyCA.Cert.Raw), spec.ClusterName)
	return c.newClient()
}

func (c *cluster) saveState() error { return writeState(c.dir, c.st) }

// newClient builds the provider's admin client of the cluster, through the endpoint, and the HTTP client
// that probes each API server.
func (c *cluster) newClient() error {
	ca := c.certs.CA
	certPEM, keyPEM, err := clientCertificate(ca, time.Now())
	if err != nil {
		return err
	}
	tlsConfig := rest.TLSClientConfig{
		CAData:   pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: ca.Cert.Raw}),
		CertData: certPEM,
		KeyData:  keyPEM,
	}
	cfg := &rest.Config{
		Host:            "https://127.0.0.1:" + strconv.Itoa(c.st.APIServerPort),
		TLSClientConfig: tlsConfig,
		QPS:             20, Burst: 30, Timeout: 10 * time.Second,
		UserAgent: "capstan-infra-local",
	}
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	cert, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		return err
	}
	pool := x509.NewCertPool()
	pool.AddCert(ca.Cert)
	httpClient := &http.Client{Timeout: probeTimeout, Transport: &http.Transport{
		TLSClientConfig: &tls.Config{MinVersion: tls.VersionTLS12, RootCAs: pool, Certificates: []tls.Certificate{cert}},
		// Each probe is a new connection: a restarted API server is probed, not a stale connection.
		DisableKeepAlives: true,
	}}
	c.statusMu.Lock()
	c.client, c.httpClient = client, httpClient
	c.statusMu.Unlock()
	return nil
}

// run supervises one of a machine's processes until it is stopped: its pid file is <dir>/<name>.pid,
// its log <dir>/logs/<name>.log. Every change of its state pokes the probe loop.
func (c *cluster) run(dir, name, path string, args []string, ready func(context.Context) error, log logr.Logger) *supervisor.Process {
	return supervisor.Run(context.Background(), supervisor.Spec{
		Name: name, Path: path, Args: args, Dir: dir, Ready: ready,
		LogFile: filepath.Join(dir, "logs", name+".log"), MaxLogSize: maxLogSize, PidFile: pidFile(dir, name),
	}, supervisor.Options{
		MinBackoff: c.b.opts.MinRestartBackoff, MaxBackoff: c.b.opts.MaxRestartBackoff,
		// A process that ran for a while and exits is a new crash, not a crash loop.
		StableAfter: 2 * c.b.opts.MaxRestartBackoff,
		StopTimeout: c.b.opts.StopTimeout, OnChange: c.poke, Log: log,
	})
}

// maxLogSize is the size above which a process's log file is truncated when the process starts again.
const maxLogSize = 10 << 20

// pidFile is where a process records its pid, for KillStale after a provider restart.
func pidFile(dir, name string) string { return filepath.Join(dir, name+".pid") }

// processNames are the processes a machine may run.
var processNames = []string{componentAPIServer, componentEtcd}

// killStale kills the processes an earlier run of the provider left in a cluster directory (found through
// the machines' pid files).
func killStale(dir string, timeout time.Duration) (bool, error) {
	entries, err := os.ReadDir(filepath.Join(dir, "machines"))
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return false, err
	}
	killed := false
	for _, e := range entries {
		k, err := killStaleMachine(filepath.Join(dir, "machines", e.Name()), timeout)
		if err != nil {
			return killed, err
		}
		killed = killed || k
	}
	return killed, nil
}

// killStaleMachine kills the processes an earlier run of the provider left for a machine: its API server
// first, then its etcd member.
func killStaleMachine(dir string, timeout time.Duration) (bool, error) {
	killed := false
	for _, name := range processNames {
		k, err := supervisor.KillStale(pidFile(dir, name), dir, timeout)
		if err != nil {
			return killed, err
		}
		killed = killed || k
	}
	return killed, nil
}

// stop stops the load balancer, every machine and the probe loop, for good.
func (c *cluster) stop() {
	c.mu.Lock()
	c.removed = true
	if !c.started {
		c.mu.Unlock()
		return
	}
	c.log.Info("Stopping the cluster's endpoint and machines")
	lb, machines, stopLoop, loopDone, lock := c.lb, c.machines, c.stopLoop, c.loopDone, c.lock
	c.lb, c.machines, c.started, c.lock = nil, map[string]*machine{}, false, nil
	// The probe loop takes mu: it must not be held while waiting for the loop to end.
	c.mu.Unlock()
	if lb != nil {
		lb.close()
	}
	var wg sync.WaitGroup
	for _, m := range machines {
		wg.Go(m.stop)
	}
	wg.Wait()
	stopLoop()
	<-loopDone
	lock.release()
}

// poke asks the probe loop to re-evaluate the cluster now (a process started or exited).
func (c *cluster) poke() {
	select {
	case c.wake <- struct{}{}:
	default:
	}
	c.pokeNodes()
}

// pokeNodes asks the node loop to refresh the mirror Pods now.
func (c *cluster) pokeNodes() {
	select {
	case c.nodesWake <- struct{}{}:
	default:
	}
}

// loop probes the control plane machines' API servers (often while one is not ready, less often after)
// and points the load balancer at the ready ones; nodeLoop, beside it, writes to the workload cluster.
// They are apart so that a slow or unreachable API server never delays the probes.
func (c *cluster) loop(ctx context.Context) {
	defer close(c.loopDone)
	nodesDone := make(chan struct{})
	go func() {
		defer close(nodesDone)
		c.nodeLoop(ctx)
	}()
	defer func() { <-nodesDone }()
	for {
		allReady := c.probe(ctx)
		interval := c.b.opts.ProbeInterval
		if !allReady {
			interval = c.b.opts.StartingProbeInterval
		}
		if !sleep(ctx, c.wake, interval) {
			return
		}
	}
}

// nodeLoop refreshes the mirror Pods of the control plane machines and drives the node heartbeats.
func (c *cluster) nodeLoop(ctx context.Context) {
	for {
		c.refreshMirrorPods(ctx)
		c.heartbeat(ctx)
		if !sleep(ctx, c.nodesWake, c.b.opts.NodeRefreshInterval) {
			return
		}
	}
}

// sleep waits for interval to pass, or less when woken; it returns false when ctx ends first.
func sleep(ctx context.Context, wake <-chan struct{}, interval time.Duration) bool {
	t := time.NewTimer(interval)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-wake:
	case <-t.C:
	}
	return true
}

// probeFallThreshold is how many probes in a row must fail before a running API server that was ready
// stops being ready, as a load balancer's health check "fall" count: one slow answer on a loaded machine
// does not take an API server out, and one that hangs (its etcd member stopped) is out within
// ProbeInterval + 2 × probeTimeout + StartingProbeInterval, 5.2 s at most with the defaults.
const probeFallThreshold = 2

// probeTimeout bounds one /readyz probe.
const probeTimeout = 2 * time.Second

// probe checks every control plane machine's API server and reports whether all are ready.
func (c *cluster) probe(ctx context.Context) bool {
	c.mu.Lock()
	type target struct {
		m       *machine
		port    int
		running bool
	}
	var targets []target
	for _, m := range c.machines {
		if m.spec.ControlPlane == nil || m.apiserver == nil {
			continue
		}
		targets = append(targets, target{m: m, port: m.state().APIServerPort, running: m.apiserver.State().Running && m.etcd.State().Running})
	}
	c.mu.Unlock()
	c.statusMu.Lock()
	httpClient := c.httpClient
	c.statusMu.Unlock()
	// The API servers are probed at once: one that hangs does not delay the probes of the others.
	ready := make([]bool, len(targets))
	var wg sync.WaitGroup
	for i, t := range targets {
		if !t.running {
			continue
		}
		wg.Go(func() {
			pctx, cancel := context.WithTimeout(ctx, probeTimeout)
			defer cancel()
			req, err := http.NewRequestWithContext(pctx, http.MethodGet, "https://127.0.0.1:"+strconv.Itoa(t.port)+"/readyz", nil)
			if err != nil {
				return
			}
			resp, err := httpClient.Do(req)
			if err == nil {
				_ = resp.Body.Close()
				ready[i] = resp.StatusCode == http.StatusOK
			}
		})
	}
	wg.Wait()
	c.mu.Lock()
	changed := false
	allReady := true
	for i, t := range targets {
		switch {
		case ready[i] || !t.running:
			t.m.probeFailures = 0
		case t.m.apiReady && t.m.probeFailures+1 < probeFallThreshold:
			// Still running and ready a moment ago: one slow or failed probe does not take it out of
			// the load balancer (which closes its connections).
			t.m.probeFailures++
			ready[i] = true
		}
		if t.m.apiReady != ready[i] {
			changed = true
			t.m.apiReady = ready[i]
		}
		allReady = allReady && ready[i] && t.m.probeFailures == 0 // a failing probe is retried soon
	}
	c.updateBackends()
	status := c.computeStatus()
	c.mu.Unlock()
	if changed {
		c.pokeNodes()
	}

	c.statusMu.Lock()
	changed = changed || status != c.status || !c.notified
	c.status, c.notified = status, true
	c.apiReady = status.APIServers > 0
	c.statusMu.Unlock()
	if changed {
		c.log.V(1).Info("Cluster state changed", "ready", status.Ready, "apiServers", status.APIServers)
		c.b.Notify(c.key)
	}
	return allReady
}

// updateBackends points the load balancer at the ready API servers, but those of leaving machines: their
// open connections stay until their API servers close them. Called with mu held.
func (c *cluster) updateBackends() {
	var ports, leaving []int
	for _, m := range c.machines {
		switch {
		case m.spec.ControlPlane == nil:
		case m.leaving:
			leaving = append(leaving, m.state().APIServerPort)
		case m.apiReady:
			ports = append(ports, m.state().APIServerPort)
		}
	}
	sort.Ints(ports)
	if c.lb != nil {
		c.lb.setBackends(ports, leaving...)
	}
}

// leaveEndpoint takes a control plane machine's API server out of the endpoint before its Machine's
// etcd member is removed: no new connection goes to it, and it stops as kube-apiserver does on SIGTERM,
// finishing the requests in flight and telling its clients to reconnect (HTTP/2 GOAWAY), which the
// endpoint sends to the other API servers. It reports whether the API server stopped; true when there is
// nothing to do: not a control plane machine, or no other API server ready to take the clients (the
// clients of a cluster's only API server have nowhere to go).
func (c *cluster) leaveEndpoint(name string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	m := c.machines[name]
	if m == nil || m.spec.ControlPlane == nil || m.apiserver == nil {
		return true
	}
	if !m.leaving {
		others := 0
		for n, o := range c.machines {
			if n != name && o.spec.ControlPlane != nil && o.apiReady && !o.leaving {
				others++
			}
		}
		if others == 0 {
			return true
		}
		m.log.Info("Taking the machine's kube-apiserver out of the cluster's endpoint and stopping it: its Machine is being deleted")
		m.leaving = true
		c.updateBackends()
		go m.apiserver.Stop()
	}
	return !m.apiserver.State().Running
}

// computeStatus derives the cluster's state. Called with mu held.
func (c *cluster) computeStatus() backend.ClusterStatus {
	s := backend.ClusterStatus{Host: "127.0.0.1", Port: int32(c.st.APIServerPort)} //nolint:gosec // a port fits
	for _, m := range c.machines {
		if m.spec.ControlPlane != nil && m.apiReady {
			s.APIServers++
		}
	}
	switch {
	case c.lb != nil:
		s.Ready = true
	case c.lbErr != nil:
		s.Reason, s.Message = infrav1.ProcessesFailedReason, fmt.Sprintf("Port %d of the cluster's endpoint is in use by another process", c.st.APIServerPort)
	default:
		s.Reason, s.Message = infrav1.ProcessesStartingReason, "Starting the cluster's endpoint"
	}
	return s
}

func (c *cluster) currentStatus() backend.ClusterStatus {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.computeStatus()
}

// readyClient returns the admin client while an API server is ready behind the endpoint.
func (c *cluster) readyClient() (kubernetes.Interface, bool) {
	c.statusMu.Lock()
	defer c.statusMu.Unlock()
	return c.client, c.apiReady
}
