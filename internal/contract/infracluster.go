package contract

import (
	"fmt"
	"maps"
	"slices"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
)

// Provisioned reports whether an InfraCluster or InfraMachine says its infrastructure is provisioned:
// status.initialization.provisioned under the v1beta2 contract, status.ready under v1beta1.
func Provisioned(obj *unstructured.Unstructured, c Version) (bool, error) {
	p := Path{"status", "ready"}
	if c == V1Beta2 {
		p = Path{"status", "initialization", "provisioned"}
	}
	v, _, err := boolField(obj, p)
	return v, err
}

// ControlPlaneEndpoint returns spec.controlPlaneEndpoint of an InfraCluster or ControlPlane; the zero
// endpoint when it is not set.
func ControlPlaneEndpoint(obj *unstructured.Unstructured) (clusterv1.APIEndpoint, error) {
	host, _, err := stringField(obj, Path{"spec", "controlPlaneEndpoint", "host"})
	if err != nil {
		return clusterv1.APIEndpoint{}, err
	}
	port, _, err := int64Field(obj, Path{"spec", "controlPlaneEndpoint", "port"})
	if err != nil {
		return clusterv1.APIEndpoint{}, err
	}
	return clusterv1.APIEndpoint{Host: host, Port: int32(port)}, nil
}

// FailureDomains returns status.failureDomains of an InfraCluster, which the v1beta1 contract shapes as a
// map from name to {controlPlane, attributes} and the v1beta2 contract as a list of {name, controlPlane,
// attributes}. Both shapes are accepted whatever the contract. nil means none are reported.
func FailureDomains(obj *unstructured.Unstructured) (clusterv1.FailureDomains, error) {
	raw, found, err := unstructured.NestedFieldNoCopy(obj.Object, "status", "failureDomains")
	if err != nil || !found || raw == nil {
		return nil, err
	}
	out := clusterv1.FailureDomains{}
	switch v := raw.(type) {
	case map[string]any:
		for name, spec := range v {
			fd, err := failureDomain(spec)
			if err != nil {
				return nil, fmt.Errorf("reading .status.failureDomains.%s of %s %s: %w", name, obj.GetKind(), obj.GetName(), err)
			}
			out[name] = fd
		}
	case []any:
		for i, item := range v {
			m, ok := item.(map[string]any)
			name, _ := m["name"].(string)
			if !ok || name == "" {
				return nil, fmt.Errorf("reading .status.failureDomains[%d] of %s %s: want an object with a name", i, obj.GetKind(), obj.GetName())
			}
			fd, err := failureDomain(m)
			if err != nil {
				return nil, fmt.Errorf("reading .status.failureDomains[%d] of %s %s: %w", i, obj.GetKind(), obj.GetName(), err)
			}
			out[name] = fd
		}
	default:
		return nil, fmt.Errorf("reading .status.failureDomains of %s %s: want a map or a list, got %T", obj.GetKind(), obj.GetName(), raw)
	}
	return out, nil
}

func failureDomain(raw any) (clusterv1.FailureDomainSpec, error) {
	m, ok := raw.(map[string]any)
	if !ok {
		return clusterv1.FailureDomainSpec{}, fmt.Errorf("want an object, got %T", raw)
	}
	fd := clusterv1.FailureDomainSpec{}
	if cp, ok := m["controlPlane"].(bool); ok {
		fd.ControlPlane = cp
	}
	if attrs, ok := m["attributes"].(map[string]any); ok {
		fd.Attributes = map[string]string{}
		keys := slices.Sorted(maps.Keys(attrs))
		for _, k := range keys {
			fd.Attributes[k] = fmt.Sprint(attrs[k])
		}
	}
	return fd, nil
}

// Failure returns status.failureReason and status.failureMessage of a provider object (v1beta1 contract
// only; the v1beta2 contract has no terminal failures). Empty strings mean no failure.
func Failure(obj *unstructured.Unstructured) (reason, message string, err error) {
	if reason, _, err = stringField(obj, Path{"status", "failureReason"}); err != nil {
		return "", "", err
	}
	if message, _, err = stringField(obj, Path{"status", "failureMessage"}); err != nil {
		return "", "", err
	}
	return reason, message, nil
}
