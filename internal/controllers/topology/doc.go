// Package topology holds the Cluster topology controller: for a Cluster with spec.topology it reads the
// ClusterClass and its templates (the blueprint) and the Cluster's current objects, computes the desired
// state with the pure engine of internal/topology, and applies it with server-side apply under the field
// manager capi-topology, after a dry-run that tells whether anything would change (a steady Cluster causes
// no writes). MachineDeployments removed from the topology are deleted. It records the outcome in the
// Cluster's TopologyReconciled condition. It watches Clusters, ClusterClasses, topology-owned
// MachineDeployments and, once seen, the kinds of InfraClusters and control planes.
package topology
