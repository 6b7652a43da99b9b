package source

import (
	"bytes"
	"compress/gzip"
	"context"
	"fmt"
	"io"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	operatorv1 "github.com/capstan-dev/capstan/api/operator/v1alpha2"
	"github.com/capstan-dev/capstan/internal/clusterctl/repository"
)

// ConfigMaps reads releases from the ConfigMaps of a namespace that a label selector selects, one
// ConfigMap per version: the version is the provider.cluster.x-k8s.io/version label, else the ConfigMap's
// name; the "metadata" key holds metadata.yaml and the "components" key the components, gzip-compressed in
// binaryData when the ConfigMap has the annotation provider.cluster.x-k8s.io/compressed: "true".
type ConfigMaps struct {
	// Label is the provider's label, for messages.
	Label     string
	Reader    client.Reader
	Namespace string
	Selector  *metav1.LabelSelector
}

func (c *ConfigMaps) String() string {
	return fmt.Sprintf("the ConfigMaps of namespace %s selected by %s", c.Namespace, metav1.FormatLabelSelector(c.Selector))
}

// Remote is false: ConfigMaps are in the management cluster.
func (c *ConfigMaps) Remote() bool { return false }

func (c *ConfigMaps) list(ctx context.Context) ([]corev1.ConfigMap, error) {
	sel, err := metav1.LabelSelectorAsSelector(c.Selector)
	if err != nil {
		return nil, fmt.Errorf("fetchConfig.selector: %w", err)
	}
	list := &corev1.ConfigMapList{}
	if err := c.Reader.List(ctx, list, client.InNamespace(c.Namespace), client.MatchingLabelsSelector{Selector: sel}); err != nil {
		return nil, fmt.Errorf("listing %s: %w", c, err)
	}
	return list.Items, nil
}

// VersionOf returns the version a ConfigMap of provider artifacts holds.
func VersionOf(cm *corev1.ConfigMap) string {
	if v := cm.Labels[operatorv1.ConfigMapVersionLabelName]; v != "" {
		return v
	}
	return cm.Name
}

// Versions lists the versions of the selected ConfigMaps; a ConfigMap whose version is not a semantic
// version is an error, since it can only be a mistake.
func (c *ConfigMaps) Versions(ctx context.Context) ([]string, error) {
	cms, err := c.list(ctx)
	if err != nil {
		return nil, err
	}
	var out []string
	for i := range cms {
		v := VersionOf(&cms[i])
		if _, err := repository.ParseVersion(v); err != nil {
			return nil, fmt.Errorf("ConfigMap %s/%s: its version %q is not a semantic version: name the ConfigMap after the version (v1.2.3) or label it %s=v1.2.3",
				c.Namespace, cms[i].Name, v, operatorv1.ConfigMapVersionLabelName)
		}
		out = append(out, v)
	}
	return out, nil
}

// Release reads the ConfigMap of a version.
func (c *ConfigMaps) Release(ctx context.Context, version string) (*Release, error) {
	cms, err := c.list(ctx)
	if err != nil {
		return nil, err
	}
	var found []string
	for i := range cms {
		v := VersionOf(&cms[i])
		found = append(found, v)
		if v == version {
			return ReleaseFromConfigMap(&cms[i])
		}
	}
	if len(found) == 0 {
		return nil, &repository.NotFoundError{What: fmt.Sprintf("version %s: no ConfigMap in namespace %s matches the selector %s; create them, or check fetchConfig.selector",
			version, c.Namespace, metav1.FormatLabelSelector(c.Selector))}
	}
	return nil, &repository.VersionNotFoundError{Label: c.Label, Version: version, URL: c.String(), Available: found}
}

// ReleaseFromConfigMap reads a ConfigMap of provider artifacts.
func ReleaseFromConfigMap(cm *corev1.ConfigMap) (*Release, error) {
	where := "ConfigMap " + cm.Namespace + "/" + cm.Name
	meta, ok := cm.Data[operatorv1.MetadataConfigMapKey]
	if !ok || strings.TrimSpace(meta) == "" {
		return nil, fmt.Errorf("%s has no %q key: it must hold the release's metadata.yaml under %q and its components under %q",
			where, operatorv1.MetadataConfigMapKey, operatorv1.MetadataConfigMapKey, operatorv1.ComponentsConfigMapKey)
	}
	var comps []byte
	if cm.Annotations[operatorv1.CompressedAnnotation] == operatorv1.TrueValue {
		data, ok := cm.BinaryData[operatorv1.ComponentsConfigMapKey]
		if !ok {
			return nil, fmt.Errorf("%s is annotated %s: %q but has no binaryData %q key with the gzip-compressed components",
				where, operatorv1.CompressedAnnotation, operatorv1.TrueValue, operatorv1.ComponentsConfigMapKey)
		}
		zr, err := gzip.NewReader(bytes.NewReader(data))
		if err != nil {
			return nil, fmt.Errorf("%s: binaryData %q is not gzip-compressed: %w", where, operatorv1.ComponentsConfigMapKey, err)
		}
		if comps, err = io.ReadAll(zr); err != nil {
			return nil, fmt.Errorf("%s: decompressing binaryData %q: %w", where, operatorv1.ComponentsConfigMapKey, err)
		}
	} else {
		s, ok := cm.Data[operatorv1.ComponentsConfigMapKey]
		if !ok || strings.TrimSpace(s) == "" {
			return nil, fmt.Errorf("%s has no %q key: it must hold the release's components under %q (or gzip-compressed in binaryData, annotated %s: %q)",
				where, operatorv1.ComponentsConfigMapKey, operatorv1.ComponentsConfigMapKey, operatorv1.CompressedAnnotation, operatorv1.TrueValue)
		}
		comps = []byte(s)
	}
	return &Release{Version: VersionOf(cm), Metadata: []byte(meta), Components: comps}, nil
}

// compressAbove is the size of components above which a ConfigMap holds them gzip-compressed: a
// ConfigMap holds at most 1 MiB.
const compressAbove = 512 * 1024

// ConfigMapFor returns a ConfigMap holding a release, named name in namespace, its components compressed
// when they are large.
func ConfigMapFor(namespace, name string, r *Release) (*corev1.ConfigMap, error) {
	cm := &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name, Labels: map[string]string{operatorv1.ConfigMapVersionLabelName: r.Version}},
		Data:       map[string]string{operatorv1.MetadataConfigMapKey: string(r.Metadata)},
	}
	if len(r.Components) <= compressAbove {
		cm.Data[operatorv1.ComponentsConfigMapKey] = string(r.Components)
		return cm, nil
	}
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	if _, err := zw.Write(r.Components); err != nil {
		return nil, err
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	cm.Annotations = map[string]string{operatorv1.CompressedAnnotation: operatorv1.TrueValue}
	cm.BinaryData = map[string][]byte{operatorv1.ComponentsConfigMapKey: buf.Bytes()}
	return cm, nil
}
