// Package cluster is the Cluster controller. It owns:
//
//   - the Cluster's finalizer (cluster.cluster.x-k8s.io), its status (phase, infrastructureReady,
//     controlPlaneReady, failureDomains, failureReason/failureMessage, the v1beta1 conditions and the
//     status.v1beta2 conditions and replica counters) and the spec fields it fills in: the control plane
//     endpoint (from the InfraCluster or the control plane object, never over one that is set) and the
//     apiVersion of infrastructureRef and controlPlaneRef (bumped to the newest version of the provider's
//     contract);
//   - the Cluster's controller ownerReference and cluster-name label on its InfraCluster and control plane
//     object, and nothing else of those objects (externally managed infrastructure is read the same way);
//   - the `<cluster>-kubeconfig` Secret of a Cluster without control plane object, generated from the
//     `<cluster>-ca` Secret and rotated before its client certificate expires (a kubeconfig Secret the
//     Cluster does not control is left alone);
//   - the deletion of the Cluster's descendants, in order: MachineDeployments, MachineSets, worker Machines,
//     control plane Machines (only without control plane object), the control plane object, the InfraCluster.
//
// It watches Clusters; Machines, MachineSets and MachineDeployments, mapped to their Cluster by the
// cluster-name label; the InfraCluster and control plane kinds as they are met, mapped through their
// controller ownerReference; and the metadata of Secrets named `<cluster>-ca` or `<cluster>-kubeconfig`.
package cluster
