// Package kubeadmapi writes Cluster API's kubeadm configuration types (ClusterConfiguration,
// InitConfiguration, JoinConfiguration of bootstrap.cluster.x-k8s.io/v1beta1) as the YAML of the kubeadm API
// version that a Kubernetes version's kubeadm reads: kubeadm.k8s.io/v1beta3 before v1.31, v1beta4 from v1.31,
// converting the fields whose shape changed (extra arguments as name/value lists, timeouts) as kubeadm does.
package kubeadmapi

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/blang/semver/v4"
	"sigs.k8s.io/yaml"

	bootstrapv1 "github.com/capstan-dev/capstan/api/bootstrap/kubeadm/v1beta1"
)

// Group is kubeadm's API group.
const Group = "kubeadm.k8s.io"

// The kubeadm API versions capstan writes.
const (
	V1Beta3 = Group + "/v1beta3"
	V1Beta4 = Group + "/v1beta4"
)

var (
	minimumVersion = semver.MustParse("1.22.0")
	v1beta4Version = semver.MustParse("1.31.0")
)

// APIVersion returns the kubeadm API version (group/version) the kubeadm of a Kubernetes version reads.
func APIVersion(kubernetesVersion semver.Version) (string, error) {
	v := semver.Version{Major: kubernetesVersion.Major, Minor: kubernetesVersion.Minor, Patch: kubernetesVersion.Patch}
	switch {
	case v.LT(minimumVersion):
		return "", fmt.Errorf("kubernetes version v%s is not supported: the kubeadm bootstrap provider supports v1.22.0 and later", v)
	case v.LT(v1beta4Version):
		return V1Beta3, nil
	default:
		return V1Beta4, nil
	}
}

// ParseVersion parses a Kubernetes version such as "v1.31.0" or "1.31.0-rc.1".
func ParseVersion(version string) (semver.Version, error) {
	v, err := semver.ParseTolerant(version)
	if err != nil {
		return semver.Version{}, fmt.Errorf("parsing Kubernetes version %q: %w", version, err)
	}
	return v, nil
}

// ClusterConfiguration returns the YAML of a ClusterConfiguration for the kubeadm of version.
func ClusterConfiguration(cfg *bootstrapv1.ClusterConfiguration, version semver.Version) (string, error) {
	if cfg == nil {
		cfg = &bootstrapv1.ClusterConfiguration{}
	}
	return write(cfg, "ClusterConfiguration", version, func(obj map[string]any, apiVersion string) {
		if apiServer := existing(obj, "apiServer"); apiServer != nil && apiVersion == V1Beta4 {
			delete(apiServer, "timeoutForControlPlane") // moved to the Init and Join configurations' timeouts
		}
		// Cluster API's days are kubeadm v1beta4's durations; kubeadm v1beta3 (before Kubernetes v1.31) has
		// none of these fields, and the provider's own CA and key generation applies them there too.
		for days, period := range map[string]string{"certificateValidityPeriodDays": "certificateValidityPeriod", "caCertificateValidityPeriodDays": "caCertificateValidityPeriod"} {
			if d, ok := obj[days].(float64); ok && apiVersion == V1Beta4 {
				obj[period] = (time.Duration(d) * 24 * time.Hour).String()
			}
			delete(obj, days)
		}
		if apiVersion != V1Beta4 {
			delete(obj, "encryptionAlgorithm")
		}
		components := []map[string]any{existing(obj, "apiServer"), existing(obj, "controllerManager"), existing(obj, "scheduler")}
		if etcd := existing(obj, "etcd"); etcd != nil {
			components = append(components, existing(etcd, "local"))
		}
		for _, component := range components {
			convertArgs(component, apiVersion, "extraArgs", "extraEnvs")
		}
	})
}

