// Package customize changes a provider's rendered components as its spec says: spec.deployment and
// spec.manager on the controller manager's Deployment (spec.additionalDeployments on the others), the
// pause (every Deployment at zero replicas, the original count recorded), and the patches. It is pure:
// objects in, objects out.
package customize

import (
	"fmt"
	"maps"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	operatorv1 "github.com/capstan-dev/capstan/api/operator/v1alpha2"
)

// ManagerContainer is the name of the container spec.manager applies to (else the first container).
const ManagerContainer = "manager"

// managerDeploymentName matches the name Cluster API providers give their controller manager Deployment
// (capi-controller-manager, capa-controller-manager, ...), which gets spec.deployment and spec.manager when
// the components have several Deployments.
var managerDeploymentName = regexp.MustCompile(`^ca.*-controller-manager$`)

// Deployments applies spec.deployment, spec.manager and spec.additionalDeployments to the Deployments of
// objs, then the pause: a paused provider's Deployments get zero replicas and record the replicas they
// would have had in the OriginalReplicasAnnotation.
func Deployments(objs []unstructured.Unstructured, spec *operatorv1.ProviderSpec) error {
	count := 0
	for i := range objs {
		if isDeployment(&objs[i]) {
			count++
		}
	}
	for i := range objs {
		o := &objs[i]
		if !isDeployment(o) {
			continue
		}
		d := &appsv1.Deployment{}
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(o.Object, d); err != nil {
			return fmt.Errorf("reading Deployment %s: %w", o.GetName(), err)
		}
		dSpec, mSpec := spec.Deployment, spec.Manager
		if count > 1 && !managerDeploymentName.MatchString(d.Name) {
			extra := spec.AdditionalDeployments[d.Name]
			dSpec, mSpec = extra.Deployment, extra.Manager
		}
		if err := deployment(d, dSpec, mSpec); err != nil {
			return fmt.Errorf("the Deployment %s: %w", d.Name, err)
		}
		if spec.Paused {
			pause(d)
		}
		u, err := runtime.DefaultUnstructuredConverter.ToUnstructured(d)
		if err != nil {
			return err
		}
		// The conversion adds empty fields (status, creationTimestamp) that server-side apply would own.
		unstructured.RemoveNestedField(u, "status")
		unstructured.RemoveNestedField(u, "metadata", "creationTimestamp")
		unstructured.RemoveNestedField(u, "spec", "template", "metadata", "creationTimestamp")
		o.Object = u
		o.SetAPIVersion("apps/v1")
		o.SetKind("Deployment")
	}
	for name := range spec.AdditionalDeployments {
		if !slices.ContainsFunc(objs, func(o unstructured.Unstructured) bool { return isDeployment(&o) && o.GetName() == name }) {
			return fmt.Errorf("spec.additionalDeployments names the Deployment %q, which the provider's components do not have", name)
		}
	}
	return nil
}

func isDeployment(o *unstructured.Unstructured) bool {
	return o.GetKind() == "Deployment" && o.GroupVersionKind().Group == "apps"
}

// pause scales d to zero, recording the replicas it would have had.
func pause(d *appsv1.Deployment) {
	replicas := int32(1)
	if d.Spec.Replicas != nil {
		replicas = *d.Spec.Replicas
	}
	if d.Annotations == nil {
		d.Annotations = map[string]string{}
	}
	d.Annotations[operatorv1.OriginalReplicasAnnotation] = strconv.Itoa(int(replicas))
	zero := int32(0)
	d.Spec.Replicas = &zero
}

func deployment(d *appsv1.Deployment, dSpec *operatorv1.DeploymentSpec, mSpec *operatorv1.ManagerSpec) error {
	if dSpec != nil {
		if dSpec.Replicas != nil {
			r := int32(*dSpec.Replicas) //nolint:gosec // The schema bounds replicas at 0; counts beyond int32 are not Deployments.
			d.Spec.Replicas = &r
		}
		pod := &d.Spec.Template.Spec
		if dSpec.NodeSelector != nil {
			pod.NodeSelector = dSpec.NodeSelector
		}
		if dSpec.Tolerations != nil {
			pod.Tolerations = *dSpec.Tolerations
		}
		if dSpec.Affinity != nil {
			pod.Affinity = dSpec.Affinity
		}
		if dSpec.ServiceAccountName != "" {
			pod.ServiceAccountName = dSpec.ServiceAccountName
		}
		if dSpec.ImagePullSecrets != nil {
			pod.ImagePullSecrets = dSpec.ImagePullSecrets
		}
		for _, cs := range dSpec.Containers {
			if err := container(pod, cs); err != nil {
				return err
			}
		}
	}
	if mSpec != nil {
		c := managerContainer(&d.Spec.Template.Spec)
		if c == nil {
			return fmt.Errorf("spec.manager: the Deployment has no containers")
		}
		if err := manager(c, mSpec); err != nil {
			return fmt.Errorf("spec.manager: %w", err)
		}
	}
	return nil
}

