// Package localcluster is the LocalCluster controller of the local infrastructure provider. It owns
// LocalClusters: for each one owned by a Cluster it creates the `<cluster>-ca` Secret when absent, has the
// backend run the workload control plane (etcd and kube-apiserver), sets spec.controlPlaneEndpoint and,
// once the API server is ready, status.ready, status.initialization.provisioned and status.failureDomains;
// on deletion it stops the processes and removes their data before releasing its finalizer.
//
// It watches LocalClusters, the Clusters that reference them (ownership and pause), and the backend's
// change notifications (a control plane became ready or a process crashed).
package localcluster
