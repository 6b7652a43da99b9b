package v1alpha2

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	clusterctlv1 "github.com/capstan-dev/capstan/api/clusterctl/v1alpha3"
)

// CoreProviderSpec is the desired state of a CoreProvider.
type CoreProviderSpec struct {
	ProviderSpec `json:",inline"`
}

// CoreProviderStatus is the observed state of a CoreProvider.
type CoreProviderStatus struct {
	ProviderStatus `json:",inline"`
}

// +kubebuilder:object:root=true
// +kubebuilder:resource:path=coreproviders,shortName=cacp,scope=Namespaced
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="InstalledVersion",type="string",JSONPath=".status.installedVersion"
// +kubebuilder:printcolumn:name="Ready",type="string",JSONPath=".status.conditions[?(@.type=='Ready')].status"
// +kubebuilder:storageversion

// CoreProvider is the Cluster API core provider; it must be named cluster-api, installed and managed by the operator.
type CoreProvider struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   CoreProviderSpec   `json:"spec,omitempty"`
	Status CoreProviderStatus `json:"status,omitempty"`
}

// +kubebuilder:object:root=true

// CoreProviderList is a list of CoreProvider objects.
type CoreProviderList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []CoreProvider `json:"items"`
}

// GetProviderSpec returns the provider's spec, to read or change.
func (p *CoreProvider) GetProviderSpec() *ProviderSpec { return &p.Spec.ProviderSpec }

// GetProviderStatus returns the provider's status, to read or change.
func (p *CoreProvider) GetProviderStatus() *ProviderStatus { return &p.Status.ProviderStatus }

// ProviderType returns clusterctl's type of the provider.
func (p *CoreProvider) ProviderType() clusterctlv1.ProviderType { return clusterctlv1.CoreProviderType }

// GetItems returns the providers of the list.
func (l *CoreProviderList) GetItems() []GenericProvider {
	out := make([]GenericProvider, 0, len(l.Items))
	for i := range l.Items {
		out = append(out, &l.Items[i])
	}
	return out
}

// BootstrapProviderSpec is the desired state of a BootstrapProvider.
type BootstrapProviderSpec struct {
	ProviderSpec `json:",inline"`
}

// BootstrapProviderStatus is the observed state of a BootstrapProvider.
type BootstrapProviderStatus struct {
	ProviderStatus `json:",inline"`
}

// +kubebuilder:object:root=true
// +kubebuilder:resource:path=bootstrapproviders,shortName=cabp,scope=Namespaced
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="InstalledVersion",type="string",JSONPath=".status.installedVersion"
// +kubebuilder:printcolumn:name="Ready",type="string",JSONPath=".status.conditions[?(@.type=='Ready')].status"
// +kubebuilder:storageversion

// BootstrapProvider is a bootstrap provider, for example kubeadm, installed and managed by the operator.
type BootstrapProvider struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   BootstrapProviderSpec   `json:"spec,omitempty"`
	Status BootstrapProviderStatus `json:"status,omitempty"`
}

// +kubebuilder:object:root=true

// BootstrapProviderList is a list of BootstrapProvider objects.
type BootstrapProviderList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []BootstrapProvider `json:"items"`
}

// GetProviderSpec returns the provider's spec, to read or change.
func (p *BootstrapProvider) GetProviderSpec() *ProviderSpec { return &p.Spec.ProviderSpec }

// GetProviderStatus returns the provider's status, to read or change.
func (p *BootstrapProvider) GetProviderStatus() *ProviderStatus { return &p.Status.ProviderStatus }

// ProviderType returns clusterctl's type of the provider.
func (p *BootstrapProvider) ProviderType() clusterctlv1.ProviderType {
	return clusterctlv1.BootstrapProviderType
}

// GetItems returns the providers of the list.
func (l *BootstrapProviderList) GetItems() []GenericProvider {
	out := make([]GenericProvider, 0, len(l.Items))
	for i := range l.Items {
		out = append(out, &l.Items[i])
	}
	return out
}

