// Package topology holds the Cluster topology controller: for a Cluster with spec.topology it gathers the
// ClusterClass and its templates (the blueprint) and the Cluster's current objects (package
// topologystate), computes the desired state with the pure engine of internal/topology, calls the
// lifecycle hooks the engine asks for (computing again with their answers) and keeps the Cluster's
// pending-hooks annotation, and applies the desired state with server-side apply under the field manager
// capi-topology, after a dry-run that tells whether anything would change (a steady Cluster causes no
// writes). Objects the engine holds (waiting for an upgrade) are left as they are. MachineDeployments and
// MachinePools removed from the topology are deleted. It records the outcome in the Cluster's
// TopologyReconciled condition. It watches Clusters, ClusterClasses, topology-owned MachineDeployments,
// MachinePools and Machines and, once seen, the kinds of InfraClusters and control planes.
package topology