// InitConfiguration returns the YAML of an InitConfiguration for the kubeadm of version. cluster is needed
// because kubeadm v1beta4 reads the API server's start-up timeout from the InitConfiguration.
func InitConfiguration(cfg *bootstrapv1.InitConfiguration, cluster *bootstrapv1.ClusterConfiguration, version semver.Version) (string, error) {
	if cfg == nil {
		cfg = &bootstrapv1.InitConfiguration{}
	}
	return write(cfg, "InitConfiguration", version, func(obj map[string]any, apiVersion string) {
		convertArgs(existing(obj, "nodeRegistration"), apiVersion, "kubeletExtraArgs", "imagePullSerial")
		if apiVersion == V1Beta4 && cluster != nil && cluster.APIServer.TimeoutForControlPlane != nil {
			child(obj, "timeouts")["controlPlaneComponentHealthCheck"] = cluster.APIServer.TimeoutForControlPlane.Duration.String()
		}
	})
}

// JoinConfiguration returns the YAML of a JoinConfiguration for the kubeadm of version. cluster, nil for
// workers, is needed because kubeadm v1beta4 reads the API server's start-up timeout from it.
func JoinConfiguration(cfg *bootstrapv1.JoinConfiguration, cluster *bootstrapv1.ClusterConfiguration, version semver.Version) (string, error) {
	if cfg == nil {
		cfg = &bootstrapv1.JoinConfiguration{}
	}
	return write(cfg, "JoinConfiguration", version, func(obj map[string]any, apiVersion string) {
		convertArgs(existing(obj, "nodeRegistration"), apiVersion, "kubeletExtraArgs", "imagePullSerial")
		if apiVersion != V1Beta4 {
			return
		}
		if discovery := existing(obj, "discovery"); discovery != nil && discovery["timeout"] != nil {
			timeout := discovery["timeout"]
			delete(discovery, "timeout")
			child(obj, "timeouts")["tlsBootstrap"] = timeout
		}
		if cluster != nil && cluster.APIServer.TimeoutForControlPlane != nil {
			child(obj, "timeouts")["controlPlaneComponentHealthCheck"] = cluster.APIServer.TimeoutForControlPlane.Duration.String()
		}
	})
}

// write marshals obj to a JSON object, lets convert adapt it to the target API version, and returns its YAML.
func write(obj any, kind string, version semver.Version, convert func(obj map[string]any, apiVersion string)) (string, error) {
	apiVersion, err := APIVersion(version)
	if err != nil {
		return "", err
	}
	data, err := json.Marshal(obj)
	if err != nil {
		return "", fmt.Errorf("encoding the %s: %w", kind, err)
	}
	m := map[string]any{}
	if err := json.Unmarshal(data, &m); err != nil {
		return "", fmt.Errorf("encoding the %s: %w", kind, err)
	}
	convert(m, apiVersion)
	m["apiVersion"] = apiVersion
	m["kind"] = kind
	out, err := yaml.Marshal(m)
	if err != nil {
		return "", fmt.Errorf("encoding the %s: %w", kind, err)
	}
	return string(out), nil
}

// existing returns the object under key, nil when absent.
func existing(obj map[string]any, key string) map[string]any {
	c, _ := obj[key].(map[string]any)
	return c
}

// child returns the object under key, creating it when absent.
func child(obj map[string]any, key string) map[string]any {
	if c, ok := obj[key].(map[string]any); ok {
		return c
	}
	c := map[string]any{}
	obj[key] = c
	return c
}

// convertArgs adapts obj, a part of a configuration that takes arguments (a control plane component, local
// etcd, nodeRegistration), to apiVersion: v1beta4 takes the arguments under argsKey as a list of name/value
// pairs; v1beta3 has no field v1beta4Only (extraEnvs, imagePullSerial).
func convertArgs(obj map[string]any, apiVersion, argsKey, v1beta4Only string) {
	if obj == nil {
		return
	}
	if apiVersion == V1Beta4 {
		toArgs(obj, argsKey)
		return
	}
	delete(obj, v1beta4Only)
}

// toArgs turns the map under key into kubeadm v1beta4's list of {name, value}, sorted by name.
func toArgs(obj map[string]any, key string) {
	m, ok := obj[key].(map[string]any)
	if !ok {
		return
	}
	names := slices.Sorted(maps.Keys(m))
	args := make([]any, 0, len(names))
	for _, name := range names {
		args = append(args, map[string]any{"name": name, "value": m[name]})
	}
	obj[key] = args
}
