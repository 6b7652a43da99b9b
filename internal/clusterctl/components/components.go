// Package components turns a provider's components YAML into the objects clusterctl installs, applying
// the transformations of the clusterctl provider contract: variable substitution, image overrides, the
// target namespace (exactly one Namespace object, or one given by the user) enforced on every namespaced
// object and on the references to it, and the clusterctl labels. It also builds the inventory Provider
// object that records the installation.
package components

import (
	"errors"
	"fmt"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/validation"

	clusterctlv1 "github.com/capstan-dev/capstan/api/clusterctl/v1alpha3"
	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
	"github.com/capstan-dev/capstan/internal/clusterctl/config"
	"github.com/capstan-dev/capstan/internal/clusterctl/yamlprocessor"
	"github.com/capstan-dev/capstan/internal/manifest"
)

// Input is what New needs.
type Input struct {
	// Provider is the provider the components belong to.
	Provider config.Provider
	// Version is the provider version.
	Version string
	// Raw is the components YAML as published.
	Raw []byte
	// Variables looks up the value of a variable.
	Variables func(name string) (string, bool)
	// Images are the image overrides to apply.
	Images config.ImageOverrides
	// TargetNamespace replaces the namespace of the components; empty keeps the components' own.
	TargetNamespace string
	// SkipVariables leaves variables unsubstituted (generate provider --raw and --describe).
	SkipVariables bool
}

// Components are a provider's objects, ready to install.
type Components struct {
	provider        config.Provider
	version         string
	variables       []string
	images          []string
	targetNamespace string
	objs            []unstructured.Unstructured
}

// New applies the transformations of the provider contract to the components YAML.
func New(in Input) (*Components, error) {
	tmpl, err := yamlprocessor.Parse(in.Raw)
	if err != nil {
		return nil, err
	}
	processed := in.Raw
	if !in.SkipVariables {
		if processed, err = tmpl.Execute(in.Variables); err != nil {
			return nil, err
		}
	}
	objs, err := manifest.Parse(processed)
	if err != nil {
		return nil, err
	}
	label := in.Provider.ManifestLabel()
	if err := manifest.ReplaceImages(objs, func(image string) (string, error) { return in.Images.Alter(label, image) }); err != nil {
		return nil, fmt.Errorf("applying image overrides: %w", err)
	}

	original, err := namespaceOf(objs)
	if err != nil {
		return nil, err
	}
	target := in.TargetNamespace
	if target == "" {
		target = original
	}
	if target == "" {
		return nil, errors.New("the components YAML has no Namespace object, so the target namespace can't be defaulted: specify a target namespace (--target-namespace)")
	}
	if errs := validation.IsDNS1123Label(target); len(errs) > 0 {
		return nil, fmt.Errorf("invalid target namespace %q: %s", target, strings.Join(errs, "; "))
	}
	if original == "" {
		objs = append(objs, unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": target},
		}})
	}
	fixNamespaces(objs, manifest.NewScope(objs), original, target)
	addLabels(objs, label)

	return &Components{
		provider:        in.Provider,
		version:         in.Version,
		variables:       tmpl.Variables(),
		images:          manifest.Images(objs),
		targetNamespace: target,
		objs:            objs,
	}, nil
}

// Name returns the provider name.
func (c *Components) Name() string { return c.provider.Name }

// Type returns the provider type.
func (c *Components) Type() clusterctlv1.ProviderType { return c.provider.Type }

// URL returns the provider URL.
func (c *Components) URL() string { return c.provider.URL }

// Version returns the provider version.
func (c *Components) Version() string { return c.version }

// ManifestLabel returns the provider's label, for example "infrastructure-aws".
func (c *Components) ManifestLabel() string { return c.provider.ManifestLabel() }

// TargetNamespace returns the namespace the components are installed in.
func (c *Components) TargetNamespace() string { return c.targetNamespace }

// Variables returns the variables of the components YAML, sorted.
func (c *Components) Variables() []string { return c.variables }

// Images returns the images of the components' workloads, overrides applied, sorted.
func (c *Components) Images() []string { return c.images }

// Objects returns the transformed objects.
func (c *Components) Objects() []unstructured.Unstructured { return c.objs }

// Customize lets fn change the objects, for callers that transform them further (the provider operator's
// overrides and patches); an error leaves them as they were.
func (c *Components) Customize(fn func(objs []unstructured.Unstructured) error) error {
	objs := make([]unstructured.Unstructured, len(c.objs))
	for i := range c.objs {
		objs[i] = *c.objs[i].DeepCopy()
	}
	if err := fn(objs); err != nil {
		return err
	}
	c.objs = objs
	c.images = manifest.Images(objs)
	return nil
}

// YAML renders the transformed objects.
func (c *Components) YAML() ([]byte, error) { return manifest.Marshal(c.objs) }

// InventoryObject returns the Provider object that records the installation in the target namespace.
func (c *Components) InventoryObject() clusterctlv1.Provider {
	labels := commonLabels(c.ManifestLabel())
	labels[clusterctlv1.ClusterctlCoreLabel] = clusterctlv1.ClusterctlCoreLabelInventoryValue
	return clusterctlv1.Provider{
		TypeMeta: metav1.TypeMeta{APIVersion: clusterctlv1.GroupVersion.String(), Kind: "Provider"},
		ObjectMeta: metav1.ObjectMeta{
			Namespace: c.targetNamespace,
			Name:      c.ManifestLabel(),
			Labels:    labels,
		},
		ProviderName: c.provider.Name,
		Type:         string(c.provider.Type),
		Version:      c.version,
	}
}

// namespaceOf returns the name of the only Namespace object, "" when there is none.
func namespaceOf(objs []unstructured.Unstructured) (string, error) {
	var names []string
	for i := range objs {
		if objs[i].GetKind() == "Namespace" && objs[i].GroupVersionKind().Group == "" {
			names = append(names, objs[i].GetName())
		}
	}
	if len(names) > 1 {
		return "", fmt.Errorf("invalid components YAML: it has %d Namespace objects (%s); a provider's components must have no more than one",
			len(names), strings.Join(names, ", "))
	}
	if len(names) == 1 {
		return names[0], nil
	}
	return "", nil
}

func commonLabels(label string) map[string]string {
	return map[string]string{
		clusterctlv1.ClusterctlLabel: "",
		clusterv1.ProviderNameLabel:  label,
	}
}

// addLabels adds clusterctl's labels to every object, so that clusterctl can find them later.
func addLabels(objs []unstructured.Unstructured, label string) {
	for i := range objs {
		labels := objs[i].GetLabels()
		if labels == nil {
			labels = map[string]string{}
		}
		for k, v := range commonLabels(label) {
			labels[k] = v
		}
		objs[i].SetLabels(labels)
	}
}

// Images returns the images of the workloads in a components YAML, the overrides for component applied,
// without choosing a namespace: what `clusterctl init list-images` prints. Variables are substituted when
// they all have values or defaults, so that images built from variables show as they would be installed;
// otherwise the YAML is read as it is.
func Images(raw []byte, component string, variables func(string) (string, bool), overrides config.ImageOverrides) ([]string, error) {
	tmpl, err := yamlprocessor.Parse(raw)
	if err != nil {
		return nil, err
	}
	if processed, err := tmpl.Execute(variables); err == nil {
		raw = processed
	}
	objs, err := manifest.Parse(raw)
	if err != nil {
		return nil, err
	}
	if err := manifest.ReplaceImages(objs, func(image string) (string, error) { return overrides.Alter(component, image) }); err != nil {
		return nil, fmt.Errorf("applying image overrides: %w", err)
	}
	return manifest.Images(objs), nil
}
