package config

import (
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"

	clusterctlv1 "github.com/capstan-dev/capstan/api/clusterctl/v1alpha3"
)

// CoreProviderName is the name of the core provider; it is the only name a CoreProvider may have.
const CoreProviderName = "cluster-api"

// KubeadmProviderName is the name of the kubeadm bootstrap and control plane providers.
const KubeadmProviderName = "kubeadm"

// capstanReleases is where capstan publishes the release assets of its own providers.
const capstanReleases = "https://github.com/capstan-dev/capstan/releases/latest/"

// Provider is the configuration of one provider: its name, type and the URL of its components file,
// which also identifies its repository.
type Provider struct {
	// Name is the provider's name, for example "aws".
	Name string
	// Type is the provider's type.
	Type clusterctlv1.ProviderType
	// URL is the URL (or local path) of the components file.
	URL string
}

// ManifestLabel returns the provider's label, for example "infrastructure-aws".
func (p Provider) ManifestLabel() string { return clusterctlv1.ManifestLabel(p.Name, p.Type) }

// SameAs reports whether p and o are the same provider (name and type).
func (p Provider) SameAs(o Provider) bool { return p.Name == o.Name && p.Type == o.Type }

// Less orders providers by type (install order), then by name.
func (p Provider) Less(o Provider) bool {
	if p.Type.Order() != o.Type.Order() {
		return p.Type.Order() < o.Type.Order()
	}
	return p.Name < o.Name
}