// ControlPlaneProviderSpec is the desired state of a ControlPlaneProvider.
type ControlPlaneProviderSpec struct {
	ProviderSpec `json:",inline"`
}

// ControlPlaneProviderStatus is the observed state of a ControlPlaneProvider.
type ControlPlaneProviderStatus struct {
	ProviderStatus `json:",inline"`
}

// +kubebuilder:object:root=true
// +kubebuilder:resource:path=controlplaneproviders,shortName=cacpp,scope=Namespaced
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="InstalledVersion",type="string",JSONPath=".status.installedVersion"
// +kubebuilder:printcolumn:name="Ready",type="string",JSONPath=".status.conditions[?(@.type=='Ready')].status"
// +kubebuilder:storageversion

// ControlPlaneProvider is a control plane provider, for example kubeadm, installed and managed by the operator.
type ControlPlaneProvider struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   ControlPlaneProviderSpec   `json:"spec,omitempty"`
	Status ControlPlaneProviderStatus `json:"status,omitempty"`
}

// +kubebuilder:object:root=true

// ControlPlaneProviderList is a list of ControlPlaneProvider objects.
type ControlPlaneProviderList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []ControlPlaneProvider `json:"items"`
}

// GetProviderSpec returns the provider's spec, to read or change.
func (p *ControlPlaneProvider) GetProviderSpec() *ProviderSpec { return &p.Spec.ProviderSpec }

// GetProviderStatus returns the provider's status, to read or change.
func (p *ControlPlaneProvider) GetProviderStatus() *ProviderStatus { return &p.Status.ProviderStatus }

// ProviderType returns clusterctl's type of the provider.
func (p *ControlPlaneProvider) ProviderType() clusterctlv1.ProviderType {
	return clusterctlv1.ControlPlaneProviderType
}

// GetItems returns the providers of the list.
func (l *ControlPlaneProviderList) GetItems() []GenericProvider {
	out := make([]GenericProvider, 0, len(l.Items))
	for i := range l.Items {
		out = append(out, &l.Items[i])
	}
	return out
}

// InfrastructureProviderSpec is the desired state of a InfrastructureProvider.
type InfrastructureProviderSpec struct {
	ProviderSpec `json:",inline"`
}

// InfrastructureProviderStatus is the observed state of a InfrastructureProvider.
type InfrastructureProviderStatus struct {
	ProviderStatus `json:",inline"`
}

// +kubebuilder:object:root=true
// +kubebuilder:resource:path=infrastructureproviders,shortName=caip,scope=Namespaced
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="InstalledVersion",type="string",JSONPath=".status.installedVersion"
// +kubebuilder:printcolumn:name="Ready",type="string",JSONPath=".status.conditions[?(@.type=='Ready')].status"
// +kubebuilder:storageversion

// InfrastructureProvider is an infrastructure provider, for example aws or local, installed and managed by the operator.
type InfrastructureProvider struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   InfrastructureProviderSpec   `json:"spec,omitempty"`
	Status InfrastructureProviderStatus `json:"status,omitempty"`
}

// +kubebuilder:object:root=true

// InfrastructureProviderList is a list of InfrastructureProvider objects.
type InfrastructureProviderList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []InfrastructureProvider `json:"items"`
}

// GetProviderSpec returns the provider's spec, to read or change.
func (p *InfrastructureProvider) GetProviderSpec() *ProviderSpec { return &p.Spec.ProviderSpec }

// GetProviderStatus returns the provider's status, to read or change.
func (p *InfrastructureProvider) GetProviderStatus() *ProviderStatus { return &p.Status.ProviderStatus }

// ProviderType returns clusterctl's type of the provider.
func (p *InfrastructureProvider) ProviderType() clusterctlv1.ProviderType {
	return clusterctlv1.InfrastructureProviderType
}

