package controllermanager

import (
	"context"
	"errors"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/selection"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
)

// CacheReadTimeout bounds a read from the manager's cache by the manager's client: an informer that
// cannot list its kind (RBAC forbids it, the CRD went away) never syncs, and the read would wait for it
// forever. After it, the client reads from the API server, so that the caller learns why.
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
//   - a cache read that does not answer within CacheReadTimeout is made again on the API server.
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
	return &cachingClient{Client: live, cache: cached}, nil
}

// cachingClient is the client NewClient returns.
type cachingClient struct {
	client.Client
	cache client.Reader
}

func (c *cachingClient) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	switch obj.(type) {
	case *corev1.Secret:
		err := c.readCache(ctx, func(ctx context.Context) error { return c.cache.Get(ctx, key, obj, opts...) })
		if err == nil || ctx.Err() != nil {
			return err
		}
		// Not in the cache: a Secret without the cluster-name label, one created a moment ago, or one of
		// a namespace the cache does not watch.
		return c.Client.Get(ctx, key, obj, opts...)
	case *unstructured.Unstructured:
		if !cachedKind(obj.GetObjectKind().GroupVersionKind()) {
			break
		}
		err := c.readCache(ctx, func(ctx context.Context) error { return c.cache.Get(ctx, key, obj, opts...) })
		if !errors.Is(err, errCacheTimeout) {
			return err
		}
		return c.Client.Get(ctx, key, obj, opts...)
	}
	return c.Client.Get(ctx, key, obj, opts...)
}

func (c *cachingClient) List(ctx context.Context, list client.ObjectList, opts ...client.ListOption) error {
	if u, ok := list.(*unstructured.UnstructuredList); ok && cachedKind(u.GroupVersionKind()) {
		err := c.readCache(ctx, func(ctx context.Context) error { return c.cache.List(ctx, list, opts...) })
		if !errors.Is(err, errCacheTimeout) {
			return err
		}
	}
	return c.Client.List(ctx, list, opts...)
}

// cachedKind says whether unstructured objects of kind gvk are read from the cache: the kinds of API groups
// other than the core group (Secrets, ConfigMaps and other built-in kinds read as unstructured would each
// start an informer holding every object of the kind).
func cachedKind(gvk schema.GroupVersionKind) bool { return gvk.Group != "" }

var errCacheTimeout = errors.New("the cache did not answer in time")

// readCache runs read with CacheReadTimeout; it returns errCacheTimeout when that ran out before ctx did.
func (c *cachingClient) readCache(ctx context.Context, read func(context.Context) error) error {
	cacheCtx, cancel := context.WithTimeout(ctx, CacheReadTimeout)
	defer cancel()
	err := read(cacheCtx)
	if err != nil && ctx.Err() == nil && cacheCtx.Err() != nil {
		return errCacheTimeout
	}
	return err
}
