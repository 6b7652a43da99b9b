package clustercache

import (
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"net/http"
	"runtime"
	"sync"
	"weak"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"
)

// restMapper is the RESTMapper of one workload cluster. It reads the cluster's API discovery on first use
// (with aggregated discovery, /api and /apis: two requests) and again when asked about a kind or resource
// it does not know (a CRD installed since, for example by a ClusterResourceSet), as controller-runtime's
// dynamic RESTMapper does. Unlike that one, it does not keep a mapper of its own: clusters whose discovery
// is the same (same Kubernetes version, same CRDs, which is most of them) share one mapper in the process
// (see sharedMappers). A mapper of a cluster's whole discovery is a few hundred KiB, which every
// connection of every manager held before.
type restMapper struct {
	discovery discovery.DiscoveryInterface

	mu      sync.Mutex
	current *sharedMapper
}

var _ meta.RESTMapper = (*restMapper)(nil)

func newRESTMapper(cfg *rest.Config, httpClient *http.Client) (*restMapper, error) {
	dc, err := discovery.NewDiscoveryClientForConfigAndClient(cfg, httpClient)
	if err != nil {
		return nil, fmt.Errorf("creating the discovery client: %w", err)
	}
	return &restMapper{discovery: dc}, nil
}

// sharedMapper is the mapper of one discovery document.
type sharedMapper struct {
	meta.RESTMapper
	key [32]byte
}

// sharedMappers are the mappers in use, by the hash of their discovery. An entry goes when no connection
// uses its mapper any more.
var sharedMappers = struct {
	mu    sync.Mutex
	byKey map[[32]byte]weak.Pointer[sharedMapper]
}{byKey: map[[32]byte]weak.Pointer[sharedMapper]{}}

// mapperFor returns the shared mapper of groups, making it if no connection uses one.
func mapperFor(groups []*restmapper.APIGroupResources) (*sharedMapper, error) {
	doc, err := json.Marshal(groups)
	if err != nil {
		return nil, fmt.Errorf("hashing the API discovery: %w", err)
	}
	key := sha256.Sum256(doc)
	sharedMappers.mu.Lock()
	defer sharedMappers.mu.Unlock()
	if wp, ok := sharedMappers.byKey[key]; ok {
		if m := wp.Value(); m != nil {
			return m, nil
		}
	}
	m := &sharedMapper{RESTMapper: restmapper.NewDiscoveryRESTMapper(groups), key: key}
	wp := weak.Make(m)
	sharedMappers.byKey[key] = wp
	runtime.AddCleanup(m, func(key [32]byte) {
		sharedMappers.mu.Lock()
		defer sharedMappers.mu.Unlock()
		if sharedMappers.byKey[key] == wp {
			delete(sharedMappers.byKey, key)
		}
	}, key)
	return m, nil
}

// mapper returns the cluster's mapper, reading the discovery if it was not yet.
func (r *restMapper) mapper() (*sharedMapper, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.current != nil {
		return r.current, nil
	}
	return r.loadLocked()
}

// reload reads the discovery again after a miss of stale, unless another caller did since stale was
// read.
func (r *restMapper) reload(stale *sharedMapper) (*sharedMapper, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.current != stale {
		return r.current, nil
	}
	return r.loadLocked()
}

func (r *restMapper) loadLocked() (*sharedMapper, error) {
	groups, err := restmapper.GetAPIGroupResources(r.discovery)
	if err != nil {
		return nil, fmt.Errorf("reading the API discovery of the workload cluster: %w", err)
	}
	m, err := mapperFor(groups)
	if err != nil {
		return nil, err
	}
	r.current = m
	return m, nil
}

// lookup calls f with the cluster's mapper, and once more after reading the discovery again when f does
// not find what it is asked.
func lookup[T any](r *restMapper, f func(meta.RESTMapper) (T, error)) (T, error) {
	m, err := r.mapper()
	if err != nil {
		var zero T
		return zero, err
	}
	out, err := f(m)
	if err == nil || !meta.IsNoMatchError(err) {
		return out, err
	}
	if m, err = r.reload(m); err != nil {
		var zero T
		return zero, err
	}
	return f(m)
}

// KindFor implements meta.RESTMapper.
func (r *restMapper) KindFor(resource schema.GroupVersionResource) (schema.GroupVersionKind, error) {
	return lookup(r, func(m meta.RESTMapper) (schema.GroupVersionKind, error) { return m.KindFor(resource) })
}

// KindsFor implements meta.RESTMapper.
func (r *restMapper) KindsFor(resource schema.GroupVersionResource) ([]schema.GroupVersionKind, error) {
	return lookup(r, func(m meta.RESTMapper) ([]schema.GroupVersionKind, error) { return m.KindsFor(resource) })
}

// ResourceFor implements meta.RESTMapper.
func (r *restMapper) ResourceFor(input schema.GroupVersionResource) (schema.GroupVersionResource, error) {
	return lookup(r, func(m meta.RESTMapper) (schema.GroupVersionResource, error) { return m.ResourceFor(input) })
}

// ResourcesFor implements meta.RESTMapper.
func (r *restMapper) ResourcesFor(input schema.GroupVersionResource) ([]schema.GroupVersionResource, error) {
	return lookup(r, func(m meta.RESTMapper) ([]schema.GroupVersionResource, error) { return m.ResourcesFor(input) })
}

// RESTMapping implements meta.RESTMapper.
func (r *restMapper) RESTMapping(gk schema.GroupKind, versions ...string) (*meta.RESTMapping, error) {
	return lookup(r, func(m meta.RESTMapper) (*meta.RESTMapping, error) { return m.RESTMapping(gk, versions...) })
}

// RESTMappings implements meta.RESTMapper.
func (r *restMapper) RESTMappings(gk schema.GroupKind, versions ...string) ([]*meta.RESTMapping, error) {
	return lookup(r, func(m meta.RESTMapper) ([]*meta.RESTMapping, error) { return m.RESTMappings(gk, versions...) })
}

// ResourceSingularizer implements meta.RESTMapper.
func (r *restMapper) ResourceSingularizer(resource string) (string, error) {
	return lookup(r, func(m meta.RESTMapper) (string, error) { return m.ResourceSingularizer(resource) })
}
