package controllermanager

import (
	"context"
	"strings"
	"sync"

	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/selection"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"

	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
	"github.com/capstan-dev/capstan/internal/reconciler"
)

// clusterIndexes are the kinds for which the cache has reconciler.ClusterNameIndex. A list of one of
// them by the cluster-name label (client.MatchingLabels{clusterv1.ClusterNameLabel: name}, alone or with
// other labels) is answered from the index, then filtered by the whole selector as before: the same
// objects, without the cache reading every object of the namespace. With a thousand Clusters in one
// namespace, the Machines of one Cluster were otherwise found among thousands, on every reconcile and on
// every event mapped to a Cluster's objects.
type clusterIndexes struct {
	scheme *runtime.Scheme
	mu     sync.RWMutex
	kinds  map[schema.GroupVersionKind]bool
}

// indexed notes that obj's kind got an index named field.
func (c *clusterIndexes) indexed(obj client.Object, field string) {
	if field != reconciler.ClusterNameIndex || c.scheme == nil {
		return
	}
	gvk, err := apiutil.GVKForObject(obj, c.scheme)
	if err != nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.kinds == nil {
		c.kinds = map[schema.GroupVersionKind]bool{}
	}
	c.kinds[gvk] = true
}

// listOptions returns opts, with the index's field selector added when list is of an indexed kind and
// opts select one Cluster's objects by their cluster-name label and by no field.
func (c *clusterIndexes) listOptions(list client.ObjectList, opts []client.ListOption) []client.ListOption {
	if c.scheme == nil {
		return opts
	}
	o := &client.ListOptions{}
	o.ApplyOptions(opts)
	if o.LabelSelector == nil || o.FieldSelector != nil {
		return opts
	}
	reqs, selectable := o.LabelSelector.Requirements()
	if !selectable {
		return opts
	}
	name := ""
	for _, r := range reqs {
		if r.Key() != clusterv1.ClusterNameLabel {
			continue
		}
		if op := r.Operator(); (op == selection.Equals || op == selection.DoubleEquals || op == selection.In) && r.Values().Len() == 1 {
			name = r.Values().UnsortedList()[0]
		}
	}
	if name == "" {
		return opts
	}
	gvk, err := apiutil.GVKForObject(list, c.scheme)
	if err != nil {
		return opts
	}
	gvk.Kind = strings.TrimSuffix(gvk.Kind, "List")
	c.mu.RLock()
	ok := c.kinds[gvk]
	c.mu.RUnlock()
	if !ok {
		return opts
	}
	o.FieldSelector = fields.OneTermEqualSelector(reconciler.ClusterNameIndex, name)
	return []client.ListOption{o}
}

// IndexField sets up the index and notes it (see clusterIndexes).
func (c *failureReportingCache) IndexField(ctx context.Context, obj client.Object, field string, extractValue client.IndexerFunc) error {
	if err := c.Cache.IndexField(ctx, obj, field, extractValue); err != nil {
		return err
	}
	c.indexes.indexed(obj, field)
	return nil
}

// List lists from the cache, through reconciler.ClusterNameIndex when it can (see clusterIndexes).
func (c *failureReportingCache) List(ctx context.Context, list client.ObjectList, opts ...client.ListOption) error {
	return c.Cache.List(ctx, list, c.indexes.listOptions(list, opts)...)
}
