package client

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterctlv1 "github.com/capstan-dev/capstan/api/clusterctl/v1alpha3"
	"github.com/capstan-dev/capstan/internal/clusterctl/cluster"
	"github.com/capstan-dev/capstan/internal/clusterctl/components"
	"github.com/capstan-dev/capstan/internal/clusterctl/config"
	"github.com/capstan-dev/capstan/internal/clusterctl/repository"
)

// InitResult says what Init did.
type InitResult struct {
	// Installed are the providers Init installed, in install order.
	Installed []clusterctlv1.Provider
	// AlreadyInstalled are the providers asked for that were installed already, left as they were.
	AlreadyInstalled []clusterctlv1.Provider
}

// installItem is a provider init installs.
type installItem struct {
	comps    *components.Components
	contract string
}

// initPlan is what init does, decided before any change.
type initPlan struct {
	install     []installItem
	skipped     []clusterctlv1.Provider
	certManager *certManagerStep
}

// Init turns a cluster into a management cluster, or adds providers to one. Everything is checked before
// anything changes: one instance per provider (a provider installed already at the version asked for is
// left alone, another version is an error that points at upgrade), every provider's contract equal to
// the core provider's, CRD names. Then the inventory CRD is installed, cert-manager when a provider needs
// it, and the providers in install order, each recorded in the inventory once its components are
// applied. Running Init again after an interruption finishes the job; running it again after success
// changes nothing.
func (c *Client) Init(ctx context.Context, o InitOptions) (*InitResult, error) {
	mc, err := c.writable(ctx)
	if err != nil {
		return nil, err
	}
	if o.Operator {
		return c.initWithOperator(ctx, mc, o)
	}
	log := logr.FromContextOrDiscard(ctx)
	installed, err := mc.InstalledProviders(ctx)
	if err != nil {
		return nil, err
	}
	log.Info("Fetching providers")
	plan, err := c.planInit(ctx, mc, installed, o)
	if err != nil {
		return nil, err
	}
	result := &InitResult{AlreadyInstalled: plan.skipped}
	for _, p := range plan.skipped {
		log.Info("Skipping installing as it is already installed", "provider", p.ManifestLabel(), "version", p.Version, "namespace", p.Namespace)
	}
	if len(plan.install) == 0 {
		log.Info("The management cluster already has every provider asked for: nothing changed")
		return result, nil
	}

	if err := mc.EnsureInventoryCRD(ctx); err != nil {
		return nil, err
	}
	if err := c.runCertManager(ctx, mc, plan.certManager); err != nil {
		return nil, err
	}
	for _, item := range plan.install {
		log.Info("Installing", "provider", item.comps.ManifestLabel(), "version", item.comps.Version(), "targetNamespace", item.comps.TargetNamespace())
		if err := mc.InstallProvider(ctx, item.comps); err != nil {
			return result, fmt.Errorf("%w; installed so far: %s; run the same command again to finish", err, orNone(names(result.Installed)))
		}
		result.Installed = append(result.Installed, item.comps.InventoryObject())
	}
	if o.WaitProviders {
		if err := c.waitProviders(ctx, mc, result.Installed, o.WaitProviderTimeout); err != nil {
			return result, err
		}
	}
	log.Info("\nYour management cluster has been initialized successfully!")
	log.Info("\nYou can now create your first workload cluster by running the following:")
	log.Info("\n  clusterctl generate cluster [name] --kubernetes-version [version] | kubectl apply -f -\n")
	return result, nil
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}

