package controllermanager

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/selection"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
)

// CacheReadTimeout bounds a read from the manager's cache by the manager's client when the cache cannot
// say whether its informer of the kind will sync (a cache that NewCache did not build): an informer that
// cannot list its kind (RBAC forbids it, the CRD went away) never syncs, and the read would wait for it
// forever. After it, the client reads from the API server, so that the caller learns why. With the cache
// NewCache builds, the client goes to the API server as soon as the informer fails to list its kind.
const CacheReadTimeout = 15 * time.Second

// CacheOptions completes a manager's cache options with what every capstan manager caches beyond the
// objects it watches: the Secrets that carry the cluster-name label (certificates, kubeconfigs, bootstrap
// data), without their managedFields, and no other Secret. Other Secrets are never held in memory.
func CacheOptions(opts cache.Options) cache.Options {
	if opts.ByObject == nil {
		opts.ByObject = map[client.Object]cache.ByObject{}
	}
	opts.ByObject[&corev1.Secret{}] = cache.ByObject{
		Label:     ClusterSecrets(),
		Transform: cache.TransformStripManagedFields(),
	}
	return opts
}

// ManagerOptions completes a manager's options with the managers' cache and client (CacheOptions,
// ClientOptions, NewCache, NewClient): what every capstan manager runs with, and what a test that runs
// controllers on a manager of its own must give it, since the controllers read provider objects and
// Secrets through that client.
func ManagerOptions(opts ctrl.Options) ctrl.Options {
	opts.Cache = CacheOptions(opts.Cache)
	opts.Client.Cache = ClientOptions().Cache
	opts.NewCache, opts.NewClient = NewCache, NewClient
	return opts
}

// ClusterSecrets selects the Secrets the manager's cache holds: those labelled cluster.x-k8s.io/cluster-name.
func ClusterSecrets() labels.Selector {
	req, err := labels.NewRequirement(clusterv1.ClusterNameLabel, selection.Exists, nil)
	if err != nil {
		panic(fmt.Sprintf("the cluster-name label requirement: %v", err))
	}
	return labels.NewSelector().Add(*req)
}

// ClientOptions are the manager's client options: Secrets and ConfigMaps are never read by the
// controller-runtime client from the cache (the cache holds only some Secrets, and no ConfigMaps); NewClient
// reads Secrets and unstructured objects from the cache itself.
func ClientOptions() client.Options {
	return client.Options{Cache: &client.CacheOptions{
		DisableFor: []client.Object{&corev1.Secret{}, &corev1.ConfigMap{}},
	}}
}

// NewClient is the managers' client (a controller-runtime NewClientFunc): as controller-runtime's, it
// reads typed objects from opts.Cache.Reader (the manager's cache) and writes to the API server; besides,
//   - it reads unstructured objects (provider objects: InfraMachines, bootstrap configs, control planes,
//     templates) from the cache too, as upstream's managers do with client.CacheOptions{Unstructured: true};
//     a kind's informer starts at its first read (kinds of the core API group are read from the API
//     server);
//   - it reads a Secret from the cache, which holds only the Secrets labelled cluster.x-k8s.io/cluster-name
//     (CacheOptions), and from the API server when the cache does not have it (a Secret without the label,
//     for example certificates a user provided), as upstream's SecretCachingClient with its fallback;
//   - it reads those from the API server while the cache's informer of the kind fails to list and watch it
//     (RBAC forbids it, the CRD went away: the cache of NewCache reports it, and the client logs it once
//     per kind); with another cache, a read the cache does not answer within CacheReadTimeout is made again
//     on the API server.
//
// Lists of Secrets and every ConfigMap read go to the API server.
func NewClient(cfg *rest.Config, opts client.Options) (client.Client, error) {
	var cached client.Reader
	if opts.Cache != nil {
		cached = opts.Cache.Reader
		c := *opts.Cache
		c.Unstructured = false // the caching client below decides
		opts.Cache = &c
	}
	live, err := client.New(cfg, opts)
	if err != nil {
		return nil, err
	}
	if cached == nil {
		return live, nil
	}
	cc := &cachingClient{Client: live, cache: cached}
	if rc, ok := cached.(*failureReportingCache); ok {
		cc.informers, cc.failures = rc, rc.failures
	}
	return cc, nil
}

