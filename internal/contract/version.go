package contract

import (
	"context"
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/version"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
)

// Version is a Cluster API contract version.
type Version string

// The contract versions capstan's core can drive. V1Beta1 is the one it implements itself; providers that
// follow V1Beta2 are read through their v1beta2 fields (status.initialization.*).
const (
	V1Beta1 Version = "v1beta1"
	V1Beta2 Version = "v1beta2"
)

// supported lists the contracts the core drives, in order of preference.
var supported = []Version{V1Beta1, V1Beta2}

// Label returns the CRD label that maps this contract to CRD versions, "cluster.x-k8s.io/<contract>".
func (v Version) Label() string { return clusterv1.ContractLabelPrefix + "/" + string(v) }

// Info is what a provider CRD says about the contract it follows.
type Info struct {
	// Contract is the contract the core reads the provider's objects by.
	Contract Version
	// APIVersion is the newest API version of the provider that follows Contract, as group/version.
	APIVersion string
}

// Resolver finds the contract that a provider kind follows from the contract label of its CRD. The CRD is
// found by its computed name (CalculateCRDName) and read as metadata only; with a cached client (the
// manager's) the reads come from an informer on CRD metadata.
type Resolver struct {
	Client client.Reader
}

// Resolve returns the contract a kind follows and its newest API version for that contract.
func (r *Resolver) Resolve(ctx context.Context, gk schema.GroupKind) (Info, error) {
	crd := &metav1.PartialObjectMetadata{}
	crd.SetGroupVersionKind(apiextensionsv1.SchemeGroupVersion.WithKind("CustomResourceDefinition"))
	name := CalculateCRDName(gk.Group, gk.Kind)
	if err := r.Client.Get(ctx, client.ObjectKey{Name: name}, crd); err != nil {
		return Info{}, fmt.Errorf("getting CRD %s for %s: %w", name, gk, err)
	}
	return FromLabels(gk, crd.GetLabels())
}

// FromLabels returns the contract information carried by a CRD's labels.
func FromLabels(gk schema.GroupKind, labels map[string]string) (Info, error) {
	for _, c := range supported {
		value, ok := labels[c.Label()]
		if !ok || value == "" {
			continue
		}
		versions := strings.Split(value, "_")
		slices.SortFunc(versions, func(a, b string) int { return -version.CompareKubeAwareVersionStrings(a, b) })
		return Info{Contract: c, APIVersion: schema.GroupVersion{Group: gk.Group, Version: versions[0]}.String()}, nil
	}
	return Info{}, fmt.Errorf("the CRD of %s has no contract label (%s or %s): the provider does not declare a Cluster API contract capstan supports",
		gk, V1Beta1.Label(), V1Beta2.Label())
}

// UpdateReference resolves the contract of the kind a reference points at and, when the reference names an
// older API version than the newest one for that contract, points it at the newest; it reports whether
// it changed the reference.
func (r *Resolver) UpdateReference(ctx context.Context, ref *corev1.ObjectReference) (Info, bool, error) {
	gvk := schema.FromAPIVersionAndKind(ref.APIVersion, ref.Kind)
	info, err := r.Resolve(ctx, gvk.GroupKind())
	if err != nil {
		return Info{}, false, err
	}
	if ref.APIVersion == info.APIVersion {
		return info, false, nil
	}
	ref.APIVersion = info.APIVersion
	return info, true, nil
}
