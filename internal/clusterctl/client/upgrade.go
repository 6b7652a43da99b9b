package client

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	clusterctlv1 "github.com/capstan-dev/capstan/api/clusterctl/v1alpha3"
	operatorv1 "github.com/capstan-dev/capstan/api/operator/v1alpha2"
	"github.com/capstan-dev/capstan/internal/clusterctl/cluster"
	"github.com/capstan-dev/capstan/internal/clusterctl/components"
	"github.com/capstan-dev/capstan/internal/clusterctl/config"
	"github.com/capstan-dev/capstan/internal/clusterctl/repository"
)

// ApplyUpgradeOptions say what to upgrade: every provider to the newest release of a contract, or the
// providers named with "name:version".
type ApplyUpgradeOptions struct {
	// Contract upgrades every provider to its newest release that follows the contract.
	Contract string

	// Providers names the providers to upgrade and the versions to upgrade them to.
	Providers

	// WaitProviders waits until the Deployments of the upgraded providers are available.
	WaitProviders bool
	// WaitProviderTimeout bounds the wait for each provider.
	WaitProviderTimeout time.Duration
}

func (o ApplyUpgradeOptions) byType() []typedProvider {
	var out []typedProvider
	for _, group := range o.list() {
		for _, n := range group.names {
			if n != "" {
				out = append(out, typedProvider{group.t, n})
			}
		}
	}
	return out
}

// upgradeItem is a provider an upgrade takes to a new release.
type upgradeItem struct {
	current  clusterctlv1.Provider
	next     *components.Components
	contract string
}

func (i upgradeItem) String() string {
	return fmt.Sprintf("%s (%s to %s)", i.current.ManifestLabel(), i.current.Version, i.next.Version())
}

// UpgradeError is an upgrade that stopped part way: which providers run their new release, which one
// was being upgraded, and which were not reached. Running the same upgrade again finishes it.
type UpgradeError struct {
	// Err is what went wrong.
	Err error
	// Done are the providers upgraded.
	Done []string
	// InProgress is the provider being upgraded when the upgrade stopped, its controllers scaled down.
	InProgress string
	// NotStarted are the providers left at their old release, running again.
	NotStarted []string
}

func (e *UpgradeError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "upgrading %s: %v", e.InProgress, e.Err)
	fmt.Fprintf(&b, "; upgraded: %s", orNone(strings.Join(e.Done, ", ")))
	fmt.Fprintf(&b, "; stopped part way: %s, whose controllers are scaled down", e.InProgress)
	fmt.Fprintf(&b, "; not started: %s", orNone(strings.Join(e.NotStarted, ", ")))
	b.WriteString("; run the same command again to finish the upgrade")
	return b.String()
}

func (e *UpgradeError) Unwrap() error { return e.Err }

// ApplyUpgrade upgrades providers. Everything is checked before anything changes: the releases exist,
// the providers are installed once, every provider ends up on the same contract as the core, no
// release skips more minor versions than the provider supports, the new CRDs can take over the stored
// objects. Then every provider to upgrade is marked in the inventory (cluster.UpgradeToAnnotation),
// cert-manager is upgraded if clusterctl manages it, the providers' Deployments are scaled down, and
// each provider in install order gets its new components (see cluster.Client.UpgradeProvider). A failure
// says which provider is in which state; running the command again finishes the job.
func (c *Client) ApplyUpgrade(ctx context.Context, o ApplyUpgradeOptions) error {
	mc, err := c.writable(ctx)
	if err != nil {
		return err
	}
	items, err := c.planApply(ctx, mc, o)
	if err != nil {
		return err
	}
	if err := c.checkNotOperatorManaged(ctx, items); err != nil {
		return err
	}
	log := logr.FromContextOrDiscard(ctx)
	needsCertManager := false
	for _, item := range items {
		needsCertManager = needsCertManager || item.next.NeedsCertManager()
	}
	certManager, err := c.planCertManagerUpgrade(ctx, mc, needsCertManager)
	if err != nil {
		return err
	}
	if len(items) == 0 {
		if err := c.runCertManager(ctx, mc, certManager); err != nil {
			return err
		}
		log.Info("Every provider is at the release asked for: nothing to upgrade")
		return nil
	}

	log.Info("Performing upgrade...")
	if err := c.replaceProviders(ctx, mc, items, certManager, mc.UpgradeProvider); err != nil {
		return err
	}
	if o.WaitProviders {
		upgraded := make([]clusterctlv1.Provider, 0, len(items))
		for _, item := range items {
			p := item.next.InventoryObject()
			p.Namespace = item.current.Namespace
			upgraded = append(upgraded, p)
		}
		if err := c.waitProviders(ctx, mc, upgraded, o.WaitProviderTimeout); err != nil {
			return err
		}
	}
	return nil
}

