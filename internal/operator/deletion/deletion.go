// Package deletion decides whether a provider may be deleted, as the operator proposal says: not while
// Clusters use it (a Cluster uses a provider when it, or an object that belongs to it, is of one of the
// provider's kinds), and, for the core provider, not while other providers or any Cluster exist. The
// operator's controller and its admission webhook both call Check.
package deletion

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterctlv1 "github.com/capstan-dev/capstan/api/clusterctl/v1alpha3"
	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
	operatorv1 "github.com/capstan-dev/capstan/api/operator/v1alpha2"
)

// BlockedError says why a provider cannot be deleted.
type BlockedError struct {
	// Reason is the condition reason: ClustersExist or OtherProvidersExist.
	Reason string
	// Message names what uses the provider.
	Message string
}

func (e *BlockedError) Error() string { return e.Message }

// IsBlocked reports whether err is a BlockedError, and returns it.
func IsBlocked(err error) (*BlockedError, bool) {
	var b *BlockedError
	ok := errors.As(err, &b)
	return b, ok
}

// maxNamed bounds how many users a message names.
const maxNamed = 10

// Check returns a BlockedError when p may not be deleted, another error when that cannot be told, nil
// when it may: when clusterctl's inventory has no record of p in its namespace, or nothing uses it.
// reader must serve clusterctl's inventory, Clusters, CRDs, the provider kinds and the provider's kinds
// (an uncached client does).
func Check(ctx context.Context, reader client.Reader, p operatorv1.GenericProvider) error {
	recorded, err := inInventory(ctx, reader, p)
	if err != nil || !recorded {
		return err
	}
	what := fmt.Sprintf("%s %s/%s", kindName(p), p.GetNamespace(), p.GetName())
	if p.ProviderType() == clusterctlv1.CoreProviderType {
		others, err := otherProviders(ctx, reader, p)
		if err != nil {
			return err
		}
		if len(others) > 0 {
			return &BlockedError{Reason: operatorv1.OtherProvidersExistReason, Message: fmt.Sprintf(
				"%s cannot be deleted while other providers exist: %s; delete them first", what, names(others))}
		}
		clusters := &clusterv1.ClusterList{}
		if err := reader.List(ctx, clusters); err != nil && !meta.IsNoMatchError(err) {
			return fmt.Errorf("listing Clusters: %w", err)
		}
		if len(clusters.Items) > 0 {
			var users []string
			for _, c := range clusters.Items {
				users = append(users, c.Namespace+"/"+c.Name)
			}
			return &BlockedError{Reason: operatorv1.ClustersExistReason, Message: fmt.Sprintf(
				"%s cannot be deleted while Clusters exist: %s; delete them first", what, names(users))}
		}
		return nil
	}
	users, err := clustersUsing(ctx, reader, operatorv1.ManifestLabel(p))
	if err != nil {
		return err
	}
	if len(users) > 0 {
		return &BlockedError{Reason: operatorv1.ClustersExistReason, Message: fmt.Sprintf(
			"%s cannot be deleted while Clusters use it: %s; delete them first", what, names(users))}
	}
	return nil
}

// inInventory reports whether clusterctl's inventory records the provider in its namespace. A provider
// object without a record installs nothing that deleting it would remove — a duplicate that the operator
// refuses to install (another object, or clusterctl, installs the provider elsewhere), or one not
// installed yet — so it protects nothing.
func inInventory(ctx context.Context, reader client.Reader, p operatorv1.GenericProvider) (bool, error) {
	list := &clusterctlv1.ProviderList{}
	if err := reader.List(ctx, list, client.InNamespace(p.GetNamespace())); err != nil {
		if meta.IsNoMatchError(err) {
			return false, nil
		}
		return false, fmt.Errorf("listing clusterctl's inventory: %w", err)
	}
	label := operatorv1.ManifestLabel(p)
	return slices.ContainsFunc(list.Items, func(i clusterctlv1.Provider) bool { return i.ManifestLabel() == label }), nil
}

func kindName(p operatorv1.GenericProvider) string {
	k, err := operatorv1.KindFor(p.ProviderType())
	if err != nil {
		return string(p.ProviderType())
	}
	return k.Name
}

func names(items []string) string {
	sort.Strings(items)
	if len(items) > maxNamed {
		return strings.Join(items[:maxNamed], ", ") + fmt.Sprintf(" and %d more", len(items)-maxNamed)
	}
	return strings.Join(items, ", ")
}

