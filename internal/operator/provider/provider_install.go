package provider

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"sort"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterctlv1 "github.com/capstan-dev/capstan/api/clusterctl/v1alpha3"
	operatorv1 "github.com/capstan-dev/capstan/api/operator/v1alpha2"
	"github.com/capstan-dev/capstan/internal/clusterctl/cluster"
	"github.com/capstan-dev/capstan/internal/clusterctl/components"
	"github.com/capstan-dev/capstan/internal/clusterctl/config"
	"github.com/capstan-dev/capstan/internal/operator/customize"
)

// render turns the release into the objects to apply, as clusterctl init does (variables from the
// configSecret, image overrides, the provider's namespace as the target namespace, clusterctl's labels),
// plus the additional manifests, spec.deployment and spec.manager, the pause and the patches. Nothing is
// applied when anything fails.
func (r *Reconciler) render(ctx context.Context, s *scope) (bool, error) {
	p := s.provider
	spec := p.GetProviderSpec()
	fail := func(reason string, err error) (bool, error) {
		s.renderErr = bad(reason, err.Error())
		return true, nil
	}
	raw := s.release.Components
	extra, err := r.additionalManifests(ctx, p)
	if err != nil {
		return fail(operatorv1.ComponentsCustomizationErrorReason, err)
	}
	if len(extra) > 0 {
		raw = append(append(append([]byte{}, raw...), []byte("\n---\n")...), extra...)
	}
	comps, err := components.New(components.Input{
		Provider:        config.Provider{Name: p.GetName(), Type: p.ProviderType(), URL: s.src.String()},
		Version:         s.release.Version,
		Raw:             raw,
		Variables:       s.config.Get,
		Images:          s.config.ImageOverrides(),
		TargetNamespace: p.GetNamespace(),
	})
	if err != nil {
		return fail(operatorv1.ComponentsCustomizationErrorReason, fmt.Errorf("%s %s: %w; variables come from spec.configSecret", s.label, s.release.Version, err))
	}
	if err := comps.Customize(func(objs []unstructured.Unstructured) error { return customize.Deployments(objs, spec) }); err != nil {
		return fail(operatorv1.ComponentsCustomizationErrorReason, err)
	}
	if err := comps.Customize(func(objs []unstructured.Unstructured) error { return customize.Patches(objs, spec) }); err != nil {
		return fail(operatorv1.ComponentsPatchErrorReason, err)
	}
	if err := cluster.CheckCRDNames(s.label, comps.Objects()); err != nil {
		return fail(operatorv1.ComponentsCustomizationErrorReason, err)
	}
	s.components = comps
	s.hash = hash(spec, s.secretData, s.release.Metadata, raw)
	return false, nil
}

// additionalManifests returns the manifests of spec.additionalManifests.
func (r *Reconciler) additionalManifests(ctx context.Context, p operatorv1.GenericProvider) ([]byte, error) {
	ref := p.GetProviderSpec().AdditionalManifestsRef
	if ref == nil {
		return nil, nil
	}
	ns := ref.Namespace
	if ns == "" {
		ns = p.GetNamespace()
	}
	cm := &corev1.ConfigMap{}
	if err := r.APIReader.Get(ctx, client.ObjectKey{Namespace: ns, Name: ref.Name}, cm); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, fmt.Errorf("the additionalManifests ConfigMap %s/%s does not exist: create it, or remove spec.additionalManifests", ns, ref.Name)
		}
		return nil, fmt.Errorf("reading the additionalManifests ConfigMap %s/%s: %w", ns, ref.Name, err)
	}
	m, ok := cm.Data[operatorv1.AdditionalManifestsConfigMapKey]
	if !ok {
		return nil, fmt.Errorf("the additionalManifests ConfigMap %s/%s has no %q key: put the manifests there", ns, ref.Name, operatorv1.AdditionalManifestsConfigMapKey)
	}
	return []byte(m), nil
}

// hash identifies everything an installation is made from.
func hash(spec *operatorv1.ProviderSpec, secret map[string][]byte, metadata, components []byte) string {
	h := sha256.New()
	specJSON, _ := json.Marshal(spec)
	h.Write(specJSON)
	keys := make([]string, 0, len(secret))
	for k := range secret {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		h.Write([]byte(k))
		h.Write([]byte{0})
		h.Write(secret[k])
		h.Write([]byte{0})
	}
	h.Write(metadata)
	h.Write([]byte{0})
	h.Write(components)
	return hex.EncodeToString(h.Sum(nil))
}

