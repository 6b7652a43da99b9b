package memory

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"net"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/go-logr/logr"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"

	"github.com/capstan-dev/capstan/internal/pki"
	"github.com/capstan-dev/capstan/internal/providers/local/backend"
)

// Options configure the memory backend.
type Options struct {
	// Host is the address the clusters' endpoints listen on; 127.0.0.1 when empty.
	Host string
	// StartupDelay is how long a machine takes from its first EnsureMachine to a registered Node (and, for
	// a control plane machine, a running etcd member and API server), plus a random part up to
	// StartupJitter.
	StartupDelay, StartupJitter time.Duration
	// Log is the backend's logger.
	Log logr.Logger
}

// Backend runs workload clusters in memory: one HTTPS server, in the provider's process, serves every
// cluster's Kubernetes API on the cluster's endpoint port, from an in-memory object store per cluster,
// and an etcd member API reached through the API's pods/portforward of the etcd Pods. Nothing is kept on
// disk: after a provider restart each cluster is rebuilt, empty, when its LocalCluster is reconciled, and
// its Nodes, etcd members and mirror Pods when its LocalMachines are.
type Backend struct {
	opts   Options
	server *http.Server
	etcd   *etcdServer
	// apiConns are the connections port-forwarded to the API server of one machine.
	apiConns *connListener

	// Listeners implement OnChange.
	backend.Listeners

	mu       sync.Mutex
	clusters map[types.NamespacedName]*cluster
	byPort   map[int]*cluster
	stopped  bool
}

var _ backend.Backend = (*Backend)(nil)

type (
	clusterContextKey struct{}
	nodeContextKey    struct{}
)

// New returns a memory backend.
func New(o Options) *Backend {
	if o.Host == "" {
		o.Host = "127.0.0.1"
	}
	b := &Backend{opts: o, clusters: map[types.NamespacedName]*cluster{}, byPort: map[int]*cluster{}, etcd: newEtcdServer(), apiConns: newConnListener()}
	b.server = &http.Server{
		Handler:           http.HandlerFunc(b.serveHTTP),
		ReadHeaderTimeout: 30 * time.Second,
		ConnContext: func(ctx context.Context, c net.Conn) context.Context {
			if a, ok := c.LocalAddr().(apiServerAddr); ok {
				return context.WithValue(context.WithValue(ctx, clusterContextKey{}, a.cluster), nodeContextKey{}, a.node)
			}
			if a, ok := c.LocalAddr().(*net.TCPAddr); ok {
				b.mu.Lock()
				cl := b.byPort[a.Port]
				b.mu.Unlock()
				return context.WithValue(ctx, clusterContextKey{}, cl)
			}
			return ctx
		},
	}
	go func() { _ = b.server.Serve(b.apiConns) }()
	return b
}

func (b *Backend) serveHTTP(w http.ResponseWriter, r *http.Request) {
	c, _ := r.Context().Value(clusterContextKey{}).(*cluster)
	if c == nil || c.stopped() {
		http.Error(w, "the cluster no longer runs", http.StatusServiceUnavailable)
		return
	}
	if c.apiServers() == 0 {
		http.Error(w, "no API server of the cluster runs yet", http.StatusServiceUnavailable)
		return
	}
	if r.TLS == nil || len(r.TLS.PeerCertificates) == 0 {
		// As kube-apiserver's default RBAC: anonymous users read the version and the health endpoints only.
		switch strings.Trim(r.URL.Path, "/") {
		case "version", "healthz", "readyz", "livez":
		default:
			writeStatus(w, apierrors.NewUnauthorized("a client certificate of the cluster's CA is required"))
			return
		}
	}
	c.serveAPI(w, r)
}

func (b *Backend) get(key types.NamespacedName) *cluster {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.clusters[key]
}

// EnsureCluster implements backend.Backend: it listens on the cluster's port (chosen when 0) with a
// serving certificate of the cluster's CA, trusting the CA's client certificates.
func (b *Backend) EnsureCluster(_ context.Context, spec backend.Cluster) (backend.ClusterStatus, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.stopped {
		return backend.ClusterStatus{}, errors.New("the memory backend stopped")
	}
	if c := b.clusters[spec.Key]; c != nil {
		return c.status(b.opts.Host), nil
	}
	if spec.Certificates.CA == nil || spec.Certificates.EtcdCA == nil {
		return backend.ClusterStatus{}, errors.New("the cluster's CA and etcd CA are needed")
	}
	c, err := newCluster(b, spec)
	if err != nil {
		return backend.ClusterStatus{}, err
	}
	l, err := net.Listen("tcp", net.JoinHostPort(b.opts.Host, strconv.Itoa(int(spec.Port))))
	if err != nil {
		return backend.ClusterStatus{Reason: "EndpointFailed", Message: fmt.Sprintf("Listening on port %d: %s", spec.Port, err)},
			fmt.Errorf("listening on the cluster's endpoint: %w", err)
	}
	c.port = l.Addr().(*net.TCPAddr).Port
	c.listener = l
	b.clusters[spec.Key] = c
	b.byPort[c.port] = c
	go func() { _ = b.server.Serve(tls.NewListener(l, c.tlsConfig)) }()
	b.opts.Log.V(2).Info("Cluster endpoint listening", "cluster", spec.Key, "port", c.port)
	return c.status(b.opts.Host), nil
}

