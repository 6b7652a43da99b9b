// Package clusterresourceset is the ClusterResourceSet controller: it applies the Kubernetes objects held in
// the Secrets and ConfigMaps of a ClusterResourceSet to the workload clusters of the Clusters its selector
// matches, and records what it applied in each Cluster's ClusterResourceSetBinding. It follows upstream
// Cluster API v1.10's internal/controllers/clusterresourceset.
//
// Strategies: ApplyOnce (the default) creates each resource's objects once per Cluster (an object that
// exists already is left alone); Reconcile creates or patches them again whenever the hash of the
// resource's data differs from the one the binding recorded.
//
// What it owns: the addons.cluster.x-k8s.io finalizer and the status of the ClusterResourceSet (the
// ResourcesApplied conditions, v1beta1 and v1beta2, and Paused); an ownerReference from each resource to
// the set; the ClusterResourceSetBindings (one per Cluster, named after it, owned by every set that
// applied something to the Cluster): the set's entry in them, which is removed when the set no longer
// selects the Cluster or is deleted (an empty binding is deleted). What was applied stays in the workload
// clusters.
//
// What it watches: ClusterResourceSets; Clusters (creation, labels, deletion) and the clustercache's
// connection events; the metadata of ConfigMaps and Secrets, mapped to the sets that own or name them.
package clusterresourceset