// planInit fetches the providers to install and checks everything that can make the installation fail
// or leave an inconsistent management cluster.
func (c *Client) planInit(ctx context.Context, mc *cluster.Client, installed []clusterctlv1.Provider, o InitOptions) (*initPlan, error) {
	firstRun := !hasCore(installed)
	requested := o.providers(firstRun)
	plan := &initPlan{}
	seen := map[string]bool{}
	coreContract := ""
	var coreObjs []unstructured.Unstructured
	for _, p := range requested {
		name, version, err := ParseProviderName(p.name)
		if err != nil {
			return nil, err
		}
		label := clusterctlv1.ManifestLabel(name, p.t)
		if seen[label] {
			return nil, fmt.Errorf("%s is given more than once: name each provider once", label)
		}
		seen[label] = true
		if existing, ok := findInstalled(installed, name, p.t); ok {
			if err := checkReinstall(existing, version, o.TargetNamespace); err != nil {
				return nil, err
			}
			plan.skipped = append(plan.skipped, existing)
			continue
		}
		r, err := c.resolve(ctx, p.t, p.name, false)
		if err != nil {
			return nil, err
		}
		comps, contract, err := c.releaseComponents(ctx, r, o.TargetNamespace, false)
		if err != nil {
			return nil, err
		}
		if p.t == clusterctlv1.CoreProviderType {
			coreContract = contract
			coreObjs = comps.Objects()
		}
		plan.install = append(plan.install, installItem{comps: comps, contract: contract})
	}
	if len(plan.install) == 0 {
		return plan, nil
	}

	core := "the core provider " + config.CoreProviderName
	if coreContract == "" {
		existing, ok := findInstalled(installed, config.CoreProviderName, clusterctlv1.CoreProviderType)
		if !ok {
			return nil, errors.New("the management cluster has no core provider and none is to be installed: init needs the core provider (remove \"--core -\")")
		}
		contract, err := c.installedContract(ctx, existing)
		if err != nil {
			return nil, err
		}
		coreContract = contract
		core = fmt.Sprintf("the installed core provider %s %s", existing.ManifestLabel(), existing.Version)
	}
	if !o.SkipValidation {
		if coreContract != SupportedContract {
			return nil, fmt.Errorf("%s follows the %s contract, but this clusterctl works with %s management clusters only: use a version of the core provider for %s, or a clusterctl for %s",
				core, coreContract, SupportedContract, SupportedContract, coreContract)
		}
		serves, err := coreServesV1beta2(ctx, mc, coreObjs)
		if err != nil {
			return nil, err
		}
		compatible := compatibleContracts(coreContract, serves)
		for _, item := range plan.install {
			if !slices.Contains(compatible, item.contract) {
				return nil, fmt.Errorf("%s %s follows the %s contract, but %s follows %s and works with providers of the %s contracts: choose a version of %s for one of them (see its metadata.yaml)",
					item.comps.ManifestLabel(), item.comps.Version(), item.contract, core, coreContract, strings.Join(compatible, " and "), item.comps.ManifestLabel())
			}
			if err := cluster.CheckCRDNames(item.comps.ManifestLabel(), item.comps.Objects()); err != nil {
				return nil, err
			}
		}
	}
	needsCertManager := false
	for _, item := range plan.install {
		if err := mc.CheckCRDOwnership(ctx, item.comps.ManifestLabel(), item.comps.Objects()); err != nil {
			return nil, err
		}
		if err := checkNamespaceUsable(ctx, mc, item.comps.TargetNamespace()); err != nil {
			return nil, err
		}
		needsCertManager = needsCertManager || item.comps.NeedsCertManager()
	}
	if needsCertManager {
		step, err := c.planCertManagerInstall(ctx, mc)
		if err != nil {
			return nil, err
		}
		plan.certManager = step
	}
	return plan, nil
}

// checkReinstall accepts asking for a provider that is installed already when nothing would change.
func checkReinstall(existing clusterctlv1.Provider, version, targetNamespace string) error {
	label := existing.ManifestLabel()
	if version != "" && version != existing.Version {
		return fmt.Errorf("%s %s is already installed in namespace %s; init does not change installed providers: run 'clusterctl upgrade apply %s %s:%s' to move to %s",
			label, existing.Version, existing.Namespace, flagOf(existing.GetProviderType()), existing.ProviderName, version, version)
	}
	if targetNamespace != "" && targetNamespace != existing.Namespace {
		return fmt.Errorf("%s is already installed in namespace %s, and clusterctl supports one instance of a provider: delete it first to install it in %s",
			label, existing.Namespace, targetNamespace)
	}
	return nil
}

// installedContract returns the contract an installed provider follows, from the metadata.yaml of its
// release.
func (c *Client) installedContract(ctx context.Context, p clusterctlv1.Provider) (string, error) {
	r, err := c.resolve(ctx, p.GetProviderType(), p.ProviderName+":"+p.Version, false)
	if err != nil {
		return "", fmt.Errorf("reading the contract of the installed %s %s: %w", p.ManifestLabel(), p.Version, err)
	}
	series, err := repository.ReleaseSeriesFor(r.metadata, p.ManifestLabel(), p.Version)
	if err != nil {
		return "", err
	}
	return series.Contract, nil
}

// checkNamespaceUsable returns an error when the namespace is being deleted.
func checkNamespaceUsable(ctx context.Context, mc *cluster.Client, namespace string) error {
	kube, err := mc.Kube()
	if err != nil {
		return err
	}
	ns := &corev1.Namespace{}
	if err := kube.Get(ctx, client.ObjectKey{Name: namespace}, ns); err != nil {
		if apierrors.IsNotFound(err) {
			return nil
		}
		return fmt.Errorf("reading namespace %s: %w", namespace, err)
	}
	if ns.DeletionTimestamp != nil {
		return fmt.Errorf("namespace %s is being deleted: wait until it is gone, or choose another namespace with --target-namespace", namespace)
	}
	return nil
}

// waitProviders waits, provider by provider, until the Deployments of the providers are available, up
// to timeout each.
func (c *Client) waitProviders(ctx context.Context, mc *cluster.Client, providers []clusterctlv1.Provider, timeout time.Duration) error {
	log := logr.FromContextOrDiscard(ctx)
	log.Info("Waiting for providers to be available...")
	for _, p := range providers {
		deployments, err := mc.ProviderDeployments(ctx, p.ManifestLabel(), p.Namespace)
		if err != nil {
			return err
		}
		keys := make([]client.ObjectKey, 0, len(deployments))
		for i := range deployments {
			keys = append(keys, client.ObjectKeyFromObject(&deployments[i]))
		}
		log.Info("Waiting for provider to be available", "provider", p.ManifestLabel(), "namespace", p.Namespace)
		if err := mc.WaitDeploymentsAvailable(ctx, keys, timeout); err != nil {
			return fmt.Errorf("provider %s is %w (--wait-provider-timeout sets how long to wait)", p.ManifestLabel(), err)
		}
	}
	return nil
}
