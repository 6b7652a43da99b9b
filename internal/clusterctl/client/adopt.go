package client

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/go-logr/logr"

	clusterctlv1 "github.com/capstan-dev/capstan/api/clusterctl/v1alpha3"
	"github.com/capstan-dev/capstan/internal/clusterctl/cluster"
	"github.com/capstan-dev/capstan/internal/clusterctl/config"
)

// adoptable are the providers Adopt moves from one implementation to another: Cluster API's core and
// its kubeadm bootstrap and control plane providers, which capstan and upstream Cluster API both ship.
var adoptable = []typedProvider{
	{clusterctlv1.CoreProviderType, config.CoreProviderName},
	{clusterctlv1.BootstrapProviderType, config.KubeadmProviderName},
	{clusterctlv1.ControlPlaneProviderType, config.KubeadmProviderName},
}

// adoptContracts are the contracts a release Adopt installs may follow: the two provider contracts
// capstan's core drives, and upstream's core accepts.
var adoptContracts = []string{"v1beta1", "v1beta2"}

// DefaultAdoptWaitTimeout bounds the wait for each adopted provider's Deployments.
const DefaultAdoptWaitTimeout = 5 * time.Minute

// AdoptOptions say which providers Adopt moves to a release of another implementation.
type AdoptOptions struct {
	// Providers name the core, bootstrap and control plane providers to move and their release
	// ("name:version", or "name" for the newest release of the repository the configuration gives). When
	// none is named, every installed one among cluster-api (core), kubeadm (bootstrap) and kubeadm (control
	// plane) moves to the newest release of its configured repository.
	Providers
	// WaitProviderTimeout bounds the wait for each provider's Deployments; DefaultAdoptWaitTimeout when
	// zero.
	WaitProviderTimeout time.Duration
}

// adoptItem is a provider Adopt moves, and whether it runs the new release already (a previous run
// stopped after installing it).
type adoptItem struct {
	upgradeItem
	installed bool
}

// Adopt replaces the installed core and kubeadm providers by the releases of another implementation,
// keeping every object: taking a management cluster that upstream Cluster API v1.10–v1.14 runs over with
// capstan's releases, or handing it back. Unlike ApplyUpgrade it neither refuses a lower version nor
// asks the providers to share a contract (capstan's and upstream's cores both drive v1beta1 and v1beta2
// providers); instead it checks that the new CRDs serve every version the objects are stored in.
// Then, as ApplyUpgrade, it marks the providers in the inventory, installs cert-manager if a new release
// needs it, scales the old Deployments down and replaces each provider's components (keeping CRDs,
// Namespaces and objects); last it waits for the new Deployments and writes the objects stored in
// another version again in the new storage version, through the new release's conversion webhook. A
// failure says where it stopped; running the same command again finishes the job.
func (c *Client) Adopt(ctx context.Context, o AdoptOptions) error {
	mc, err := c.writable(ctx)
	if err != nil {
		return err
	}
	items, err := c.planAdopt(ctx, mc, o)
	if err != nil {
		return err
	}
	upgrades := make([]upgradeItem, 0, len(items))
	var pending []upgradeItem
	needsCertManager := false
	for _, item := range items {
		upgrades = append(upgrades, item.upgradeItem)
		if !item.installed {
			pending = append(pending, item.upgradeItem)
		}
		needsCertManager = needsCertManager || item.next.NeedsCertManager()
	}
	if err := c.checkNotOperatorManaged(ctx, upgrades); err != nil {
		return err
	}
	certManager, err := c.planCertManagerUpgrade(ctx, mc, needsCertManager)
	if err != nil {
		return err
	}
	if err := c.replaceProviders(ctx, mc, pending, certManager, mc.ReplaceProvider); err != nil {
		return err
	}

	// The objects stored in the old release's storage version are written again through the new
	// release's conversion webhook, which answers once its Deployments are available.
	providers := make([]clusterctlv1.Provider, 0, len(items))
	for _, item := range items {
		p := item.next.InventoryObject()
		p.Namespace = item.current.Namespace
		providers = append(providers, p)
	}
	timeout := o.WaitProviderTimeout
	if timeout <= 0 {
		timeout = DefaultAdoptWaitTimeout
	}
	if err := c.waitProviders(ctx, mc, providers, timeout); err != nil {
		return fmt.Errorf("%w; the providers run their new releases, but the objects stored in their old storage versions are not migrated yet: run the same command again once they are available", err)
	}
	for _, item := range items {
		if err := mc.MigrateAfterApply(ctx, item.next.Objects()); err != nil {
			return fmt.Errorf("migrating the objects of %s to its storage versions: %w; the provider runs its new release: run the same command again to finish the migration",
				item.current.ManifestLabel(), err)
		}
	}
	logr.FromContextOrDiscard(ctx).Info("Adopted", "providers", strings.Join(itemLabels(items), ", "))
	return nil
}