// replaceProviders replaces the components of the providers of items, in their order, with their new
// releases' (replace: cluster.Client.UpgradeProvider or ReplaceProvider), as an upgrade does: every
// provider is marked in the inventory (cluster.UpgradeToAnnotation), the cert-manager step runs, every
// provider's Deployments are scaled down, then each is replaced. A failure restores the providers not
// reached and says which provider is in which state (UpgradeError).
func (c *Client) replaceProviders(ctx context.Context, mc *cluster.Client, items []upgradeItem, certManager *certManagerStep,
	replace func(context.Context, clusterctlv1.Provider, *components.Components) error) error {
	log := logr.FromContextOrDiscard(ctx)
	for _, item := range items {
		if err := mc.SetUpgradeTo(ctx, item.current, item.next.Version()); err != nil {
			return err
		}
	}
	if err := c.runCertManager(ctx, mc, certManager); err != nil {
		return c.abortUpgrade(ctx, mc, items, err)
	}
	for _, item := range items {
		p := item.current
		log.Info("Scaling down", "Provider", p.ManifestLabel(), "Version", p.Version, "Namespace", p.Namespace)
		if err := mc.ScaleDownDeployments(ctx, p.ManifestLabel(), p.Namespace); err != nil {
			return c.abortUpgrade(ctx, mc, items, err)
		}
	}
	var done []string
	for i, item := range items {
		p := item.current
		log.Info("Deleting", "Provider", p.ManifestLabel(), "Version", p.Version, "Namespace", p.Namespace)
		log.Info("Installing", "Provider", p.ManifestLabel(), "Version", item.next.Version(), "TargetNamespace", p.Namespace)
		if err := replace(ctx, p, item.next); err != nil {
			upgradeErr := &UpgradeError{Err: err, Done: done, InProgress: item.String()}
			for _, rest := range items[i+1:] {
				upgradeErr.NotStarted = append(upgradeErr.NotStarted, rest.String())
			}
			return c.abortUpgrade(ctx, mc, items[i+1:], upgradeErr)
		}
		done = append(done, item.current.ManifestLabel()+" "+item.next.Version())
	}
	return nil
}

// checkNotOperatorManaged refuses upgrading providers that the provider operator manages: it would put
// them back at the version of their objects. Their objects say how to upgrade them.
func (c *Client) checkNotOperatorManaged(ctx context.Context, items []upgradeItem) error {
	managed, _ := c.operatorManaged(ctx)
	var refused []string
	for _, item := range items {
		p := item.current
		if op, ok := managed[p.Namespace+"/"+p.ManifestLabel()]; ok {
			kind, _ := operatorv1.KindFor(op.ProviderType())
			refused = append(refused, fmt.Sprintf("%s %s/%s: spec.version: %s", kind.Name, op.GetNamespace(), op.GetName(), item.next.Version()))
		}
	}
	if len(refused) == 0 {
		return nil
	}
	return fmt.Errorf("the provider operator manages providers this upgrade would change, and would put them back: upgrade them by setting spec.version of their objects (kubectl edit), the operator does the rest: %s",
		strings.Join(refused, "; "))
}

