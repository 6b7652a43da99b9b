// Package localmachine is the LocalMachine controller of the local infrastructure provider. It owns
// LocalMachines: for each one owned by a Machine, once the Cluster's infrastructure is ready and the
// Machine has bootstrap data (which is not executed: nothing runs on a simulated machine), and after
// spec.startupDelay, it has the backend register a Node named after the Machine in the LocalCluster's
// kube-apiserver, then sets spec.providerID, status.addresses, status.ready and
// status.initialization.provisioned. On deletion it removes the Node and its Lease before releasing its
// finalizer, except when clusterctl move deleted the LocalMachine (delete-for-move annotation): the Node
// then stays, for the management cluster the LocalMachine was moved to.
//
// It watches LocalMachines, their Machines, the Clusters they belong to (infrastructure readiness, pause)
// and the LocalClusters of those Clusters (control plane readiness).
package localmachine
