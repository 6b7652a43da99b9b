package v1alpha2

import (
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	clusterctlv1 "github.com/capstan-dev/capstan/api/clusterctl/v1alpha3"
)

// GenericProvider is any of the provider kinds: the operator handles them all alike.
// +kubebuilder:object:generate=false
type GenericProvider interface {
	metav1.Object
	runtime.Object
	// GetProviderSpec returns the provider's spec, to read or change.
	GetProviderSpec() *ProviderSpec
	// GetProviderStatus returns the provider's status, to read or change.
	GetProviderStatus() *ProviderStatus
	// ProviderType returns clusterctl's type of the provider.
	ProviderType() clusterctlv1.ProviderType
}

// GenericProviderList is a list of any of the provider kinds.
// +kubebuilder:object:generate=false
type GenericProviderList interface {
	metav1.ListInterface
	runtime.Object
	// GetItems returns the providers of the list.
	GetItems() []GenericProvider
}

// Kind describes one provider kind.
// +kubebuilder:object:generate=false
type Kind struct {
	// Name is the kind, for example "InfrastructureProvider".
	Name string
	// Type is clusterctl's provider type of the kind.
	Type clusterctlv1.ProviderType
	// New returns an empty object of the kind.
	New func() GenericProvider
	// NewList returns an empty list of the kind.
	NewList func() GenericProviderList
}

// KindFor returns the kind of a clusterctl provider type.
func KindFor(t clusterctlv1.ProviderType) (Kind, error) {
	for _, k := range Kinds() {
		if k.Type == t {
			return k, nil
		}
	}
	return Kind{}, fmt.Errorf("no provider kind for the type %q", t)
}

// ManifestLabel returns the clusterctl label of a provider, for example "infrastructure-aws": the name
// of its inventory record and the value of the cluster.x-k8s.io/provider label on its components.
func ManifestLabel(p GenericProvider) string {
	return clusterctlv1.ManifestLabel(p.GetName(), p.ProviderType())
}
