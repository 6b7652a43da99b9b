// Package provider is the operator's controller of the provider kinds (CoreProvider, BootstrapProvider,
// ..., RuntimeExtensionProvider): one Reconciler per kind installs, configures, upgrades, pauses and
// removes the provider an object names, with capstan's clusterctl library. It owns the provider objects'
// status, the operator's cache of fetched releases (ConfigMaps) and, through the clusterctl library, the
// provider's components and its clusterctl inventory record (a clusterctl.cluster.x-k8s.io Provider), so
// clusterctl describe, upgrade plan and move see operator-installed providers. It watches the provider
// kind, the CoreProvider (other providers wait for it) and the providers' Deployments (Ready).
package provider