// GetItems returns the providers of the list.
func (l *InfrastructureProviderList) GetItems() []GenericProvider {
	out := make([]GenericProvider, 0, len(l.Items))
	for i := range l.Items {
		out = append(out, &l.Items[i])
	}
	return out
}

// AddonProviderSpec is the desired state of a AddonProvider.
type AddonProviderSpec struct {
	ProviderSpec `json:",inline"`
}

// AddonProviderStatus is the observed state of a AddonProvider.
type AddonProviderStatus struct {
	ProviderStatus `json:",inline"`
}

// +kubebuilder:object:root=true
// +kubebuilder:resource:path=addonproviders,shortName=caap,scope=Namespaced
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="InstalledVersion",type="string",JSONPath=".status.installedVersion"
// +kubebuilder:printcolumn:name="Ready",type="string",JSONPath=".status.conditions[?(@.type=='Ready')].status"
// +kubebuilder:storageversion

// AddonProvider is an add-on provider, for example helm, installed and managed by the operator.
type AddonProvider struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   AddonProviderSpec   `json:"spec,omitempty"`
	Status AddonProviderStatus `json:"status,omitempty"`
}

// +kubebuilder:object:root=true

// AddonProviderList is a list of AddonProvider objects.
type AddonProviderList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []AddonProvider `json:"items"`
}

// GetProviderSpec returns the provider's spec, to read or change.
func (p *AddonProvider) GetProviderSpec() *ProviderSpec { return &p.Spec.ProviderSpec }

// GetProviderStatus returns the provider's status, to read or change.
func (p *AddonProvider) GetProviderStatus() *ProviderStatus { return &p.Status.ProviderStatus }

// ProviderType returns clusterctl's type of the provider.
func (p *AddonProvider) ProviderType() clusterctlv1.ProviderType {
	return clusterctlv1.AddonProviderType
}

// GetItems returns the providers of the list.
func (l *AddonProviderList) GetItems() []GenericProvider {
	out := make([]GenericProvider, 0, len(l.Items))
	for i := range l.Items {
		out = append(out, &l.Items[i])
	}
	return out
}

// IPAMProviderSpec is the desired state of a IPAMProvider.
type IPAMProviderSpec struct {
	ProviderSpec `json:",inline"`
}

// IPAMProviderStatus is the observed state of a IPAMProvider.
type IPAMProviderStatus struct {
	ProviderStatus `json:",inline"`
}

// +kubebuilder:object:root=true
// +kubebuilder:resource:path=ipamproviders,shortName=caipamp,scope=Namespaced
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="InstalledVersion",type="string",JSONPath=".status.installedVersion"
// +kubebuilder:printcolumn:name="Ready",type="string",JSONPath=".status.conditions[?(@.type=='Ready')].status"
// +kubebuilder:storageversion

// IPAMProvider is an IPAM provider, for example in-cluster, installed and managed by the operator.
type IPAMProvider struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   IPAMProviderSpec   `json:"spec,omitempty"`
	Status IPAMProviderStatus `json:"status,omitempty"`
}

// +kubebuilder:object:root=true

// IPAMProviderList is a list of IPAMProvider objects.
type IPAMProviderList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []IPAMProvider `json:"items"`
}

// GetProviderSpec returns the provider's spec, to read or change.
func (p *IPAMProvider) GetProviderSpec() *ProviderSpec { return &p.Spec.ProviderSpec }

// GetProviderStatus returns the provider's status, to read or change.
func (p *IPAMProvider) GetProviderStatus() *ProviderStatus { return &p.Status.ProviderStatus }

// ProviderType returns clusterctl's type of the provider.
func (p *IPAMProvider) ProviderType() clusterctlv1.ProviderType { return clusterctlv1.IPAMProviderType }

// GetItems returns the providers of the list.
func (l *IPAMProviderList) GetItems() []GenericProvider {
	out := make([]GenericProvider, 0, len(l.Items))
	for i := range l.Items {
		out = append(out, &l.Items[i])
	}
	return out
}

