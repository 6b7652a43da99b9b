// Package move moves the Cluster API objects of one namespace from a management cluster to another (or to
// a directory and back), as `clusterctl move` does.
//
// Discovery reads every kind defined by a CRD that clusterctl installed (labelled
// clusterctl.cluster.x-k8s.io), plus Secrets and ConfigMaps, and builds a graph from ownerReferences and
// from upstream's soft-ownership rules (user-provided certificate Secrets by name, topology Clusters and
// their ClusterClass, ClusterResourceSetBindings and their Cluster). Objects linked to a Cluster,
// ClusterClass, ClusterResourceSet or move-hierarchy root, and objects labelled
// clusterctl.cluster.x-k8s.io/move, are moved; every other object of the namespace is reported with the
// reason it stays.
//
// Every check runs before anything is paused. The move then pauses the source, waits for
// clusterctl.cluster.x-k8s.io/block-move, creates the objects in the target owners first (new UIDs,
// ownerReferences rebuilt, status never restored), deletes them from the source and unpauses the target.
// A journal ConfigMap in the source namespace records the progress, so that running the same move again
// after a crash or a kill at any point finishes it; an error before anything is deleted from the source
// undoes the move instead.
package move
