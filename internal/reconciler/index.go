package reconciler

import (
	"context"
	"fmt"
	"reflect"
	"strings"
	"sync"

	apimeta "k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
)

// ClusterNameIndex indexes objects in a manager's cache by their cluster-name label, so that the objects of
// one Cluster are listed (client.MatchingFields{ClusterNameIndex: name}) without the cache scanning every
// object of the namespace, as a label selector alone makes it do: with a thousand Clusters in one
// namespace, each such list would read thousands of objects. A label selector given with it filters the
// objects the index found.
const ClusterNameIndex = "capstan.cluster.x-k8s.io/cluster-name"

// indexed remembers the (indexer, type, index) triples set up, so that the controllers that share an index
// can each ask for it: a cache refuses an index registered twice.
var indexed sync.Map

type indexKey struct {
	indexer client.FieldIndexer
	typ     reflect.Type
	name    string
}

// IndexByClusterName sets up ClusterNameIndex for each kind of objs in indexer (a manager's field
// indexer), once whichever controller asks first.
func IndexByClusterName(ctx context.Context, indexer client.FieldIndexer, objs ...client.Object) error {
	for _, obj := range objs {
		if err := IndexField(ctx, indexer, obj, ClusterNameIndex, ClusterNameOf); err != nil {
			return err
		}
	}
	return nil
}

// ClusterNameOf is the index function of ClusterNameIndex.
func ClusterNameOf(obj client.Object) []string {
	if name, ok := obj.GetLabels()[clusterv1.ClusterNameLabel]; ok {
		return []string{name}
	}
	return nil
}

// IndexField sets up the index name of fn for obj's kind in indexer, unless it was set up already (by
// another controller of the same manager).
func IndexField(ctx context.Context, indexer client.FieldIndexer, obj client.Object, name string, fn client.IndexerFunc) error {
	key := indexKey{indexer: indexer, typ: reflect.TypeOf(obj), name: name}
	if _, loaded := indexed.LoadOrStore(key, struct{}{}); loaded {
		return nil
	}
	if err := indexer.IndexField(ctx, obj, name, fn); err != nil {
		indexed.Delete(key)
		return fmt.Errorf("indexing %T by %s: %w", obj, name, err)
	}
	return nil
}

// ObjectsOfCluster maps a Cluster to the objects of list's kind in its namespace whose spec.clusterName
// (clusterName) names it, as the watches of Clusters by the controllers of their objects do. It matches
// spec.clusterName rather than the cluster-name label, which an object created before its Cluster does not
// have yet; the Cluster events mapped (creation, pause) are rare. A list that fails is logged and maps to
// nothing.
func ObjectsOfCluster(ctx context.Context, c client.Reader, list client.ObjectList, cluster client.Object,
	clusterName func(client.Object) string) []reconcile.Request {
	if err := c.List(ctx, list, client.InNamespace(cluster.GetNamespace())); err != nil {
		kinds := strings.TrimSuffix(reflect.TypeOf(list).Elem().Name(), "List") + "s"
		ctrl.LoggerFrom(ctx).Error(err, "Listing the "+kinds+" of a Cluster", "Cluster", klog.KObj(cluster))
		return nil
	}
	var reqs []reconcile.Request
	_ = apimeta.EachListItem(list, func(o runtime.Object) error {
		if obj, ok := o.(client.Object); ok && clusterName(obj) == cluster.GetName() {
			reqs = append(reqs, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(obj)})
		}
		return nil
	})
	return reqs
}
