package provider

import (
	"context"
	"errors"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterctlv1 "github.com/capstan-dev/capstan/api/clusterctl/v1alpha3"
	operatorv1 "github.com/capstan-dev/capstan/api/operator/v1alpha2"
	"github.com/capstan-dev/capstan/internal/clusterctl/config"
	"github.com/capstan-dev/capstan/internal/clusterctl/repository"
	"github.com/capstan-dev/capstan/internal/operator/source"
	specvalidation "github.com/capstan-dev/capstan/internal/operator/validation"
	"github.com/capstan-dev/capstan/internal/reconciler"
)

// preflight checks what can be checked before fetching anything: the name, the version's format, the
// fields capstan refuses, the fetch configuration, a single provider of each kind and name, the
// configSecret, and (for the other providers) a Ready core provider. Each failure is a
// PreflightCheckPassed=False condition that says what to do.
func (r *Reconciler) preflight(ctx context.Context, s *scope) (ctrl.Result, error) {
	p := s.provider
	spec := p.GetProviderSpec()
	fail := func(reason, format string, args ...any) (ctrl.Result, error) {
		s.preflight = bad(reason, fmt.Sprintf(format, args...))
		return reconciler.Stop(nil)
	}
	if p.ProviderType() == clusterctlv1.CoreProviderType && p.GetName() != config.CoreProviderName {
		return fail(operatorv1.IncorrectCoreProviderNameReason, "A CoreProvider must be named %s, not %q: rename it", config.CoreProviderName, p.GetName())
	}
	if p.ProviderType() != clusterctlv1.CoreProviderType && p.GetName() == config.CoreProviderName {
		return fail(operatorv1.IncorrectCoreProviderNameReason, "The name %s is the core provider's: use a CoreProvider for it, or another name", config.CoreProviderName)
	}
	if errs := validation.IsDNS1123Label(p.GetName()); len(errs) > 0 {
		return fail(operatorv1.UnknownProviderReason, "The name %q is not a provider name (%s): name the object after the provider, for example aws", p.GetName(), strings.Join(errs, "; "))
	}
	if spec.Version != "" {
		want, err := repository.ParseVersion(spec.Version)
		if err != nil {
			return fail(operatorv1.IncorrectVersionFormatReason, "spec.version %q is not a semantic version: use a version such as v1.2.3, or none for the latest", spec.Version)
		}
		if iv := installedVersion(p); iv != "" {
			if have, err := repository.ParseVersion(iv); err == nil && (want.Major < have.Major || (want.Major == have.Major && want.Minor < have.Minor)) {
				return fail(operatorv1.UnsupportedProviderDowngradeReason,
					"Downgrading from %s to %s is not supported: a provider goes back to an older patch release of its minor version only; set spec.version to v%d.%d.x or later",
					iv, spec.Version, have.Major, have.Minor)
			}
		}
	}
	if errs := specvalidation.Spec(p.GetNamespace(), spec, r.Validation); len(errs) > 0 {
		return fail(operatorv1.UnsupportedFieldReason, "%s", errs.ToAggregate().Error())
	}
	if msg := checkFetchConfig(spec.FetchConfig); msg != "" {
		return fail(operatorv1.FetchConfigValidationErrorReason, "%s", msg)
	}
	if spec.FetchConfig == nil {
		if _, err := builtinConfig().Provider(p.GetName(), p.ProviderType()); err != nil {
			var nf *config.ProviderNotFoundError
			hint := ""
			if errors.As(err, &nf) && nf.Suggestion != "" {
				hint = fmt.Sprintf(" (did you mean %q?)", nf.Suggestion)
			}
			return fail(operatorv1.UnknownProviderReason, "%q is not one of clusterctl's built-in %ss%s: set spec.fetchConfig (url, selector or oci) to say where its releases are, or use the name of a built-in provider",
				p.GetName(), p.ProviderType(), hint)
		}
	}
	if msg, err := r.duplicate(ctx, s); err != nil || msg != "" {
		if err != nil {
			return reconciler.Stop(err)
		}
		return fail(operatorv1.MoreThanOneProviderInstanceExistsReason, "%s", msg)
	}
	data, err := r.configSecret(ctx, p)
	if err != nil {
		if errors.Is(err, errSecretMissing) {
			s.result.RequeueAfter = waitInterval
			return fail(operatorv1.ComponentsCustomizationErrorReason, "%s", err.Error())
		}
		return reconciler.Stop(err)
	}
	s.secretData = data
	if s.config, err = source.ConfigFromSecret(data, r.lookupEnv()); err != nil {
		return fail(operatorv1.ComponentsCustomizationErrorReason, "configSecret %s: %v", secretRef(p), err)
	}

	if p.ProviderType() != clusterctlv1.CoreProviderType {
		core, err := r.coreProvider(ctx)
		if err != nil {
			return reconciler.Stop(err)
		}
		s.result.RequeueAfter = waitInterval
		if core == nil {
			return fail(operatorv1.WaitingForCoreProviderReadyReason, "Waiting for the core provider: create a CoreProvider named %s", config.CoreProviderName)
		}
		if !isTrue(core, operatorv1.ReadyCondition) || core.Status.Contract == nil {
			return fail(operatorv1.WaitingForCoreProviderReadyReason, "Waiting for the CoreProvider %s/%s to be Ready", core.Namespace, core.Name)
		}
		s.result.RequeueAfter = 0
		s.coreContract = *core.Status.Contract
	}
	s.preflight = good(operatorv1.PreflightChecksPassedReason, "")
	return ctrl.Result{}, nil
}

