package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	clusterctlv1 "github.com/capstan-dev/capstan/api/clusterctl/v1alpha3"
)

// Provider is any of the kinds of this package.
// +kubebuilder:object:generate=false
type Provider interface {
	metav1.Object
	runtime.Object
	// GetProviderSpec returns the provider's spec.
	GetProviderSpec() *ProviderSpec
	// GetProviderStatus returns the provider's status.
	GetProviderStatus() *ProviderStatus
	// ProviderType returns clusterctl's type of the provider.
	ProviderType() clusterctlv1.ProviderType
}

// ProviderList is a list of any of the kinds of this package.
// +kubebuilder:object:generate=false
type ProviderList interface {
	metav1.ListInterface
	runtime.Object
	// GetItems returns the providers of the list.
	GetItems() []Provider
}

// Kind describes one kind of this package.
// +kubebuilder:object:generate=false
type Kind struct {
	// Name is the kind, for example "InfrastructureProvider".
	Name string
	// Type is clusterctl's provider type of the kind.
	Type clusterctlv1.ProviderType
	// New returns an empty object of the kind.
	New func() Provider
	// NewList returns an empty list of the kind.
	NewList func() ProviderList
}

// Kinds returns the kinds of this package.
func Kinds() []Kind {
	return []Kind{
		{Name: "CoreProvider", Type: clusterctlv1.CoreProviderType, New: func() Provider { return &CoreProvider{} }, NewList: func() ProviderList { return &CoreProviderList{} }},
		{Name: "BootstrapProvider", Type: clusterctlv1.BootstrapProviderType, New: func() Provider { return &BootstrapProvider{} }, NewList: func() ProviderList { return &BootstrapProviderList{} }},
		{Name: "ControlPlaneProvider", Type: clusterctlv1.ControlPlaneProviderType, New: func() Provider { return &ControlPlaneProvider{} }, NewList: func() ProviderList { return &ControlPlaneProviderList{} }},
		{Name: "InfrastructureProvider", Type: clusterctlv1.InfrastructureProviderType, New: func() Provider { return &InfrastructureProvider{} }, NewList: func() ProviderList { return &InfrastructureProviderList{} }},
	}
}

// +kubebuilder:object:root=true
// +kubebuilder:resource:path=coreproviders,scope=Namespaced
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="InstalledVersion",type="string",JSONPath=".status.installedVersion"
// +kubebuilder:printcolumn:name="Ready",type="string",JSONPath=".status.conditions[?(@.type=='Ready')].status"
// +kubebuilder:storageversion

// CoreProvider is the Cluster API core provider; it must be named cluster-api, as the operator proposal defines it; the operator installs it through the
// operator.cluster.x-k8s.io/v1alpha2 CoreProvider of the same name and namespace.
type CoreProvider struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   ProviderSpec   `json:"spec,omitempty"`
	Status ProviderStatus `json:"status,omitempty"`
}

// +kubebuilder:object:root=true

// CoreProviderList is a list of CoreProvider objects.
type CoreProviderList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []CoreProvider `json:"items"`
}

// GetProviderSpec returns the provider's spec.
func (p *CoreProvider) GetProviderSpec() *ProviderSpec { return &p.Spec }

// GetProviderStatus returns the provider's status.
func (p *CoreProvider) GetProviderStatus() *ProviderStatus { return &p.Status }

// ProviderType returns clusterctl's type of the provider.
func (p *CoreProvider) ProviderType() clusterctlv1.ProviderType { return clusterctlv1.CoreProviderType }

// GetItems returns the providers of the list.
func (l *CoreProviderList) GetItems() []Provider {
	out := make([]Provider, 0, len(l.Items))
	for i := range l.Items {
		out = append(out, &l.Items[i])
	}
	return out
}

// +kubebuilder:object:root=true
// +kubebuilder:resource:path=bootstrapproviders,scope=Namespaced
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="InstalledVersion",type="string",JSONPath=".status.installedVersion"
// +kubebuilder:printcolumn:name="Ready",type="string",JSONPath=".status.conditions[?(@.type=='Ready')].status"
// +kubebuilder:storageversion

// BootstrapProvider is a bootstrap provider, for example kubeadm, as the operator proposal defines it; the operator installs it through the
// operator.cluster.x-k8s.io/v1alpha2 BootstrapProvider of the same name and namespace.
type BootstrapProvider struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   ProviderSpec   `json:"spec,omitempty"`
	Status ProviderStatus `json:"status,omitempty"`
}

