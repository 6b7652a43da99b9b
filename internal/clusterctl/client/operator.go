package client

import (
	"context"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/go-logr/logr"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	clusterctlv1 "github.com/capstan-dev/capstan/api/clusterctl/v1alpha3"
	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
	operatorv1 "github.com/capstan-dev/capstan/api/operator/v1alpha2"
	"github.com/capstan-dev/capstan/internal/clusterctl/cluster"
	"github.com/capstan-dev/capstan/internal/clusterctl/components"
	"github.com/capstan-dev/capstan/internal/clusterctl/config"
	"github.com/capstan-dev/capstan/internal/clusterctl/repository"
	"github.com/capstan-dev/capstan/internal/operator/source"
)

// OperatorComponentsFile is the file of the core provider's release that holds the provider operator's
// manifests (capstan's releases publish it next to core-components.yaml).
const OperatorComponentsFile = "operator-components.yaml"

// OperatorLabel is the cluster.x-k8s.io/provider label of the operator's own objects.
const OperatorLabel = "capi-operator"

// ReleaseLabel labels the ConfigMaps that `clusterctl init --operator` writes with a release of a provider
// the operator cannot fetch by itself (a local repository, a folder): its value is the provider's label.
const ReleaseLabel = "clusterctl.cluster.x-k8s.io/release"

// operatorItem is a provider init --operator hands to the operator.
type operatorItem struct {
	release   *release
	comps     *components.Components
	contract  string
	namespace string
	existing  *clusterctlv1.Provider
}

// operatorKube returns a client of the management cluster that knows the operator's kinds.
func operatorKube(mc *cluster.Client) (client.Client, error) {
	cfg, err := mc.RESTConfig()
	if err != nil {
		return nil, err
	}
	s := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{corev1.AddToScheme, appsv1.AddToScheme, apiextensionsv1.AddToScheme, operatorv1.AddToScheme} {
		if err := add(s); err != nil {
			return nil, err
		}
	}
	return client.New(cfg, client.Options{Scheme: s})
}

// initWithOperator is `clusterctl init --operator`: it installs the provider operator when the management
// cluster has none (the core provider's release holds its manifests, images overridden by the
// configuration), then hands each provider to it as the operator proposal describes: a provider object
// (CoreProvider, InfrastructureProvider, ...) at the version init picks, a Secret with the values the
// configuration gives the components' variables (and GITHUB_TOKEN and the image overrides), and, for a
// provider the operator could not fetch by itself (a repository on this machine), ConfigMaps with its
// release. A provider that clusterctl installed already is taken over at its version, without changing it.
func (c *Client) initWithOperator(ctx context.Context, mc *cluster.Client, o InitOptions) (*InitResult, error) {
	log := logr.FromContextOrDiscard(ctx)
	kube, err := operatorKube(mc)
	if err != nil {
		return nil, err
	}
	installed, err := mc.InstalledProviders(ctx)
	if err != nil {
		return nil, err
	}
	existingCore, err := hasOperatorCore(ctx, kube)
	if err != nil {
		return nil, err
	}
	log.Info("Fetching providers")
	var items []operatorItem
	coreContract := ""
	for _, p := range o.providers(!hasCore(installed) && !existingCore) {
		name, version, err := ParseProviderName(p.name)
		if err != nil {
			return nil, err
		}
		item := operatorItem{}
		if ex, ok := findInstalled(installed, name, p.t); ok {
			if err := checkReinstall(ex, version, o.TargetNamespace); err != nil {
				return nil, err
			}
			version, item.existing = ex.Version, &ex
		}
		if item.release, err = c.resolve(ctx, p.t, name+":"+version, false); err != nil {
			return nil, err
		}
		if item.comps, item.contract, err = c.releaseComponents(ctx, item.release, o.TargetNamespace, true); err != nil {
			return nil, err
		}
		item.namespace = item.comps.TargetNamespace()
		if item.existing != nil {
			item.namespace = item.existing.Namespace
		}
		if p.t == clusterctlv1.CoreProviderType {
			coreContract = item.contract
		}
		items = append(items, item)
	}
	if !o.SkipValidation && coreContract != "" {
		for _, it := range items {
			if it.contract != coreContract {
				return nil, fmt.Errorf("%s follows the %s contract, but the core provider follows %s: all providers must follow the same contract; choose a version of %s for %s",
					it.release, it.contract, coreContract, it.release.provider.ManifestLabel(), coreContract)
			}
		}
	}
	if err := c.ensureOperator(ctx, mc, kube, items); err != nil {
		return nil, err
	}
	result := &InitResult{}
	var created []operatorv1.GenericProvider
	for _, it := range items {
		p, isNew, err := c.handOver(ctx, kube, it)
		if err != nil {
			return result, fmt.Errorf("%w; run the same command again to finish", err)
		}
		inv := it.comps.InventoryObject()
		if !isNew {
			log.Info("Skipping: the operator manages it already", "provider", it.release.provider.ManifestLabel(), "namespace", it.namespace)
			result.AlreadyInstalled = append(result.AlreadyInstalled, inv)
			continue
		}
		created = append(created, p)
		result.Installed = append(result.Installed, inv)
	}
	if o.WaitProviders {
		for _, p := range created {
			if err := waitOperatorProvider(ctx, kube, p, o.WaitProviderTimeout); err != nil {
				return result, err
			}
		}
	}
	log.Info("\nThe provider operator manages your management cluster's providers: change them with kubectl (kubectl get coreproviders,bootstrapproviders,controlplaneproviders,infrastructureproviders -A)")
	return result, nil
}

