package cluster

import (
	"context"
	"fmt"
	"slices"
	"strings"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterctlv1 "github.com/capstan-dev/capstan/api/clusterctl/v1alpha3"
	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
)

// CheckCRDNames returns an error naming the CRDs among objs whose name is not <plural>.<group>, as the
// Kubernetes API conventions and clusterctl require, unless they carry the annotation
// clusterctl.cluster.x-k8s.io/skip-crd-name-preflight-check.
func CheckCRDNames(label string, objs []unstructured.Unstructured) error {
	var bad []string
	for i := range objs {
		obj := &objs[i]
		if !isCRD(obj) {
			continue
		}
		if _, skip := obj.GetAnnotations()[clusterctlv1.SkipCRDNamePreflightCheckAnnotation]; skip {
			continue
		}
		plural, _, _ := unstructured.NestedString(obj.Object, "spec", "names", "plural")
		group, _, _ := unstructured.NestedString(obj.Object, "spec", "group")
		if want := plural + "." + group; obj.GetName() != want {
			bad = append(bad, fmt.Sprintf("%s (want %s)", obj.GetName(), want))
		}
	}
	if len(bad) > 0 {
		return fmt.Errorf("the components of %s have CRDs not named <plural>.<group>: %s; ask the provider's maintainers to fix them (or to annotate them with %s)",
			label, strings.Join(bad, ", "), clusterctlv1.SkipCRDNamePreflightCheckAnnotation)
	}
	return nil
}

// CheckCRDOwnership returns an error when a CRD among objs is already installed for another provider.
func (c *Client) CheckCRDOwnership(ctx context.Context, label string, objs []unstructured.Unstructured) error {
	cl, err := c.connect()
	if err != nil {
		return err
	}
	for i := range objs {
		obj := &objs[i]
		if !isCRD(obj) {
			continue
		}
		existing := &apiextensionsv1.CustomResourceDefinition{}
		if err := cl.Get(ctx, client.ObjectKey{Name: obj.GetName()}, existing); err != nil {
			if apierrors.IsNotFound(err) {
				continue
			}
			return fmt.Errorf("reading CRD %s: %w", obj.GetName(), err)
		}
		if _, byClusterctl := existing.Labels[clusterctlv1.ClusterctlLabel]; !byClusterctl {
			continue
		}
		if owner := existing.Labels[clusterv1.ProviderNameLabel]; owner != "" && owner != label {
			return fmt.Errorf("the CRD %s of %s is already installed for %s: two providers cannot share a CRD; delete %s first, or choose another provider",
				obj.GetName(), label, owner, owner)
		}
	}
	return nil
}

// ProviderCRDs returns the CRDs installed for a provider (labelled cluster.x-k8s.io/provider=<label>),
// sorted by name.
func (c *Client) ProviderCRDs(ctx context.Context, label string) ([]apiextensionsv1.CustomResourceDefinition, error) {
	cl, err := c.connect()
	if err != nil {
		return nil, err
	}
	list := &apiextensionsv1.CustomResourceDefinitionList{}
	if err := cl.List(ctx, list, client.MatchingLabels{clusterv1.ProviderNameLabel: label}); err != nil {
		return nil, fmt.Errorf("listing the CRDs of %s: %w", label, err)
	}
	slices.SortFunc(list.Items, func(a, b apiextensionsv1.CustomResourceDefinition) int { return strings.Compare(a.Name, b.Name) })
	return list.Items, nil
}

// ObjectCount is how many objects of a kind exist.
type ObjectCount struct {
	// Kind is the kind.
	Kind string
	// Count is how many objects of the kind exist, in every namespace.
	Count int
}

// CRDObjectCounts returns, for each CRD of a provider that has objects, how many it has.
func (c *Client) CRDObjectCounts(ctx context.Context, label string) ([]ObjectCount, error) {
	crds, err := c.ProviderCRDs(ctx, label)
	if err != nil {
		return nil, err
	}
	var out []ObjectCount
	for i := range crds {
		n, err := c.countObjects(ctx, &crds[i])
		if err != nil {
			return nil, err
		}
		if n > 0 {
			out = append(out, ObjectCount{Kind: crds[i].Spec.Names.Kind, Count: n})
		}
	}
	return out, nil
}

func (c *Client) countObjects(ctx context.Context, crd *apiextensionsv1.CustomResourceDefinition) (int, error) {
	cl, err := c.connect()
	if err != nil {
		return 0, err
	}
	version := servedVersion(crd)
	if version == "" {
		return 0, nil
	}
	list := &metav1.PartialObjectMetadataList{}
	list.SetGroupVersionKind(schema.GroupVersionKind{Group: crd.Spec.Group, Version: version, Kind: crd.Spec.Names.ListKind})
	if list.Kind == "" {
		list.Kind = crd.Spec.Names.Kind + "List"
	}
	if err := cl.List(ctx, list); err != nil {
		if isMissingKind(err) || apierrors.IsNotFound(err) {
			return 0, nil
		}
		return 0, fmt.Errorf("listing the %s objects: %w", crd.Spec.Names.Kind, err)
	}
	return len(list.Items), nil
}

// storageVersion returns the version a CRD stores objects in.
func storageVersion(crd *apiextensionsv1.CustomResourceDefinition) string {
	for _, v := range crd.Spec.Versions {
		if v.Storage {
			return v.Name
		}
	}
	return ""
}

// servedVersion returns the storage version when it is served, else any served version.
func servedVersion(crd *apiextensionsv1.CustomResourceDefinition) string {
	for _, v := range crd.Spec.Versions {
		if v.Storage && v.Served {
			return v.Name
		}
	}
	for _, v := range crd.Spec.Versions {
		if v.Served {
			return v.Name
		}
	}
	return ""
}
