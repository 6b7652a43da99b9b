package client

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/go-logr/logr"
	"github.com/gobuffalo/flect"

	clusterctlv1 "github.com/capstan-dev/capstan/api/clusterctl/v1alpha3"
	"github.com/capstan-dev/capstan/internal/clusterctl/cluster"
)

// DeleteOptions say which providers to delete and how far.
type DeleteOptions struct {
	// Providers names the providers to delete; a version, when given, must be the installed one.
	Providers
	// All deletes every installed provider.
	All bool
	// IncludeCRDs deletes the providers' CRDs too; refused while objects of those CRDs exist.
	IncludeCRDs bool
	// IncludeNamespace deletes the providers' namespaces, and everything in them.
	IncludeNamespace bool
}

// Delete deletes providers from the management cluster: their components (found by the label
// cluster.x-k8s.io/provider), except their CRDs and namespace unless asked, then their inventory entry.
// Everything is checked first: that the providers are installed; with IncludeCRDs, that no object of
// their CRDs exists (deleting a CRD deletes its objects, with no controller left to clean up what they
// stand for); with IncludeNamespace, that no other provider lives in the namespaces.
func (c *Client) Delete(ctx context.Context, o DeleteOptions) error {
	mc, err := c.writable(ctx)
	if err != nil {
		return err
	}
	installed, err := mc.InstalledProviders(ctx)
	if err != nil {
		return err
	}
	selected, err := selectForDelete(installed, o)
	if err != nil {
		return err
	}
	if o.IncludeCRDs {
		if err := checkNoObjects(ctx, mc, selected); err != nil {
			return err
		}
	}
	if o.IncludeNamespace {
		if err := checkNamespacesUnshared(installed, selected); err != nil {
			return err
		}
	}
	log := logr.FromContextOrDiscard(ctx)
	for i, p := range selected {
		log.Info("Deleting", "Provider", p.ManifestLabel(), "Version", p.Version, "Namespace", p.Namespace)
		err := mc.DeleteComponents(ctx, p.ManifestLabel(), p.Namespace, cluster.DeleteComponentsOptions{IncludeCRDs: o.IncludeCRDs, IncludeNamespace: o.IncludeNamespace})
		if err == nil {
			err = mc.DeleteProvider(ctx, p)
		}
		if err != nil {
			return fmt.Errorf("%w; deleted: %s; not deleted yet: %s; run the same command again to finish", err, orNone(names(selected[:i])), names(selected[i:]))
		}
	}
	return nil
}

// selectForDelete returns the installed providers the options name, dependents first (reverse install
// order).
func selectForDelete(installed []clusterctlv1.Provider, o DeleteOptions) ([]clusterctlv1.Provider, error) {
	var selected []clusterctlv1.Provider
	if o.All {
		selected = slices.Clone(installed)
	} else {
		for _, group := range o.list() {
			for _, n := range group.names {
				name, version, err := ParseProviderName(n)
				if err != nil {
					return nil, err
				}
				p, ok := findInstalled(installed, name, group.t)
				if !ok {
					return nil, fmt.Errorf("%s is not installed in the management cluster; installed are: %s",
						clusterctlv1.ManifestLabel(name, group.t), orNone(names(installed)))
				}
				if version != "" && version != p.Version {
					return nil, fmt.Errorf("%s is installed at version %s, not %s: give the installed version, or none", p.ManifestLabel(), p.Version, version)
				}
				if !slices.ContainsFunc(selected, p.SameAs) {
					selected = append(selected, p)
				}
			}
		}
		if len(selected) == 0 {
			return nil, errors.New("no provider to delete: name at least one with --core, --bootstrap, --control-plane, --infrastructure, --ipam, --runtime-extension or --addon, or use --all")
		}
	}
	installOrder(selected)
	slices.Reverse(selected)
	return selected, nil
}

// checkNoObjects refuses to delete CRDs that still have objects.
func checkNoObjects(ctx context.Context, mc *cluster.Client, providers []clusterctlv1.Provider) error {
	var blocked []string
	var owners []string
	for _, p := range providers {
		counts, err := mc.CRDObjectCounts(ctx, p.ManifestLabel())
		if err != nil {
			return err
		}
		if len(counts) == 0 {
			continue
		}
		owners = append(owners, p.ManifestLabel())
		for _, c := range counts {
			kind := c.Kind
			if c.Count != 1 {
				kind = flect.Pluralize(kind)
			}
			blocked = append(blocked, fmt.Sprintf("%d %s", c.Count, kind))
		}
	}
	if len(blocked) == 0 {
		return nil
	}
	exist := "still exist"
	if len(blocked) == 1 && strings.HasPrefix(blocked[0], "1 ") {
		exist = "still exists"
	}
	return fmt.Errorf("cannot delete the CRDs of %s: %s %s; delete the Clusters first or run without --include-crd",
		joinAnd(owners), joinAnd(blocked), exist)
}

// checkNamespacesUnshared refuses to delete a namespace that hosts a provider not being deleted.
func checkNamespacesUnshared(installed, selected []clusterctlv1.Provider) error {
	for _, p := range installed {
		if slices.ContainsFunc(selected, p.SameAs) {
			continue
		}
		if slices.ContainsFunc(selected, func(s clusterctlv1.Provider) bool { return s.Namespace == p.Namespace }) {
			return fmt.Errorf("cannot delete namespace %s: it also hosts %s, which is not being deleted; delete it too, or run without --include-namespace",
				p.Namespace, p.ManifestLabel())
		}
	}
	return nil
}

// joinAnd joins "a", "a and b", "a, b and c".
func joinAnd(items []string) string {
	switch len(items) {
	case 0:
		return ""
	case 1:
		return items[0]
	}
	return strings.Join(items[:len(items)-1], ", ") + " and " + items[len(items)-1]
}