// hasOperatorCore reports whether the management cluster has a CoreProvider object.
func hasOperatorCore(ctx context.Context, kube client.Client) (bool, error) {
	list := &operatorv1.CoreProviderList{}
	if err := kube.List(ctx, list); err != nil {
		if apimeta.IsNoMatchError(err) || apierrors.IsNotFound(err) {
			return false, nil
		}
		return false, err
	}
	return len(list.Items) > 0, nil
}

// ensureOperator installs the operator when no Deployment of it runs: the operator-components.yaml of the
// core provider's release (the release init installs, else the installed one's), with the
// configuration's image overrides.
func (c *Client) ensureOperator(ctx context.Context, mc *cluster.Client, kube client.Client, items []operatorItem) error {
	ds := &appsv1.DeploymentList{}
	if err := kube.List(ctx, ds, client.MatchingLabels{clusterv1.ProviderNameLabel: OperatorLabel}); err != nil {
		return err
	}
	if len(ds.Items) > 0 {
		return nil
	}
	var core *release
	for _, it := range items {
		if it.release.provider.Type == clusterctlv1.CoreProviderType {
			core = it.release
		}
	}
	if core == nil {
		var err error
		if core, err = c.resolve(ctx, clusterctlv1.CoreProviderType, config.CoreProviderName, true); err != nil {
			return err
		}
	}
	raw, err := core.repo.File(ctx, core.version, OperatorComponentsFile)
	if err != nil {
		return fmt.Errorf("installing the provider operator: %w; the core provider's release %s publishes no %s: install the operator first (kubectl apply -f operator-components.yaml)",
			err, core, OperatorComponentsFile)
	}
	comps, err := components.New(components.Input{
		Provider: config.Provider{Name: OperatorLabel, Type: clusterctlv1.CoreProviderType}, Version: core.version, Raw: raw,
		Variables: c.cfg.Get, Images: c.cfg.ImageOverrides(), SkipVariables: true,
	})
	if err != nil {
		return fmt.Errorf("%s of %s: %w", OperatorComponentsFile, core, err)
	}
	logr.FromContextOrDiscard(ctx).Info("Installing the provider operator", "version", core.version)
	return mc.Apply(ctx, comps.Objects())
}