// +kubebuilder:object:root=true

// BootstrapProviderList is a list of BootstrapProvider objects.
type BootstrapProviderList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []BootstrapProvider `json:"items"`
}

// GetProviderSpec returns the provider's spec.
func (p *BootstrapProvider) GetProviderSpec() *ProviderSpec { return &p.Spec }

// GetProviderStatus returns the provider's status.
func (p *BootstrapProvider) GetProviderStatus() *ProviderStatus { return &p.Status }

// ProviderType returns clusterctl's type of the provider.
func (p *BootstrapProvider) ProviderType() clusterctlv1.ProviderType {
	return clusterctlv1.BootstrapProviderType
}

// GetItems returns the providers of the list.
func (l *BootstrapProviderList) GetItems() []Provider {
	out := make([]Provider, 0, len(l.Items))
	for i := range l.Items {
		out = append(out, &l.Items[i])
	}
	return out
}

// +kubebuilder:object:root=true
// +kubebuilder:resource:path=controlplaneproviders,scope=Namespaced
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="InstalledVersion",type="string",JSONPath=".status.installedVersion"
// +kubebuilder:printcolumn:name="Ready",type="string",JSONPath=".status.conditions[?(@.type=='Ready')].status"
// +kubebuilder:storageversion

// ControlPlaneProvider is a control plane provider, for example kubeadm, as the operator proposal defines it; the operator installs it through the
// operator.cluster.x-k8s.io/v1alpha2 ControlPlaneProvider of the same name and namespace.
type ControlPlaneProvider struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   ProviderSpec   `json:"spec,omitempty"`
	Status ProviderStatus `json:"status,omitempty"`
}

// +kubebuilder:object:root=true

// ControlPlaneProviderList is a list of ControlPlaneProvider objects.
type ControlPlaneProviderList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []ControlPlaneProvider `json:"items"`
}

// GetProviderSpec returns the provider's spec.
func (p *ControlPlaneProvider) GetProviderSpec() *ProviderSpec { return &p.Spec }

// GetProviderStatus returns the provider's status.
func (p *ControlPlaneProvider) GetProviderStatus() *ProviderStatus { return &p.Status }

// ProviderType returns clusterctl's type of the provider.
func (p *ControlPlaneProvider) ProviderType() clusterctlv1.ProviderType {
	return clusterctlv1.ControlPlaneProviderType
}

// GetItems returns the providers of the list.
func (l *ControlPlaneProviderList) GetItems() []Provider {
	out := make([]Provider, 0, len(l.Items))
	for i := range l.Items {
		out = append(out, &l.Items[i])
	}
	return out
}

// +kubebuilder:object:root=true
// +kubebuilder:resource:path=infrastructureproviders,scope=Namespaced
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="InstalledVersion",type="string",JSONPath=".status.installedVersion"
// +kubebuilder:printcolumn:name="Ready",type="string",JSONPath=".status.conditions[?(@.type=='Ready')].status"
// +kubebuilder:storageversion

// InfrastructureProvider is an infrastructure provider, for example aws, as the operator proposal defines it; the operator installs it through the
// operator.cluster.x-k8s.io/v1alpha2 InfrastructureProvider of the same name and namespace.
type InfrastructureProvider struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   ProviderSpec   `json:"spec,omitempty"`
	Status ProviderStatus `json:"status,omitempty"`
}

// +kubebuilder:object:root=true

// InfrastructureProviderList is a list of InfrastructureProvider objects.
type InfrastructureProviderList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []InfrastructureProvider `json:"items"`
}

// GetProviderSpec returns the provider's spec.
func (p *InfrastructureProvider) GetProviderSpec() *ProviderSpec { return &p.Spec }

// GetProviderStatus returns the provider's status.
func (p *InfrastructureProvider) GetProviderStatus() *ProviderStatus { return &p.Status }

// ProviderType returns clusterctl's type of the provider.
func (p *InfrastructureProvider) ProviderType() clusterctlv1.ProviderType {
	return clusterctlv1.InfrastructureProviderType
}

// GetItems returns the providers of the list.
func (l *InfrastructureProviderList) GetItems() []Provider {
	out := make([]Provider, 0, len(l.Items))
	for i := range l.Items {
		out = append(out, &l.Items[i])
	}
	return out
}
