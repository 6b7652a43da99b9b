package provider

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"hash"
	"maps"
	"slices"
	"strconv"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/klog/v2"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterctlv1 "github.com/capstan-dev/capstan/api/clusterctl/v1alpha3"
	operatorv1 "github.com/capstan-dev/capstan/api/operator/v1alpha2"
	"github.com/capstan-dev/capstan/internal/clusterctl/cluster"
	"github.com/capstan-dev/capstan/internal/clusterctl/components"
	"github.com/capstan-dev/capstan/internal/clusterctl/config"
	"github.com/capstan-dev/capstan/internal/operator/customize"
	"github.com/capstan-dev/capstan/internal/operator/source"
	"github.com/capstan-dev/capstan/internal/reconciler"
)

// render turns the release into the objects to apply, as clusterctl init does (variables from the
// configSecret, image overrides, the provider's namespace as the target namespace, clusterctl's labels),
// plus the additional manifests, spec.deployment and spec.manager, the pause and the patches. Nothing is
// applied when anything fails.
func (r *Reconciler) render(ctx context.Context, s *scope) (ctrl.Result, error) {
	p := s.provider
	spec := p.GetProviderSpec()
	fail := func(reason string, err error) (ctrl.Result, error) {
		s.renderErr = bad(reason, err.Error())
		return reconciler.Stop(nil)
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
	effective := spec
	if spec.Paused != s.pause {
		// An unpause that is refused keeps the provider paused.
		effective = spec.DeepCopy()
		effective.Paused = s.pause
	}
	if err := comps.Customize(func(objs []unstructured.Unstructured) error { return customize.Deployments(objs, effective) }); err != nil {
		return fail(operatorv1.ComponentsCustomizationErrorReason, err)
	}
	if err := comps.Customize(func(objs []unstructured.Unstructured) error { return customize.Patches(objs, spec) }); err != nil {
		return fail(operatorv1.ComponentsPatchErrorReason, err)
	}
	if err := cluster.CheckCRDNames(s.label, comps.Objects()); err != nil {
		return fail(operatorv1.ComponentsCustomizationErrorReason, err)
	}
	if err := r.checkManagerArgs(comps.Objects()); err != nil {
		return fail(operatorv1.UnsupportedFieldReason, err)
	}
	s.components = comps
	if s.hash, err = hashObjects(comps.Objects()); err != nil {
		return reconciler.Stop(err)
	}
	s.parts = sourceParts(spec, s.secretData, s.release, extra)
	return ctrl.Result{}, nil
}

// checkManagerArgs checks the arguments of the containers of capstan's image with CheckManagerArgs.
func (r *Reconciler) checkManagerArgs(objs []unstructured.Unstructured) error {
	if r.CheckManagerArgs == nil {
		return nil
	}
	for i := range objs {
		o := &objs[i]
		if o.GetKind() != "Deployment" || o.GroupVersionKind().Group != "apps" {
			continue
		}
		d := &appsv1.Deployment{}
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(o.Object, d); err != nil {
			return fmt.Errorf("reading Deployment %s: %w", o.GetName(), err)
		}
		for _, c := range d.Spec.Template.Spec.Containers {
			if !customize.CapstanImage(c.Image) {
				continue
			}
			if err := r.CheckManagerArgs(c.Args); err != nil {
				return fmt.Errorf("the container %s of Deployment %s would not start (%w): remove what sets it in spec.manager, spec.deployment or spec.additionalDeployments", c.Name, d.Name, err)
			}
		}
	}
	return nil
}

// additionalManifests returns the manifests of spec.additionalManifests.
func (r *Reconciler) additionalManifests(ctx context.Context, p operatorv1.GenericProvider) ([]byte, error) {
	ref := p.GetProviderSpec().AdditionalManifestsRef
	if ref == nil {
		return nil, nil
	}
	ns := refNamespace(p, ref.Namespace)
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

// hashObjects identifies a rendering: what the installation is made of.
func hashObjects(objs []unstructured.Unstructured) (string, error) {
	h := sha256.New()
	for i := range objs {
		data, err := json.Marshal(objs[i].Object)
		if err != nil {
			return "", err
		}
		h.Write(data)
		h.Write([]byte{0})
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// Parts of what an installation is made from, recorded so that a change says what changed.
const (
	partSpec         = "spec"
	partFetchConfig  = "fetchConfig"
	partConfigSecret = "configSecret"
	partRelease      = "release"
	partAdditional   = "additionalManifests"
)

// sourceParts hashes each part an installation is made from (short hashes: they only tell changes).
func sourceParts(spec *operatorv1.ProviderSpec, secret map[string][]byte, release *source.Release, additional []byte) map[string]string {
	short := func(write func(h hash.Hash)) string {
		h := sha256.New()
		write(h)
		return hex.EncodeToString(h.Sum(nil))[:12]
	}
	rest := spec.DeepCopy()
	rest.FetchConfig, rest.Paused, rest.Version = nil, false, ""
	return map[string]string{
		partSpec:        short(func(h hash.Hash) { data, _ := json.Marshal(rest); h.Write(data) }),
		partFetchConfig: short(func(h hash.Hash) { data, _ := json.Marshal(spec.FetchConfig); h.Write(data) }),
		partConfigSecret: short(func(h hash.Hash) {
			keys := slices.Sorted(maps.Keys(secret))
			for _, k := range keys {
				h.Write([]byte(k))
				h.Write([]byte{0})
				h.Write(secret[k])
				h.Write([]byte{0})
			}
		}),
		partRelease:    short(func(h hash.Hash) { h.Write([]byte(source.Digest(release))) }),
		partAdditional: short(func(h hash.Hash) { h.Write(additional) }),
	}
}

func formatParts(parts map[string]string) string {
	keys := slices.Sorted(maps.Keys(parts))
	out := make([]string, 0, len(keys))
	for _, k := range keys {
		out = append(out, k+"="+parts[k])
	}
	return strings.Join(out, ",")
}

func parseParts(v string) map[string]string {
	out := map[string]string{}
	for _, kv := range strings.Split(v, ",") {
		if k, val, ok := strings.Cut(kv, "="); ok {
			out[k] = val
		}
	}
	return out
}

// changeOf says what changed between the parts of the last installation and those of the new one: the
// reason and message of ProviderUpgraded after the new rendering is applied in place.
func changeOf(s *scope, previous map[string]string) (reason, message string) {
	p := s.provider
	var what []string
	reason = operatorv1.ComponentsChangedReason
	for _, c := range []struct{ part, reason, what string }{
		{partRelease, operatorv1.ComponentsChangedReason, fmt.Sprintf("the release %s (%s) changed", s.release.Version, s.src)},
		{partFetchConfig, operatorv1.FetchConfigChangedReason, "spec.fetchConfig changed"},
		{partConfigSecret, operatorv1.ConfigSecretChangedReason, fmt.Sprintf("the content of the configSecret %s changed", secretRef(p))},
		{partAdditional, operatorv1.SpecChangedReason, "the additional manifests changed"},
		{partSpec, operatorv1.SpecChangedReason, "the spec changed"},
	} {
		if previous[c.part] != "" && previous[c.part] != s.parts[c.part] {
			what = append(what, c.what)
			reason = c.reason
		}
	}
	if len(what) == 0 {
		what = []string{"the rendered components changed (variables from the operator's environment)"}
	}
	return reason, fmt.Sprintf("Applied %s again as an upgrade: %s", s.release.Version, strings.Join(what, "; "))
}

// install applies the rendered components with clusterctl's library and records the provider in
// clusterctl's inventory: a first install applies everything; a new version is an upgrade (the old
// components are deleted, keeping CRDs, the namespace and every user object, the new ones applied, stored
// objects migrated); any other change is applied in place, then what the new rendering no longer has is
// deleted, as an upgrade would, and ProviderUpgraded says what changed. Nothing happens when nothing the
// installation is made from changed. A paused provider changes only by its version: its Deployments are
// kept at zero replicas, other changes wait until it is unpaused.
func (r *Reconciler) install(ctx context.Context, s *scope) (ctrl.Result, error) {
	p := s.provider
	log := ctrl.LoggerFrom(ctx)
	mc := r.Cluster
	inventory, err := r.inventory(ctx, s)
	if err != nil {
		return reconciler.Stop(err)
	}
	applied := p.GetAnnotations()[operatorv1.AppliedSpecHashAnnotation]
	previous := p.GetAnnotations()[operatorv1.AppliedFromAnnotation]
	sameVersion := inventory != nil && inventory.Version == s.release.Version && inventory.Annotations[cluster.UpgradeToAnnotation] == ""
	if sameVersion && s.pause {
		if err := r.pauseDeployments(ctx, s); err != nil {
			return reconciler.Stop(err)
		}
		s.held = applied != s.hash || previous != formatParts(s.parts)
		s.installed = good(operatorv1.ProviderInstalledReason, "")
		r.recordInstalled(s)
		return ctrl.Result{}, nil
	}
	pausedByUs, err := r.pausedDeployments(ctx, s)
	if err != nil {
		return reconciler.Stop(err)
	}
	if sameVersion && applied == s.hash && previous == formatParts(s.parts) && len(pausedByUs) == 0 {
		s.installed = good(operatorv1.ProviderInstalledReason, "")
		r.recordInstalled(s)
		return ctrl.Result{}, nil
	}
	objs := s.components.Objects()
	fail := func(reason string, err error) (ctrl.Result, error) {
		s.installed = bad(reason, err.Error())
		return reconciler.Stop(err)
	}
	if err := mc.EnsureInventoryCRD(ctx); err != nil {
		return reconciler.Stop(err)
	}
	if err := mc.CheckCRDOwnership(ctx, s.label, objs); err != nil {
		s.installed = bad(operatorv1.InstallFailedReason, err.Error())
		return reconciler.Stop(nil)
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
		if inventory != nil {
			pruned, err := mc.PruneComponents(ctx, s.label, p.GetNamespace(), objs, r.spare(s))
			if err != nil {
				return fail(operatorv1.InstallFailedReason, err)
			}
			if len(pruned) > 0 {
				log.Info("Deleted what the provider no longer has", "provider", s.label, "objects", pruned)
			}
			switch {
			case applied == "":
				s.upgraded = good(operatorv1.TakenOverReason, fmt.Sprintf("Took %s %s over from clusterctl's installation", s.label, s.release.Version))
			case previous != "" && (applied != s.hash || previous != formatParts(s.parts)):
				reason, message := changeOf(s, parseParts(previous))
				if len(pruned) > 0 {
					message += "; deleted what it no longer has: " + joinBounded(pruned)
				}
				s.upgraded = good(reason, message)
			}
		}
	default:
		if err := mc.CheckCRDUpgrades(ctx, s.label, objs); err != nil {
			s.upgraded = bad(operatorv1.ComponentsUpgradeErrorReason, err.Error())
			return reconciler.Stop(nil)
		}
		from := inventory.Version
		log.Info("Upgrading", "provider", s.label, "from", from, "to", s.release.Version, "namespace", p.GetNamespace())
		if err := mc.SetUpgradeTo(ctx, *inventory, s.release.Version); err != nil {
			return reconciler.Stop(err)
		}
		if err := mc.ScaleDownDeployments(ctx, s.label, p.GetNamespace()); err != nil {
			return reconciler.Stop(err)
		}
		if err := mc.UpgradeProvider(ctx, *inventory, s.components); err != nil {
			s.upgraded = bad(operatorv1.ComponentsUpgradeErrorReason, fmt.Sprintf("Upgrading %s from %s to %s: %v; the operator tries again", s.label, from, s.release.Version, err))
			return reconciler.Stop(err)
		}
		s.upgraded = good(operatorv1.ProviderUpgradedReason, fmt.Sprintf("Upgraded from %s to %s", from, s.release.Version))
	}
	if !s.pause {
		if err := r.unpauseDeployments(ctx, s); err != nil {
			return reconciler.Stop(err)
		}
	}
	annotations := p.GetAnnotations()
	if annotations == nil {
		annotations = map[string]string{}
	}
	annotations[operatorv1.AppliedSpecHashAnnotation] = s.hash
	annotations[operatorv1.AppliedFromAnnotation] = formatParts(s.parts)
	p.SetAnnotations(annotations)
	s.installed = good(operatorv1.ProviderInstalledReason, "")
	r.recordInstalled(s)
	return ctrl.Result{}, nil
}

// joinBounded joins names, naming at most ten.
func joinBounded(names []string) string {
	if len(names) > 10 {
		return strings.Join(names[:10], ", ") + fmt.Sprintf(" and %d more", len(names)-10)
	}
	return strings.Join(names, ", ")
}

// spare says which of the provider's labelled objects an in-place change never deletes: the ConfigMaps
// the provider's releases and additional manifests come from, and the operator's cache.
func (r *Reconciler) spare(s *scope) func(*unstructured.Unstructured) bool {
	spec := s.provider.GetProviderSpec()
	var selector labels.Selector
	if spec.FetchConfig != nil && spec.FetchConfig.Selector != nil {
		selector, _ = metav1.LabelSelectorAsSelector(spec.FetchConfig.Selector)
	}
	return func(o *unstructured.Unstructured) bool {
		if o.GetKind() != "ConfigMap" || o.GroupVersionKind().Group != "" {
			return false
		}
		if o.GetLabels()[operatorv1.ManagedByLabel] == operatorv1.TrueValue {
			return true
		}
		if ref := spec.AdditionalManifestsRef; ref != nil && ref.Name == o.GetName() {
			return true
		}
		return selector != nil && selector.Matches(labels.Set(o.GetLabels()))
	}
}

// pauseDeployments scales the provider's Deployments to zero, recording the replicas they had in the
// proposal's annotation, and changes nothing else of them.
func (r *Reconciler) pauseDeployments(ctx context.Context, s *scope) error {
	ds, err := r.deployments(ctx, s)
	if err != nil {
		return err
	}
	for i := range ds {
		d := &ds[i]
		if _, ok := d.Annotations[operatorv1.OriginalReplicasAnnotation]; ok && d.Spec.Replicas != nil && *d.Spec.Replicas == 0 {
			continue
		}
		before := d.DeepCopy()
		if _, ok := d.Annotations[operatorv1.OriginalReplicasAnnotation]; !ok {
			if d.Annotations == nil {
				d.Annotations = map[string]string{}
			}
			d.Annotations[operatorv1.OriginalReplicasAnnotation] = strconv.Itoa(int(ptr.Deref(d.Spec.Replicas, 1)))
		}
		d.Spec.Replicas = ptr.To[int32](0)
		ctrl.LoggerFrom(ctx).Info("Pausing: scaling the Deployment to 0 replicas", "Deployment", klog.KObj(d))
		if err := r.Client.Patch(ctx, d, client.MergeFrom(before)); err != nil {
			return fmt.Errorf("scaling Deployment %s/%s to 0 replicas: %w", d.Namespace, d.Name, err)
		}
	}
	return nil
}

// pausedDeployments returns the provider's Deployments the operator paused (they have the proposal's
// annotation).
func (r *Reconciler) pausedDeployments(ctx context.Context, s *scope) ([]appsv1.Deployment, error) {
	ds, err := r.deployments(ctx, s)
	if err != nil {
		return nil, err
	}
	var out []appsv1.Deployment
	for _, d := range ds {
		if _, ok := d.Annotations[operatorv1.OriginalReplicasAnnotation]; ok {
			out = append(out, d)
		}
	}
	return out, nil
}

// unpauseDeployments removes the proposal's annotation from Deployments that the components, just
// applied, gave their replicas back.
func (r *Reconciler) unpauseDeployments(ctx context.Context, s *scope) error {
	ds, err := r.pausedDeployments(ctx, s)
	if err != nil {
		return err
	}
	for i := range ds {
		d := &ds[i]
		before := d.DeepCopy()
		delete(d.Annotations, operatorv1.OriginalReplicasAnnotation)
		if err := r.Client.Patch(ctx, d, client.MergeFrom(before)); err != nil {
			return fmt.Errorf("unpausing Deployment %s/%s: %w", d.Namespace, d.Name, err)
		}
	}
	return nil
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
