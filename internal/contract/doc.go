// Package contract reads and writes provider objects (InfraCluster, InfraMachine, BootstrapConfig,
// ControlPlane and their templates) by the Cluster API provider contracts, for both the v1beta1 and the
// v1beta2 contract, without knowing their Go types.
package contract
