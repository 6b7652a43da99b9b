// Package e2e runs the provider operator end to end in the embedded management cluster, offline: `capstan
// up --operator`, the core and the local infrastructure provider installed from ConfigMaps by
// CoreProvider and InfrastructureProvider objects, a workload cluster provisioned by them, and clusterctl
// describe and upgrade plan seeing the providers. With CAPSTAN_E2E_OPERATOR set, the long parts too: a
// contract upgrade with pause, changes applied as upgrades, every field of spec.manager and
// spec.deployment, debug mode and image overrides on the providers' processes, the proposal's provider
// objects and a built-in provider from an emulated GitHub.
package e2e
