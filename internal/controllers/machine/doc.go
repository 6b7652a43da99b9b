// Package machine is the Machine controller: it drives a Machine's bootstrap config and InfraMachine by
// the bootstrap and infrastructure provider contracts, links the Machine to its Node in the workload
// cluster, and deletes all of it in order when the Machine goes.
//
// What it owns:
//   - on the Machine: the machine.cluster.x-k8s.io finalizer, the cluster-name label, an ownerReference to
//     the Cluster for stand-alone Machines, spec.bootstrap.dataSecretName (copied from the bootstrap
//     config), spec.providerID and spec.failureDomain (copied from the InfraMachine), the up-to-date
//     apiVersion of both references, and the whole status (phase, nodeRef, nodeInfo, addresses, failure
//     fields, deletion times, the v1beta1 conditions and the v1beta2 conditions in status.v1beta2);
//   - on the bootstrap config and the InfraMachine: the Machine as controller owner and the cluster-name
//     label;
//   - on the Node: the labels synced from the Machine (node-role.kubernetes.io/*,
//     node-restriction.kubernetes.io/*, node.cluster.x-k8s.io/*, plus AdditionalSyncMachineLabels; the
//     cluster.x-k8s.io/labels-from-machine annotation remembers them so removed labels are removed), the
//     cluster-name, cluster-namespace, machine, owner-kind and owner-name annotations, and the removal of
//     the node.cluster.x-k8s.io/uninitialized taint; on deletion it cordons and drains the Node and
//     deletes it.
//
// What it watches: Machines; Clusters (their Machines, by the cluster-name label, when they pause, resume
// or become ready); bootstrap configs and InfraMachines of any kind (by their controller owner, through an
// external.Tracker); Nodes of every workload cluster (through the clustercache, by the
// cluster.x-k8s.io/machine annotation or by providerID); and the clustercache's connection events.
//
// Deletion runs one step per reconcile and never sleeps: pre-drain hooks, drain (one pass of evictions per
// reconcile, respecting PodDisruptionBudgets, until nodeDrainTimeout), wait for volumes to detach (until
// nodeVolumeDetachTimeout), pre-terminate hooks, delete the InfraMachine then the bootstrap config and wait
// until they are gone, delete the Node (giving up after nodeDeletionTimeout), remove the finalizer. Drain
// and Node deletion are skipped when the Cluster is going away, when the Machine has no Node, or when no
// other control plane Machine is left (unless the control plane is externally managed).
package machine
