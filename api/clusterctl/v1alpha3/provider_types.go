package v1alpha3

import (
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// +kubebuilder:object:root=true
// +kubebuilder:resource:path=providers,scope=Namespaced,categories=cluster-api
// +kubebuilder:storageversion
// +kubebuilder:metadata:labels="clusterctl.cluster.x-k8s.io/core=inventory"
// +kubebuilder:printcolumn:name="Age",type="date",JSONPath=".metadata.creationTimestamp",description="Time duration since creation of Provider"
// +kubebuilder:printcolumn:name="Type",type="string",JSONPath=".type"
// +kubebuilder:printcolumn:name="Provider",type="string",JSONPath=".providerName"
// +kubebuilder:printcolumn:name="Version",type="string",JSONPath=".version"

// Provider is clusterctl's inventory record of one installed provider: which provider, of which type, at
// which version. clusterctl creates one per provider in the provider's namespace.
type Provider struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// providerName is the name of the provider, for example "cluster-api" or "local".
	// +optional
	ProviderName string `json:"providerName,omitempty"`

	// type is the type of the provider, for example "InfrastructureProvider".
	// +optional
	Type string `json:"type,omitempty"`

	// version is the installed version, for example "v1.10.0".
	// +optional
	Version string `json:"version,omitempty"`

	// watchedNamespace is deprecated: providers watch every namespace.
	// +optional
	WatchedNamespace string `json:"watchedNamespace,omitempty"`
}

// ManifestLabel returns the provider's manifest label, for example "infrastructure-local".
func (p *Provider) ManifestLabel() string { return ManifestLabel(p.ProviderName, p.GetProviderType()) }

// InstanceName returns "<namespace>/<manifest label>", which identifies one installed instance.
func (p *Provider) InstanceName() string { return p.Namespace + "/" + p.ManifestLabel() }

// GetProviderType returns the provider's type, ProviderTypeUnknown for an unknown value.
func (p *Provider) GetProviderType() ProviderType {
	t := ProviderType(p.Type)
	switch t {
	case CoreProviderType, BootstrapProviderType, InfrastructureProviderType, ControlPlaneProviderType,
		IPAMProviderType, RuntimeExtensionProviderType, AddonProviderType:
		return t
	default:
		return ProviderTypeUnknown
	}
}

// SameAs reports whether two inventory records describe the same provider (name and type).
func (p *Provider) SameAs(other Provider) bool {
	return p.ProviderName == other.ProviderName && p.Type == other.Type
}

// ProviderType is the type of a provider.
type ProviderType string

// The provider types, in clusterctl's install order.
const (
	// CoreProviderType is the Cluster API core.
	CoreProviderType = ProviderType("CoreProvider")
	// BootstrapProviderType turns Machines into bootstrap data.
	BootstrapProviderType = ProviderType("BootstrapProvider")
	// ControlPlaneProviderType manages control planes.
	ControlPlaneProviderType = ProviderType("ControlPlaneProvider")
	// InfrastructureProviderType provides the machines and networks.
	InfrastructureProviderType = ProviderType("InfrastructureProvider")
	// IPAMProviderType allocates IP addresses.
	IPAMProviderType = ProviderType("IPAMProvider")
	// RuntimeExtensionProviderType serves Runtime SDK extensions.
	RuntimeExtensionProviderType = ProviderType("RuntimeExtensionProvider")
	// AddonProviderType installs add-ons into workload clusters.
	AddonProviderType = ProviderType("AddonProvider")
	// ProviderTypeUnknown is any other value.
	ProviderTypeUnknown = ProviderType("")
)

// ProviderTypes lists every known provider type in install order.
func ProviderTypes() []ProviderType {
	return []ProviderType{CoreProviderType, BootstrapProviderType, ControlPlaneProviderType,
		InfrastructureProviderType, IPAMProviderType, RuntimeExtensionProviderType, AddonProviderType}
}

// Order returns the position of the type in install order; unknown types go last.
func (p ProviderType) Order() int {
	for i, t := range ProviderTypes() {
		if t == p {
			return i
		}
	}
	return len(ProviderTypes())
}

// Prefix returns the manifest label prefix of the type ("infrastructure", "control-plane", ...), empty for
// the core provider.
func (p ProviderType) Prefix() string {
	return strings.TrimSuffix(ManifestLabel("x", p), "-x")
}

// +kubebuilder:object:root=true

// ProviderList is a list of Providers.
type ProviderList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Provider `json:"items"`
}

// FilterByType returns the providers of one type.
func (l *ProviderList) FilterByType(t ProviderType) []Provider {
	var out []Provider
	for _, p := range l.Items {
		if p.GetProviderType() == t {
			out = append(out, p)
		}
	}
	return out
}
