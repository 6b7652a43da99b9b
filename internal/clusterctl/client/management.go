package client

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	clusterctlv1 "github.com/capstan-dev/capstan/api/clusterctl/v1alpha3"
	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
	"github.com/capstan-dev/capstan/internal/clusterctl/cluster"
	"github.com/capstan-dev/capstan/internal/clusterctl/config"
)

// SupportedContract is the contract of the management clusters this clusterctl installs and upgrades
// providers in.
var SupportedContract = clusterv1.GroupVersion.Version

// writable returns the management cluster, for operations that change it; it must answer.
func (c *Client) writable(ctx context.Context) (*cluster.Client, error) {
	if c.cluster == nil {
		return nil, errors.New("no management cluster: give its kubeconfig with --kubeconfig or KUBECONFIG")
	}
	mc, ok := c.cluster.(*cluster.Client)
	if !ok {
		return nil, fmt.Errorf("the management cluster client %T cannot change the management cluster", c.cluster)
	}
	if err := mc.CheckAvailable(ctx); err != nil {
		return nil, err
	}
	return mc, nil
}

// flagOf returns the command-line flag that names providers of a type.
func flagOf(t clusterctlv1.ProviderType) string {
	switch t {
	case clusterctlv1.CoreProviderType:
		return "--core"
	case clusterctlv1.BootstrapProviderType:
		return "--bootstrap"
	case clusterctlv1.ControlPlaneProviderType:
		return "--control-plane"
	case clusterctlv1.InfrastructureProviderType:
		return "--infrastructure"
	case clusterctlv1.IPAMProviderType:
		return "--ipam"
	case clusterctlv1.RuntimeExtensionProviderType:
		return "--runtime-extension"
	default:
		return "--addon"
	}
}

// findInstalled returns the installed instance of a provider, if any.
func findInstalled(installed []clusterctlv1.Provider, name string, t clusterctlv1.ProviderType) (clusterctlv1.Provider, bool) {
	i := slices.IndexFunc(installed, func(p clusterctlv1.Provider) bool { return p.ProviderName == name && p.GetProviderType() == t })
	if i < 0 {
		return clusterctlv1.Provider{}, false
	}
	return installed[i], true
}

// installOrder sorts providers in install order: by type (core, bootstrap, control plane,
// infrastructure, IPAM, runtime extension, add-on), then by name.
func installOrder(providers []clusterctlv1.Provider) {
	slices.SortStableFunc(providers, compareInstallOrder)
}

// compareInstallOrder orders two providers as installOrder does.
func compareInstallOrder(a, b clusterctlv1.Provider) int {
	if d := a.GetProviderType().Order() - b.GetProviderType().Order(); d != 0 {
		return d
	}
	return strings.Compare(a.ProviderName, b.ProviderName)
}

// names lists providers as "label version" for messages.
func names(providers []clusterctlv1.Provider) string {
	out := make([]string, 0, len(providers))
	for _, p := range providers {
		out = append(out, p.ManifestLabel()+" "+p.Version)
	}
	return strings.Join(out, ", ")
}

// clustersCRD is the CRD whose served versions say which API versions a core release serves.
const clustersCRD = "clusters.cluster.x-k8s.io"

// compatibleContracts returns the contracts the providers of a management cluster whose core provider
// follows contract may follow. Upstream's rule: a v1beta2 core accepts v1beta1 providers. capstan's rule
// besides: a v1beta1 core that serves the v1beta2 API (capstan's, whose controllers also drive the v1beta2
// provider contract) accepts v1beta2 providers, which read the core's objects as v1beta2; upstream's
// v1beta1 cores (v1.10 and older) do not serve v1beta2 and accept v1beta1 providers only. servesV1beta2
// tells whether the core serves v1beta2.
func compatibleContracts(contract string, servesV1beta2 bool) []string {
	switch {
	case contract == "v1beta2":
		return []string{"v1beta2", "v1beta1"}
	case contract == "v1beta1" && servesV1beta2:
		return []string{"v1beta1", "v1beta2"}
	}
	return []string{contract}
}

// coreServesV1beta2 reports whether a core provider serves the v1beta2 API: from its components when
// given (a core being installed or upgraded), else from the installed CRD of Clusters.
func coreServesV1beta2(ctx context.Context, mc ManagementCluster, components []unstructured.Unstructured) (bool, error) {
	if components != nil {
		for i := range components {
			if components[i].GetKind() == "CustomResourceDefinition" && components[i].GetName() == clustersCRD {
				crd := &apiextensionsv1.CustomResourceDefinition{}
				if err := runtime.DefaultUnstructuredConverter.FromUnstructured(components[i].Object, crd); err != nil {
					return false, fmt.Errorf("reading CRD %s: %w", clustersCRD, err)
				}
				return slices.Contains(cluster.ServedVersions(crd), "v1beta2"), nil
			}
		}
		return false, nil
	}
	crds, ok := mc.(interface {
		ProviderCRDs(ctx context.Context, label string) ([]apiextensionsv1.CustomResourceDefinition, error)
	})
	if !ok {
		return false, nil
	}
	list, err := crds.ProviderCRDs(ctx, config.CoreProviderName)
	if err != nil {
		return false, err
	}
	for i := range list {
		if list[i].Name == clustersCRD {
			return slices.Contains(cluster.ServedVersions(&list[i]), "v1beta2"), nil
		}
	}
	return false, nil
}
