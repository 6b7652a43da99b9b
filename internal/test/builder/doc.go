// Package builder defines a test provider made of generic CRDs — an InfraCluster, InfraMachine,
// BootstrapConfig and ControlPlane with their templates, in both contract versions — and builds objects of
// those kinds and of Cluster API's kinds, for tests that drive the core controllers the way a real
// provider would.
package builder
