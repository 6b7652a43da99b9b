package clustercache

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/source"

	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
)

// ErrClusterNotConnected is returned (wrapped) when there is no connection to a workload cluster: it has
// not been made yet, is being made, failed, or was dropped because its health probe failed too often.
// Callers requeue; a ClusterSource tells them when the connection comes up.
var ErrClusterNotConnected = errors.New("connection to the workload cluster is down")

// RequeueWhenNotConnected is a reconciler.PhaseOptions.Requeue for the controllers whose phases read
// workload clusters: a phase that fails with ErrClusterNotConnected has not failed, the object is requeued
// after interval (a ClusterSource may bring it back sooner). onDown, when set, is called for each such
// phase.
func RequeueWhenNotConnected(interval time.Duration, onDown func()) func(context.Context, error) (time.Duration, bool) {
	return func(ctx context.Context, err error) (time.Duration, bool) {
		if !errors.Is(err, ErrClusterNotConnected) {
			return 0, false
		}
		if onDown != nil {
			onDown()
		}
		ctrl.LoggerFrom(ctx).V(4).Info("Requeuing: the workload cluster cannot be reached")
		return interval, true
	}
}

// NodeProviderIDField indexes the Nodes of every workload cluster's cache by spec.providerID, for
// `List(ctx, &corev1.NodeList{}, client.MatchingFields{NodeProviderIDField: id})`.
const NodeProviderIDField = "spec.providerID"

// KubeconfigSecretSuffix is appended to a Cluster's name to name the Secret holding its kubeconfig.
const KubeconfigSecretSuffix = "-kubeconfig"

// KubeconfigSecretKey is the key of the kubeconfig in the kubeconfig Secret.
const KubeconfigSecretKey = "value"

// Options tune the ClusterCache. Zero values take the defaults, which are upstream Cluster API's.
type Options struct {
	// WatchFilter is the value of --watch-filter: only Clusters with that cluster.x-k8s.io/watch-filter label
	// are connected. "" connects every Cluster.
	WatchFilter string
	// Concurrency is how many Clusters New's controller reconciles at once (100, as upstream's
	// --clustercache-concurrency). Reconciles never wait for a workload cluster, so it rarely matters.
	Concurrency int

	// ClientQPS and ClientBurst limit the requests of each workload cluster's clients (20 and 30).
	ClientQPS   float32
	ClientBurst int
	// ClientTimeout bounds every request of the clients (10s); watches of the cache are not bounded.
	ClientTimeout time.Duration
	// UserAgent of the clients ("capstan-cluster-cache").
	UserAgent string

	// ConnectionTimeout bounds the creation of a connection: the first probe and the sync of the cache
	// (30s).
	ConnectionTimeout time.Duration
	// ConnectionRetryInitialInterval is how long to wait after the first failed attempt to connect before
	// trying again (1s); the wait doubles after each failed attempt in a row, up to
	// ConnectionRetryMaxInitialInterval. A new cluster's API server answers some time after its kubeconfig
	// Secret exists: short waits connect it within seconds of answering.
	ConnectionRetryInitialInterval time.Duration
	// ConnectionRetryMaxInitialInterval caps the wait between attempts while a cluster has failed for less
	// than ConnectionRetryInitialPeriod (5s).
	ConnectionRetryMaxInitialInterval time.Duration
	// ConnectionRetryInitialPeriod is how long the short waits last (5m): a cluster that could not be
	// reached for that long (since its first failed attempt, or since its kubeconfig or its control plane
	// endpoint changed) is tried every ConnectionRetryInterval.
	ConnectionRetryInitialPeriod time.Duration
	// ConnectionRetryInterval is the wait between attempts to connect to a cluster that stays unreachable
	// (30s, upstream's ConnectionCreationRetryInterval).
	ConnectionRetryInterval time.Duration

	// HealthProbeInterval is the time between two probes of a connected cluster (10s).
	HealthProbeInterval time.Duration
	// HealthProbeTimeout bounds one probe, and the first probe of a new connection (5s).
	HealthProbeTimeout time.Duration
	// HealthProbeFailureThreshold is how many consecutive failed probes drop the connection (5).
	HealthProbeFailureThreshold int

	// CacheSyncPeriod is the resync period of the workload clusters' informers (the informers' default
	// when nil).
	CacheSyncPeriod *time.Duration

	// IdleTimeout, when positive, connects workload clusters on demand: a cluster is connected only once a
	// controller asks for its client, reader, REST config or a watch (GetClient, GetUncachedClient,
	// GetRESTConfig, Watch), and disconnected (informers, watches and health probe stopped, HTTP
	// connections closed) once nobody has asked for it for IdleTimeout. 0, the default, connects every
	// Cluster with a kubeconfig and keeps it connected, as upstream does.
	IdleTimeout time.Duration
}