// BuiltinProviders returns clusterctl's predefined providers: upstream's list, where the core provider,
// the kubeadm bootstrap and control plane providers and the local infrastructure provider are capstan's.
func BuiltinProviders() []Provider {
	// released returns the providers of a type whose components file is the latest release's on GitHub.
	released := func(t clusterctlv1.ProviderType, file string) func(name, repo string) Provider {
		return func(name, repo string) Provider {
			return Provider{Name: name, Type: t, URL: "https://github.com/" + repo + "/releases/latest/" + file}
		}
	}
	infra := released(clusterctlv1.InfrastructureProviderType, "infrastructure-components.yaml")
	bootstrap := released(clusterctlv1.BootstrapProviderType, "bootstrap-components.yaml")
	controlPlane := released(clusterctlv1.ControlPlaneProviderType, "control-plane-components.yaml")
	ipam := released(clusterctlv1.IPAMProviderType, "ipam-components.yaml")
	addon := released(clusterctlv1.AddonProviderType, "addon-components.yaml")
	return []Provider{
		// capstan's own providers.
		{Name: CoreProviderName, Type: clusterctlv1.CoreProviderType, URL: capstanReleases + "core-components.yaml"},
		{Name: "kubeadm", Type: clusterctlv1.BootstrapProviderType, URL: capstanReleases + "bootstrap-components.yaml"},
		{Name: "kubeadm", Type: clusterctlv1.ControlPlaneProviderType, URL: capstanReleases + "control-plane-components.yaml"},
		{Name: "local", Type: clusterctlv1.InfrastructureProviderType, URL: capstanReleases + "infrastructure-components.yaml"},

		// Infrastructure providers.
		infra("linode-linode", "linode/cluster-api-provider-linode"),
		infra("aws", "kubernetes-sigs/cluster-api-provider-aws"),
		infra("azure", "kubernetes-sigs/cluster-api-provider-azure"),
		{Name: "docker", Type: clusterctlv1.InfrastructureProviderType,
			URL: "https://github.com/kubernetes-sigs/cluster-api/releases/latest/infrastructure-components-development.yaml"},
		infra("cloudscale-ch-cloudscale", "cloudscale-ch/cluster-api-provider-cloudscale"),
		infra("cloudstack", "kubernetes-sigs/cluster-api-provider-cloudstack"),
		infra("digitalocean", "kubernetes-sigs/cluster-api-provider-digitalocean"),
		infra("gcp", "kubernetes-sigs/cluster-api-provider-gcp"),
		infra("tinkerbell-tinkerbell", "tinkerbell/cluster-api-provider-tinkerbell"),
		infra("metal3", "metal3-io/cluster-api-provider-metal3"),
		infra("nested", "kubernetes-sigs/cluster-api-provider-nested"),
		infra("oci", "oracle/cluster-api-provider-oci"),
		infra("openstack", "kubernetes-sigs/cluster-api-provider-openstack"),
		infra("sidero", "siderolabs/sidero"),
		infra("vcd", "vmware/cluster-api-provider-cloud-director"),
		infra("vsphere", "kubernetes-sigs/cluster-api-provider-vsphere"),
		infra("maas", "spectrocloud/cluster-api-provider-maas"),
		infra("coxedge", "coxedge/cluster-api-provider-coxedge"),
		infra("byoh", "vmware-tanzu/cluster-api-provider-bringyourownhost"),
		infra("harvester-harvester", "rancher-sandbox/cluster-api-provider-harvester"),
		infra("hetzner", "syself/cluster-api-provider-hetzner"),
		infra("huawei", "HuaweiCloudDeveloper/cluster-api-provider-huawei"),
		infra("outscale", "outscale/cluster-api-provider-outscale"),
		infra("ibmcloud", "kubernetes-sigs/cluster-api-provider-ibmcloud"),
		infra("nutanix", "nutanix-cloud-native/cluster-api-provider-nutanix"),
		infra("kubekey", "kubesphere/kubekey"),
		infra("kubevirt", "kubernetes-sigs/cluster-api-provider-kubevirt"),
		infra("vcluster", "loft-sh/cluster-api-provider-vcluster"),
		infra("virtink", "smartxworks/cluster-api-provider-virtink"),
		infra("proxmox", "ionos-cloud/cluster-api-provider-proxmox"),
		infra("k0sproject-k0smotron", "k0sproject/k0smotron"),
		infra("ionoscloud-ionoscloud", "ionos-cloud/cluster-api-provider-ionoscloud"),
		infra("vultr-vultr", "vultr/cluster-api-provider-vultr"),
		infra("opennebula", "OpenNebula/cluster-api-provider-opennebula"),
		infra("scaleway", "scaleway/cluster-api-provider-scaleway"),
		infra("metal-stack", "metal-stack/cluster-api-provider-metal-stack"),
		infra("oxide", "oxidecomputer/cluster-api-provider-oxide"),
		infra("kubeswift-io", "kubeswift-io/cluster-api-provider-kubeswift"),
		infra("kairos-io-fleet", "kairos-io/cluster-api-provider-kairos-fleet"),

		// Bootstrap providers.
		bootstrap("kubekey-k3s", "kubesphere/kubekey"),
		bootstrap("talos", "siderolabs/cluster-api-bootstrap-provider-talos"),
		bootstrap("microk8s", "canonical/cluster-api-bootstrap-provider-microk8s"),
		bootstrap("rke2", "rancher/cluster-api-provider-rke2"),
		bootstrap("k0sproject-k0smotron", "k0sproject/k0smotron"),
		bootstrap("canonical-kubernetes", "canonical/cluster-api-k8s"),
		bootstrap("kairos-io", "kairos-io/cluster-api-provider-kairos"),

		// Control plane providers.
		controlPlane("kubekey-k3s", "kubesphere/kubekey"),
		controlPlane("talos", "siderolabs/cluster-api-control-plane-provider-talos"),
		controlPlane("microk8s", "canonical/cluster-api-control-plane-provider-microk8s"),
		controlPlane("nested", "kubernetes-sigs/cluster-api-provider-nested"),
		controlPlane("kamaji", "clastix/cluster-api-control-plane-provider-kamaji"),
		controlPlane("rke2", "rancher/cluster-api-provider-rke2"),
		controlPlane("k0sproject-k0smotron", "k0sproject/k0smotron"),
		controlPlane("canonical-kubernetes", "canonical/cluster-api-k8s"),
		controlPlane("hosted-control-plane", "teutonet/cluster-api-provider-hosted-control-plane"),
		controlPlane("kairos-io", "kairos-io/cluster-api-provider-kairos"),

		// IPAM providers.
		ipam("in-cluster", "kubernetes-sigs/cluster-api-ipam-provider-in-cluster"),
		ipam("metal3", "metal3-io/ip-address-manager"),
		ipam("nutanix", "nutanix-cloud-native/cluster-api-ipam-provider-nutanix"),

		// Runtime extension providers.
		{Name: "nutanix", Type: clusterctlv1.RuntimeExtensionProviderType,
			URL: "https://github.com/nutanix-cloud-native/cluster-api-runtime-extensions-nutanix/releases/latest/runtime-extensions-components.yaml"},

		// Add-on providers.
		addon("rancher-fleet", "rancher/cluster-api-addon-provider-fleet"),
		addon("helm", "kubernetes-sigs/cluster-api-addon-provider-helm"),
		addon("eitco-cdk8s", "eitco/cluster-api-addon-provider-cdk8s"),
	}
}

// Providers returns every configured provider, built-in and from the file, sorted by type and name.
func (c *Config) Providers() []Provider { return slices.Clone(c.providers) }

// Provider returns the configuration of the provider with the given name and type.
func (c *Config) Provider(name string, t clusterctlv1.ProviderType) (Provider, error) {
	for _, p := range c.providers {
		if p.Name == name && p.Type == t {
			return p, nil
		}
	}
	return Provider{}, &ProviderNotFoundError{Name: name, Type: t, Suggestion: c.suggest(name, t), Source: c.source}
}

// ProviderNotFoundError is returned for a provider that is neither built in nor in the config file.
type ProviderNotFoundError struct {
	Name       string
	Type       clusterctlv1.ProviderType
	Suggestion string
	Source     string
}