// handOver creates the operator's objects for a provider: its namespace, variables Secret, release
// ConfigMaps when the operator cannot fetch it, and its provider object. It returns the provider object
// and whether it is new (an existing one is left as it is).
func (c *Client) handOver(ctx context.Context, kube client.Client, it operatorItem) (operatorv1.GenericProvider, bool, error) {
	p := it.release.provider
	kind, err := operatorv1.KindFor(p.Type)
	if err != nil {
		return nil, false, err
	}
	obj := kind.New()
	if err := kube.Get(ctx, client.ObjectKey{Namespace: it.namespace, Name: p.Name}, obj); err == nil {
		return obj, false, nil
	} else if !apierrors.IsNotFound(err) {
		return nil, false, fmt.Errorf("reading the %s %s/%s: %w", kind.Name, it.namespace, p.Name, err)
	}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: it.namespace}}
	if err := kube.Create(ctx, ns); err != nil && !apierrors.IsAlreadyExists(err) {
		return nil, false, fmt.Errorf("creating namespace %s: %w", it.namespace, err)
	}
	secret, err := c.variablesSecret(it)
	if err != nil {
		return nil, false, err
	}
	if err := createOrUpdate(ctx, kube, secret); err != nil {
		return nil, false, err
	}
	spec := obj.GetProviderSpec()
	spec.Version = it.release.version
	spec.ConfigSecret = &operatorv1.SecretReference{Name: secret.Name}
	fc, err := c.fetchConfig(ctx, kube, it)
	if err != nil {
		return nil, false, err
	}
	spec.FetchConfig = fc
	obj.SetNamespace(it.namespace)
	obj.SetName(p.Name)
	verb := "Handing the provider to the operator"
	if it.existing != nil {
		verb = "Handing the provider clusterctl installed to the operator"
	}
	logr.FromContextOrDiscard(ctx).Info(verb, "provider", p.ManifestLabel(), "version", it.release.version, "namespace", it.namespace)
	if err := kube.Create(ctx, obj); err != nil {
		return nil, false, fmt.Errorf("creating the %s %s/%s: %w", kind.Name, it.namespace, p.Name, err)
	}
	return obj, true, nil
}

// variablesSecret returns the Secret of a provider's configuration: the values of the components'
// variables the configuration (or the environment) gives, GITHUB_TOKEN, and the image overrides that
// apply to the provider, as the operator proposal's init transfers the local configuration.
func (c *Client) variablesSecret(it operatorItem) (*corev1.Secret, error) {
	label := it.release.provider.ManifestLabel()
	data := map[string][]byte{}
	for _, v := range append(slices.Clone(it.comps.Variables()), "GITHUB_TOKEN", "GOPROXY") {
		if value, ok := c.cfg.Get(v); ok {
			data[v] = []byte(value)
		}
	}
	images := map[string]map[string]string{}
	for key, m := range c.cfg.ImageOverrides() {
		if key != config.AllImages && key != label && !strings.HasPrefix(key, label+"/") {
			continue
		}
		entry := map[string]string{}
		for k, v := range map[string]string{"repository": m.Repository, "name": m.Name, "tag": m.Tag} {
			if v != "" {
				entry[k] = v
			}
		}
		images[key] = entry
	}
	if len(images) > 0 {
		raw, err := yaml.Marshal(images)
		if err != nil {
			return nil, err
		}
		data["images"] = raw
	}
	return &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: it.namespace, Name: label + "-variables",
			Labels: map[string]string{clusterctlv1.ClusterctlLabel: ""}},
		Data: data,
	}, nil
}

// fetchConfig says where the operator finds a provider's releases: nowhere to say for a built-in
// provider, the releases URL of a GitHub repository, else ConfigMaps of the release, which it writes.
func (c *Client) fetchConfig(ctx context.Context, kube client.Client, it operatorItem) (*operatorv1.FetchConfiguration, error) {
	p := it.release.provider
	for _, b := range config.BuiltinProviders() {
		if b.SameAs(p) && b.URL == p.URL {
			return nil, nil
		}
	}
	if u, err := url.Parse(p.URL); err == nil && u.Scheme == "https" && u.Host == "github.com" {
		parts := strings.Split(strings.Trim(u.Path, "/"), "/")
		if len(parts) >= 3 && parts[2] == "releases" {
			return &operatorv1.FetchConfiguration{URL: "https://github.com/" + parts[0] + "/" + parts[1] + "/releases"}, nil
		}
	}
	raw, err := it.release.repo.File(ctx, it.release.version, it.release.repo.ComponentsPath())
	if err != nil {
		return nil, err
	}
	metadata, err := it.release.repo.File(ctx, it.release.version, repository.MetadataFile)
	if err != nil {
		return nil, err
	}
	label := p.ManifestLabel()
	cm, err := source.ConfigMapFor(it.namespace, label+"-release-"+strings.ReplaceAll(it.release.version, "+", "-"), &source.Release{Version: it.release.version, Metadata: metadata, Components: raw})
	if err != nil {
		return nil, err
	}
	cm.Labels[ReleaseLabel] = label
	if err := createOrUpdate(ctx, kube, cm); err != nil {
		return nil, err
	}
	return &operatorv1.FetchConfiguration{Selector: &metav1.LabelSelector{MatchLabels: map[string]string{ReleaseLabel: label}}}, nil
}