// retryDelay is how long to wait after the failures-th failed connection attempt in a row, the first of
// which was failingFor ago: ConnectionRetryInitialInterval doubled after each failure, up to
// ConnectionRetryMaxInitialInterval, for ConnectionRetryInitialPeriod; then ConnectionRetryInterval. Up to
// 10% is added at random so that clusters created together do not retry together.
func (o Options) retryDelay(failures int, failingFor time.Duration) time.Duration {
	d := o.ConnectionRetryInterval
	if failingFor < o.ConnectionRetryInitialPeriod {
		d = o.ConnectionRetryInitialInterval
		for i := 1; i < failures && d < o.ConnectionRetryMaxInitialInterval; i++ {
			d *= 2
		}
		d = min(d, o.ConnectionRetryMaxInitialInterval, o.ConnectionRetryInterval)
	}
	return wait.Jitter(d, 0.1)
}

func (o Options) withDefaults() Options {
	if o.Concurrency == 0 {
		o.Concurrency = 100
	}
	if o.ClientQPS == 0 {
		o.ClientQPS = 20
	}
	if o.ClientBurst == 0 {
		o.ClientBurst = 30
	}
	if o.ClientTimeout == 0 {
		o.ClientTimeout = 10 * time.Second
	}
	if o.UserAgent == "" {
		o.UserAgent = "capstan-cluster-cache"
	}
	if o.ConnectionTimeout == 0 {
		o.ConnectionTimeout = 30 * time.Second
	}
	if o.ConnectionRetryInitialInterval == 0 {
		o.ConnectionRetryInitialInterval = time.Second
	}
	if o.ConnectionRetryMaxInitialInterval == 0 {
		o.ConnectionRetryMaxInitialInterval = 5 * time.Second
	}
	if o.ConnectionRetryInitialPeriod == 0 {
		o.ConnectionRetryInitialPeriod = 5 * time.Minute
	}
	if o.ConnectionRetryInterval == 0 {
		o.ConnectionRetryInterval = 30 * time.Second
	}
	if o.HealthProbeInterval == 0 {
		o.HealthProbeInterval = 10 * time.Second
	}
	if o.HealthProbeTimeout == 0 {
		o.HealthProbeTimeout = 5 * time.Second
	}
	if o.HealthProbeFailureThreshold == 0 {
		o.HealthProbeFailureThreshold = 5
	}
	return o
}

// ClusterCache holds the connections to workload clusters. Make one with New, or set the exported fields
// and call SetupWithManager once; the other methods may be called before the manager starts.
type ClusterCache struct {
	// Client is the manager's (cached) client; Clusters are read through it, and the metadata of kubeconfig
	// Secrets when the ClusterCache is not set up with a manager.
	Client client.Client
	// APIReader reads kubeconfig Secrets, uncached, so Secrets need no informer.
	APIReader client.Reader
	// Options tune the ClusterCache.
	Options Options

	// secretMetadata reads the metadata of kubeconfig Secrets: the manager's cache, which the watch of
	// Secret metadata fills (the manager's client may read Secrets from the API server).
	secretMetadata client.Reader

	initOnce sync.Once
	opts     Options
	// ctx lives as long as the manager; every connection and connection attempt derives from it.
	ctx    context.Context
	cancel context.CancelFunc

	mu        sync.RWMutex
	accessors map[client.ObjectKey]*accessor
	listeners []chan event.GenericEvent
	// self enqueues Clusters in the ClusterCache's own controller (after a failed connection attempt or a
	// dropped connection).
	self chan event.GenericEvent
}

// New returns a ClusterCache running in mgr, with the manager's client and API reader.
func New(mgr ctrl.Manager, opts Options) (*ClusterCache, error) {
	if opts.IdleTimeout < 0 {
		return nil, fmt.Errorf("the clustercache idle timeout must not be negative, got %s", opts.IdleTimeout)
	}
	cc := &ClusterCache{Client: mgr.GetClient(), APIReader: mgr.GetAPIReader(), Options: opts}
	cc.init()
	if err := cc.SetupWithManager(context.Background(), mgr, controller.Options{MaxConcurrentReconciles: cc.opts.Concurrency}); err != nil {
		return nil, err
	}
	return cc, nil
}

