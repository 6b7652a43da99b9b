package ui

import (
	"context"
	"fmt"
	"strings"
	"sync"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// clusterReader is what a Cluster's page reads through: the shared cache, whose informers it starts on
// first use of a kind. Lists of the kinds that have spec.clusterName are narrowed to the Cluster by the
// index (the tree keeps only those anyway), and lists are not copied (the tree only reads them), so that
// a page costs the Cluster's objects and not its namespace's. A kind that cannot be read is left out of
// the page, as one that is not served, with a warning.
type clusterReader struct {
	h       *hub
	cluster string

	mu       sync.Mutex
	warnings []string
}

var _ client.Reader = &clusterReader{}

func (r *clusterReader) Get(ctx context.Context, k client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	if err := r.watch(ctx, obj); err != nil {
		return err
	}
	return r.h.cache.Get(ctx, k, obj, opts...)
}

func (r *clusterReader) List(ctx context.Context, list client.ObjectList, opts ...client.ListOption) error {
	gvk := list.GetObjectKind().GroupVersionKind()
	item, err := r.h.scheme.New(gvk)
	if err != nil {
		// Unstructured.
		u := itemOf(gvk)
		if err := r.watch(ctx, u); err != nil {
			return err
		}
	} else if obj, ok := item.(client.Object); ok {
		if err := r.watch(ctx, obj); err != nil {
			return err
		}
	}
	kind := schema.GroupKind{Group: gvk.Group, Kind: strings.TrimSuffix(gvk.Kind, "List")}
	for _, indexed := range byClusterName {
		if indexed.GroupKind() == kind {
			opts = append(opts, client.MatchingFields{clusterNameField: r.cluster})
		}
	}
	return r.h.cache.List(ctx, list, append(opts, client.UnsafeDisableDeepCopy)...)
}

func (r *clusterReader) watch(ctx context.Context, obj client.Object) error {
	err := r.h.watch(ctx, obj)
	if err == nil || meta.IsNoMatchError(err) {
		return err
	}
	gvk := obj.GetObjectKind().GroupVersionKind()
	r.mu.Lock()
	r.warnings = append(r.warnings, fmt.Sprintf("%s objects are left out: %v", gvk.Kind, err))
	r.mu.Unlock()
	return &meta.NoKindMatchError{GroupKind: gvk.GroupKind(), SearchedVersions: []string{gvk.Version}}
}

// itemOf is an unstructured object of the kind of a list's items.
func itemOf(listGVK schema.GroupVersionKind) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(listGVK.GroupVersion().WithKind(strings.TrimSuffix(listGVK.Kind, "List")))
	return u
}
