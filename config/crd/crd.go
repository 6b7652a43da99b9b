// Package crd embeds the CustomResourceDefinitions that controller-gen generates from api/ (see
// `make generate`), so that binaries and tests install exactly the generated schemas.
package crd

import (
	"embed"
	"fmt"
	"io/fs"
	"path"
	"sort"
	"strings"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"
)

//go:embed bases/*.yaml
var bases embed.FS

// ConversionPath is where a manager's webhook server answers CRD conversion requests, as upstream's.
const ConversionPath = "/convert"

// Converted reports whether a CRD serves more than one version, which the API server converts between.
func Converted(crd *apiextensionsv1.CustomResourceDefinition) bool {
	served := 0
	for _, v := range crd.Spec.Versions {
		if v.Served {
			served++
		}
	}
	return served > 1
}

// WithConversionWebhook sets, on every CRD that serves more than one version, the conversion webhook of a
// manager: its webhook Service service in namespace, at ConversionPath, without CA bundle (the manager
// writes it). The others keep the API server's conversion (None), as upstream's.
func WithConversionWebhook(crds []*apiextensionsv1.CustomResourceDefinition, namespace, service string) {
	for _, crd := range crds {
		if !Converted(crd) {
			continue
		}
		crd.Spec.Conversion = &apiextensionsv1.CustomResourceConversion{
			Strategy: apiextensionsv1.WebhookConverter,
			Webhook: &apiextensionsv1.WebhookConversion{
				ClientConfig: &apiextensionsv1.WebhookClientConfig{Service: &apiextensionsv1.ServiceReference{
					Namespace: namespace, Name: service, Path: ptr.To(ConversionPath)}},
				ConversionReviewVersions: []string{"v1", "v1beta1"},
			},
		}
	}
}

// Core returns the CRDs of the core provider, sorted by name: the cluster.x-k8s.io group, and the
// addons.cluster.x-k8s.io (ClusterResourceSet) and ipam.cluster.x-k8s.io (IPAddress, IPAddressClaim) groups,
// which upstream's core components install too.
func Core() ([]*apiextensionsv1.CustomResourceDefinition, error) {
	return load(func(name string) bool {
		return strings.HasPrefix(name, "cluster.x-k8s.io_") || strings.HasPrefix(name, "addons.cluster.x-k8s.io_") ||
			strings.HasPrefix(name, "ipam.cluster.x-k8s.io_")
	})
}

// Runtime returns the CRDs of the runtime.cluster.x-k8s.io group (ExtensionConfig), which the core
// provider installs with its own, as upstream's does.
func Runtime() ([]*apiextensionsv1.CustomResourceDefinition, error) {
	return load(func(name string) bool { return strings.HasPrefix(name, "runtime.cluster.x-k8s.io_") })
}

// Clusterctl returns clusterctl's own CRDs (the inventory Provider CRD).
func Clusterctl() ([]*apiextensionsv1.CustomResourceDefinition, error) {
	return load(func(name string) bool { return strings.HasPrefix(name, "clusterctl.cluster.x-k8s.io_") })
}

// Local returns the CRDs of capstan's local infrastructure provider (LocalCluster, LocalMachine and their
// templates), sorted by name.
func Local() ([]*apiextensionsv1.CustomResourceDefinition, error) {
	return load(func(name string) bool { return strings.HasPrefix(name, "infrastructure.cluster.x-k8s.io_local") })
}

// Bootstrap returns the CRDs of the kubeadm bootstrap provider (KubeadmConfig, KubeadmConfigTemplate),
// sorted by name.
func Bootstrap() ([]*apiextensionsv1.CustomResourceDefinition, error) {
	return load(func(name string) bool { return strings.HasPrefix(name, "bootstrap.cluster.x-k8s.io_kubeadm") })
}

// ControlPlane returns the CRDs of the kubeadm control plane provider (KubeadmControlPlane,
// KubeadmControlPlaneTemplate), sorted by name.
func ControlPlane() ([]*apiextensionsv1.CustomResourceDefinition, error) {
	return load(func(name string) bool { return strings.HasPrefix(name, "controlplane.cluster.x-k8s.io_kubeadm") })
}

// All returns every generated CRD, sorted by name.
func All() ([]*apiextensionsv1.CustomResourceDefinition, error) {
	return load(func(string) bool { return true })
}

func load(keep func(string) bool) ([]*apiextensionsv1.CustomResourceDefinition, error) {
	entries, err := fs.ReadDir(bases, "bases")
	if err != nil {
		return nil, err
	}
	var out []*apiextensionsv1.CustomResourceDefinition
	for _, e := range entries {
		if !keep(e.Name()) {
			continue
		}
		data, err := bases.ReadFile(path.Join("bases", e.Name()))
		if err != nil {
			return nil, err
		}
		crd := &apiextensionsv1.CustomResourceDefinition{}
		if err := yaml.UnmarshalStrict(data, crd); err != nil {
			return nil, fmt.Errorf("decoding %s: %w", e.Name(), err)
		}
		out = append(out, crd)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// Operator returns the CRDs of the provider operator, sorted by name: its own API
// (operator.cluster.x-k8s.io) and the operator proposal's (management.cluster.x-k8s.io).
func Operator() ([]*apiextensionsv1.CustomResourceDefinition, error) {
	return load(operatorFile)
}

func operatorFile(name string) bool {
	return strings.HasPrefix(name, "operator.cluster.x-k8s.io_") || strings.HasPrefix(name, "management.cluster.x-k8s.io_")
}

// OperatorFiles returns the files of the provider operator's CRDs as controller-gen wrote them, keyed by
// file name: the Helm chart's crds/ folder holds the same files.
func OperatorFiles() (map[string][]byte, error) {
	entries, err := fs.ReadDir(bases, "bases")
	if err != nil {
		return nil, err
	}
	out := map[string][]byte{}
	for _, e := range entries {
		if !operatorFile(e.Name()) {
			continue
		}
		if out[e.Name()], err = bases.ReadFile(path.Join("bases", e.Name())); err != nil {
			return nil, err
		}
	}
	return out, nil
}
