package source

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"

	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"oras.land/oras-go/v2/content"
	"oras.land/oras-go/v2/errdef"
	"oras.land/oras-go/v2/registry/remote"
	"oras.land/oras-go/v2/registry/remote/auth"

	clusterctlv1 "github.com/capstan-dev/capstan/api/clusterctl/v1alpha3"
	"github.com/capstan-dev/capstan/internal/clusterctl/repository"
	"github.com/capstan-dev/capstan/internal/httpclient"
)

// Variables of a provider's configSecret that authenticate to an OCI registry.
const (
	OCIUsername     = "OCI_USERNAME"
	OCIPassword     = "OCI_PASSWORD"
	OCIAccessToken  = "OCI_ACCESS_TOKEN"
	OCIRefreshToken = "OCI_REFRESH_TOKEN"
)

// OCI reads releases from an OCI artifact: each file is a layer whose org.opencontainers.image.title
// annotation is its name. One artifact (one tag) holds one version; it may hold several providers, each
// file named after the provider.
type OCI struct {
	ref       string
	repo      *remote.Repository
	tag       string
	name      string
	t         clusterctlv1.ProviderType
	plainHTTP bool
}

// OCIOptions configure NewOCI.
type OCIOptions struct {
	// Ref is fetchConfig.oci: [http://]registry/repository[:tag].
	Ref string
	// Name and Type identify the provider, whose files the artifact holds.
	Name string
	Type clusterctlv1.ProviderType
	// Variables looks up the OCI_* credentials.
	Variables func(string) (string, bool)
	// HTTPClient makes the requests; a client of DefaultHTTPLimits when nil.
	HTTPClient *http.Client
}

// NewOCI returns the source of an OCI artifact reference.
func NewOCI(o OCIOptions) (*OCI, error) {
	ref := o.Ref
	plain := false
	switch {
	case strings.HasPrefix(ref, "http://"):
		plain, ref = true, strings.TrimPrefix(ref, "http://")
	case strings.HasPrefix(ref, "https://"):
		ref = strings.TrimPrefix(ref, "https://")
	}
	name, tag := ref, ""
	if i := strings.LastIndex(ref, ":"); i > strings.LastIndex(ref, "/") {
		name, tag = ref[:i], ref[i+1:]
	}
	repo, err := remote.NewRepository(name)
	if err != nil {
		return nil, fmt.Errorf("fetchConfig.oci %q is not an OCI reference (registry/repository[:tag]): %w", o.Ref, err)
	}
	repo.PlainHTTP = plain
	hc := o.HTTPClient
	if hc == nil {
		hc = httpclient.New(DefaultHTTPLimits)
	}
	get := func(k string) string {
		if o.Variables == nil {
			return ""
		}
		v, _ := o.Variables(k)
		return v
	}
	cred := auth.Credential{Username: get(OCIUsername), Password: get(OCIPassword), AccessToken: get(OCIAccessToken), RefreshToken: get(OCIRefreshToken)}
	repo.Client = &auth.Client{Client: hc, Credential: auth.StaticCredential(repo.Reference.Registry, cred), Cache: auth.NewCache()}
	return &OCI{ref: o.Ref, repo: repo, tag: tag, name: o.Name, t: o.Type, plainHTTP: plain}, nil
}

func (o *OCI) String() string { return "the OCI artifact " + o.ref }

// Remote is true: registries are read over the network.
func (o *OCI) Remote() bool { return true }

// Versions lists the repository's tags; with a tag in the reference, that tag only.
func (o *OCI) Versions(ctx context.Context) ([]string, error) {
	if o.tag != "" {
		return []string{o.tag}, nil
	}
	var out []string
	err := o.repo.Tags(ctx, "", func(tags []string) error {
		out = append(out, tags...)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("listing the tags of %s: %w", o.ref, err)
	}
	return out, nil
}

// fileNames returns the names the metadata and components files of a version may have in an artifact,
// most specific first.
func (o *OCI) fileNames(version string) (metadata, components []string) {
	label := clusterctlv1.ManifestLabel(o.name, o.t)
	upstreamType := map[clusterctlv1.ProviderType]string{
		clusterctlv1.CoreProviderType: "core", clusterctlv1.BootstrapProviderType: "bootstrap",
		clusterctlv1.ControlPlaneProviderType: "control-plane", clusterctlv1.InfrastructureProviderType: "infrastructure",
		clusterctlv1.AddonProviderType: "addon", clusterctlv1.IPAMProviderType: "ipam", clusterctlv1.RuntimeExtensionProviderType: "runtimeextension",
	}[o.t] + "-" + o.name
	metadata = []string{label + "-" + version + "-metadata.yaml", upstreamType + "-" + version + "-metadata.yaml", repository.MetadataFile}
	components = []string{label + "-" + version + "-components.yaml", upstreamType + "-" + version + "-components.yaml", ComponentsFile(o.t), "components.yaml"}
	return metadata, components
}

// Release reads a version: the artifact tagged with the reference's tag, else with the version.
func (o *OCI) Release(ctx context.Context, version string) (*Release, error) {
	tag := o.tag
	if tag == "" {
		tag = version
	}
	desc, rc, err := o.repo.FetchReference(ctx, tag)
	if err != nil {
		if errors.Is(err, errdef.ErrNotFound) {
			return nil, &repository.NotFoundError{What: fmt.Sprintf("tag %s of %s", tag, o.ref)}
		}
		return nil, fmt.Errorf("reading %s:%s: %w", o.repo.Reference.Registry+"/"+o.repo.Reference.Repository, tag, err)
	}
	data, err := content.ReadAll(rc, desc)
	_ = rc.Close()
	if err != nil {
		return nil, fmt.Errorf("reading the manifest of %s:%s: %w", o.ref, tag, err)
	}
	var manifest ocispec.Manifest
	if err := json.Unmarshal(data, &manifest); err != nil {
		return nil, fmt.Errorf("%s:%s is not an OCI image manifest: %w", o.ref, tag, err)
	}
	files := map[string]ocispec.Descriptor{}
	var titles []string
	for _, l := range manifest.Layers {
		if title := l.Annotations[ocispec.AnnotationTitle]; title != "" {
			files[title] = l
			titles = append(titles, title)
		}
	}
	metaNames, compNames := o.fileNames(version)
	read := func(names []string) ([]byte, error) {
		for _, n := range names {
			if d, ok := files[n]; ok {
				b, err := content.FetchAll(ctx, o.repo, d)
				if err != nil {
					return nil, fmt.Errorf("reading %s of %s:%s: %w", n, o.ref, tag, err)
				}
				return b, nil
			}
		}
		return nil, &repository.NotFoundError{What: fmt.Sprintf("a layer titled %s in %s:%s (it has %s)", strings.Join(names, " or "), o.ref, tag, joinOrNone(titles))}
	}
	meta, err := read(metaNames)
	if err != nil {
		return nil, err
	}
	comps, err := read(compNames)
	if err != nil {
		return nil, err
	}
	return &Release{Version: version, Metadata: meta, Components: comps}, nil
}
