// Package release renders the release artifacts of capstan's own providers — `<type>-components.yaml`,
// `metadata.yaml` and cluster templates — in the layout of a clusterctl local repository
// (`<provider-label>/<version>/<file>`), from the manifests embedded in the binary. `make release-manifests`
// writes them under out/, and the embedded management cluster serves them as its local repository.
package release

import (
	"bytes"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	clusterctlv1 "github.com/capstan-dev/capstan/api/clusterctl/v1alpha3"
	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
	"github.com/capstan-dev/capstan/internal/manifest"
)

// Image is the repository of capstan's container image; each provider's Deployment runs one of its
// subcommands. It is the one place the image's name comes from: the manifests under config/ name it
// with the tag placeholder (imagePlaceholder), which rendering replaces with Options.Image.
const Image = "ghcr.io/capstan-dev/capstan"

// imagePlaceholder is how the manifests under config/ name capstan's image.
const imagePlaceholder = Image + ":VERSION"

// ImageReference returns the reference of capstan's image of a release version in the repository repo
// (Image when empty): repo:version, or repo:version@digest when digest is given, which pins the image
// (the tag is then only for people).
func ImageReference(repo, version, digest string) string {
	if repo == "" {
		repo = Image
	}
	if digest == "" {
		return repo + ":" + version
	}
	return repo + ":" + version + "@" + digest
}

// Options say how a release's artifacts are rendered.
type Options struct {
	// Version is the release version, for example v0.1.0.
	Version string
	// Image is the image reference the providers' Deployments run; ImageReference("", Version, "")
	// when empty.
	Image string
}

func (o Options) image() string {
	if o.Image != "" {
		return o.Image
	}
	return ImageReference("", o.Version, "")
}

// Provider describes one of capstan's providers as clusterctl sees it.
type Provider struct {
	// Name is the clusterctl provider name, for example "cluster-api" or "local".
	Name string
	// Type is the clusterctl provider type.
	Type clusterctlv1.ProviderType
	// CRDs are the provider's CRDs, first in the components.
	CRDs []*apiextensionsv1.CustomResourceDefinition
	// Manifests holds the provider's other manifests (*.yaml, except metadata.yaml and cluster templates,
	// which are published as files of their own).
	Manifests fs.FS
}

// Label returns the provider's manifest label, for example "infrastructure-local".
func (p Provider) Label() string { return clusterctlv1.ManifestLabel(p.Name, p.Type) }

// ComponentsFile returns the name of the provider's components file, for example "core-components.yaml".
func (p Provider) ComponentsFile() string {
	switch p.Type {
	case clusterctlv1.CoreProviderType:
		return "core-components.yaml"
	case clusterctlv1.BootstrapProviderType:
		return "bootstrap-components.yaml"
	case clusterctlv1.ControlPlaneProviderType:
		return "control-plane-components.yaml"
	case clusterctlv1.InfrastructureProviderType:
		return "infrastructure-components.yaml"
	default:
		return p.Type.Prefix() + "-components.yaml"
	}
}

// isPublishedFile says whether a manifest file is published on its own rather than in the components.
func isPublishedFile(name string) bool {
	return name == "metadata.yaml" || strings.HasPrefix(name, "cluster-template") || strings.HasPrefix(name, "clusterclass-")
}

// Files renders every artifact of one release of the provider, keyed by file name, with the image of
// the version.
func (p Provider) Files(version string) (map[string][]byte, error) {
	return p.Render(Options{Version: version})
}

// Render renders every artifact of one release of the provider, keyed by file name.
func (p Provider) Render(o Options) (map[string][]byte, error) {
	components, err := p.render(o)
	if err != nil {
		return nil, err
	}
	out := map[string][]byte{p.ComponentsFile(): components}
	entries, err := fs.ReadDir(p.Manifests, ".")
	if err != nil {
		return nil, err
	}
	for _, e := range entries {
		if e.IsDir() || !isPublishedFile(e.Name()) {
			continue
		}
		data, err := fs.ReadFile(p.Manifests, e.Name())
		if err != nil {
			return nil, err
		}
		out[e.Name()] = data
	}
	if _, ok := out["metadata.yaml"]; !ok {
		return nil, fmt.Errorf("provider %s has no metadata.yaml", p.Label())
	}
	return out, nil
}

// Components renders the components YAML: the CRDs, then the other manifests in file name order, each
// object labelled cluster.x-k8s.io/provider=<label>, with the image tag set to version.
func (p Provider) Components(version string) ([]byte, error) {
	return p.render(Options{Version: version})
}

func (p Provider) render(o Options) ([]byte, error) {
	var objs []*unstructured.Unstructured
	for _, crd := range p.CRDs {
		data, err := yaml.Marshal(crd)
		if err != nil {
			return nil, err
		}
		u := &unstructured.Unstructured{}
		if err := yaml.Unmarshal(data, &u.Object); err != nil {
			return nil, err
		}
		delete(u.Object, "status")
		objs = append(objs, u)
	}
	entries, err := fs.ReadDir(p.Manifests, ".")
	if err != nil {
		return nil, err
	}
	names := make([]string, 0, len(entries))
	for _, e := range entries {
		if !e.IsDir() && strings.HasSuffix(e.Name(), ".yaml") && !isPublishedFile(e.Name()) {
			names = append(names, e.Name())
		}
	}
	sort.Strings(names)
	for _, name := range names {
		data, err := fs.ReadFile(p.Manifests, name)
		if err != nil {
			return nil, err
		}
		data = bytes.ReplaceAll(data, []byte(imagePlaceholder), []byte(o.image()))
		docs, err := manifest.Parse(data)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		for i := range docs {
			if len(docs[i].Object) > 0 {
				objs = append(objs, &docs[i])
			}
		}
	}

	docs := make([]unstructured.Unstructured, 0, len(objs))
	for _, u := range objs {
		labels := u.GetLabels()
		if labels == nil {
			labels = map[string]string{}
		}
		labels[clusterv1.ProviderNameLabel] = p.Label()
		u.SetLabels(labels)
		docs = append(docs, *u)
	}
	data, err := manifest.Marshal(docs)
	if err != nil {
		return nil, err
	}
	return append(data, '\n'), nil
}

// WriteRepository writes the artifacts of each provider's release into dir in the clusterctl local
// repository layout: dir/<label>/<version>/<file>. The core provider's folder holds the provider operator's
// manifests too (OperatorComponentsFile), as the core's GitHub release does, for `clusterctl init
// --operator`.
func WriteRepository(dir, version string, providers ...Provider) error {
	for _, p := range providers {
		files, err := p.Files(version)
		if err != nil {
			return err
		}
		if p.Type == clusterctlv1.CoreProviderType {
			if files[OperatorComponentsFile], err = OperatorComponents(version); err != nil {
				return err
			}
		}
		if err := writeFiles(filepath.Join(dir, p.Label(), version), files); err != nil {
			return err
		}
	}
	return nil
}

// writeFiles writes files, by name, into dir, creating dir when missing.
func writeFiles(dir string, files map[string][]byte) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for name, data := range files {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			return err
		}
	}
	return nil
}