// StoredCertificates implements backend.Backend: the memory backend keeps no certificates of its own.
func (b *Backend) StoredCertificates(types.NamespacedName) (backend.Certificates, error) {
	return backend.Certificates{}, nil
}

// DeleteCluster implements backend.Backend.
func (b *Backend) DeleteCluster(_ context.Context, key types.NamespacedName) error {
	b.mu.Lock()
	c := b.clusters[key]
	if c != nil {
		delete(b.clusters, key)
		delete(b.byPort, c.port)
	}
	b.mu.Unlock()
	if c != nil {
		c.stop()
	}
	return nil
}

// ReleaseCluster implements backend.Backend. A memory cluster has no data to hand over: the provider
// that runs the LocalCluster next rebuilds it from the management cluster's objects.
func (b *Backend) ReleaseCluster(ctx context.Context, key types.NamespacedName) error {
	return b.DeleteCluster(ctx, key)
}

// EnsureMachine implements backend.Backend.
func (b *Backend) EnsureMachine(_ context.Context, key types.NamespacedName, m backend.Machine) (backend.MachineStatus, error) {
	c := b.get(key)
	if c == nil {
		return backend.MachineStatus{}, backend.ErrClusterNotReady
	}
	return c.ensureMachine(m)
}

// Machines implements backend.Backend.
func (b *Backend) Machines(_ context.Context, key types.NamespacedName) ([]string, error) {
	c := b.get(key)
	if c == nil {
		return nil, nil
	}
	return c.machineNames(), nil
}

// DeleteMachine implements backend.Backend.
func (b *Backend) DeleteMachine(_ context.Context, key types.NamespacedName, name string) error {
	c := b.get(key)
	if c == nil {
		return nil
	}
	c.deleteMachine(name)
	return nil
}

// ClusterConfiguration implements backend.Backend.
func (b *Backend) ClusterConfiguration(_ context.Context, key types.NamespacedName) ([]byte, error) {
	c := b.get(key)
	if c == nil || c.apiServers() == 0 {
		return nil, backend.ErrClusterNotReady
	}
	return c.clusterConfiguration(), nil
}

// startupDelay is a machine's start-up time.
func (b *Backend) startupDelay() time.Duration {
	d := b.opts.StartupDelay
	if b.opts.StartupJitter > 0 {
		d += rand.N(b.opts.StartupJitter) //nolint:gosec // jitter needs no cryptographic randomness.
	}
	return d
}

// Start implements manager.Runnable: the backend runs until ctx is done, then stops every cluster.
func (b *Backend) Start(ctx context.Context) error {
	<-ctx.Done()
	b.Shutdown()
	return nil
}

// NeedLeaderElection implements manager.LeaderElectionRunnable.
func (b *Backend) NeedLeaderElection() bool { return false }

// Shutdown stops every cluster.
func (b *Backend) Shutdown() {
	b.mu.Lock()
	b.stopped = true
	cs := slices.Collect(maps.Values(b.clusters))
	b.clusters, b.byPort = map[types.NamespacedName]*cluster{}, map[int]*cluster{}
	b.mu.Unlock()
	for _, c := range cs {
		c.stop()
	}
	_ = b.server.Close()
	_ = b.apiConns.Close()
	b.etcd.stop()
}

// servingConfig is the TLS configuration of a server whose certificate ca signs for names, trusting
// client certificates of ca.
func servingConfig(ca *pki.KeyPair, cfg pki.CertConfig) (*tls.Config, error) {
	kp, err := ca.Sign(cfg)
	if err != nil {
		return nil, fmt.Errorf("issuing a serving certificate: %w", err)
	}
	pool := x509.NewCertPool()
	pool.AddCert(ca.Cert)
	return &tls.Config{
		Certificates: []tls.Certificate{{Certificate: [][]byte{kp.Cert.Raw, ca.Cert.Raw}, PrivateKey: kp.Key, Leaf: kp.Cert}},
		// Clients without a certificate get what kube-apiserver serves anonymous users (see serveHTTP).
		ClientAuth: tls.VerifyClientCertIfGiven,
		ClientCAs:  pool,
		// HTTP/2 as kube-apiserver: a client's requests and watches share one connection (port-forward's
		// upgrade asks for HTTP/1.1).
		NextProtos: []string{"h2", "http/1.1"},
		MinVersion: tls.VersionTLS12,
	}, nil
}
