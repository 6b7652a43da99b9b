package client

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/blang/semver/v4"
	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/version"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterctlv1 "github.com/capstan-dev/capstan/api/clusterctl/v1alpha3"
	operatorv1 "github.com/capstan-dev/capstan/api/operator/v1alpha2"
	"github.com/capstan-dev/capstan/internal/clusterctl/cluster"
	"github.com/capstan-dev/capstan/internal/clusterctl/config"
	"github.com/capstan-dev/capstan/internal/clusterctl/repository"
)

// UpgradePlan is the newest release of every installed provider that follows one contract.
type UpgradePlan struct {
	// Contract is the contract of the plan, for example "v1beta1".
	Contract string
	// Providers are the installed providers, sorted by type, name and namespace.
	Providers []UpgradeItem
}

// UpgradeItem is an installed provider and the version an upgrade would take it to.
type UpgradeItem struct {
	clusterctlv1.Provider
	// NextVersion is the newest release that follows the plan's contract; empty when the provider is at it
	// already.
	NextVersion string
	// Operator names the provider operator's object that manages the provider (Kind namespace/name), whose
	// releases were read from where its fetchConfig says; empty when the operator does not manage it.
	Operator string
}

// UpgradeAvailable reports whether some provider of the plan has a newer release.
func (p UpgradePlan) UpgradeAvailable() bool {
	return slices.ContainsFunc(p.Providers, func(i UpgradeItem) bool { return i.NextVersion != "" })
}

// PlanUpgrade returns one plan per contract: the contract the core provider follows, and each newer
// contract the core's latest release maps a release series to. A plan for a newer contract is left out
// when some provider has no release for it.
func (c *Client) PlanUpgrade(ctx context.Context) ([]UpgradePlan, error) {
	if err := c.clusterAvailable(ctx); err != nil {
		return nil, err
	}
	installed, err := c.cluster.InstalledProviders(ctx)
	if err != nil {
		return nil, err
	}
	core, ok := findInstalled(installed, config.CoreProviderName, clusterctlv1.CoreProviderType)
	if !ok {
		return nil, errors.New("the management cluster has no core provider: run 'clusterctl init' first")
	}
	log := logr.FromContextOrDiscard(ctx)
	log.Info("Checking new release availability...")
	for _, p := range installed {
		if to := p.Annotations[cluster.UpgradeToAnnotation]; to != "" {
			log.Info("Warning: an upgrade did not finish: run 'clusterctl upgrade apply' again to finish it", "provider", p.ManifestLabel(), "version", p.Version, "upgradeTo", to)
		}
	}
	managed, kube := c.operatorManaged(ctx)
	infos := map[string]*upgradeInfo{}
	for _, p := range installed {
		var rel releaseLister
		if op, ok := managed[p.Namespace+"/"+p.ManifestLabel()]; ok {
			src, err := c.operatorSource(ctx, kube, op)
			if err != nil {
				return nil, err
			}
			rel = src
		}
		info, err := c.upgradeInfo(ctx, p, rel)
		if err != nil {
			return nil, err
		}
		if op, ok := managed[p.Namespace+"/"+p.ManifestLabel()]; ok {
			kind, _ := operatorv1.KindFor(op.ProviderType())
			info.operator = fmt.Sprintf("%s %s/%s", kind.Name, op.GetNamespace(), op.GetName())
		}
		infos[p.Namespace+"/"+p.Name] = info
	}
	coreInfo := infos[core.Namespace+"/"+core.Name]
	serves, err := coreServesV1beta2(ctx, c.cluster, nil)
	if err != nil {
		return nil, err
	}
	var plans []UpgradePlan
	for _, contract := range coreInfo.contractsFrom(coreInfo.currentContract) {
		plan := UpgradePlan{Contract: contract}
		compatible := compatibleContracts(contract, serves)
		complete := true
		for _, p := range installed {
			info := infos[p.Namespace+"/"+p.Name]
			next := info.latestNext(compatible)
			if p.GetProviderType() == clusterctlv1.CoreProviderType {
				// The core moves to the plan's contract itself, not to a compatible one.
				next = info.latestNext([]string{contract})
			}
			if next == "" && contract != coreInfo.currentContract && !slices.Contains(compatible, info.currentContract) {
				complete = false
			}
			plan.Providers = append(plan.Providers, UpgradeItem{Provider: p, NextVersion: next, Operator: info.operator})
		}
		if !complete {
			log.V(1).Info("Leaving out the plan of a contract some provider has no release for", "contract", contract)
			continue
		}
		sortUpgradeItems(plan.Providers)
		plans = append(plans, plan)
	}
	return plans, nil
}

// sortUpgradeItems sorts as upstream's plan table: by type name, then name, then namespace.
func sortUpgradeItems(items []UpgradeItem) {
	slices.SortStableFunc(items, func(a, b UpgradeItem) int {
		if d := strings.Compare(a.Type, b.Type); d != 0 {
			return d
		}
		if d := strings.Compare(a.Name, b.Name); d != 0 {
			return d
		}
		return strings.Compare(a.Namespace, b.Namespace)
	})
}