// otherProviders returns the providers other than p, as "Kind namespace/name".
func otherProviders(ctx context.Context, reader client.Reader, p operatorv1.GenericProvider) ([]string, error) {
	var out []string
	for _, k := range operatorv1.Kinds() {
		list := k.NewList()
		if err := reader.List(ctx, list); err != nil {
			return nil, fmt.Errorf("listing %s objects: %w", k.Name, err)
		}
		for _, o := range list.GetItems() {
			if o.GetUID() == p.GetUID() {
				continue
			}
			out = append(out, fmt.Sprintf("%s %s/%s", k.Name, o.GetNamespace(), o.GetName()))
		}
	}
	return out, nil
}

// clustersUsing returns the Clusters that use the provider of the label, as "namespace/name (Kind
// namespace/name)": those whose infrastructure or control plane reference is of one of the provider's
// kinds, and those owning, or named by the cluster-name label of, an object of the provider's kinds.
func clustersUsing(ctx context.Context, reader client.Reader, label string) ([]string, error) {
	crds := &apiextensionsv1.CustomResourceDefinitionList{}
	if err := reader.List(ctx, crds, client.MatchingLabels{clusterv1.ProviderNameLabel: label}); err != nil {
		return nil, fmt.Errorf("listing the CRDs of %s: %w", label, err)
	}
	if len(crds.Items) == 0 {
		return nil, nil
	}
	kinds := map[schema.GroupKind]bool{}
	for _, crd := range crds.Items {
		kinds[schema.GroupKind{Group: crd.Spec.Group, Kind: crd.Spec.Names.Kind}] = true
	}
	clusters := &clusterv1.ClusterList{}
	if err := reader.List(ctx, clusters); err != nil && !meta.IsNoMatchError(err) {
		return nil, fmt.Errorf("listing Clusters: %w", err)
	}
	users := map[string]string{} // namespace/name -> the object that ties it to the provider
	for _, c := range clusters.Items {
		for _, ref := range []*struct{ apiVersion, kind, name string }{refOf(c.Spec.InfrastructureRef), refOf(c.Spec.ControlPlaneRef)} {
			if ref == nil {
				continue
			}
			gv, err := schema.ParseGroupVersion(ref.apiVersion)
			if err == nil && kinds[schema.GroupKind{Group: gv.Group, Kind: ref.kind}] {
				users[c.Namespace+"/"+c.Name] = ref.kind + " " + c.Namespace + "/" + ref.name
			}
		}
	}
	for _, crd := range crds.Items {
		version := storageVersion(&crd)
		if version == "" {
			continue
		}
		list := &metav1.PartialObjectMetadataList{}
		list.SetGroupVersionKind(schema.GroupVersionKind{Group: crd.Spec.Group, Version: version, Kind: crd.Spec.Names.ListKind})
		if err := reader.List(ctx, list); err != nil {
			if meta.IsNoMatchError(err) {
				continue
			}
			return nil, fmt.Errorf("listing %s objects: %w", crd.Spec.Names.Kind, err)
		}
		for _, o := range list.Items {
			cluster := o.Labels[clusterv1.ClusterNameLabel]
			for _, ref := range o.OwnerReferences {
				if ref.Kind == "Cluster" && strings.HasPrefix(ref.APIVersion, clusterv1.GroupVersion.Group+"/") {
					cluster = ref.Name
				}
			}
			if cluster == "" {
				continue
			}
			key := o.Namespace + "/" + cluster
			if _, ok := users[key]; !ok && clusterExists(clusters.Items, o.Namespace, cluster) {
				users[key] = crd.Spec.Names.Kind + " " + o.Namespace + "/" + o.Name
			}
		}
	}
	out := make([]string, 0, len(users))
	for k, v := range users {
		out = append(out, k+" ("+v+")")
	}
	return out, nil
}

func refOf(ref *corev1.ObjectReference) *struct{ apiVersion, kind, name string } {
	if ref == nil {
		return nil
	}
	return &struct{ apiVersion, kind, name string }{ref.APIVersion, ref.Kind, ref.Name}
}

func clusterExists(clusters []clusterv1.Cluster, namespace, name string) bool {
	return slices.ContainsFunc(clusters, func(c clusterv1.Cluster) bool { return c.Namespace == namespace && c.Name == name })
}

func storageVersion(crd *apiextensionsv1.CustomResourceDefinition) string {
	for _, v := range crd.Spec.Versions {
		if v.Storage {
			return v.Name
		}
	}
	return ""
}