// cachingClient is the client NewClient returns.
type cachingClient struct {
	client.Client
	cache client.Reader
	// informers and failures are the cache's when NewCache built it, nil otherwise.
	informers cache.Informers
	failures  *listFailures
}

func (c *cachingClient) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	read := func(ctx context.Context) error { return c.cache.Get(ctx, key, obj, opts...) }
	switch obj.(type) {
	case *corev1.Secret:
		err := c.readCache(ctx, &corev1.Secret{}, read)
		if err == nil || ctx.Err() != nil {
			return err
		}
		// Not in the cache: a Secret without the cluster-name label, one created a moment ago, or one of
		// a namespace the cache does not watch.
		return c.Client.Get(ctx, key, obj, opts...)
	case *unstructured.Unstructured:
		gvk := obj.GetObjectKind().GroupVersionKind()
		if !cachedKind(gvk) {
			break
		}
		proto := &unstructured.Unstructured{}
		proto.SetGroupVersionKind(gvk)
		if err := c.readCache(ctx, proto, read); !errors.Is(err, errCacheUnavailable) {
			return err
		}
		return c.Client.Get(ctx, key, obj, opts...)
	}
	return c.Client.Get(ctx, key, obj, opts...)
}

func (c *cachingClient) List(ctx context.Context, list client.ObjectList, opts ...client.ListOption) error {
	if u, ok := list.(*unstructured.UnstructuredList); ok && cachedKind(u.GroupVersionKind()) {
		proto := &unstructured.Unstructured{}
		proto.SetGroupVersionKind(u.GroupVersionKind().GroupVersion().WithKind(strings.TrimSuffix(u.GetKind(), "List")))
		err := c.readCache(ctx, proto, func(ctx context.Context) error { return c.cache.List(ctx, list, opts...) })
		if !errors.Is(err, errCacheUnavailable) {
			return err
		}
	}
	return c.Client.List(ctx, list, opts...)
}

// cachedKind says whether unstructured objects of kind gvk are read from the cache: the kinds of API groups
// other than the core group (Secrets, ConfigMaps and other built-in kinds read as unstructured would each
// start an informer holding every object of the kind).
func cachedKind(gvk schema.GroupVersionKind) bool { return gvk.Group != "" }

// errCacheUnavailable says that the cache cannot answer a read of the kind: its informer fails to list and
// watch the kind, or did not sync within CacheReadTimeout.
var errCacheUnavailable = errors.New("the cache cannot read this kind")

// readCache runs read, a read from the cache of objects like proto (an object of the kind, no more). It
// returns errCacheUnavailable, without waiting, when the cache's informer of the kind has not synced and
// failed to list or watch the kind; when it fails while read waits for it to sync; when CacheReadTimeout
// ran out before ctx did.
func (c *cachingClient) readCache(ctx context.Context, proto client.Object, read func(context.Context) error) error {
	if c.informers == nil {
		return c.readWithin(ctx, read)
	}
	informer, err := c.informers.GetInformer(ctx, proto, cache.BlockUntilSynced(false))
	if err != nil { // no informer for the kind (not a kind of the API server): read says why
		return c.readWithin(ctx, read)
	}
	if informer.HasSynced() {
		return read(ctx)
	}
	kind := informerType(proto)
	failedCh, failed := c.failures.failure(kind)
	if failed != nil {
		c.failures.logOnce(ctx, kind, failed)
		return errCacheUnavailable
	}
	// The informer is starting: read waits for it to sync, unless it fails to list its kind meanwhile.
	cacheCtx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	go func() {
		select {
		case <-failedCh:
			cancel(errCacheUnavailable)
		case <-cacheCtx.Done():
		}
	}()
	err = c.readWithin(cacheCtx, read)
	if err != nil && ctx.Err() == nil && errors.Is(context.Cause(cacheCtx), errCacheUnavailable) {
		_, failed = c.failures.failure(kind)
		c.failures.logOnce(ctx, kind, failed)
		return errCacheUnavailable
	}
	return err
}

// readWithin runs read with CacheReadTimeout; it returns errCacheUnavailable when that ran out before ctx
// did.
func (c *cachingClient) readWithin(ctx context.Context, read func(context.Context) error) error {
	cacheCtx, cancel := context.WithTimeout(ctx, CacheReadTimeout)
	defer cancel()
	err := read(cacheCtx)
	if err != nil && ctx.Err() == nil && cacheCtx.Err() != nil {
		return errCacheUnavailable
	}
	return err
}