func managerContainer(pod *corev1.PodSpec) *corev1.Container {
	for i := range pod.Containers {
		if pod.Containers[i].Name == ManagerContainer {
			return &pod.Containers[i]
		}
	}
	if len(pod.Containers) > 0 {
		return &pod.Containers[0]
	}
	return nil
}

func container(pod *corev1.PodSpec, cs operatorv1.ContainerSpec) error {
	var names []string
	for i := range pod.Containers {
		c := &pod.Containers[i]
		names = append(names, c.Name)
		if c.Name != cs.Name {
			continue
		}
		keys := make([]string, 0, len(cs.Args))
		for k := range cs.Args {
			if IgnoredArg(k) {
				continue
			}
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			c.Args = SetArg(c.Args, k, cs.Args[k])
		}
		for _, e := range cs.Env {
			c.Env = slices.DeleteFunc(c.Env, func(x corev1.EnvVar) bool { return x.Name == e.Name })
			c.Env = append(c.Env, e)
		}
		if cs.Resources != nil {
			c.Resources = *cs.Resources
		}
		if cs.ImageURL != nil {
			c.Image = *cs.ImageURL
		}
		if cs.Image != nil {
			c.Image = ReplaceImageParts(c.Image, *cs.Image)
		}
		if cs.Command != nil {
			c.Command = cs.Command
		}
		return nil
	}
	return fmt.Errorf("spec.deployment.containers names the container %q, which the Deployment has not (it has %s)", cs.Name, strings.Join(names, ", "))
}

// defaultVerbosity is the verbosity that leaves the manifest's --v as it is.
const defaultVerbosity = 1

// Debug mode's settings, the operator proposal's: verbosity 5 and the profiler on localhost:6060.
const (
	DebugVerbosity       = 5
	DebugProfilerAddress = "localhost:6060"
)

// CapstanImage reports whether image is capstan's own, whose containers run one of capstan's managers:
// an image named capstan, in any registry (ghcr.io/capstan-dev/capstan, a mirror).
func CapstanImage(image string) bool {
	rest, _, _ := strings.Cut(image, "@")
	if i := strings.LastIndex(rest, ":"); i > strings.LastIndex(rest, "/") {
		rest = rest[:i]
	}
	return rest == "capstan" || strings.HasSuffix(rest, "/capstan")
}

// IgnoredArg reports whether a key of spec.deployment.containers[].args is ignored: namespace, as the
// operator proposal says, since providers watch every namespace (spec.manager.cacheNamespace is the way to
// set --namespace).
func IgnoredArg(key string) bool { return strings.TrimLeft(key, "-") == "namespace" }

