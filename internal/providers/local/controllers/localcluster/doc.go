// Package localcluster is the LocalCluster controller of the local infrastructure provider. It owns
// LocalClusters: for each one owned by a Cluster it creates the `<cluster>-ca` Secret when absent, has the
// backend run the workload control plane (etcd and kube-apiserver), sets spec.controlPlaneEndpoint and,
// once the API server is ready, status.ready, status.initialization.provisioned and status.failureDomains;
// on deletion it stops the processes and removes their data before releasing its finalizer. A LocalCluster
// that clusterctl move took to another management cluster (deleted with the delete-for-move annotation, or
// gone without the finalizer) is released instead: its processes stop and its data stays, for the provider
// of that management cluster to take over. It records the directory of the cluster's data in the
// local.infrastructure.cluster.x-k8s.io/data-dir annotation, which travels with a move. It deletes the
// backend's machines whose Machine is gone (a Machine deleted by force), which would otherwise run until
// the cluster goes.
//
// It watches LocalClusters, the Clusters that reference them (ownership and pause), deletions of their
// Machines, and the backend's change notifications (a control plane became ready or a process crashed).
package localcluster
