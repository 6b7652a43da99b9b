package client

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	clusterctlv1 "github.com/capstan-dev/capstan/api/clusterctl/v1alpha3"
	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
	"github.com/capstan-dev/capstan/internal/clusterctl/cluster"
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
