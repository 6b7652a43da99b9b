package cluster

import (
	"context"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterctlv1 "github.com/capstan-dev/capstan/api/clusterctl/v1alpha3"
)

// CertManagerCRD is the CRD whose presence tells that cert-manager is installed.
const CertManagerCRD = "certificates.cert-manager.io"

// CertManagerState is what the management cluster says about cert-manager.
type CertManagerState struct {
	// Installed is true when cert-manager's CRDs are installed.
	Installed bool
	// ByClusterctl is true when clusterctl installed it (its objects are labelled
	// clusterctl.cluster.x-k8s.io/core=cert-manager); clusterctl then upgrades it.
	ByClusterctl bool
	// Version is the version clusterctl installed, from the annotation
	// cert-manager.clusterctl.cluster.x-k8s.io/version.
	Version string
}

// CertManager returns the state of cert-manager in the management cluster.
func (c *Client) CertManager(ctx context.Context) (CertManagerState, error) {
	cl, err := c.connect()
	if err != nil {
		return CertManagerState{}, err
	}
	crd := &apiextensionsv1.CustomResourceDefinition{}
	if err := cl.Get(ctx, client.ObjectKey{Name: CertManagerCRD}, crd); err != nil {
		if apierrors.IsNotFound(err) {
			return CertManagerState{}, nil
		}
		return CertManagerState{}, fmt.Errorf("looking for cert-manager: %w", err)
	}
	s := CertManagerState{Installed: true}
	if crd.Labels[clusterctlv1.ClusterctlCoreLabel] == clusterctlv1.ClusterctlCoreLabelCertManagerValue {
		s.ByClusterctl = true
		s.Version = crd.Annotations[clusterctlv1.CertManagerVersionAnnotation]
	}
	return s, nil
}

// MissingObjects returns the objects among objs that do not exist in the management cluster.
func (c *Client) MissingObjects(ctx context.Context, objs []unstructured.Unstructured) ([]unstructured.Unstructured, error) {
	var missing []unstructured.Unstructured
	for i := range objs {
		exists, err := c.Exists(ctx, &objs[i])
		if err != nil {
			return nil, err
		}
		if !exists {
			missing = append(missing, objs[i])
		}
	}
	return missing, nil
}

// DeleteCertManager deletes the objects of the cert-manager clusterctl installed, except its CRDs and
// its Namespace (so that certificates and issuers survive), and waits until they are gone: the first
// step of an upgrade of cert-manager.
func (c *Client) DeleteCertManager(ctx context.Context) error {
	objs, err := c.labelledObjects(ctx, map[string]string{clusterctlv1.ClusterctlCoreLabel: clusterctlv1.ClusterctlCoreLabelCertManagerValue}, "")
	if err != nil {
		return fmt.Errorf("listing cert-manager's objects: %w", err)
	}
	if err := c.deleteObjects(ctx, objs, DeleteComponentsOptions{Wait: true}); err != nil {
		return fmt.Errorf("deleting cert-manager: %w", err)
	}
	return nil
}

// DeploymentKeys returns the keys of the Deployments among objs.
func DeploymentKeys(objs []unstructured.Unstructured) []client.ObjectKey {
	var keys []client.ObjectKey
	for i := range objs {
		gvk := objs[i].GroupVersionKind()
		if gvk.Group == appsv1.GroupName && gvk.Kind == "Deployment" {
			keys = append(keys, client.ObjectKeyFromObject(&objs[i]))
		}
	}
	return keys
}