// ReplaceImageParts replaces the parts of image (repository/name:tag, or @digest) that parts gives. A new
// tag drops a digest, which would pin the old image.
func ReplaceImageParts(image string, parts operatorv1.ImageMeta) string {
	rest, digest, _ := strings.Cut(image, "@")
	repo, tag := rest, ""
	if i := strings.LastIndex(rest, ":"); i > strings.LastIndex(rest, "/") {
		repo, tag = rest[:i], rest[i+1:]
	}
	path, name := "", repo
	if i := strings.LastIndex(repo, "/"); i >= 0 {
		path, name = repo[:i], repo[i+1:]
	}
	if parts.Repository != "" {
		path = strings.TrimSuffix(parts.Repository, "/")
	}
	if parts.Name != "" {
		name = parts.Name
	}
	if parts.Tag != "" {
		tag, digest = parts.Tag, ""
	}
	out := name
	if path != "" {
		out = path + "/" + name
	}
	if tag != "" {
		out += ":" + tag
	}
	if digest != "" {
		out += "@" + digest
	}
	return out
}
func manager(c *corev1.Container, m *operatorv1.ManagerSpec) error {
	if m.Controller != nil {
		kinds := slices.Sorted(maps.Keys(m.Controller.GroupKindConcurrency))
		for _, k := range kinds {
			kind, _, _ := strings.Cut(k, ".")
			c.Args = SetArg(c.Args, "--"+strings.ToLower(kind)+"-concurrency", strconv.Itoa(m.Controller.GroupKindConcurrency[k]))
		}
	}
	if m.MaxConcurrentReconciles != 0 {
		c.Args = SetArg(c.Args, "--max-concurrent-reconciles", strconv.Itoa(m.MaxConcurrentReconciles))
	}
	for _, f := range []struct{ flag, value string }{
		{"--namespace", m.CacheNamespace},
		{"--health-addr", m.Health.HealthProbeBindAddress},
		{"--metrics-bind-addr", m.Metrics.BindAddress},
		{"--diagnostics-address", m.Metrics.DiagnosticsAddress},
		{"--webhook-host", m.Webhook.Host},
		{"--webhook-cert-dir", m.Webhook.CertDir},
		{"--profiler-address", m.ProfilerAddress},
	} {
		if f.value != "" {
			c.Args = SetArg(c.Args, f.flag, f.value)
		}
	}
	if m.Metrics.InsecureDiagnostics {
		c.Args = SetArg(c.Args, "--insecure-diagnostics", "true")
	}
	if m.Webhook.Port != nil {
		c.Args = SetArg(c.Args, "--webhook-port", strconv.Itoa(*m.Webhook.Port))
	}
	if m.Health.LivenessEndpointName != "" && c.LivenessProbe != nil && c.LivenessProbe.HTTPGet != nil {
		c.LivenessProbe.HTTPGet.Path = "/" + m.Health.LivenessEndpointName
	}
	if m.Health.ReadinessEndpointName != "" && c.ReadinessProbe != nil && c.ReadinessProbe.HTTPGet != nil {
		c.ReadinessProbe.HTTPGet.Path = "/" + m.Health.ReadinessEndpointName
	}
	if le := m.LeaderElection; le != nil && le.LeaderElect != nil {
		c.Args = SetArg(c.Args, "--leader-elect", strconv.FormatBool(*le.LeaderElect))
		if *le.LeaderElect {
			switch {
			case le.ResourceName != "" && le.ResourceNamespace != "":
				c.Args = SetArg(c.Args, "--leader-election-id", le.ResourceNamespace+"/"+le.ResourceName)
			case le.ResourceName != "":
				c.Args = SetArg(c.Args, "--leader-election-id", le.ResourceName)
			case le.ResourceNamespace != "":
				c.Args = SetArg(c.Args, "--leader-election-namespace", le.ResourceNamespace)
			}
			for _, d := range []struct {
				flag string
				v    time.Duration
			}{{"--leader-elect-lease-duration", le.LeaseDuration.Duration}, {"--leader-elect-renew-deadline", le.RenewDeadline.Duration}, {"--leader-elect-retry-period", le.RetryPeriod.Duration}} {
				if s := int(d.v.Round(time.Second).Seconds()); s > 0 {
					c.Args = SetArg(c.Args, d.flag, fmt.Sprintf("%ds", s))
				}
			}
		}
	}
	if m.GracefulShutdownTimeout != nil {
		c.Args = SetArg(c.Args, "--graceful-shutdown-timeout", m.GracefulShutdownTimeout.Duration.String())
	}
	if m.SyncPeriod != nil {
		if s := int(m.SyncPeriod.Duration.Round(time.Second).Seconds()); s > 0 {
			c.Args = SetArg(c.Args, "--sync-period", fmt.Sprintf("%ds", s))
		}
	}
	if m.Verbosity != defaultVerbosity {
		c.Args = SetArg(c.Args, "--v", strconv.Itoa(m.Verbosity))
	}
	if m.Debug {
		c.Args = SetArg(c.Args, "--v", strconv.Itoa(DebugVerbosity))
		c.Args = SetArg(c.Args, "--profiler-address", DebugProfilerAddress)
	}
	if len(m.FeatureGates) > 0 {
		gates := featureGates(c.Args)
		for k, v := range m.FeatureGates {
			gates[k] = v
		}
		pairs := make([]string, 0, len(gates))
		for k, v := range gates {
			pairs = append(pairs, k+"="+strconv.FormatBool(v))
		}
		sort.Strings(pairs)
		c.Args = SetArg(c.Args, "--feature-gates", strings.Join(pairs, ","))
	}
	keys := slices.Sorted(maps.Keys(m.AdditionalArgs))
	for _, k := range keys {
		c.Args = SetArg(c.Args, k, m.AdditionalArgs[k])
	}
	return nil
}

func featureGates(args []string) map[string]bool {
	gates := map[string]bool{}
	for _, a := range args {
		v, ok := strings.CutPrefix(a, "--feature-gates=")
		if !ok {
			continue
		}
		for _, pair := range strings.Split(v, ",") {
			k, val, ok := strings.Cut(strings.TrimSpace(pair), "=")
			if ok {
				gates[k] = strings.EqualFold(val, "true")
			}
		}
	}
	return gates
}

// SetArg sets the flag name (given with or without its leading dashes) to value in args, replacing the
// flag where it is (as --name=value or --name value), else appending --name=value.
func SetArg(args []string, name, value string) []string {
	if !strings.HasPrefix(name, "-") {
		name = "--" + name
	}
	out := slices.Clone(args)
	for i := 0; i < len(out); i++ {
		a := out[i]
		if strings.HasPrefix(a, name+"=") {
			out[i] = name + "=" + value
			return out
		}
		if a == name {
			// "--name value", unless the next argument is another flag (a boolean flag).
			if i+1 < len(out) && !strings.HasPrefix(out[i+1], "-") {
				out = slices.Delete(out, i+1, i+2)
			}
			out[i] = name + "=" + value
			return out
		}
	}
	return append(out, name+"="+value)
}