// builtinConfig is clusterctl's configuration with nothing but the built-in providers.
func builtinConfig() *config.Config {
	cfg, err := config.New(nil, nil)
	if err != nil {
		panic(err) // An empty configuration always parses.
	}
	return cfg
}

// checkFetchConfig validates spec.fetchConfig beyond what the schema checks.
func checkFetchConfig(fc *operatorv1.FetchConfiguration) string {
	if fc == nil {
		return ""
	}
	set := 0
	for _, b := range []bool{fc.URL != "", fc.Selector != nil, fc.OCI != ""} {
		if b {
			set++
		}
	}
	if set != 1 {
		return "spec.fetchConfig must set exactly one of url, selector and oci"
	}
	if fc.Selector != nil {
		if _, err := metav1.LabelSelectorAsSelector(fc.Selector); err != nil {
			return fmt.Sprintf("spec.fetchConfig.selector is invalid: %v", err)
		}
		if len(fc.Selector.MatchLabels) == 0 && len(fc.Selector.MatchExpressions) == 0 {
			return "spec.fetchConfig.selector is empty: it would select every ConfigMap of the namespace; give the labels of the provider's ConfigMaps"
		}
	}
	return ""
}

// duplicate returns a message when an older provider of the same kind and name exists in another
// namespace, or when clusterctl installed the provider in another namespace.
func (r *Reconciler) duplicate(ctx context.Context, s *scope) (string, error) {
	p := s.provider
	list := r.Kind.NewList()
	if err := r.Client.List(ctx, list); err != nil {
		return "", fmt.Errorf("listing %s objects: %w", r.Kind.Name, err)
	}
	for _, o := range list.GetItems() {
		if o.GetName() == p.GetName() && o.GetUID() != p.GetUID() && newer(p, o) {
			return fmt.Sprintf("%s %s/%s already installs this provider, and a provider can be installed once: delete one of them",
				r.Kind.Name, o.GetNamespace(), o.GetName()), nil
		}
	}
	installed, err := r.Cluster.InstalledProviders(ctx)
	if err != nil {
		return "", err
	}
	for _, i := range installed {
		if i.ManifestLabel() == s.label && i.Namespace != p.GetNamespace() {
			return fmt.Sprintf("%s is already installed in namespace %s (clusterctl's inventory), and a provider can be installed once: create the %s in namespace %s to take it over, or delete it there with clusterctl delete",
				s.label, i.Namespace, r.Kind.Name, i.Namespace), nil
		}
	}
	return "", nil
}

var errSecretMissing = errors.New("configSecret not found")

func secretRef(p operatorv1.GenericProvider) string {
	ref := p.GetProviderSpec().ConfigSecret
	if ref == nil {
		return ""
	}
	return refNamespace(p, ref.Namespace) + "/" + ref.Name
}

// refNamespace returns the namespace of an object that p's spec names (configSecret,
// additionalManifests): namespace, or p's own namespace when empty.
func refNamespace(p operatorv1.GenericProvider, namespace string) string {
	if namespace == "" {
		return p.GetNamespace()
	}
	return namespace
}

// configSecret returns the data of the provider's configSecret, nil when it has none.
func (r *Reconciler) configSecret(ctx context.Context, p operatorv1.GenericProvider) (map[string][]byte, error) {
	ref := p.GetProviderSpec().ConfigSecret
	if ref == nil {
		return nil, nil
	}
	ns := refNamespace(p, ref.Namespace)
	secret := &corev1.Secret{}
	if err := r.APIReader.Get(ctx, client.ObjectKey{Namespace: ns, Name: ref.Name}, secret); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, fmt.Errorf("%w: the configSecret %s/%s does not exist: create it, or remove spec.configSecret", errSecretMissing, ns, ref.Name)
		}
		return nil, fmt.Errorf("reading the configSecret %s/%s: %w", ns, ref.Name, err)
	}
	return secret.Data, nil
}
