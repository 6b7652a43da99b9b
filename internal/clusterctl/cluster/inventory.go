package cluster

import (
	"context"
	"fmt"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterctlv1 "github.com/capstan-dev/capstan/api/clusterctl/v1alpha3"
	"github.com/capstan-dev/capstan/config/crd"
)

// UpgradeToAnnotation on an inventory Provider records the version an upgrade of the provider is taking
// it to. `clusterctl upgrade apply` writes it before changing anything and removes it when the provider
// runs the new version, so that a failed or interrupted upgrade shows, and running the command again
// finishes it.
const UpgradeToAnnotation = "clusterctl.cluster.x-k8s.io/upgrade-to"

// FieldOwner is the field manager of everything clusterctl applies.
const FieldOwner = "clusterctl"

// EnsureInventoryCRD installs, or updates, the CRD of clusterctl's inventory (providers.clusterctl.cluster.x-k8s.io),
// labelled clusterctl.cluster.x-k8s.io/core=inventory, and waits until it is established.
func (c *Client) EnsureInventoryCRD(ctx context.Context) error {
	crds, err := crd.Clusterctl()
	if err != nil {
		return err
	}
	objs := make([]unstructured.Unstructured, 0, len(crds))
	for _, d := range crds {
		u, err := toUnstructured(d)
		if err != nil {
			return err
		}
		u.SetAPIVersion(apiextensionsv1.SchemeGroupVersion.String())
		u.SetKind("CustomResourceDefinition")
		u.SetLabels(map[string]string{
			clusterctlv1.ClusterctlLabel:     "",
			clusterctlv1.ClusterctlCoreLabel: clusterctlv1.ClusterctlCoreLabelInventoryValue,
		})
		unstructured.RemoveNestedField(u.Object, "status")
		unstructured.RemoveNestedField(u.Object, "metadata", "creationTimestamp")
		objs = append(objs, *u)
	}
	if err := c.Apply(ctx, objs); err != nil {
		return fmt.Errorf("installing clusterctl's inventory CRD: %w", err)
	}
	return nil
}

// SaveProvider creates, or updates, an inventory Provider object: the record of an installed provider.
// An update also removes the record of an upgrade in progress (UpgradeToAnnotation), in the same write.
func (c *Client) SaveProvider(ctx context.Context, p clusterctlv1.Provider) error {
	cl, err := c.connect()
	if err != nil {
		return err
	}
	current := &clusterctlv1.Provider{}
	err = cl.Get(ctx, client.ObjectKey{Namespace: p.Namespace, Name: p.Name}, current)
	switch {
	case apierrors.IsNotFound(err):
		obj := p.DeepCopy()
		obj.ResourceVersion, obj.UID, obj.ManagedFields = "", "", nil
		err = cl.Create(ctx, obj)
	case err == nil:
		labels := current.GetLabels()
		if labels == nil {
			labels = map[string]string{}
		}
		for k, v := range p.Labels {
			labels[k] = v
		}
		current.SetLabels(labels)
		annotations := current.GetAnnotations()
		delete(annotations, UpgradeToAnnotation)
		current.SetAnnotations(annotations)
		current.ProviderName, current.Type, current.Version = p.ProviderName, p.Type, p.Version
		current.WatchedNamespace = p.WatchedNamespace
		err = cl.Update(ctx, current)
	}
	if err != nil {
		return fmt.Errorf("recording %s %s in the inventory: %w", p.InstanceName(), p.Version, err)
	}
	return nil
}

// DeleteProvider deletes an inventory Provider object; one already gone is not an error.
func (c *Client) DeleteProvider(ctx context.Context, p clusterctlv1.Provider) error {
	cl, err := c.connect()
	if err != nil {
		return err
	}
	obj := &clusterctlv1.Provider{}
	obj.Namespace, obj.Name = p.Namespace, p.Name
	if err := cl.Delete(ctx, obj); err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("deleting %s from the inventory: %w", p.InstanceName(), err)
	}
	return nil
}

// SetUpgradeTo records on the inventory Provider object the version an upgrade is taking it to; an empty
// version removes the record.
func (c *Client) SetUpgradeTo(ctx context.Context, p clusterctlv1.Provider, version string) error {
	cl, err := c.connect()
	if err != nil {
		return err
	}
	current := &clusterctlv1.Provider{}
	if err := cl.Get(ctx, client.ObjectKey{Namespace: p.Namespace, Name: p.Name}, current); err != nil {
		return fmt.Errorf("reading %s from the inventory: %w", p.InstanceName(), err)
	}
	before := current.DeepCopy()
	annotations := current.GetAnnotations()
	if version == "" {
		if _, ok := annotations[UpgradeToAnnotation]; !ok {
			return nil
		}
		delete(annotations, UpgradeToAnnotation)
	} else {
		if annotations == nil {
			annotations = map[string]string{}
		}
		if annotations[UpgradeToAnnotation] == version {
			return nil
		}
		annotations[UpgradeToAnnotation] = version
	}
	current.SetAnnotations(annotations)
	if err := cl.Patch(ctx, current, client.MergeFrom(before)); err != nil {
		return fmt.Errorf("recording the upgrade of %s in the inventory: %w", p.InstanceName(), err)
	}
	return nil
}

func toUnstructured(obj runtime.Object) (*unstructured.Unstructured, error) {
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		return nil, err
	}
	return &unstructured.Unstructured{Object: m}, nil
}