func itemLabels(items []adoptItem) []string {
	out := make([]string, 0, len(items))
	for _, item := range items {
		out = append(out, item.current.ManifestLabel()+" "+item.next.Version())
	}
	return out
}

// planAdopt returns the providers to move, in install order, with the new releases' components, once
// every check has passed.
func (c *Client) planAdopt(ctx context.Context, mc *cluster.Client, o AdoptOptions) ([]adoptItem, error) {
	installed, err := mc.InstalledProviders(ctx)
	if err != nil {
		return nil, err
	}
	type target struct {
		p       clusterctlv1.Provider
		release string
	}
	var targets []target
	named := ApplyUpgradeOptions{Providers: o.Providers}.byType()
	for _, n := range named {
		name, _, err := ParseProviderName(n.name)
		if err != nil {
			return nil, err
		}
		label := clusterctlv1.ManifestLabel(name, n.t)
		if !slices.Contains(adoptable, typedProvider{n.t, name}) {
			return nil, fmt.Errorf("%s is not one of the providers adopt moves (the core provider cluster-api, the kubeadm bootstrap and control plane providers): upgrade it with 'clusterctl upgrade apply'", label)
		}
		p, ok := findInstalled(installed, name, n.t)
		if !ok {
			return nil, fmt.Errorf("%s is not installed in the management cluster: install it with 'clusterctl init %s %s'", label, flagOf(n.t), n.name)
		}
		if slices.ContainsFunc(targets, func(t target) bool { return t.p.Namespace == p.Namespace && t.p.Name == p.Name }) {
			return nil, fmt.Errorf("%s is given more than once: name each provider once", label)
		}
		targets = append(targets, target{p: p, release: n.name})
	}
	if len(named) == 0 {
		for _, a := range adoptable {
			if p, ok := findInstalled(installed, a.name, a.t); ok {
				targets = append(targets, target{p: p, release: a.name})
			}
		}
		if len(targets) == 0 {
			return nil, errors.New("the management cluster has none of the providers adopt moves (the core provider cluster-api, the kubeadm bootstrap and control plane providers): install them with 'clusterctl init'")
		}
	}

	items := make([]adoptItem, 0, len(targets))
	for _, t := range targets {
		p := t.p
		label := p.ManifestLabel()
		r, err := c.resolve(ctx, p.GetProviderType(), t.release, false)
		if err != nil {
			return nil, err
		}
		comps, contract, err := c.releaseComponents(ctx, r, p.Namespace, false)
		if err != nil {
			return nil, err
		}
		if !slices.Contains(adoptContracts, contract) {
			return nil, fmt.Errorf("%s %s follows the %s contract; adopt installs releases of the %s contracts only", label, r.version, contract, strings.Join(adoptContracts, " or "))
		}
		if err := cluster.CheckCRDNames(label, comps.Objects()); err != nil {
			return nil, err
		}
		if err := mc.CheckCRDOwnership(ctx, label, comps.Objects()); err != nil {
			return nil, err
		}
		if err := mc.CheckCRDStoredVersions(ctx, label, comps.Objects()); err != nil {
			return nil, err
		}
		running := r.version == p.Version && p.Annotations[cluster.UpgradeToAnnotation] == ""
		items = append(items, adoptItem{upgradeItem: upgradeItem{current: p, next: comps, contract: contract}, installed: running})
	}
	slices.SortStableFunc(items, func(a, b adoptItem) int { return compareInstallOrder(a.current, b.current) })
	return items, nil
}
