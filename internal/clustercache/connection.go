package clustercache

import (
	"context"
	"crypto/sha256"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	utilnet "k8s.io/apimachinery/pkg/util/net"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// connection is everything made from one kubeconfig of a workload cluster.
type connection struct {
	config         *rest.Config
	httpClient     *http.Client
	cache          cache.Cache
	cachedClient   client.Client
	uncachedClient client.Client
	prober         *prober
	// cacheCtx is done when the connection stops; cancel stops the cache and the health probe.
	cacheCtx context.Context
	cancel   context.CancelFunc

	watchMu sync.Mutex
	watches map[string]bool
}

func (c *connection) stop() { c.cancel() }

// attempt is what a connection attempt starts from.
type attempt struct {
	secretVersion string
	kubeconfig    []byte
	reachability  string
	// resetBackoff forgets earlier failures: the kubeconfig or the Cluster's control plane changed.
	resetBackoff bool
}

// endpoint is what is made from a kubeconfig before talking to the workload cluster: the rest.Configs and
// HTTP clients (one for requests, bounded by Options.ClientTimeout, one for the cache's watches) and the
// probe client. Retries of a failed attempt reuse it, so that an attempt on a cluster that does not answer
// yet costs one probe request and no parsing.
type endpoint struct {
	kubeconfigHash  [32]byte
	config          *rest.Config
	watchConfig     *rest.Config
	httpClient      *http.Client
	watchHTTPClient *http.Client
	prober          *prober
}

// startConnect creates a connection in a goroutine of its own unless one exists or is being created.
// Nothing is held while the goroutine talks to the workload cluster: GetClient of this cluster keeps
// answering ErrClusterNotConnected and other clusters are not concerned at all.
func (cc *ClusterCache) startConnect(ctx context.Context, acc *accessor, in attempt) {
	acc.mu.Lock()
	if acc.conn != nil || acc.connecting {
		acc.mu.Unlock()
		return
	}
	if in.resetBackoff {
		acc.resetBackoffLocked()
	}
	acc.attempt++
	attemptNumber := acc.attempt
	acc.connecting = true
	acc.reachability = in.reachability
	hash := sha256.Sum256(in.kubeconfig)
	ep := acc.endpoint
	if ep != nil && ep.kubeconfigHash != hash {
		ep = nil
	}
	connectCtx, cancel := context.WithTimeout(cc.ctx, cc.opts.ConnectionTimeout)
	acc.cancelConnect = cancel
	recordConnection(acc.key, false)
	acc.mu.Unlock()

	log := ctrl.LoggerFrom(ctx)
	go func() {
		defer cancel()
		var err error
		if ep == nil {
			ep, err = cc.newEndpoint(in.kubeconfig, hash)
		}
		var conn *connection
		if err == nil {
			log.V(2).Info("Connecting to the workload cluster")
			conn, err = cc.connect(connectCtx, ep)
		}

		acc.mu.Lock()
		if acc.attempt != attemptNumber {
			// Disconnected (Cluster or Secret gone) while connecting: throw the result away.
			acc.mu.Unlock()
			if conn != nil {
				conn.stop()
			}
			return
		}
		acc.connecting = false
		acc.cancelConnect = nil
		if err != nil {
			acc.endpoint = ep
			failures := acc.failures + 1
			retryAfter := acc.failedLocked(cc.opts, time.Now(), in.secretVersion, in.kubeconfig)
			acc.mu.Unlock()
			// The first failures are expected while a new cluster's API server starts: log them quietly.
			if failures <= 3 {
				log.V(2).Info("Connecting to the workload cluster failed, retrying later", "retryAfter", retryAfter.Round(time.Millisecond), "failures", failures, "error", err.Error())
			} else {
				log.Error(err, "Connecting to the workload cluster failed, retrying later", "retryAfter", retryAfter.Round(time.Millisecond), "failures", failures)
			}
			cc.requeue(acc.key)
			return
		}
		acc.conn = conn
		acc.endpoint = nil
		acc.secretVersion = in.secretVersion
		acc.kubeconfigHash = hash
		acc.lastProbeSuccess = time.Now()
		acc.consecutiveFailures = 0
		acc.resetBackoffLocked()
		probeCtx := conn.cacheCtx
		recordConnection(acc.key, true)
		acc.mu.Unlock()

		log.Info("Connected to the workload cluster")
		go cc.probeLoop(probeCtx, acc, conn)
		cc.notifyListeners(acc.key)
		// The kubeconfig may have changed while connecting: look again.
		cc.requeue(acc.key)
	}()
}

// newEndpoint makes the clients of a kubeconfig.
func (cc *ClusterCache) newEndpoint(kubeconfig []byte, hash [32]byte) (*endpoint, error) {
	cfg, err := clientcmd.RESTConfigFromKubeConfig(kubeconfig)
	if err != nil {
		return nil, fmt.Errorf("reading the kubeconfig: %w", err)
	}
	cfg.QPS, cfg.Burst = cc.opts.ClientQPS, cc.opts.ClientBurst
	cfg.UserAgent = cc.opts.UserAgent
	// Responses are not gzipped: a kube-apiserver gzips the informers' watch streams, and each open
	// watch then holds a decompressor (about 40 KiB) for as long as it runs, in every manager and for
	// every cluster, to save a few bytes on the rare events of an idle cluster. Large lists and discovery
	// documents cost more bytes on the wire instead, and no CPU to compress and decompress.
	cfg.DisableCompression = true

	// Requests are bounded by ClientTimeout; the cache's watches are long requests, so its HTTP client
	// has no timeout (the API server ends watches itself). Both use the same transport: one HTTP/2
	// connection per cluster carries the probes, the requests and the watches.
	watchConfig := rest.CopyConfig(cfg)
	cfg.Timeout = cc.opts.ClientTimeout
	httpClient, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return nil, fmt.Errorf("creating the HTTP client: %w", err)
	}
	watchHTTPClient := &http.Client{Transport: httpClient.Transport}
	prober, err := newProber(cfg, httpClient)
	if err != nil {
		return nil, err
	}
	return &endpoint{
		kubeconfigHash: hash, config: cfg, watchConfig: watchConfig,
		httpClient: httpClient, watchHTTPClient: watchHTTPClient, prober: prober,
	}, nil
}