// RuntimeExtensionProviderSpec is the desired state of a RuntimeExtensionProvider.
type RuntimeExtensionProviderSpec struct {
	ProviderSpec `json:",inline"`
}

// RuntimeExtensionProviderStatus is the observed state of a RuntimeExtensionProvider.
type RuntimeExtensionProviderStatus struct {
	ProviderStatus `json:",inline"`
}

// +kubebuilder:object:root=true
// +kubebuilder:resource:path=runtimeextensionproviders,shortName=carep,scope=Namespaced
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="InstalledVersion",type="string",JSONPath=".status.installedVersion"
// +kubebuilder:printcolumn:name="Ready",type="string",JSONPath=".status.conditions[?(@.type=='Ready')].status"
// +kubebuilder:storageversion

// RuntimeExtensionProvider is a Runtime Extension provider, installed and managed by the operator.
type RuntimeExtensionProvider struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   RuntimeExtensionProviderSpec   `json:"spec,omitempty"`
	Status RuntimeExtensionProviderStatus `json:"status,omitempty"`
}

// +kubebuilder:object:root=true

// RuntimeExtensionProviderList is a list of RuntimeExtensionProvider objects.
type RuntimeExtensionProviderList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []RuntimeExtensionProvider `json:"items"`
}

// GetProviderSpec returns the provider's spec, to read or change.
func (p *RuntimeExtensionProvider) GetProviderSpec() *ProviderSpec { return &p.Spec.ProviderSpec }

// GetProviderStatus returns the provider's status, to read or change.
func (p *RuntimeExtensionProvider) GetProviderStatus() *ProviderStatus {
	return &p.Status.ProviderStatus
}

// ProviderType returns clusterctl's type of the provider.
func (p *RuntimeExtensionProvider) ProviderType() clusterctlv1.ProviderType {
	return clusterctlv1.RuntimeExtensionProviderType
}

// GetItems returns the providers of the list.
func (l *RuntimeExtensionProviderList) GetItems() []GenericProvider {
	out := make([]GenericProvider, 0, len(l.Items))
	for i := range l.Items {
		out = append(out, &l.Items[i])
	}
	return out
}

// Kinds returns every provider kind, in clusterctl's install order.
func Kinds() []Kind {
	return []Kind{
		{Name: "CoreProvider", Type: clusterctlv1.CoreProviderType, New: func() GenericProvider { return &CoreProvider{} }, NewList: func() GenericProviderList { return &CoreProviderList{} }},
		{Name: "BootstrapProvider", Type: clusterctlv1.BootstrapProviderType, New: func() GenericProvider { return &BootstrapProvider{} }, NewList: func() GenericProviderList { return &BootstrapProviderList{} }},
		{Name: "ControlPlaneProvider", Type: clusterctlv1.ControlPlaneProviderType, New: func() GenericProvider { return &ControlPlaneProvider{} }, NewList: func() GenericProviderList { return &ControlPlaneProviderList{} }},
		{Name: "InfrastructureProvider", Type: clusterctlv1.InfrastructureProviderType, New: func() GenericProvider { return &InfrastructureProvider{} }, NewList: func() GenericProviderList { return &InfrastructureProviderList{} }},
		{Name: "AddonProvider", Type: clusterctlv1.AddonProviderType, New: func() GenericProvider { return &AddonProvider{} }, NewList: func() GenericProviderList { return &AddonProviderList{} }},
		{Name: "IPAMProvider", Type: clusterctlv1.IPAMProviderType, New: func() GenericProvider { return &IPAMProvider{} }, NewList: func() GenericProviderList { return &IPAMProviderList{} }},
		{Name: "RuntimeExtensionProvider", Type: clusterctlv1.RuntimeExtensionProviderType, New: func() GenericProvider { return &RuntimeExtensionProvider{} }, NewList: func() GenericProviderList { return &RuntimeExtensionProviderList{} }},
	}
}
