package controllermanager

import (
	"context"
	"errors"
	"io"
	"reflect"
	"sync"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/rest"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"
)

// NewCache is the managers' cache (a controller-runtime NewCacheFunc): controller-runtime's, which
// besides tells NewClient which kinds its informers fail to list and watch (RBAC forbids it, the CRD
// went away), so that NewClient reads those kinds from the API server at once instead of waiting for an
// informer that never syncs. The informers' errors are still logged as controller-runtime logs them (or
// handed to opts.DefaultWatchErrorHandler when set).
func NewCache(cfg *rest.Config, opts cache.Options) (cache.Cache, error) {
	failures := &listFailures{}
	next := opts.DefaultWatchErrorHandler
	if next == nil {
		next = toolscache.DefaultWatchErrorHandler
	}
	opts.DefaultWatchErrorHandler = func(ctx context.Context, r *toolscache.Reflector, err error) {
		next(ctx, r, err)
		if !errors.Is(err, io.EOF) { // a watch the API server closed: the informer watches again
			failures.record(r.TypeDescription(), err)
		}
	}
	c, err := cache.New(cfg, opts)
	if err != nil {
		return nil, err
	}
	return &failureReportingCache{Cache: c, failures: failures, indexes: &clusterIndexes{scheme: opts.Scheme}}, nil
}

// failureReportingCache is the cache NewCache returns.
type failureReportingCache struct {
	cache.Cache
	failures *listFailures
	indexes  *clusterIndexes
}

// listFailures holds, by the informer's type (its reflector's type description), the first error an
// informer met listing or watching its kind. An informer that synced afterwards is read from: NewClient
// looks at the failure only while the informer has not synced.
type listFailures struct {
	mu     sync.Mutex
	kinds  map[string]*listFailure
	logged map[string]bool
}

type listFailure struct {
	err    error         // the first error; nil until then
	failed chan struct{} // closed at the first error
}

func (f *listFailures) entry(kind string) *listFailure {
	if f.kinds == nil {
		f.kinds = map[string]*listFailure{}
	}
	e, ok := f.kinds[kind]
	if !ok {
		e = &listFailure{failed: make(chan struct{})}
		f.kinds[kind] = e
	}
	return e
}

func (f *listFailures) record(kind string, err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if e := f.entry(kind); e.err == nil {
		e.err = err
		close(e.failed)
	}
}

// failure returns a channel closed when the informer of kind meets an error, and the first error it met
// (nil if none yet).
func (f *listFailures) failure(kind string) (<-chan struct{}, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	e := f.entry(kind)
	return e.failed, e.err
}

// logOnce logs, the first time only for kind, that it is read from the API server.
func (f *listFailures) logOnce(ctx context.Context, kind string, err error) {
	f.mu.Lock()
	first := !f.logged[kind]
	if f.logged == nil {
		f.logged = map[string]bool{}
	}
	f.logged[kind] = true
	f.mu.Unlock()
	if first {
		log.FromContext(ctx).Info("The manager's cache cannot list and watch this kind: reading it from the API server until it can",
			"kind", kind, "reason", err.Error())
	}
}

// informerType is the type description client-go's reflector gives the informer of obj's kind: the
// GroupVersionKind of an unstructured object, the Go type of a typed one.
func informerType(obj client.Object) string {
	if u, ok := obj.(*unstructured.Unstructured); ok {
		if gvk := u.GroupVersionKind(); !gvk.Empty() {
			return gvk.String()
		}
	}
	return reflect.TypeOf(obj).String()
}
