package client

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"

	clusterctlv1 "github.com/capstan-dev/capstan/api/clusterctl/v1alpha3"
	"github.com/capstan-dev/capstan/internal/clusterctl/repository"
	"github.com/capstan-dev/capstan/internal/clusterctl/template"
)

// Variables that generate cluster sets from its argument and flags.
const (
	ClusterNameVariable              = "CLUSTER_NAME"
	NamespaceVariable                = "NAMESPACE"
	KubernetesVersionVariable        = "KUBERNETES_VERSION"
	ControlPlaneMachineCountVariable = "CONTROL_PLANE_MACHINE_COUNT"
	WorkerMachineCountVariable       = "WORKER_MACHINE_COUNT"
)

// DefaultConfigMapKey is the ConfigMap key that holds a template when none is given.
const DefaultConfigMapKey = "template"

// ConfigMapSource is a template stored in a ConfigMap of the management cluster.
type ConfigMapSource struct {
	// Name of the ConfigMap.
	Name string
	// Namespace of the ConfigMap; the current namespace when empty.
	Namespace string
	// Key holding the template; DefaultConfigMapKey when empty.
	Key string
}

// ClusterTemplateOptions say which template to get and the values of the common variables.
type ClusterTemplateOptions struct {
	// ClusterName is ${CLUSTER_NAME}.
	ClusterName string
	// TargetNamespace is ${NAMESPACE} and the namespace of every object; the current namespace when empty.
	TargetNamespace string
	// KubernetesVersion is ${KUBERNETES_VERSION}; the environment or config file provide it when empty.
	KubernetesVersion string
	// ControlPlaneMachineCount is ${CONTROL_PLANE_MACHINE_COUNT}; when nil, the environment or config
	// file, else 1.
	ControlPlaneMachineCount *int64
	// WorkerMachineCount is ${WORKER_MACHINE_COUNT}; when nil, the environment or config file, else 0.
	WorkerMachineCount *int64
	// ListVariablesOnly returns the template's variables without processing it.
	ListVariablesOnly bool

	// InfrastructureProvider is "name[:version]" of the provider whose repository holds the template; when
	// empty, the only infrastructure provider installed in the management cluster.
	InfrastructureProvider string
	// Flavor selects cluster-template-{flavor}.yaml instead of cluster-template.yaml.
	Flavor string
	// URL reads the template from a URL, a file, or stdin ("-") instead of a provider repository.
	URL string
	// ConfigMap reads the template from a ConfigMap instead of a provider repository.
	ConfigMap *ConfigMapSource
}

// ClusterTemplate returns a workload cluster template with its variables substituted and its objects in
// the target namespace. A template from a provider repository that uses ClusterClasses gets their
// definitions (clusterclass-{name}.yaml) added in front, unless they are in the management cluster.
func (c *Client) ClusterTemplate(ctx context.Context, o ClusterTemplateOptions) (*template.Template, error) {
	fromRepository := o.InfrastructureProvider != "" || o.Flavor != ""
	sources := 0
	for _, set := range []bool{fromRepository, o.URL != "", o.ConfigMap != nil} {
		if set {
			sources++
		}
	}
	if sources > 1 {
		return nil, errors.New("use only one template source: --infrastructure/--flavor, --from or --from-config-map")
	}

	namespace, err := c.targetNamespace(o.TargetNamespace)
	if err != nil {
		return nil, err
	}
	variables, err := c.commonVariables(o, namespace)
	if err != nil {
		return nil, err
	}
	cfg := c.cfg.With(variables)
	in := template.Input{Variables: cfg.Get, TargetNamespace: namespace, ListVariablesOnly: o.ListVariablesOnly}

	switch {
	case o.URL != "":
		if in.Raw, err = c.read(ctx, o.URL); err != nil {
			return nil, err
		}
		return newTemplate(in, o.URL)
	case o.ConfigMap != nil:
		if in.Raw, err = c.readConfigMap(ctx, *o.ConfigMap, namespace); err != nil {
			return nil, err
		}
		return newTemplate(in, "ConfigMap "+o.ConfigMap.Name)
	}

	r, err := c.resolveInfrastructure(ctx, o.InfrastructureProvider)
	if err != nil {
		return nil, err
	}
	file := template.ClusterTemplateFile(o.Flavor)
	if in.Raw, err = r.repo.File(ctx, r.version, file); err != nil {
		return nil, c.explainTemplate(ctx, r, o.Flavor, err)
	}
	t, err := newTemplate(in, file+" of "+r.String())
	if err != nil {
		return nil, err
	}
	return c.addClusterClasses(ctx, r, t, in)
}

