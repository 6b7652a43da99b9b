package client

import clusterctlv1 "github.com/capstan-dev/capstan/api/clusterctl/v1alpha3"

// Providers name providers by type, each as "name[:version]": the --core, --bootstrap, --control-plane,
// --infrastructure, --ipam, --runtime-extension and --addon flags of init, delete and upgrade apply.
type Providers struct {
	CoreProvider              string
	BootstrapProviders        []string
	ControlPlaneProviders     []string
	InfrastructureProviders   []string
	IPAMProviders             []string
	RuntimeExtensionProviders []string
	AddonProviders            []string
}

// providersOfType are the names a Providers gives for one provider type.
type providersOfType struct {
	t     clusterctlv1.ProviderType
	names []string
}

// list returns the names by type, in install order: core, bootstrap, control plane, infrastructure, IPAM,
// runtime extension, add-on. Every type is there, with no names when none is given.
func (p Providers) list() []providersOfType {
	var core []string
	if p.CoreProvider != "" {
		core = []string{p.CoreProvider}
	}
	return []providersOfType{
		{clusterctlv1.CoreProviderType, core},
		{clusterctlv1.BootstrapProviderType, p.BootstrapProviders},
		{clusterctlv1.ControlPlaneProviderType, p.ControlPlaneProviders},
		{clusterctlv1.InfrastructureProviderType, p.InfrastructureProviders},
		{clusterctlv1.IPAMProviderType, p.IPAMProviders},
		{clusterctlv1.RuntimeExtensionProviderType, p.RuntimeExtensionProviders},
		{clusterctlv1.AddonProviderType, p.AddonProviders},
	}
}
