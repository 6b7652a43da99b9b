package backend

// What the local provider's controllers share about the backend: its notifications as a source of events,
// and which backend cluster a Cluster names.

import (
	"context"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/source"

	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
	infrav1 "github.com/capstan-dev/capstan/api/infrastructure/local/v1alpha1"
)

// changesBuffer is how many notifications wait for a controller before more are dropped.
const changesBuffer = 1024

// Changes returns a source of the clusters whose state b reports changed (OnChange: an API server became
// ready, a process crashed), each a generic event of a LocalCluster that carries only its key, which h maps
// to the controller's objects. The backend reports from its own goroutines; a full buffer drops a
// notification, which the controllers' RetryInterval makes up for.
func Changes(b Backend, h handler.EventHandler) source.Source {
	changes := make(chan event.GenericEvent, changesBuffer)
	b.OnChange(func(key types.NamespacedName) {
		obj := &infrav1.LocalCluster{ObjectMeta: metav1.ObjectMeta{Namespace: key.Namespace, Name: key.Name}}
		select {
		case changes <- event.GenericEvent{Object: obj}:
		default:
		}
	})
	return source.Channel(changes, h)
}

// ClusterOf returns the key of a Cluster's LocalCluster, which names the backend's cluster, from the
// Cluster's spec.infrastructureRef; false when that is not a LocalCluster.
func ClusterOf(cluster *clusterv1.Cluster) (types.NamespacedName, bool) {
	ref := cluster.Spec.InfrastructureRef
	if ref == nil {
		return types.NamespacedName{}, false
	}
	gv, err := schema.ParseGroupVersion(ref.APIVersion)
	if err != nil || gv.Group != infrav1.GroupVersion.Group || ref.Kind != "LocalCluster" {
		return types.NamespacedName{}, false
	}
	return types.NamespacedName{Namespace: cluster.Namespace, Name: ref.Name}, true
}

// LiveClusterOf returns the key of a Cluster's LocalCluster and whether that exists and is not being deleted:
// a machine of a live cluster is deleted from the backend on its own; once the LocalCluster goes, its
// deletion removes every machine at once.
func LiveClusterOf(ctx context.Context, c client.Reader, cluster *clusterv1.Cluster) (types.NamespacedName, bool, error) {
	key, ok := ClusterOf(cluster)
	if !ok {
		return key, false, nil
	}
	lc := &infrav1.LocalCluster{}
	if err := c.Get(ctx, key, lc); err != nil {
		if apierrors.IsNotFound(err) {
			return key, false, nil
		}
		return key, false, err
	}
	return key, lc.DeletionTimestamp.IsZero(), nil
}
