package conversion

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta2"
	"github.com/capstan-dev/capstan/internal/contract"
)

// APIVersions returns the apiVersion a v1beta1 reference to an object of the group and kind carries.
// v1beta2 references name the group alone (ContractVersionedObjectReference): the version is the one the
// provider's CRD serves for the contract, which the manager reads from the CRD's contract labels (upstream's
// apiVersionGetter).
type APIVersions func(ctx context.Context, gk schema.GroupKind) (string, error)

// contractReference converts a v1beta1 reference to a v1beta2 one: its apiVersion's group, kind and name.
func contractReference(ref *corev1.ObjectReference) (clusterv1.ContractVersionedObjectReference, error) {
	if ref == nil {
		return clusterv1.ContractVersionedObjectReference{}, nil
	}
	var group string
	if ref.APIVersion != "" {
		gv, err := schema.ParseGroupVersion(ref.APIVersion)
		if err != nil {
			return clusterv1.ContractVersionedObjectReference{}, fmt.Errorf("the reference to %s %s has an invalid apiVersion %q: %w", ref.Kind, ref.Name, ref.APIVersion, err)
		}
		group = gv.Group
	}
	return clusterv1.ContractVersionedObjectReference{APIGroup: group, Kind: ref.Kind, Name: ref.Name}, nil
}

// objectReference converts a v1beta2 reference to a v1beta1 one in namespace (the referring object's),
// with the apiVersion versions gives for its group and kind; nil for an unset reference.
func objectReference(ctx context.Context, versions APIVersions, ref clusterv1.ContractVersionedObjectReference, namespace string) (*corev1.ObjectReference, error) {
	if ref == (clusterv1.ContractVersionedObjectReference{}) {
		return nil, nil
	}
	apiVersion, err := versions(ctx, schema.GroupKind{Group: ref.APIGroup, Kind: ref.Kind})
	if err != nil {
		return nil, fmt.Errorf("the apiVersion of the reference to %s %s: %w", ref.Kind, ref.Name, err)
	}
	return &corev1.ObjectReference{APIVersion: apiVersion, Kind: ref.Kind, Namespace: namespace, Name: ref.Name}, nil
}

// ContractAPIVersions returns the APIVersions of a manager: the newest version of the kind's CRD for the
// contract it follows (contract.Resolver, which reads the CRD's contract labels with c).
func ContractAPIVersions(c client.Reader) APIVersions {
	r := &contract.Resolver{Client: c}
	return func(ctx context.Context, gk schema.GroupKind) (string, error) {
		info, err := r.Resolve(ctx, gk)
		if err != nil {
			return "", err
		}
		return info.APIVersion, nil
	}
}
