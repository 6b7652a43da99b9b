// Package validation holds the rules a provider's spec must follow beyond its schema: the fields capstan
// accepts in the schema (they are upstream's) but refuses because no Cluster API manager could act on
// them, the probe paths managers serve, references to ConfigMaps and Secrets of other namespaces, and
// debug mode's "no other changes" rule. The operator's admission webhook refuses what breaks them, and its
// controller checks them again (a webhook can be bypassed).
package validation

import (
	"fmt"
	"maps"
	"reflect"
	"slices"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"

	operatorv1 "github.com/capstan-dev/capstan/api/operator/v1alpha2"
	"github.com/capstan-dev/capstan/internal/operator/customize"
)

// Options are the operator's settings the rules depend on.
type Options struct {
	// ReferenceNamespaces are the namespaces, besides the provider's own, whose ConfigMaps and Secrets a
	// provider may reference (configSecret, additionalManifests); "*" allows every namespace.
	ReferenceNamespaces []string
}

// AllowsNamespace reports whether a provider of namespace own may reference objects of namespace ns.
func (o Options) AllowsNamespace(own, ns string) bool {
	return ns == "" || ns == own || slices.Contains(o.ReferenceNamespaces, ns) || slices.Contains(o.ReferenceNamespaces, "*")
}

// Spec returns what is wrong with the spec of a provider of namespace ns: the fields refused everywhere,
// the probe paths, references to other namespaces that o does not allow.
func Spec(ns string, spec *operatorv1.ProviderSpec, o Options) field.ErrorList {
	path := field.NewPath("spec")
	var errs field.ErrorList
	errs = append(errs, manager(path.Child("manager"), spec.Manager)...)
	names := slices.Sorted(maps.Keys(spec.AdditionalDeployments))
	for _, name := range names {
		errs = append(errs, manager(path.Child("additionalDeployments").Key(name).Child("manager"), spec.AdditionalDeployments[name].Manager)...)
	}
	if ref := spec.ConfigSecret; ref != nil && !o.AllowsNamespace(ns, ref.Namespace) {
		errs = append(errs, field.Forbidden(path.Child("configSecret", "namespace"), crossNamespace("Secret", ns, ref.Namespace)))
	}
	if ref := spec.AdditionalManifestsRef; ref != nil && !o.AllowsNamespace(ns, ref.Namespace) {
		errs = append(errs, field.Forbidden(path.Child("additionalManifests", "namespace"), crossNamespace("ConfigMap", ns, ref.Namespace)))
	}
	return errs
}

func crossNamespace(kind, own, ns string) string {
	return fmt.Sprintf("a provider may use a %s of its own namespace %s only, unless the operator's --allowed-reference-namespaces lists %s: move the %s to %s, or remove the namespace",
		kind, own, ns, kind, own)
}

// Update returns what is wrong with changing a provider's spec from old to spec: while debug mode is on,
// before or after the change, nothing but spec.manager.debug may change (spec.version may be filled in
// when it was empty, as the operator does).
func Update(old, spec *operatorv1.ProviderSpec) field.ErrorList {
	if !debug(old) && !debug(spec) {
		return nil
	}
	a, b := old.DeepCopy(), spec.DeepCopy()
	for _, s := range []*operatorv1.ProviderSpec{a, b} {
		if s.Manager != nil {
			s.Manager.Debug = false
		}
	}
	if a.Version == "" {
		a.Version = b.Version
	}
	if reflect.DeepEqual(normalize(a), normalize(b)) {
		return nil
	}
	if !debug(old) {
		return field.ErrorList{field.Forbidden(field.NewPath("spec"),
			"debug mode (spec.manager.debug: true) is turned on alone: no other field may change with it; make the other changes first, then set spec.manager.debug to true alone")}
	}
	return field.ErrorList{field.Forbidden(field.NewPath("spec"),
		"the provider is in debug mode (spec.manager.debug: true): no other field may change while it is; set spec.manager.debug to false first, alone")}
}

func debug(s *operatorv1.ProviderSpec) bool { return s != nil && s.Manager != nil && s.Manager.Debug }

// normalize makes an empty manager the same as none.
func normalize(s *operatorv1.ProviderSpec) *operatorv1.ProviderSpec {
	if s.Manager != nil && reflect.DeepEqual(*s.Manager, operatorv1.ManagerSpec{}) {
		s.Manager = nil
	}
	return s
}

// Warnings returns what of the spec is ignored: the namespace key of container args.
func Warnings(spec *operatorv1.ProviderSpec) []string {
	var out []string
	check := func(path *field.Path, d *operatorv1.DeploymentSpec) {
		if d == nil {
			return
		}
		for i, c := range d.Containers {
			for k := range c.Args {
				if customize.IgnoredArg(k) {
					out = append(out, fmt.Sprintf("%s is ignored: providers watch every namespace; spec.manager.cacheNamespace sets --namespace",
						path.Child("containers").Index(i).Child("args").Key(k)))
				}
			}
		}
	}
	check(field.NewPath("spec", "deployment"), spec.Deployment)
	for name, d := range spec.AdditionalDeployments {
		check(field.NewPath("spec", "additionalDeployments").Key(name).Child("deployment"), d.Deployment)
	}
	sort.Strings(out)
	return out
}

// noFlag is the message of the fields no Cluster API manager has a flag for.
const noFlag = "Cluster API controller managers have no flag for it: remove it"

func manager(path *field.Path, m *operatorv1.ManagerSpec) field.ErrorList {
	if m == nil {
		return nil
	}
	var errs field.ErrorList
	if c := m.Controller; c != nil {
		if c.CacheSyncTimeout != nil {
			errs = append(errs, field.Forbidden(path.Child("controller", "cacheSyncTimeout"), noFlag))
		}
		if c.RecoverPanic != nil {
			errs = append(errs, field.Forbidden(path.Child("controller", "recoverPanic"), noFlag))
		}
	}
	if le := m.LeaderElection; le != nil && le.ResourceLock != "" && !strings.EqualFold(le.ResourceLock, "leases") {
		errs = append(errs, field.NotSupported(path.Child("leaderElection", "resourceLock"), le.ResourceLock, []string{"leases"}))
	}
	for _, p := range []struct {
		name, value, served string
	}{
		{"readinessEndpointName", m.Health.ReadinessEndpointName, "readyz"},
		{"livenessEndpointName", m.Health.LivenessEndpointName, "healthz"},
	} {
		v := strings.TrimPrefix(p.value, "/")
		if v != "" && v != p.served && !strings.HasPrefix(v, p.served+"/") {
			errs = append(errs, field.Invalid(path.Child("health", p.name), p.value,
				fmt.Sprintf("managers serve this probe at /%s (and /%s/<check>) only: the probe would fail; use %s or remove it", p.served, p.served, p.served)))
		}
	}
	return errs
}