func (cc *ClusterCache) init() {
	cc.initOnce.Do(func() {
		registerClusterCacheMetrics()
		cc.opts = cc.Options.withDefaults()
		cc.ctx, cc.cancel = context.WithCancel(context.Background())
		cc.accessors = map[client.ObjectKey]*accessor{}
		cc.self = make(chan event.GenericEvent, 1024)
	})
}

// Health is what the ClusterCache knows about the connection to a workload cluster.
type Health struct {
	// Connected is true when there is a connection and its last probe succeeded.
	Connected bool
	// Connecting is true while a connection is being created.
	Connecting bool
	// LastProbeSuccess is when the API server last answered a probe (zero when it never did).
	LastProbeSuccess time.Time
	// ConsecutiveFailures counts the probes that failed since the last success.
	ConsecutiveFailures int
}

// Health reports the state of the connection to a Cluster's workload cluster. It never blocks.
func (cc *ClusterCache) Health(cluster client.ObjectKey) Health {
	acc := cc.lookup(cluster)
	if acc == nil {
		return Health{}
	}
	acc.mu.RLock()
	defer acc.mu.RUnlock()
	return Health{
		Connected:           acc.conn != nil && acc.consecutiveFailures == 0,
		Connecting:          acc.connecting,
		LastProbeSuccess:    acc.lastProbeSuccess,
		ConsecutiveFailures: acc.consecutiveFailures,
	}
}

// GetClient returns a client of a Cluster's workload cluster whose Node reads (Get and List) come from
// the connection's cache, with the NodeProviderIDField index; every other read and every write goes to
// the API server, bounded by Options.ClientTimeout. Without a connection (none made yet, or dropped after
// HealthProbeFailureThreshold failed probes) it returns ErrClusterNotConnected at once.
func (cc *ClusterCache) GetClient(_ context.Context, cluster client.ObjectKey) (client.Client, error) {
	conn, err := cc.connection(cluster)
	if err != nil {
		return nil, err
	}
	return conn.cachedClient, nil
}

// GetUncachedClient returns a client of a Cluster's workload cluster that reads from the API server.
// Without a healthy connection it returns ErrClusterNotConnected at once.
func (cc *ClusterCache) GetUncachedClient(_ context.Context, cluster client.ObjectKey) (client.Client, error) {
	conn, err := cc.connection(cluster)
	if err != nil {
		return nil, err
	}
	return conn.uncachedClient, nil
}

// GetRESTConfig returns a copy of the rest.Config of a Cluster's workload cluster. Without a healthy
// connection it returns ErrClusterNotConnected at once.
func (cc *ClusterCache) GetRESTConfig(_ context.Context, cluster client.ObjectKey) (*rest.Config, error) {
	conn, err := cc.connection(cluster)
	if err != nil {
		return nil, err
	}
	return rest.CopyConfig(conn.config), nil
}

// Watcher is what Watch adds a source to: a controller.
type Watcher interface {
	Watch(src source.Source) error
}

// WatchInput describes a watch on a kind of a workload cluster.
type WatchInput struct {
	// Name identifies the watch: a connection gets each named watch once. For example "machine-nodes".
	Name string
	// Watcher is the controller the events go to.
	Watcher Watcher
	// Kind is the kind to watch, for example &corev1.Node{}.
	Kind client.Object
	// EventHandler maps the events to requests of the controller.
	EventHandler handler.EventHandler
	// Predicates filter the events.
	Predicates []predicate.Predicate
}

// Watch makes sure the controller in.Watcher gets the events of in.Kind from a Cluster's workload cluster,
// through the connection's cache. It adds the watch once per connection: call it on every reconcile, and
// it is added again after the connection has been recreated. Without a healthy connection it returns
// ErrClusterNotConnected at once.
func (cc *ClusterCache) Watch(_ context.Context, cluster client.ObjectKey, in WatchInput) error {
	if in.Name == "" || in.Watcher == nil || in.Kind == nil || in.EventHandler == nil {
		return errors.New("watch input needs a name, a watcher, a kind and an event handler")
	}
	conn, err := cc.connection(cluster)
	if err != nil {
		return err
	}
	conn.watchMu.Lock()
	defer conn.watchMu.Unlock()
	if conn.watches[in.Name] {
		return nil
	}
	// Starting a source does not wait for the informer, so holding watchMu here blocks nobody for long;
	// GetClient does not take it.
	if err := in.Watcher.Watch(source.Kind(conn.cache, in.Kind, in.EventHandler, in.Predicates...)); err != nil {
		return fmt.Errorf("adding watch %s on Cluster %s: %w", in.Name, cluster, err)
	}
	conn.watches[in.Name] = true
	return nil
}