func newTemplate(in template.Input, source string) (*template.Template, error) {
	t, err := template.New(in)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", source, err)
	}
	return t, nil
}

// targetNamespace returns the namespace given, else the current namespace of the management cluster's
// kubeconfig, else "default".
func (c *Client) targetNamespace(given string) (string, error) {
	ns := given
	if ns == "" && c.cluster != nil {
		var err error
		if ns, err = c.cluster.CurrentNamespace(); err != nil {
			return "", fmt.Errorf("%w: specify a target namespace (--target-namespace)", err)
		}
	}
	if ns == "" {
		ns = "default"
	}
	if errs := validation.IsDNS1123Label(ns); len(errs) > 0 {
		return "", fmt.Errorf("invalid target namespace %q: %s", ns, strings.Join(errs, "; "))
	}
	return ns, nil
}

// commonVariables validates the values of the common variables and returns them.
func (c *Client) commonVariables(o ClusterTemplateOptions, namespace string) (map[string]string, error) {
	if errs := validation.IsDNS1123Subdomain(o.ClusterName); len(errs) > 0 {
		return nil, fmt.Errorf("invalid cluster name %q: %s", o.ClusterName, strings.Join(errs, "; "))
	}
	vars := map[string]string{ClusterNameVariable: o.ClusterName, NamespaceVariable: namespace}
	if o.KubernetesVersion != "" {
		if _, err := repository.ParseVersion(o.KubernetesVersion); err != nil {
			return nil, fmt.Errorf("invalid Kubernetes version: %w", err)
		}
		vars[KubernetesVersionVariable] = o.KubernetesVersion
	}
	cp, err := c.count(o.ControlPlaneMachineCount, ControlPlaneMachineCountVariable, 1, 1)
	if err != nil {
		return nil, err
	}
	workers, err := c.count(o.WorkerMachineCount, WorkerMachineCountVariable, 0, 0)
	if err != nil {
		return nil, err
	}
	vars[ControlPlaneMachineCountVariable] = strconv.FormatInt(cp, 10)
	vars[WorkerMachineCountVariable] = strconv.FormatInt(workers, 10)
	return vars, nil
}

// count returns the flag value, else the variable's value, else def; it must be at least low.
func (c *Client) count(flag *int64, variable string, def, low int64) (int64, error) {
	n := def
	switch {
	case flag != nil:
		n = *flag
	default:
		if v, ok := c.cfg.Get(variable); ok {
			parsed, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
			if err != nil {
				return 0, fmt.Errorf("invalid value %q for %s: use a whole number", v, variable)
			}
			n = parsed
		}
	}
	if n < low {
		return 0, fmt.Errorf("invalid %s %d: use a number greater than or equal to %d", variable, n, low)
	}
	return n, nil
}

// read reads a template from stdin ("-"), an http(s) URL or a file.
func (c *Client) read(ctx context.Context, from string) ([]byte, error) {
	switch {
	case from == "" || from == "-":
		if c.stdin == nil {
			return nil, errors.New("no standard input to read the template from")
		}
		data, err := io.ReadAll(c.stdin)
		if err != nil {
			return nil, fmt.Errorf("reading the template from standard input: %w", err)
		}
		return data, nil
	case strings.HasPrefix(from, "http://") || strings.HasPrefix(from, "https://"):
		return c.repos.ReadURL(ctx, from)
	}
	path := from
	if strings.HasPrefix(path, "~/") {
		path = filepath.Join(c.cfg.HomeDir(), path[2:])
	}
	data, err := os.ReadFile(path)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("template file %s does not exist", path)
		}
		return nil, fmt.Errorf("reading template file: %w", err)
	}
	return data, nil
}

