package reconciler

import (
	"context"
	"fmt"
	"reflect"
	"sync"

	"sigs.k8s.io/controller-runtime/pkg/client"

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
