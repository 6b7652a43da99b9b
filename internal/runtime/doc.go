// Package runtime is the core side of the Runtime SDK: registry holds the handlers that discovery found,
// client calls them over HTTPS, hooks tracks on Clusters which lifecycle hooks are still to be called.
// The ExtensionConfig controller (internal/controllers/extensionconfig) fills the registry; core.Setup
// builds one client (nil when the RuntimeSDK gate is off) and hands it to the controllers that call hooks.
//
// A controller calls a lifecycle hook with client.CallAll (every handler whose namespaceSelector selects
// the Cluster; the shortest non-zero retryAfterSeconds wins; a *client.HandlerError names the handler and
// its ExtensionConfig) and an external patch with client.Call (one handler, by its
// <handler>.<ExtensionConfig> name). Package lifecycle calls the lifecycle hooks of managed topologies
// for the topology controller (BeforeClusterCreate, and the hooks of chained upgrades: BeforeClusterUpgrade,
// BeforeControlPlaneUpgrade, AfterControlPlaneUpgrade, BeforeWorkersUpgrade, AfterWorkersUpgrade and
// AfterClusterUpgrade; the controller tracks the pending ones with hooks.MarkPending and hooks.MarkDone),
// and GenerateUpgradePlan, by name, as the topology engine's UpgradePlanner; package mutation runs
// external patches (GeneratePatches, ValidateTopology) as the topology engine's ExternalPatcher and
// DiscoverVariables for the ClusterClass controller. The Cluster controller calls BeforeClusterDelete and
// AfterControlPlaneInitialized. With the InPlaceUpdates gate, package inplace calls the in-place update
// hooks: CanUpdateMachine for the KubeadmControlPlane (whose manager fills its own registry with package
// registry/follow) and UpdateMachine for the Machine controller. CanUpdateMachineSet is discovered and
// registered but not called yet: registry.Called says which hooks are, and the ExtensionConfig's Discovered
// condition names the handlers that are never called.
package runtime