// abortUpgrade gives the providers an upgrade did not reach their controllers back and clears their
// mark in the inventory, so that they run their old release as before.
func (c *Client) abortUpgrade(ctx context.Context, mc *cluster.Client, notStarted []upgradeItem, err error) error {
	var errs []error
	for _, item := range notStarted {
		p := item.current
		if rerr := mc.RestoreDeployments(ctx, p.ManifestLabel(), p.Namespace); rerr != nil {
			errs = append(errs, rerr)
		}
		if rerr := mc.SetUpgradeTo(ctx, p, ""); rerr != nil {
			errs = append(errs, rerr)
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("%w; restoring the providers not upgraded failed too: %w", err, errors.Join(errs...))
	}
	return err
}

// planApply returns the providers to upgrade, in install order, with their new components, once every
// check has passed.
func (c *Client) planApply(ctx context.Context, mc *cluster.Client, o ApplyUpgradeOptions) ([]upgradeItem, error) {
	named := o.byType()
	if o.Contract != "" && len(named) > 0 {
		return nil, errors.New("the --contract flag can't be used in combination with --core, --bootstrap, --control-plane, --infrastructure, --ipam, --runtime-extension, --addon")
	}
	if o.Contract == "" && len(named) == 0 {
		return nil, errors.New("either the --contract flag or at least one of the following flags has to be set: --core, --bootstrap, --control-plane, --infrastructure, --ipam, --runtime-extension, --addon")
	}
	installed, err := mc.InstalledProviders(ctx)
	if err != nil {
		return nil, err
	}
	core, ok := findInstalled(installed, config.CoreProviderName, clusterctlv1.CoreProviderType)
	if !ok {
		return nil, errors.New("the management cluster has no core provider: run 'clusterctl init' first")
	}

	// targets maps installed providers (namespace/name) to the version to upgrade to.
	targets := map[string]string{}
	key := func(p clusterctlv1.Provider) string { return p.Namespace + "/" + p.Name }
	var contract string
	if o.Contract != "" {
		if o.Contract != SupportedContract {
			return nil, fmt.Errorf("this clusterctl upgrades management clusters to the %s contract only, not %s: use a clusterctl for %s", SupportedContract, o.Contract, o.Contract)
		}
		plans, err := c.PlanUpgrade(ctx)
		if err != nil {
			return nil, err
		}
		var plan *UpgradePlan
		for i := range plans {
			if plans[i].Contract == o.Contract {
				plan = &plans[i]
			}
		}
		if plan == nil {
			return nil, fmt.Errorf("there is no upgrade to the %s contract: some provider has no release for it (see 'clusterctl upgrade plan')", o.Contract)
		}
		for _, item := range plan.Providers {
			switch {
			case item.NextVersion != "":
				targets[key(item.Provider)] = item.NextVersion
			case item.Annotations[cluster.UpgradeToAnnotation] != "":
				// An upgrade stopped part way and the release it was going to is gone: install the
				// current release again, so that the provider runs.
				targets[key(item.Provider)] = item.Version
			}
		}
		contract = o.Contract
	} else {
		for _, n := range named {
			name, version, err := ParseProviderName(n.name)
			if err != nil {
				return nil, err
			}
			if version == "" {
				return nil, fmt.Errorf("no version in %s %q: use name:version, for example %s %s:v1.2.3", flagOf(n.t), n.name, flagOf(n.t), name)
			}
			p, ok := findInstalled(installed, name, n.t)
			if !ok {
				return nil, fmt.Errorf("%s is not installed in the management cluster: install it with 'clusterctl init %s %s'",
					clusterctlv1.ManifestLabel(name, n.t), flagOf(n.t), n.name)
			}
			if _, dup := targets[key(p)]; dup {
				return nil, fmt.Errorf("%s is given more than once: name each provider once", p.ManifestLabel())
			}
			if version == p.Version && p.Annotations[cluster.UpgradeToAnnotation] == "" {
				logr.FromContextOrDiscard(ctx).Info("Provider is at the version asked for already", "provider", p.ManifestLabel(), "version", version)
				continue
			}
			targets[key(p)] = version
		}
	}

	var items []upgradeItem
	var coreObjs []unstructured.Unstructured
	for _, p := range installed {
		version, ok := targets[key(p)]
		if !ok {
			continue
		}
		if semverLess(version, p.Version) {
			return nil, fmt.Errorf("%s is installed at %s, newer than %s: clusterctl does not downgrade providers", p.ManifestLabel(), p.Version, version)
		}
		if err := checkSkippedMinors(p, version); err != nil {
			return nil, err
		}
		r, err := c.resolve(ctx, p.GetProviderType(), p.ProviderName+":"+version, false)
		if err != nil {
			return nil, err
		}
		comps, itemContract, err := c.releaseComponents(ctx, r, p.Namespace, false)
		if err != nil {
			return nil, err
		}
		items = append(items, upgradeItem{current: p, next: comps, contract: itemContract})
		if p.GetProviderType() == clusterctlv1.CoreProviderType {
			coreObjs = comps.Objects()
		}
	}
	serves, err := coreServesV1beta2(ctx, mc, coreObjs)
	if err != nil {
		return nil, err
	}

	if contract == "" {
		// Named providers: everything stays on the contract of the core, as upgraded.
		contract, err = c.installedContract(ctx, core)
		if err != nil {
			return nil, err
		}
		for _, item := range items {
			if item.current.GetProviderType() == clusterctlv1.CoreProviderType {
				contract = item.contract
			}
		}
		if contract != SupportedContract {
			return nil, fmt.Errorf("the core provider would follow the %s contract, but this clusterctl works with %s management clusters only", contract, SupportedContract)
		}
	}
	compatible := compatibleContracts(contract, serves)
	if o.Contract == "" {
		for _, p := range installed {
			if _, upgrading := targets[key(p)]; upgrading {
				continue
			}
			current, err := c.installedContract(ctx, p)
			if err != nil {
				return nil, err
			}
			if !slices.Contains(compatible, current) {
				return nil, fmt.Errorf("%s %s follows the %s contract, but the core provider would follow %s and work with providers of the %s contracts: upgrade it too (or use --contract %s)",
					p.ManifestLabel(), p.Version, current, contract, strings.Join(compatible, " and "), contract)
			}
		}
	}
	for _, item := range items {
		label := item.current.ManifestLabel()
		if !slices.Contains(compatible, item.contract) {
			return nil, fmt.Errorf("%s %s follows the %s contract, but the management cluster's core provider follows %s and works with providers of the %s contracts: choose a release of %s for one of them (see 'clusterctl upgrade plan')",
				label, item.next.Version(), item.contract, contract, strings.Join(compatible, " and "), label)
		}
		if err := cluster.CheckCRDNames(label, item.next.Objects()); err != nil {
			return nil, err
		}
		if err := mc.CheckCRDOwnership(ctx, label, item.next.Objects()); err != nil {
			return nil, err
		}
		if err := mc.CheckCRDUpgrades(ctx, label, item.next.Objects()); err != nil {
			return nil, err
		}
	}
	sortItems(items)
	return items, nil
}

// sortItems sorts upgrade items in install order.
func sortItems(items []upgradeItem) {
	providers := make([]clusterctlv1.Provider, len(items))
	for i := range items {
		providers[i] = items[i].current
	}
	installOrder(providers)
	sorted := make([]upgradeItem, 0, len(items))
	for _, p := range providers {
		for _, item := range items {
			if item.current.Namespace == p.Namespace && item.current.Name == p.Name {
				sorted = append(sorted, item)
			}
		}
	}
	copy(items, sorted)
}

// maxMinorSkip is how many minor releases the core and kubeadm providers may skip in one upgrade, from
// v1.10 on (upstream's rule; capstan's own releases are v0.x and not concerned).
const maxMinorSkip = 3

// checkSkippedMinors refuses upgrades of upstream's core and kubeadm providers that skip more than
// maxMinorSkip minor releases.
func checkSkippedMinors(p clusterctlv1.Provider, to string) error {
	guarded := p.ProviderName == config.CoreProviderName && p.GetProviderType() == clusterctlv1.CoreProviderType ||
		p.ProviderName == "kubeadm" && (p.GetProviderType() == clusterctlv1.BootstrapProviderType || p.GetProviderType() == clusterctlv1.ControlPlaneProviderType)
	if !guarded {
		return nil
	}
	from, err := repository.ParseVersion(p.Version)
	if err != nil {
		return nil //nolint:nilerr // An unparsable installed version is reported elsewhere.
	}
	target, err := repository.ParseVersion(to)
	if err != nil {
		return err
	}
	if from.Major != 1 || from.Minor < 10 || target.Major != from.Major || target.Minor <= from.Minor+maxMinorSkip {
		return nil
	}
	return fmt.Errorf("upgrading %s from %s to %s skips more than %d minor releases, which it does not support: upgrade to v%d.%d first",
		p.ManifestLabel(), p.Version, to, maxMinorSkip, from.Major, from.Minor+maxMinorSkip)
}