func (c *Client) readConfigMap(ctx context.Context, src ConfigMapSource, currentNamespace string) ([]byte, error) {
	if c.cluster == nil {
		return nil, errors.New("--from-config-map reads a ConfigMap of the management cluster, and there is none: check --kubeconfig")
	}
	ns, key := src.Namespace, src.Key
	if ns == "" {
		ns = currentNamespace
	}
	if key == "" {
		key = DefaultConfigMapKey
	}
	cm, err := c.cluster.ConfigMap(ctx, ns, src.Name)
	if err != nil {
		return nil, err
	}
	data, ok := cm.Data[key]
	if !ok {
		keys := make([]string, 0, len(cm.Data))
		for k := range cm.Data {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		return nil, fmt.Errorf("ConfigMap %s/%s has no key %q (keys: %s): choose one with --from-config-map-key", ns, src.Name, key, strings.Join(keys, ", "))
	}
	return []byte(data), nil
}

// resolveInfrastructure resolves the provider whose repository holds the template. Without a name, the
// management cluster must have exactly one infrastructure provider; without a version, the installed one
// is preferred.
func (c *Client) resolveInfrastructure(ctx context.Context, nameVersion string) (*release, error) {
	if nameVersion == "" {
		name, err := c.defaultInfrastructure(ctx)
		if err != nil {
			return nil, err
		}
		nameVersion = name
	}
	return c.resolve(ctx, clusterctlv1.InfrastructureProviderType, nameVersion, true)
}

func (c *Client) defaultInfrastructure(ctx context.Context) (string, error) {
	if err := c.clusterAvailable(ctx); err != nil {
		return "", fmt.Errorf("no infrastructure provider given: specify one with --infrastructure (without it, clusterctl uses the one installed in the management cluster, which cannot be reached: %w)", err)
	}
	installed, err := c.cluster.InstalledProviders(ctx)
	if err != nil {
		return "", fmt.Errorf("%w: specify an infrastructure provider with --infrastructure", err)
	}
	var names []string
	for _, p := range installed {
		if p.GetProviderType() == clusterctlv1.InfrastructureProviderType {
			names = append(names, p.ProviderName)
		}
	}
	slices.Sort(names)
	names = slices.Compact(names)
	switch len(names) {
	case 1:
		return names[0], nil
	case 0:
		return "", errors.New("no infrastructure provider is installed in the management cluster: specify one with --infrastructure")
	}
	return "", fmt.Errorf("more than one infrastructure provider is installed in the management cluster (%s): choose one with --infrastructure", strings.Join(names, ", "))
}

// explainTemplate turns a missing template into an error that lists the flavors the release has.
func (c *Client) explainTemplate(ctx context.Context, r *release, flavor string, err error) error {
	var missing *repository.FileNotFoundError
	if !errors.As(err, &missing) {
		return err
	}
	what := "no default cluster template (" + template.ClusterTemplateFile("") + ")"
	if flavor != "" {
		what = fmt.Sprintf("no flavor %q (%s)", flavor, template.ClusterTemplateFile(flavor))
	}
	msg := fmt.Sprintf("%s has %s", r, what)
	if lister, ok := r.repo.(repository.FileLister); ok {
		if files, lerr := lister.Files(ctx, r.version); lerr == nil {
			var flavors []string
			for _, f := range files {
				switch {
				case f == template.ClusterTemplateFile(""):
					flavors = append([]string{"(default, no --flavor)"}, flavors...)
				case strings.HasPrefix(f, "cluster-template-") && strings.HasSuffix(f, ".yaml"):
					flavors = append(flavors, strings.TrimSuffix(strings.TrimPrefix(f, "cluster-template-"), ".yaml"))
				}
			}
			if len(flavors) > 0 {
				return fmt.Errorf("%s: use one of its flavors with --flavor: %s", msg, strings.Join(flavors, ", "))
			}
			return fmt.Errorf("%s, nor any other cluster template: use --from to give a template", msg)
		}
	}
	return fmt.Errorf("%s (repository %s)", msg, r.repo.URL())
}