// WatchNodes is Watch of the Nodes of a Cluster's workload cluster, named name, whose events toRequests maps
// to requests of the controller w; nothing while w is nil (a reconciler used without its controller).
func (cc *ClusterCache) WatchNodes(ctx context.Context, cluster client.ObjectKey, name string, w Watcher, toRequests handler.MapFunc) error {
	if w == nil {
		return nil
	}
	return cc.Watch(ctx, cluster, WatchInput{Name: name, Watcher: w, Kind: &corev1.Node{}, EventHandler: handler.EnqueueRequestsFromMapFunc(toRequests)})
}

// ClusterSource returns a source for a controller that gets a generic event for a Cluster (an object with
// only its namespace and name) whenever the connection to its workload cluster comes up, recovers or goes
// down; mapFunc turns the Cluster into the controller's requests. Each controller needs its own source.
func (cc *ClusterCache) ClusterSource(mapFunc handler.MapFunc) source.Source {
	cc.init()
	ch := make(chan event.GenericEvent, 1024)
	cc.mu.Lock()
	cc.listeners = append(cc.listeners, ch)
	cc.mu.Unlock()
	return source.Channel(ch, handler.EnqueueRequestsFromMapFunc(mapFunc))
}

// notify sends an event for a Cluster to every listener without blocking the caller.
func (cc *ClusterCache) notify(cluster client.ObjectKey, listeners ...chan event.GenericEvent) {
	obj := &clusterv1.Cluster{}
	obj.SetNamespace(cluster.Namespace)
	obj.SetName(cluster.Name)
	for _, ch := range listeners {
		go func() {
			select {
			case ch <- event.GenericEvent{Object: obj}:
			case <-cc.ctx.Done():
			}
		}()
	}
}

// notifyListeners tells the ClusterSources that a Cluster's connection changed.
func (cc *ClusterCache) notifyListeners(cluster client.ObjectKey) {
	cc.mu.RLock()
	listeners := append([]chan event.GenericEvent(nil), cc.listeners...)
	cc.mu.RUnlock()
	cc.notify(cluster, listeners...)
}

// requeue enqueues a Cluster in the ClusterCache's own controller.
func (cc *ClusterCache) requeue(cluster client.ObjectKey) {
	cc.notify(cluster, cc.self)
}

func (cc *ClusterCache) lookup(cluster client.ObjectKey) *accessor {
	cc.init()
	cc.mu.RLock()
	defer cc.mu.RUnlock()
	return cc.accessors[cluster]
}

func (cc *ClusterCache) getOrCreate(cluster client.ObjectKey) *accessor {
	if acc := cc.lookup(cluster); acc != nil {
		return acc
	}
	cc.mu.Lock()
	defer cc.mu.Unlock()
	if acc := cc.accessors[cluster]; acc != nil {
		return acc
	}
	acc := &accessor{key: cluster}
	cc.accessors[cluster] = acc
	return acc
}

// forget drops a Cluster's connection and everything known about it; it reports whether there was a
// connection, and then tells the ClusterSources.
func (cc *ClusterCache) forget(cluster client.ObjectKey) bool {
	acc := cc.lookup(cluster)
	if acc == nil {
		return false
	}
	dropped := acc.disconnect()
	cc.mu.Lock()
	delete(cc.accessors, cluster)
	cc.mu.Unlock()
	forgetMetrics(cluster)
	if dropped {
		cc.notifyListeners(cluster)
	}
	return dropped
}

