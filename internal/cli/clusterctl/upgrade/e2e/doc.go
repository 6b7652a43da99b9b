// Package e2e holds the end-to-end tests of `clusterctl init`, `upgrade` and `delete` against the test API
// server with capstan's core controllers and local infrastructure provider running in-process and a
// workload cluster provisioned: an upgrade of every provider keeps the cluster, its machines and their
// workload cluster running, and deleting the providers' CRDs is refused while the cluster exists.
package e2e
