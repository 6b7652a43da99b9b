package provider

import (
	"context"
	"fmt"
	"sort"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
	operatorv1 "github.com/capstan-dev/capstan/api/operator/v1alpha2"
	"github.com/capstan-dev/capstan/internal/reconciler"
)

// checkContract applies the proposal's golden rule: every provider follows the core's contract.
//   - A provider other than the core installs only versions of the core's contract, unless it is paused:
//     a paused provider may already move to the contract the core is being upgraded to.
//   - Unpausing a provider (the core included) is refused while any installed provider, this one with
//     the version it is to run, follows another contract than the core: it stays paused.
//   - The core moves to a new contract only once every provider still on the old one is paused.
//
// It decides whether the provider is to be paused (s.pause).
func (r *Reconciler) checkContract(ctx context.Context, s *scope) (ctrl.Result, error) {
	p := s.provider
	spec := p.GetProviderSpec()
	s.pause = spec.Paused
	if !isSupportedContract(s.contract) {
		s.contractErr = bad(operatorv1.CAPIVersionIncompatibilityReason, fmt.Sprintf(
			"%s %s follows the %s contract; the operator installs providers of the %s contracts: choose another version",
			s.label, s.release.Version, s.contract, strings.Join(supportedContracts, " and ")))
		return reconciler.Stop(nil)
	}
	core := s.coreContract
	if coreType(p) {
		core = s.contract
	}
	if !spec.Paused {
		paused, err := r.pausedDeployments(ctx, s)
		if err != nil {
			return reconciler.Stop(err)
		}
		if len(paused) > 0 {
			others, err := r.otherContracts(ctx, s, core)
			if err != nil {
				return reconciler.Stop(err)
			}
			if len(others) > 0 {
				s.pause = true
				// The others' upgrades are not watched: look again.
				s.result.RequeueAfter = waitInterval
				s.unpause = bad(operatorv1.UnpauseRefusedReason, fmt.Sprintf(
					"Unpausing is refused while installed providers follow another contract than the core's %s: %s; set their spec.version to releases for %s first",
					core, strings.Join(others, ", "), core))
			}
		}
		if !s.pause && !coreType(p) && s.contract != core {
			s.contractErr = bad(operatorv1.CAPIVersionIncompatibilityReason, fmt.Sprintf(
				"%s %s follows the %s contract, but the core provider follows %s: choose a version for %s, or pause the provider (spec.paused: true) while the core changes contract",
				s.label, s.release.Version, s.contract, core, core))
			return reconciler.Stop(nil)
		}
	}
	if coreType(p) {
		return r.checkCoreContract(ctx, s)
	}
	return ctrl.Result{}, nil
}

// otherContracts names the installed providers that follow another contract than core: this provider
// with the release it is to run, the others with the release they run.
func (r *Reconciler) otherContracts(ctx context.Context, s *scope, core string) ([]string, error) {
	var out []string
	for _, k := range operatorv1.Kinds() {
		list := k.NewList()
		if err := r.Client.List(ctx, list); err != nil {
			return nil, fmt.Errorf("listing %s objects: %w", k.Name, err)
		}
		for _, o := range list.GetItems() {
			c, v := o.GetProviderStatus().Contract, installedVersion(o)
			if o.GetUID() == s.provider.GetUID() {
				c, v = &s.contract, s.release.Version
			}
			if c == nil || v == "" || *c == core || !o.GetDeletionTimestamp().IsZero() {
				continue
			}
			out = append(out, fmt.Sprintf("%s %s/%s (%s %s)", k.Name, o.GetNamespace(), o.GetName(), v, *c))
		}
	}
	sort.Strings(out)
	return out, nil
}

