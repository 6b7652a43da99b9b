// Package e2e runs the provider operator end to end in the embedded management cluster, offline: `capstan
// up --operator`, the core and the local infrastructure provider installed from ConfigMaps by
// CoreProvider and InfrastructureProvider objects, a workload cluster provisioned by them, and clusterctl
// describe and upgrade plan seeing the providers.
package e2e
