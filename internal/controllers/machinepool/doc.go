// Package machinepool is the MachinePool controller: it drives a MachinePool's bootstrap config and
// InfraMachinePool by the bootstrap and infrastructure provider contracts, links the pool to the Nodes of
// its instances in the workload cluster, creates a Machine for each InfraMachine the provider creates for
// an instance ("MachinePool Machines"), and deletes it all in order when the MachinePool goes. It follows
// upstream Cluster API v1.10's exp/internal/controllers.
//
// What it owns:
//   - on the MachinePool: the machinepool.cluster.x-k8s.io finalizer, the cluster-name label, an
//     ownerReference to the Cluster, spec.replicas when empty (1, or the cluster autoscaler's min-size),
//     spec.template.spec.bootstrap.dataSecretName (copied from the bootstrap config), spec.providerIDList
//     (copied from the InfraMachinePool), the up-to-date apiVersion of both references, and the whole
//     status (phase, nodeRefs, replica counters, bootstrapReady, infrastructureReady, failure fields, the
//     v1beta1 conditions and the v1beta2 conditions and counters in status.v1beta2);
//   - on the bootstrap config and the InfraMachinePool: the MachinePool as controller owner and the
//     cluster-name label;
//   - the MachinePool Machines: one per InfraMachine labelled cluster.x-k8s.io/pool-name, with the same
//     name, controlled by the MachinePool, labelled and annotated from spec.template.metadata;
//   - on the Nodes: the cluster-name, cluster-namespace, owner-kind and owner-name annotations and the removal
//     of the node.cluster.x-k8s.io/uninitialized taint; Nodes whose provider ID left spec.providerIDList are
//     deleted (the provider removed the instance).
//
// What it watches: MachinePools; Clusters (creation, pause, readiness); Machines it controls; bootstrap
// configs and InfraMachinePools (by their controller owner) and InfraMachines (by their pool-name label),
// through an external.Tracker; the Nodes of every workload cluster (by provider ID) through the
// clustercache, and the clustercache's connection events.
//
// Deletion: the bootstrap config and the InfraMachinePool are deleted and waited for; then the Nodes of
// status.nodeRefs are deleted (given up after spec.template.spec.nodeDeletionTimeout, 10s when empty, as
// upstream's webhook defaults it); then the finalizer goes. The MachinePool Machines go with their owner
// (garbage collection), each draining its Node first.
package machinepool