// checkCoreContract holds a core upgrade to a new contract until every other provider still on the old
// contract is paused.
func (r *Reconciler) checkCoreContract(ctx context.Context, s *scope) (ctrl.Result, error) {
	st := s.provider.GetProviderStatus()
	if st.Contract == nil || *st.Contract == s.contract || installedVersion(s.provider) == "" {
		return ctrl.Result{}, nil
	}
	var running []string
	for _, k := range operatorv1.Kinds() {
		if k.Type == s.provider.ProviderType() {
			continue
		}
		list := k.NewList()
		if err := r.Client.List(ctx, list); err != nil {
			return reconciler.Stop(fmt.Errorf("listing %s objects: %w", k.Name, err))
		}
		for _, o := range list.GetItems() {
			c := o.GetProviderStatus().Contract
			if c == nil || *c == s.contract {
				continue
			}
			if !o.GetProviderSpec().Paused || !isTrue(o, operatorv1.PausedCondition) {
				running = append(running, fmt.Sprintf("%s %s/%s", k.Name, o.GetNamespace(), o.GetName()))
			}
		}
	}
	if len(running) == 0 {
		return ctrl.Result{}, nil
	}
	sort.Strings(running)
	s.upgradeWait = bad(operatorv1.WaitingForProvidersPausedReason, fmt.Sprintf(
		"Waiting to upgrade from the %s to the %s contract until the providers on the %s contract are paused: %s; set spec.paused: true on them",
		*st.Contract, s.contract, *st.Contract, strings.Join(running, ", ")))
	s.result.RequeueAfter = waitInterval
	return reconciler.Stop(nil)
}

// scaledDown reports whether the provider's Deployments are paused by the operator (scaled to zero with
// the original replicas recorded).
func (r *Reconciler) scaledDown(ctx context.Context, s *scope) bool {
	ds, err := r.deployments(ctx, s)
	if err != nil || len(ds) == 0 {
		return false
	}
	for _, d := range ds {
		if _, ok := d.Annotations[operatorv1.OriginalReplicasAnnotation]; !ok || d.Spec.Replicas == nil || *d.Spec.Replicas != 0 {
			return false
		}
	}
	return true
}

func (r *Reconciler) deployments(ctx context.Context, s *scope) ([]appsv1.Deployment, error) {
	list := &appsv1.DeploymentList{}
	if err := r.Client.List(ctx, list, client.InNamespace(s.provider.GetNamespace()), client.MatchingLabels{clusterv1.ProviderNameLabel: s.label}); err != nil {
		return nil, fmt.Errorf("listing the Deployments of %s: %w", s.label, err)
	}
	sort.Slice(list.Items, func(i, j int) bool { return list.Items[i].Name < list.Items[j].Name })
	return list.Items, nil
}

func installedVersion(p operatorv1.GenericProvider) string {
	if v := p.GetProviderStatus().InstalledVersion; v != nil {
		return *v
	}
	return ""
}

// observeDeployments records whether the provider is paused and Ready, from its Deployments.
func (r *Reconciler) observeDeployments(ctx context.Context, s *scope) error {
	if installedVersion(s.provider) == "" || !s.provider.GetDeletionTimestamp().IsZero() {
		return nil
	}
	ds, err := r.deployments(ctx, s)
	if err != nil {
		return err
	}
	s.paused = s.provider.GetProviderSpec().Paused && r.scaledDown(ctx, s)
	if s.unpause != nil && r.scaledDown(ctx, s) {
		s.paused = true
	}
	switch {
	case len(ds) == 0:
		s.deployments = bad(operatorv1.NoDeploymentAvailableConditionReason, "The provider has no Deployment")
	case s.paused:
		s.deployments = bad(operatorv1.ProviderPausedReason, "The provider is paused")
	default:
		var waiting []string
		for i := range ds {
			if ok, why := available(&ds[i]); !ok {
				waiting = append(waiting, fmt.Sprintf("Deployment %s is not available (%s)", ds[i].Name, why))
			}
		}
		if len(waiting) > 0 {
			s.deployments = bad(operatorv1.DeploymentUnavailableReason, strings.Join(waiting, "; "))
		} else {
			s.deployments = good(operatorv1.DeploymentAvailableReason, "")
		}
	}
	return nil
}

func available(d *appsv1.Deployment) (bool, string) {
	if d.Status.ObservedGeneration < d.Generation {
		return false, "its latest change is not rolled out yet"
	}
	for _, c := range d.Status.Conditions {
		if c.Type == appsv1.DeploymentAvailable {
			if c.Status == "True" {
				return true, ""
			}
			return false, strings.TrimSpace(c.Reason + ": " + c.Message)
		}
	}
	return false, "no Available condition yet"
}