// connect builds the clients and the cache of a workload cluster. ctx bounds the whole creation; the cache
// and the probe outlive it and stop with the connection.
func (cc *ClusterCache) connect(ctx context.Context, ep *endpoint) (*connection, error) {
	// Probe first: an unreachable cluster fails here, within HealthProbeTimeout.
	if err := probe(ctx, ep.prober, cc.opts.HealthProbeTimeout); err != nil {
		return nil, fmt.Errorf("probing the API server: %w", err)
	}

	scheme := cc.scheme()
	mapper, err := newRESTMapper(ep.config, ep.httpClient)
	if err != nil {
		return nil, fmt.Errorf("creating the REST mapper: %w", err)
	}
	uncached, err := client.New(ep.config, client.Options{HTTPClient: ep.httpClient, Scheme: scheme, Mapper: mapper})
	if err != nil {
		return nil, fmt.Errorf("creating the client: %w", err)
	}
	c, err := cache.New(ep.watchConfig, cache.Options{
		HTTPClient: ep.watchHTTPClient, Scheme: scheme, Mapper: mapper, SyncPeriod: cc.opts.CacheSyncPeriod,
		// Nobody reads the managedFields of a workload cluster's cached objects; a kube-apiserver writes
		// a few hundred bytes of them per Node, kept in every manager's cache (upstream strips them too).
		DefaultTransform: cache.TransformStripManagedFields(),
	})
	if err != nil {
		return nil, fmt.Errorf("creating the cache: %w", err)
	}
	if err := c.IndexField(ctx, &corev1.Node{}, NodeProviderIDField, indexNodeByProviderID); err != nil {
		return nil, fmt.Errorf("indexing Nodes by %s: %w", NodeProviderIDField, err)
	}

	cacheCtx, cancel := context.WithCancel(cc.ctx)
	go func() { _ = c.Start(cacheCtx) }()
	if !c.WaitForCacheSync(ctx) {
		cancel()
		return nil, fmt.Errorf("waiting for the Node cache to sync: %w", context.Cause(ctx))
	}
	return &connection{
		config:         ep.config,
		httpClient:     ep.httpClient,
		cache:          c,
		cachedClient:   &nodeCachingClient{Client: uncached, cache: c},
		uncachedClient: uncached,
		prober:         ep.prober,
		cancel:         cancel,
		cacheCtx:       cacheCtx,
		watches:        map[string]bool{},
	}, nil
}

func (cc *ClusterCache) scheme() *runtime.Scheme {
	if cc.Client != nil && cc.Client.Scheme() != nil {
		return cc.Client.Scheme()
	}
	return clientgoscheme.Scheme
}

// prober sends the health probe, GET / on the workload cluster's API server, with the connection's HTTP
// client (its HTTP/2 connection and credentials). It goes around client-go's request machinery (rate
// limiter, retries, decoding), which costs more than the request itself: with 1,000 clusters probed every
// 10 s by each manager, the probes are most of an idle manager's work on workload clusters.
type prober struct {
	client *http.Client
	url    string
}

func newProber(cfg *rest.Config, httpClient *http.Client) (*prober, error) {
	u, _, err := rest.DefaultServerUrlFor(cfg)
	if err != nil {
		return nil, fmt.Errorf("creating the probe client: %w", err)
	}
	// The root path under the server's path, as client-go's AbsPath("/") has it.
	u.Path = strings.TrimSuffix(u.Path, "/") + "/"
	u.RawQuery = ""
	return &prober{client: httpClient, url: u.String()}, nil
}

