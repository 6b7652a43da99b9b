// Package proposal serves the operator proposal's management.cluster.x-k8s.io/v1alpha1 API: it
// translates each CoreProvider, BootstrapProvider, ControlPlaneProvider and InfrastructureProvider of that
// group into the operator.cluster.x-k8s.io/v1alpha2 object of the same kind, name and namespace, which it
// owns (an owner reference, and a finalizer that deletes it first), and that the operator's provider
// controller installs; it mirrors that object's status back, with a Translated condition naming it. It
// watches the v1alpha1 kinds and the v1alpha2 objects it owns.
package proposal

import (
	"fmt"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation/field"

	managementv1 "github.com/capstan-dev/capstan/api/management/v1alpha1"
	operatorv1 "github.com/capstan-dev/capstan/api/operator/v1alpha2"
)

// Spec translates a v1alpha1 spec into the v1alpha2 spec it stands for. It fails on values v1alpha2
// cannot hold (a syncPeriod that is neither seconds nor a duration), naming the field.
func Spec(in *managementv1.ProviderSpec) (*operatorv1.ProviderSpec, error) {
	out := &operatorv1.ProviderSpec{Version: in.Version, Paused: in.Paused}
	if in.SecretName != "" {
		out.ConfigSecret = &operatorv1.SecretReference{Name: in.SecretName, Namespace: in.SecretNamespace}
	}
	if fc := in.FetchConfig; fc != nil {
		out.FetchConfig = &operatorv1.FetchConfiguration{URL: fc.URL, Selector: fc.Selector.DeepCopy()}
	}
	path := field.NewPath("spec")
	if m := in.Manager; m != nil {
		mgr, err := manager(path.Child("manager"), m)
		if err != nil {
			return nil, err
		}
		out.Manager = mgr
	}
	if d := in.Deployment; d != nil {
		for i, c := range d.Containers {
			if c.Image != nil {
				if err := c.Image.Validate(); err != nil {
					return nil, field.Invalid(path.Child("deployment", "containers").Index(i).Child("image"), string(c.Image.Invalid), "give a string, or an object of repository, name and tag")
				}
			}
		}
		out.Deployment = deployment(d)
	}
	return out, nil
}

func manager(path *field.Path, m *managementv1.ManagerSpec) (*operatorv1.ManagerSpec, error) {
	out := &operatorv1.ManagerSpec{
		ControllerManagerConfiguration: operatorv1.ControllerManagerConfiguration{
			LeaderElection:          m.LeaderElection.DeepCopy(),
			CacheNamespace:          m.CacheNamespace,
			GracefulShutdownTimeout: m.GracefulShutdownTimeout.DeepCopy(),
			Metrics:                 m.Metrics,
			Health:                  m.Health,
			Webhook:                 *m.Webhook.DeepCopy(),
		},
		ProfilerAddress:         m.ProfilerAddress,
		MaxConcurrentReconciles: m.MaxConcurrentReconciles,
		Verbosity:               1,
		Debug:                   m.Debug,
	}
	if m.Verbosity != nil {
		out.Verbosity = *m.Verbosity
	}
	if len(m.FeatureGates) > 0 {
		out.FeatureGates = map[string]bool{}
		for k, v := range m.FeatureGates {
			out.FeatureGates[k] = v
		}
	}
	if m.MetricsAddress != "" && out.Metrics.BindAddress == "" {
		out.Metrics.BindAddress = m.MetricsAddress
	}
	if sp := m.SyncPeriod; sp != nil {
		d, err := seconds(*sp)
		if err != nil {
			return nil, field.Invalid(path.Child("syncPeriod"), sp.String(), err.Error())
		}
		out.SyncPeriod = &d
	}
	return out, nil
}

// seconds reads a number of seconds, or a duration.
func seconds(v intstr.IntOrString) (metav1.Duration, error) {
	if v.Type == intstr.Int {
		if v.IntVal < 0 {
			return metav1.Duration{}, fmt.Errorf("a number of seconds must not be negative")
		}
		return metav1.Duration{Duration: time.Duration(v.IntVal) * time.Second}, nil
	}
	d, err := time.ParseDuration(v.StrVal)
	if err != nil || d < 0 {
		return metav1.Duration{}, fmt.Errorf("give a number of seconds (660) or a duration (11m)")
	}
	return metav1.Duration{Duration: d}, nil
}

func deployment(d *managementv1.DeploymentSpec) *operatorv1.DeploymentSpec {
	out := &operatorv1.DeploymentSpec{Replicas: d.Replicas, NodeSelector: d.NodeSelector, Affinity: d.Affinity.DeepCopy()}
	if d.Tolerations != nil {
		t := append(d.Tolerations[:0:0], d.Tolerations...)
		out.Tolerations = &t
	}
	for _, c := range d.Containers {
		cs := operatorv1.ContainerSpec{Name: c.Name, Env: c.Env, Resources: c.Resources.DeepCopy()}
		if c.Image != nil {
			if c.Image.Parts != nil {
				cs.Image = c.Image.Parts.DeepCopy()
			} else if ref := strings.TrimSpace(c.Image.Reference); ref != "" {
				cs.ImageURL = &ref
			}
		}
		if len(c.Args) > 0 {
			cs.Args = map[string]string{}
			for k, v := range c.Args {
				if !strings.HasPrefix(k, "-") {
					k = "--" + k
				}
				cs.Args[k] = v.String()
			}
		}
		out.Containers = append(out.Containers, cs)
	}
	return out
}
