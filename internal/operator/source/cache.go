package source

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"sigs.k8s.io/controller-runtime/pkg/client"

	operatorv1 "github.com/capstan-dev/capstan/api/operator/v1alpha2"
)

// Cache keeps the releases the operator fetched from remote sources in ConfigMaps of the provider's
// namespace, one per version, named <provider label>-<version>, labelled as the operator's and owned by
// the provider (so deleting the provider deletes them). The operator uses a cached release only when its
// Digest is the one it recorded in the provider's status when it fetched it.
type Cache struct {
	Client client.Client
	// Reader reads ConfigMaps; the operator's client does not cache them.
	Reader client.Reader
}

// Digest returns sha256:<hex> of a release's metadata and components, which pins a cached release.
func Digest(r *Release) string {
	h := sha256.New()
	h.Write(r.Metadata)
	h.Write([]byte{0})
	h.Write(r.Components)
	return "sha256:" + hex.EncodeToString(h.Sum(nil))
}

// CacheName returns the name of the ConfigMap that caches a version of a provider.
func CacheName(label, version string) string {
	name := strings.ToLower(label + "-" + strings.NewReplacer("+", "-", "_", "-").Replace(version))
	if len(name) > validation.DNS1123SubdomainMaxLength {
		name = name[:validation.DNS1123SubdomainMaxLength]
	}
	return name
}

// Get returns the release of a version cached from src, nil when there is none.
func (c *Cache) Get(ctx context.Context, p operatorv1.GenericProvider, src Source, version string) (*Release, error) {
	cm := &corev1.ConfigMap{}
	key := client.ObjectKey{Namespace: p.GetNamespace(), Name: CacheName(operatorv1.ManifestLabel(p), version)}
	if err := c.Reader.Get(ctx, key, cm); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, nil
		}
		return nil, fmt.Errorf("reading the cached release %s: %w", key, err)
	}
	if cm.Labels[operatorv1.ManagedByLabel] != operatorv1.TrueValue || VersionOf(cm) != version || cm.Annotations[SourceAnnotation] != src.String() {
		return nil, nil
	}
	return ReleaseFromConfigMap(cm)
}

// Put caches a release fetched from src, replacing one cached from another source.
func (c *Cache) Put(ctx context.Context, p operatorv1.GenericProvider, src Source, r *Release) error {
	label := operatorv1.ManifestLabel(p)
	cm, err := ConfigMapFor(p.GetNamespace(), CacheName(label, r.Version), r)
	if err != nil {
		return err
	}
	cm.Labels[operatorv1.ManagedByLabel] = operatorv1.TrueValue
	cm.Labels[operatorv1.ConfigMapNameLabel] = p.GetName()
	cm.Labels[operatorv1.ConfigMapTypeLabel] = string(p.ProviderType())
	if cm.Annotations == nil {
		cm.Annotations = map[string]string{}
	}
	cm.Annotations[SourceAnnotation] = src.String()
	gvk := p.GetObjectKind().GroupVersionKind()
	cm.OwnerReferences = []metav1.OwnerReference{{APIVersion: gvk.GroupVersion().String(), Kind: gvk.Kind, Name: p.GetName(), UID: p.GetUID()}}
	err = c.Client.Create(ctx, cm)
	if apierrors.IsAlreadyExists(err) {
		// Cached from another source: replace it.
		existing := &corev1.ConfigMap{}
		if err = c.Reader.Get(ctx, client.ObjectKeyFromObject(cm), existing); err == nil {
			cm.ResourceVersion = existing.ResourceVersion
			err = c.Client.Update(ctx, cm)
		}
	}
	if err != nil {
		return fmt.Errorf("caching %s %s in ConfigMap %s/%s: %w", label, r.Version, cm.Namespace, cm.Name, err)
	}
	return nil
}

// SourceAnnotation on a cached release says where it was fetched from.
const SourceAnnotation = "operator.cluster.x-k8s.io/source"