// probe asks the API server for its root path, which needs a working network path and valid credentials:
// one request, never retried (client-go would retry a reset connection up to 10 times, a second apart), so
// that a failed probe fails at once and the probe's own schedule decides when to try again.
func probe(ctx context.Context, p *prober, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, p.url, nil)
	if err != nil {
		return err
	}
	req.Header.Set("Accept", "application/json")
	resp, err := p.client.Do(req)
	if err != nil {
		return err
	}
	defer func() { _ = resp.Body.Close() }()
	// Read the body (a few KiB) so that the HTTP connection can be reused.
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20))
	if resp.StatusCode < http.StatusOK || resp.StatusCode >= http.StatusMultipleChoices {
		return fmt.Errorf("GET / answered %s", resp.Status)
	}
	return nil
}

// probeLoop probes a connection until it stops, and drops it after too many failures in a row.
func (cc *ClusterCache) probeLoop(ctx context.Context, acc *accessor, conn *connection) {
	log := ctrl.Log.WithName("clustercache").WithValues("Cluster", acc.key.String())
	ticker := time.NewTicker(cc.opts.HealthProbeInterval)
	defer ticker.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-ticker.C:
		}
		if cc.onDemand() && !cc.usedRecently(acc, time.Now()) {
			if cc.disconnectIdle(acc, conn) {
				log.Info("Disconnected from the workload cluster: not used for a while", "idleTimeout", cc.opts.IdleTimeout)
			}
			return
		}
		err := probe(ctx, conn.prober, cc.opts.HealthProbeTimeout)
		if ctx.Err() != nil {
			return
		}

		acc.mu.Lock()
		if acc.conn != conn {
			acc.mu.Unlock()
			return
		}
		recordProbe(acc.key, err == nil)
		if err == nil {
			recovered := acc.consecutiveFailures > 0
			acc.consecutiveFailures = 0
			acc.lastProbeSuccess = time.Now()
			acc.mu.Unlock()
			if recovered {
				log.Info("Workload cluster answers the health probe again")
				cc.notifyListeners(acc.key)
			}
			continue
		}
		acc.consecutiveFailures++
		failures := acc.consecutiveFailures
		if failures < cc.opts.HealthProbeFailureThreshold {
			acc.mu.Unlock()
			log.V(4).Info("Health probe failed", "consecutiveFailures", failures, "error", err.Error())
			if failures == 1 {
				cc.notifyListeners(acc.key)
			}
			continue
		}
		secretVersion := acc.secretVersion
		acc.disconnectLocked()
		recordConnection(acc.key, false)
		// Retried as a failed attempt: after ConnectionRetryInitialInterval first.
		acc.resetBackoffLocked()
		acc.failedLocked(cc.opts, time.Now(), secretVersion, nil)
		acc.mu.Unlock()
		log.Info("Dropping the connection to the workload cluster: health probe failed too often", "consecutiveFailures", failures, "error", err.Error())
		cc.notifyListeners(acc.key)
		cc.requeue(acc.key)
		return
	}
}

// disconnectIdle drops a connection made on demand that nobody used for Options.IdleTimeout: its cache
// (informers and watches) and health probe stop and its HTTP connection is closed. The ClusterSources are
// not told: nobody was using the connection, and the next use connects again. The Cluster's metrics are
// removed, as for a Cluster the ClusterCache does not connect: an idle cluster is not a cluster that is down.
func (cc *ClusterCache) disconnectIdle(acc *accessor, conn *connection) bool {
	acc.mu.Lock()
	if acc.conn != conn {
		acc.mu.Unlock()
		return false
	}
	acc.disconnectLocked()
	acc.resetBackoffLocked()
	acc.mu.Unlock()
	forgetMetrics(acc.key)
	// The watches end once their requests see the cancelled context; then the HTTP/2 connection is idle
	// and can be closed instead of waiting for the transport's idle timeout (90 s). Transports are shared
	// by kubeconfigs with the same credentials: only idle connections are closed, others are not
	// disturbed. client-go's round trippers wrap the transport: CloseIdleConnectionsFor unwraps them.
	go func() {
		for _, wait := range []time.Duration{100 * time.Millisecond, time.Second, 5 * time.Second} {
			select {
			case <-cc.ctx.Done():
				return
			case <-time.After(wait):
			}
			utilnet.CloseIdleConnectionsFor(conn.httpClient.Transport)
		}
	}()
	return true
}

func indexNodeByProviderID(obj client.Object) []string {
	node, ok := obj.(*corev1.Node)
	if !ok || node.Spec.ProviderID == "" {
		return nil
	}
	return []string{node.Spec.ProviderID}
}

// nodeCachingClient reads Nodes from the connection's cache and everything else from the API server:
// Nodes are looked up on every Machine reconcile, while Pods, volumes and the like are only read while
// deleting a Machine and are not worth an informer over the whole workload cluster.
type nodeCachingClient struct {
	client.Client
	cache cache.Cache
}

func (c *nodeCachingClient) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	if _, ok := obj.(*corev1.Node); ok {
		return c.cache.Get(ctx, key, obj, opts...)
	}
	return c.Client.Get(ctx, key, obj, opts...)
}

func (c *nodeCachingClient) List(ctx context.Context, list client.ObjectList, opts ...client.ListOption) error {
	if _, ok := list.(*corev1.NodeList); ok {
		return c.cache.List(ctx, list, opts...)
	}
	return c.Client.List(ctx, list, opts...)
}