// releaseLister reads a provider's releases: its repository's, or, for a provider the operator manages,
// those of the source its operator object names.
type releaseLister interface {
	Versions(ctx context.Context) ([]string, error)
	Metadata(ctx context.Context, version string) (*clusterctlv1.Metadata, error)
}

// repositoryReleases reads releases from a repository.
type repositoryReleases struct{ repo repository.Repository }

func (r repositoryReleases) Versions(ctx context.Context) ([]string, error) {
	return r.repo.Versions(ctx)
}

func (r repositoryReleases) Metadata(ctx context.Context, version string) (*clusterctlv1.Metadata, error) {
	return repository.GetMetadata(ctx, r.repo, version)
}

// operatorManaged returns the provider operator's objects, keyed by namespace/label, and a client that
// reads what they refer to; none when the management cluster has no operator.
func (c *Client) operatorManaged(ctx context.Context) (map[string]operatorv1.GenericProvider, client.Client) {
	mc, ok := c.cluster.(*cluster.Client)
	if !ok {
		return nil, nil
	}
	kube, err := operatorKube(mc)
	if err != nil {
		return nil, nil
	}
	managed, err := operatorProviders(ctx, kube)
	if err != nil {
		logr.FromContextOrDiscard(ctx).V(1).Info("Reading the provider operator's objects failed; reading every provider's repository", "error", err.Error())
		return nil, nil
	}
	return managed, kube
}

// upgradeInfo is what a provider's repository says about its releases.
type upgradeInfo struct {
	// operator names the operator's object of the provider, if any.
	operator        string
	provider        clusterctlv1.Provider
	current         semver.Version
	currentContract string
	// metadata is the metadata.yaml of the newest release, which maps every release series.
	metadata *clusterctlv1.Metadata
	// next are the releases newer than the current one, newest first.
	next []string
}

func (c *Client) upgradeInfo(ctx context.Context, p clusterctlv1.Provider, repo releaseLister) (*upgradeInfo, error) {
	label := p.ManifestLabel()
	if repo == nil {
		cfgProvider, err := c.cfg.Provider(p.ProviderName, p.GetProviderType())
		if err != nil {
			return nil, fmt.Errorf("%s is installed, but %w", label, err)
		}
		r, err := c.repos.Repository(cfgProvider)
		if err != nil {
			return nil, err
		}
		repo = repositoryReleases{repo: r}
	}
	current, err := repository.ParseVersion(p.Version)
	if err != nil {
		return nil, fmt.Errorf("the inventory records %s at version %q: %w", label, p.Version, err)
	}
	tags, err := repo.Versions(ctx)
	if err != nil {
		return nil, fmt.Errorf("listing the releases of %s: %w", label, err)
	}
	type tagged struct {
		tag string
		v   semver.Version
	}
	var newer []tagged
	latest := tagged{tag: p.Version, v: current}
	for _, tag := range tags {
		v, err := repository.ParseVersion(tag)
		if err != nil || (len(v.Pre) > 0 && len(current.Pre) == 0) {
			continue
		}
		if v.GT(current) {
			newer = append(newer, tagged{tag, v})
		}
		if v.GT(latest.v) {
			latest = tagged{tag, v}
		}
	}
	slices.SortFunc(newer, func(a, b tagged) int { return b.v.Compare(a.v) })
	info := &upgradeInfo{provider: p, current: current}
	for _, n := range newer {
		info.next = append(info.next, n.tag)
	}
	if info.metadata, err = repo.Metadata(ctx, latest.tag); err != nil {
		return nil, err
	}
	series := info.metadata.GetReleaseSeriesForVersion(current.Major, current.Minor)
	if series == nil {
		// The newest release forgot an old series: ask the installed release.
		meta, err := repo.Metadata(ctx, p.Version)
		if err != nil {
			return nil, err
		}
		if series, err = repository.ReleaseSeriesFor(meta, label, p.Version); err != nil {
			return nil, err
		}
	}
	info.currentContract = series.Contract
	return info, nil
}

// latestNext returns the newest release newer than the current one that follows one of contracts; ""
// when there is none.
func (u *upgradeInfo) latestNext(contracts []string) string {
	for _, tag := range u.next {
		v, _ := repository.ParseVersion(tag)
		if s := u.metadata.GetReleaseSeriesForVersion(v.Major, v.Minor); s != nil && slices.Contains(contracts, s.Contract) {
			return tag
		}
	}
	return ""
}

// contractsFrom returns the contracts of the release series, from current on, oldest first.
func (u *upgradeInfo) contractsFrom(current string) []string {
	out := []string{current}
	for _, s := range u.metadata.ReleaseSeries {
		if !slices.Contains(out, s.Contract) && version.CompareKubeAwareVersionStrings(s.Contract, current) > 0 {
			out = append(out, s.Contract)
		}
	}
	slices.SortFunc(out, version.CompareKubeAwareVersionStrings)
	return out
}