func (e *ProviderNotFoundError) Error() string {
	msg := fmt.Sprintf("unknown %s %q: run \"clusterctl config repositories\" to list the available providers, or add it to the providers of the clusterctl config file", e.Type, e.Name)
	if e.Source != "" {
		msg += " (" + e.Source + ")"
	}
	if e.Suggestion != "" {
		msg += fmt.Sprintf("; did you mean %q?", e.Suggestion)
	}
	return msg
}

// suggest returns the name of a provider of type t that is close to name, if any.
func (c *Config) suggest(name string, t clusterctlv1.ProviderType) string {
	best, bestDist := "", 3
	for _, p := range c.providers {
		if p.Type != t {
			continue
		}
		if d := distance(name, p.Name); d < bestDist {
			best, bestDist = p.Name, d
		}
	}
	return best
}

// distance is the Levenshtein distance between a and b.
func distance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

func (c *Config) parseProviders() ([]Provider, error) {
	providers := BuiltinProviders()
	raw, ok := c.file[providersKey]
	if ok && raw != nil {
		list, ok := raw.([]any)
		if !ok {
			return nil, errors.New("providers must be a list of {name, url, type}")
		}
		for i, item := range list {
			p, err := c.parseProvider(item)
			if err != nil {
				return nil, fmt.Errorf("providers[%d]: %w", i, err)
			}
			replaced := false
			for j := range providers {
				if providers[j].SameAs(p) {
					providers[j] = p
					replaced = true
				}
			}
			if !replaced {
				providers = append(providers, p)
			}
		}
	}
	slices.SortStableFunc(providers, func(a, b Provider) int {
		switch {
		case a.Less(b):
			return -1
		case b.Less(a):
			return 1
		}
		return 0
	})
	return providers, nil
}

func (c *Config) parseProvider(item any) (Provider, error) {
	m, ok := item.(map[string]any)
	if !ok {
		return Provider{}, errors.New("each provider must be a mapping with name, url and type")
	}
	var p Provider
	for k, v := range m {
		s, ok := v.(string)
		if !ok && v != nil {
			return Provider{}, fmt.Errorf("%s must be a string", k)
		}
		switch strings.ToLower(k) {
		case "name":
			p.Name = s
		case "url":
			p.URL = s
		case "type":
			p.Type = clusterctlv1.ProviderType(s)
		default:
			return Provider{}, fmt.Errorf("unknown field %q: a provider has name, url and type", k)
		}
	}
	url, err := c.expandProviderURL(p.URL)
	if err != nil {
		return Provider{}, fmt.Errorf("provider %q: %w", p.Name, err)
	}
	p.URL = url
	if err := ValidateProvider(p); err != nil {
		return Provider{}, err
	}
	return p, nil
}

// expandProviderURL replaces ${HOME} and ${CLUSTERCTL_REPOSITORY_PATH} in a provider URL.
func (c *Config) expandProviderURL(u string) (string, error) {
	u = strings.ReplaceAll(u, "${HOME}", c.home)
	if strings.Contains(u, "${"+RepositoryPathVariable+"}") {
		v, ok := c.Get(RepositoryPathVariable)
		if !ok {
			return "", fmt.Errorf("url %q uses ${%s}, which is not set: set it in the environment or in the clusterctl config file", u, RepositoryPathVariable)
		}
		u = strings.ReplaceAll(u, "${"+RepositoryPathVariable+"}", v)
	}
	return u, nil
}

// ValidateProvider checks a provider configuration: the name is a lower-case RFC 1123 label (lower-case
// alphanumerics and '-', starting and ending with an alphanumeric, at most 63 characters), only the core
// provider is named cluster-api, the URL parses and the type is known.
func ValidateProvider(p Provider) error {
	if p.Name == "" {
		return errors.New("the provider name is empty")
	}
	if errs := validation.IsDNS1123Label(p.Name); len(errs) > 0 {
		return fmt.Errorf("invalid provider name %q: %s", p.Name, strings.Join(errs, "; "))
	}
	if (p.Name == CoreProviderName) != (p.Type == clusterctlv1.CoreProviderType) {
		return fmt.Errorf("provider %q of type %q: the name %s must be used with the type %s, and only with it",
			p.Name, p.Type, CoreProviderName, clusterctlv1.CoreProviderType)
	}
	if p.URL == "" {
		return fmt.Errorf("provider %q: the url is empty", p.Name)
	}
	if _, err := url.Parse(p.URL); err != nil {
		return fmt.Errorf("provider %q: invalid url: %w", p.Name, err)
	}
	if t := p.Type; !slices.Contains(clusterctlv1.ProviderTypes(), t) {
		names := make([]string, 0, 7)
		for _, known := range clusterctlv1.ProviderTypes() {
			names = append(names, string(known))
		}
		return fmt.Errorf("provider %q: invalid type %q: use one of %s", p.Name, t, strings.Join(names, ", "))
	}
	return nil
}