// install applies the rendered components with clusterctl's library and records the provider in
// clusterctl's inventory: a first install applies everything; a new version is an upgrade (the old
// components are deleted, keeping CRDs, the namespace and every user object, the new ones applied, stored
// objects migrated); any other change applies the components again. Nothing happens when nothing the
// installation is made from changed.
func (r *Reconciler) install(ctx context.Context, s *scope) (bool, error) {
	p := s.provider
	log := ctrl.LoggerFrom(ctx)
	mc := r.Cluster
	inventory, err := r.inventory(ctx, s)
	if err != nil {
		return true, err
	}
	if inventory != nil && inventory.Version == s.release.Version && p.GetAnnotations()[operatorv1.AppliedSpecHashAnnotation] == s.hash &&
		inventory.Annotations[cluster.UpgradeToAnnotation] == "" {
		s.installed = good(operatorv1.ProviderInstalledReason, "")
		r.recordInstalled(s)
		return false, nil
	}
	objs := s.components.Objects()
	fail := func(reason string, err error) (bool, error) {
		s.installed = bad(reason, err.Error())
		return true, err
	}
	if err := mc.EnsureInventoryCRD(ctx); err != nil {
		return true, err
	}
	if err := mc.CheckCRDOwnership(ctx, s.label, objs); err != nil {
		s.installed = bad(operatorv1.InstallFailedReason, err.Error())
		return true, nil
	}
	switch {
	case inventory == nil || inventory.Version == s.release.Version:
		log.Info("Installing", "provider", s.label, "version", s.release.Version, "namespace", p.GetNamespace())
		if err := mc.Apply(ctx, objs); err != nil {
			return fail(operatorv1.InstallFailedReason, fmt.Errorf("installing %s %s: %w", s.label, s.release.Version, err))
		}
		if err := mc.SaveProvider(ctx, s.components.InventoryObject()); err != nil {
			return fail(operatorv1.InstallFailedReason, err)
		}
	default:
		if err := mc.CheckCRDUpgrades(ctx, s.label, objs); err != nil {
			s.upgraded = bad(operatorv1.ComponentsUpgradeErrorReason, err.Error())
			return true, nil
		}
		from := inventory.Version
		log.Info("Upgrading", "provider", s.label, "from", from, "to", s.release.Version, "namespace", p.GetNamespace())
		if err := mc.SetUpgradeTo(ctx, *inventory, s.release.Version); err != nil {
			return true, err
		}
		if err := mc.ScaleDownDeployments(ctx, s.label, p.GetNamespace()); err != nil {
			return true, err
		}
		if err := mc.UpgradeProvider(ctx, *inventory, s.components); err != nil {
			s.upgraded = bad(operatorv1.ComponentsUpgradeErrorReason, fmt.Sprintf("Upgrading %s from %s to %s: %v; the operator tries again", s.label, from, s.release.Version, err))
			return true, err
		}
		s.upgraded = good(operatorv1.ProviderUpgradedReason, fmt.Sprintf("Upgraded from %s to %s", from, s.release.Version))
	}
	annotations := p.GetAnnotations()
	if annotations == nil {
		annotations = map[string]string{}
	}
	annotations[operatorv1.AppliedSpecHashAnnotation] = s.hash
	p.SetAnnotations(annotations)
	s.installed = good(operatorv1.ProviderInstalledReason, "")
	r.recordInstalled(s)
	return false, nil
}

func (r *Reconciler) recordInstalled(s *scope) {
	st := s.provider.GetProviderStatus()
	v, c := s.release.Version, s.contract
	st.InstalledVersion, st.Contract = &v, &c
}

// inventory returns the provider's record in clusterctl's inventory, nil when there is none.
func (r *Reconciler) inventory(ctx context.Context, s *scope) (*clusterctlv1.Provider, error) {
	installed, err := r.Cluster.InstalledProviders(ctx)
	if err != nil {
		return nil, err
	}
	for i := range installed {
		if installed[i].ManifestLabel() == s.label && installed[i].Namespace == s.provider.GetNamespace() {
			return &installed[i], nil
		}
	}
	return nil, nil
}