// createOrUpdate creates obj, or replaces the one of its name.
func createOrUpdate(ctx context.Context, kube client.Client, obj client.Object) error {
	err := kube.Create(ctx, obj)
	if apierrors.IsAlreadyExists(err) {
		existing := obj.DeepCopyObject().(client.Object)
		if err = kube.Get(ctx, client.ObjectKeyFromObject(obj), existing); err == nil {
			obj.SetResourceVersion(existing.GetResourceVersion())
			err = kube.Update(ctx, obj)
		}
	}
	if err != nil {
		return fmt.Errorf("writing %T %s/%s: %w", obj, obj.GetNamespace(), obj.GetName(), err)
	}
	return nil
}

// waitOperatorProvider waits until the operator says p is installed at its version and Ready.
func waitOperatorProvider(ctx context.Context, kube client.Client, p operatorv1.GenericProvider, timeout time.Duration) error {
	log := logr.FromContextOrDiscard(ctx)
	log.Info("Waiting for the operator to install the provider", "provider", operatorv1.ManifestLabel(p), "namespace", p.GetNamespace())
	deadline := time.Now().Add(timeout)
	for {
		err := kube.Get(ctx, client.ObjectKeyFromObject(p), p)
		if err == nil {
			st := p.GetProviderStatus()
			if st.InstalledVersion != nil && *st.InstalledVersion == p.GetProviderSpec().Version && apimeta.IsStatusConditionTrue(st.Conditions, operatorv1.ReadyCondition) {
				return nil
			}
		}
		if time.Now().After(deadline) {
			var why []string
			for _, cond := range p.GetProviderStatus().Conditions {
				if cond.Status != metav1.ConditionTrue && cond.Message != "" {
					why = append(why, cond.Type+": "+cond.Message)
				}
			}
			return fmt.Errorf("the operator did not install %s within %s (%s); look at the conditions of its %s (--wait-provider-timeout sets how long to wait)",
				operatorv1.ManifestLabel(p), timeout, strings.Join(why, "; "), p.GetObjectKind().GroupVersionKind().Kind)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(time.Second):
		}
	}
}

// operatorProviders returns the operator's provider objects, keyed by namespace/label; none when the
// operator's kinds are not served.
func operatorProviders(ctx context.Context, kube client.Client) (map[string]operatorv1.GenericProvider, error) {
	out := map[string]operatorv1.GenericProvider{}
	for _, k := range operatorv1.Kinds() {
		list := k.NewList()
		if err := kube.List(ctx, list); err != nil {
			if apimeta.IsNoMatchError(err) || apierrors.IsNotFound(err) {
				return out, nil
			}
			return nil, err
		}
		for _, p := range list.GetItems() {
			out[p.GetNamespace()+"/"+operatorv1.ManifestLabel(p)] = p
		}
	}
	return out, nil
}

// operatorReleases reads the releases of a provider the operator manages as the operator does: from the
// source its fetchConfig names, with the credentials of its configSecret.
type operatorReleases struct {
	src source.Source
}

func (c *Client) operatorSource(ctx context.Context, kube client.Client, p operatorv1.GenericProvider) (*operatorReleases, error) {
	var data map[string][]byte
	if ref := p.GetProviderSpec().ConfigSecret; ref != nil {
		ns := ref.Namespace
		if ns == "" {
			ns = p.GetNamespace()
		}
		secret := &corev1.Secret{}
		if err := kube.Get(ctx, client.ObjectKey{Namespace: ns, Name: ref.Name}, secret); err != nil && !apierrors.IsNotFound(err) {
			return nil, fmt.Errorf("reading the configSecret of %s: %w", operatorv1.ManifestLabel(p), err)
		}
		data = secret.Data
	}
	cfg, err := source.ConfigFromSecret(data, nil)
	if err != nil {
		return nil, err
	}
	src, err := source.ForProvider(p, source.ProviderOptions{Reader: kube, Config: cfg, HTTPClient: c.repos.HTTPClient()})
	if err != nil {
		return nil, err
	}
	return &operatorReleases{src: src}, nil
}

func (r *operatorReleases) Versions(ctx context.Context) ([]string, error) {
	return r.src.Versions(ctx)
}

func (r *operatorReleases) Metadata(ctx context.Context, version string) (*clusterctlv1.Metadata, error) {
	rel, err := r.src.Release(ctx, version)
	if err != nil {
		return nil, err
	}
	return repository.ParseMetadata(rel.Metadata)
}
