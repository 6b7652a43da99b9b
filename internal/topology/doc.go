// Package topology is the pure topology engine of managed Clusters: from a blueprint (a ClusterClass and
// the templates it references) and the current state of a Cluster's objects, Compute returns the desired
// state: the InfraCluster, the control plane (and its machine infrastructure template), the
// MachineDeployments with their cloned templates, the MachinePools with their bootstrap config and
// InfraMachinePool, and the MachineHealthChecks, with the variables of the topology applied by the
// class's patches and the Kubernetes version rolled out control plane first.
//
// The package does no I/O and holds no client (a depguard rule enforces it). Compute calls no lifecycle
// hook and writes nothing: Desired.Hooks says which hooks the caller calls (it computes again with their
// answers in Current.HookResponses) and which it marks pending or done in the Cluster's
// runtime.cluster.x-k8s.io/pending-hooks annotation. An object waiting for an upgrade is Held: the caller
// applies no other change to it before it takes the version. Package topologystate gathers the input for
// the topology controller and for `clusterctl alpha topology plan`, which run the same function. External
// patches (Runtime SDK GeneratePatches and ValidateTopology) go through the ExternalPatcher the caller
// passes in: their results are part of the desired state.
package topology
