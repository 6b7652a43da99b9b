// Package topology is the pure topology engine of managed Clusters: from a blueprint (a ClusterClass and
// the templates it references) and the current state of a Cluster's objects, Compute returns the desired
// state: the InfraCluster, the control plane (and its machine infrastructure template), the
// MachineDeployments with their cloned templates, and the MachineHealthChecks, with the variables of the
// topology applied by the class's patches and the Kubernetes version rolled out control plane first.
//
// The package does no I/O and holds no client (a depguard rule enforces it): the topology controller gathers
// the input and applies the output with server-side apply, and `clusterctl alpha topology plan` runs the same
// function offline. External patches (Runtime SDK GeneratePatches and ValidateTopology) and lifecycle hooks
// are called through the ExternalPatcher and LifecycleHooks interfaces that the caller passes in.
package topology
