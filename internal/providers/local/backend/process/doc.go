// Package process is the local provider's `process` backend: each workload cluster is a real etcd and
// kube-apiserver run as child processes of the provider, on loopback ports, with their data under
// <data-dir>/<namespace>/<localcluster>/; each machine is a simulated Node registered in that API server,
// whose lease is renewed by one heartbeat loop per cluster.
//
// Processes are supervised by internal/supervisor: a process that exits is restarted with a back-off; on
// Linux every child is started with a parent-death signal (SIGKILL) from one dedicated OS thread, so no
// child outlives the provider. After a provider restart the clusters are started again from their data (same ports, same
// etcd data) when their LocalClusters are reconciled; processes of an earlier run that still hold the data
// directory (found through the pid files) are killed first, so a cluster never runs twice.
//
// A backend holds a lock on each cluster directory it runs a cluster from, so that two instances of the
// provider never run the same cluster. When a LocalCluster leaves the management cluster (clusterctl
// move), its cluster is released: the processes stop and the data stays. The provider of the management
// cluster it was moved to, on the same machine, takes the data over once the lock is free — from the same
// directory when the instances share their data directory, else from the directory recorded on the
// LocalCluster, moved into its own — and starts the cluster from it: same endpoint, same etcd data, same
// Nodes.
package process
