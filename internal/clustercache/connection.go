package clustercache

import (
	"context"
	"crypto/sha256"
	"fmt"
	"net/http"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
)

// connection is everything made from one kubeconfig of a workload cluster.
type connection struct {
	config         *rest.Config
	cache          cache.Cache
	cachedClient   client.Client
	uncachedClient client.Client
	prober         rest.Interface
	// cacheCtx is done when the connection stops; cancel stops the cache and the health probe.
	cacheCtx context.Context
	cancel   context.CancelFunc

	watchMu sync.Mutex
	watches map[string]bool
}

func (c *connection) stop() { c.cancel() }

// startConnect creates a connection in a goroutine of its own unless one exists or is being created.
// Nothing is held while the goroutine talks to the workload cluster: GetClient of this cluster keeps
// answering ErrClusterNotConnected and other clusters are not concerned at all.
func (cc *ClusterCache) startConnect(ctx context.Context, acc *accessor, secretVersion string, kubeconfig []byte) {
	acc.mu.Lock()
	if acc.conn != nil || acc.connecting {
		acc.mu.Unlock()
		return
	}
	acc.attempt++
	attempt := acc.attempt
	acc.connecting = true
	connectCtx, cancel := context.WithTimeout(cc.ctx, cc.opts.ConnectionTimeout)
	acc.cancelConnect = cancel
	recordConnection(acc.key, false)
	acc.mu.Unlock()

	log := ctrl.LoggerFrom(ctx)
	go func() {
		defer cancel()
		log.Info("Connecting to the workload cluster")
		conn, err := cc.connect(connectCtx, kubeconfig)

		acc.mu.Lock()
		if acc.attempt != attempt {
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
			acc.lastFailure = time.Now()
			acc.failedSecretVersion = secretVersion
			acc.mu.Unlock()
			log.Error(err, "Connecting to the workload cluster failed, retrying later", "retryAfter", cc.opts.ConnectionRetryInterval)
			cc.requeue(acc.key)
			return
		}
		acc.conn = conn
		acc.secretVersion = secretVersion
		acc.kubeconfigHash = sha256.Sum256(kubeconfig)
		acc.lastProbeSuccess = time.Now()
		acc.consecutiveFailures = 0
		acc.lastFailure = time.Time{}
		acc.failedSecretVersion = ""
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

// connect builds the clients and the cache of a workload cluster from its kubeconfig. ctx bounds the whole
// creation; the cache and the probe outlive it and stop with the connection.
func (cc *ClusterCache) connect(ctx context.Context, kubeconfig []byte) (*connection, error) {
	cfg, err := clientcmd.RESTConfigFromKubeConfig(kubeconfig)
	if err != nil {
		return nil, fmt.Errorf("reading the kubeconfig: %w", err)
	}
	cfg.QPS, cfg.Burst = cc.opts.ClientQPS, cc.opts.ClientBurst
	cfg.UserAgent = cc.opts.UserAgent

	// Requests are bounded by ClientTimeout; the cache's watches are long requests, so its HTTP client
	// has no timeout (the API server ends watches itself).
	watchConfig := rest.CopyConfig(cfg)
	cfg.Timeout = cc.opts.ClientTimeout
	httpClient, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return nil, fmt.Errorf("creating the HTTP client: %w", err)
	}
	watchHTTPClient, err := rest.HTTPClientFor(watchConfig)
	if err != nil {
		return nil, fmt.Errorf("creating the HTTP client: %w", err)
	}

	// Probe first: an unreachable cluster fails here, within HealthProbeTimeout.
	prober, err := newProber(cfg, httpClient)
	if err != nil {
		return nil, err
	}
	if err := probe(ctx, prober, cc.opts.HealthProbeTimeout); err != nil {
		return nil, fmt.Errorf("probing the API server: %w", err)
	}

	scheme := cc.scheme()
	mapper, err := apiutil.NewDynamicRESTMapper(cfg, httpClient)
	if err != nil {
		return nil, fmt.Errorf("creating the REST mapper: %w", err)
	}
	uncached, err := client.New(cfg, client.Options{HTTPClient: httpClient, Scheme: scheme, Mapper: mapper})
	if err != nil {
		return nil, fmt.Errorf("creating the client: %w", err)
	}
	c, err := cache.New(watchConfig, cache.Options{
		HTTPClient: watchHTTPClient, Scheme: scheme, Mapper: mapper, SyncPeriod: cc.opts.CacheSyncPeriod,
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
		config:         cfg,
		cache:          c,
		cachedClient:   &nodeCachingClient{Client: uncached, cache: c},
		uncachedClient: uncached,
		prober:         prober,
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

func newProber(cfg *rest.Config, httpClient *http.Client) (rest.Interface, error) {
	c := rest.CopyConfig(cfg)
	c.NegotiatedSerializer = clientgoscheme.Codecs.WithoutConversion()
	rc, err := rest.UnversionedRESTClientForConfigAndClient(c, httpClient)
	if err != nil {
		return nil, fmt.Errorf("creating the probe client: %w", err)
	}
	return rc, nil
}

// probe asks the API server for its root path, which needs a working network path and valid credentials.
func probe(ctx context.Context, prober rest.Interface, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	return prober.Get().AbsPath("/").Do(ctx).Error()
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
		acc.lastFailure = time.Now()
		acc.failedSecretVersion = secretVersion
		acc.mu.Unlock()
		log.Info("Dropping the connection to the workload cluster: health probe failed too often", "consecutiveFailures", failures, "error", err.Error())
		cc.notifyListeners(acc.key)
		cc.requeue(acc.key)
		return
	}
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
