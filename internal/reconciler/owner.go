package reconciler

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
	"github.com/capstan-dev/capstan/internal/patch"
)

// GetOwner reads into the Cluster API object of kind (Cluster, Machine, ...) that owns obj, as a
// provider's object must wait for: it reports false when obj has no owner of that kind in the
// cluster.x-k8s.io group (whatever its version), or when that owner is gone.
func GetOwner(ctx context.Context, c client.Reader, obj client.Object, kind string, into client.Object) (bool, error) {
	for _, ref := range obj.GetOwnerReferences() {
		if !RefersTo(ref, clusterv1.GroupVersion.Group, kind) {
			continue
		}
		if err := c.Get(ctx, client.ObjectKey{Namespace: obj.GetNamespace(), Name: ref.Name}, into); err != nil {
			if apierrors.IsNotFound(err) {
				return false, nil
			}
			return false, fmt.Errorf("getting the owner %s %s: %w", kind, ref.Name, err)
		}
		return true, nil
	}
	return false, nil
}

// GetCluster reads the Cluster namespace/name: nil, without error, when it does not exist.
func GetCluster(ctx context.Context, c client.Reader, namespace, name string) (*clusterv1.Cluster, error) {
	cluster := &clusterv1.Cluster{}
	err := c.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, cluster)
	switch {
	case apierrors.IsNotFound(err):
		return nil, nil
	case err != nil:
		return nil, fmt.Errorf("getting Cluster %s/%s: %w", namespace, name, err)
	}
	return cluster, nil
}

// WaitForCluster starts the reconcile of obj, which belongs to the Cluster clusterName of its namespace: the
// logger of the returned context names the Cluster, and the Cluster is read (nil when it does not exist).
// While the Cluster does not exist and obj is not being deleted, obj waits for it: WaitForCluster logs so,
// at verbosity v, and reports wait, and the reconcile stops there (the controller's watch of Clusters
// brings obj back when it appears). An object being deleted goes on without its Cluster, to clean up.
func WaitForCluster(ctx context.Context, c client.Reader, obj client.Object, clusterName string, v int) (_ context.Context, _ *clusterv1.Cluster, wait bool, _ error) {
	log := ctrl.LoggerFrom(ctx).WithValues("Cluster", klog.KRef(obj.GetNamespace(), clusterName))
	ctx = ctrl.LoggerInto(ctx, log)
	cluster, err := GetCluster(ctx, c, obj.GetNamespace(), clusterName)
	if err != nil {
		return ctx, nil, false, err
	}
	if cluster == nil && obj.GetDeletionTimestamp().IsZero() {
		log.V(v).Info("Waiting for the Cluster to exist")
		return ctx, nil, true, nil
	}
	return ctx, cluster, false, nil
}

// AddFinalizerFirst adds finalizer to obj, when obj is not being deleted and does not have it yet, in a
// patch of its own (sent with opts) before anything else is done: a reconcile that is told added stops
// there and returns err (the update brings the object back), so that an object deleted right after its
// creation still waits for what the finalizer guards.
func AddFinalizerFirst(ctx context.Context, c client.Client, obj client.Object, finalizer string, opts ...patch.Option) (added bool, err error) {
	if !obj.GetDeletionTimestamp().IsZero() || controllerutil.ContainsFinalizer(obj, finalizer) {
		return false, nil
	}
	h := patch.NewHelper(obj, c, opts...)
	controllerutil.AddFinalizer(obj, finalizer)
	return true, h.Patch(ctx, obj)
}

// SetClusterNameLabel labels obj with the name of the Cluster it belongs to (cluster.x-k8s.io/cluster-name).
func SetClusterNameLabel(obj metav1.Object, clusterName string) {
	labels := obj.GetLabels()
	if labels == nil {
		labels = map[string]string{}
	}
	labels[clusterv1.ClusterNameLabel] = clusterName
	obj.SetLabels(labels)
}

// RefersTo reports whether the owner reference ref is to an object of kind in group, whatever its version:
// a reference written with an older version of the group still counts.
func RefersTo(ref metav1.OwnerReference, group, kind string) bool {
	gv, err := schema.ParseGroupVersion(ref.APIVersion)
	return err == nil && gv.Group == group && ref.Kind == kind
}

// ControllerUID is an index function returning the UID of an object's controller, if any: with it, a
// controller lists the objects it owns (a MachineSet its Machines) from the cache without a label.
func ControllerUID(obj client.Object) []string {
	if ref := metav1.GetControllerOf(obj); ref != nil {
		return []string{string(ref.UID)}
	}
	return nil
}