// connection returns the connection of a Cluster, or ErrClusterNotConnected. A connection whose health
// probe fails keeps being served until HealthProbeFailureThreshold failures in a row drop it, as upstream
// does: one lost probe does not cut every controller off the workload cluster. When clusters are connected
// on demand (Options.IdleTimeout), it records that the Cluster is used and, when it is not connected,
// asks the ClusterCache's controller to connect it: the caller's ClusterSource tells it when it is.
func (cc *ClusterCache) connection(cluster client.ObjectKey) (*connection, error) {
	acc := cc.lookup(cluster)
	onDemand := cc.onDemand()
	if onDemand {
		if acc == nil {
			acc = cc.getOrCreate(cluster)
		}
		acc.lastUsed.Store(time.Now().UnixNano())
	}
	if acc != nil {
		acc.mu.RLock()
		conn, connecting, retryAt := acc.conn, acc.connecting, acc.retryAt
		acc.mu.RUnlock()
		if conn != nil {
			return conn, nil
		}
		// Not connected: ask for a connection, unless one is being made or a failed attempt waits
		// for its retry (the ClusterCache's controller retries it as long as the Cluster is used).
		if onDemand && !connecting && (retryAt.IsZero() || !time.Now().Before(retryAt)) && acc.requested.CompareAndSwap(false, true) {
			cc.requeue(cluster)
		}
	}
	return nil, fmt.Errorf("Cluster %s: %w", cluster, ErrClusterNotConnected) //nolint:staticcheck // Kinds are capitalised, as in every message.
}

// onDemand reports whether clusters are connected only when used (Options.IdleTimeout).
func (cc *ClusterCache) onDemand() bool { return cc.opts.IdleTimeout > 0 }

// usedRecently reports whether a Cluster connected on demand was asked for within Options.IdleTimeout.
func (cc *ClusterCache) usedRecently(acc *accessor, now time.Time) bool {
	used := acc.lastUsed.Load()
	return used != 0 && now.Sub(time.Unix(0, used)) < cc.opts.IdleTimeout
}

// accessor is the state of one workload cluster. mu guards the fields and is never held during I/O.
type accessor struct {
	key client.ObjectKey

	// lastUsed is when a controller last asked for the connection (UnixNano), with Options.IdleTimeout;
	// requested is set while a request to connect is on its way to the ClusterCache's controller.
	lastUsed  atomic.Int64
	requested atomic.Bool

	mu sync.RWMutex
	// conn is the current connection; nil when not connected.
	conn *connection
	// connecting is true while a goroutine creates a connection; cancelConnect stops it.
	connecting    bool
	cancelConnect context.CancelFunc
	// attempt counts connection attempts, so that a late attempt does not install a stale connection.
	attempt uint64
	// reachability is what the Cluster said about its control plane when the last attempt started (see
	// reachabilityOf): an attempt that failed is retried at once when it changes.
	reachability string
	// The backoff of failed connection attempts: failures counts the attempts that failed in a row (a
	// connection dropped by the probe counts as one), since failingSince; the next attempt may start at
	// retryAt. failedSecretVersion is the resourceVersion of the Secret the last attempt used and
	// failedKubeconfig its kubeconfig, so that a retry does not read the Secret again.
	failures            int
	failingSince        time.Time
	retryAt             time.Time
	failedSecretVersion string
	failedKubeconfig    []byte
	// endpoint holds the clients made from the kubeconfig of the last attempt, reused by the retries.
	endpoint *endpoint
	// secretVersion and kubeconfigHash identify the kubeconfig of conn.
	secretVersion  string
	kubeconfigHash [32]byte
	// Probe results.
	lastProbeSuccess    time.Time
	consecutiveFailures int
}

// resetBackoff forgets the failed attempts: the next failure waits ConnectionRetryInitialInterval again.
func (a *accessor) resetBackoffLocked() {
	a.failures = 0
	a.failingSince = time.Time{}
	a.retryAt = time.Time{}
	a.failedSecretVersion = ""
	a.failedKubeconfig = nil
}

// failedLocked records a failed attempt (or a connection dropped by the probe) and returns how long to
// wait before the next one.
func (a *accessor) failedLocked(opts Options, now time.Time, secretVersion string, kubeconfig []byte) time.Duration {
	if a.failures == 0 {
		a.failingSince = now
	}
	a.failures++
	wait := opts.retryDelay(a.failures, now.Sub(a.failingSince))
	a.retryAt = now.Add(wait)
	a.failedSecretVersion = secretVersion
	a.failedKubeconfig = kubeconfig
	return wait
}

// disconnect stops the connection and any connection attempt; it reports whether there was a connection.
func (a *accessor) disconnect() bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.disconnectLocked()
}

func (a *accessor) disconnectLocked() bool {
	a.attempt++
	if a.cancelConnect != nil {
		a.cancelConnect()
		a.cancelConnect = nil
	}
	a.connecting = false
	a.endpoint = nil
	conn := a.conn
	a.conn = nil
	a.consecutiveFailures = 0
	a.secretVersion = ""
	a.kubeconfigHash = [32]byte{}
	if conn == nil {
		return false
	}
	conn.stop()
	return true
}
