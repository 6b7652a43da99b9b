// Package process is the local provider's `process` backend: each workload cluster is a real etcd and
// kube-apiserver run as child processes of the provider, on loopback ports, with their data under
// <data-dir>/<namespace>/<localcluster>/; each machine is a simulated Node registered in that API server,
// whose lease is renewed by one heartbeat loop per cluster.
//
// Processes are supervised: a process that exits is restarted with a back-off; on Linux every child is
// started with a parent-death signal (SIGKILL) from one dedicated OS thread, so no child outlives the
// provider. After a provider restart the clusters are started again from their data (same ports, same
// etcd data) when their LocalClusters are reconciled; processes of an earlier run that still hold the data
// directory (found through the pid files) are killed first, so a cluster never runs twice.
package process
