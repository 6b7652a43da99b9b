package contract

import (
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
)

// ProviderID returns spec.providerID of an InfraMachine; empty when not set yet.
func ProviderID(obj *unstructured.Unstructured) (string, error) {
	v, _, err := stringField(obj, Path{"spec", "providerID"})
	return v, err
}

// MachineFailureDomain returns the failure domain an InfraMachine reports: status.failureDomain (v1beta2)
// or spec.failureDomain; empty when neither is set.
func MachineFailureDomain(obj *unstructured.Unstructured) (string, error) {
	for _, p := range []Path{{"status", "failureDomain"}, {"spec", "failureDomain"}} {
		v, found, err := stringField(obj, p)
		if err != nil {
			return "", err
		}
		if found && v != "" {
			return v, nil
		}
	}
	return "", nil
}

// Addresses returns status.addresses of an InfraMachine.
func Addresses(obj *unstructured.Unstructured) (clusterv1.MachineAddresses, error) {
	raw, found, err := unstructured.NestedSlice(obj.Object, "status", "addresses")
	if err != nil || !found {
		return nil, err
	}
	out := make(clusterv1.MachineAddresses, 0, len(raw))
	for i, item := range raw {
		m, ok := item.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("reading .status.addresses[%d] of %s %s: want an object", i, obj.GetKind(), obj.GetName())
		}
		t, _ := m["type"].(string)
		a, _ := m["address"].(string)
		out = append(out, clusterv1.MachineAddress{Type: clusterv1.MachineAddressType(t), Address: a})
	}
	return out, nil
}

// DataSecretCreated reports whether a BootstrapConfig has produced its data secret:
// status.initialization.dataSecretCreated under the v1beta2 contract, status.ready under v1beta1.
func DataSecretCreated(obj *unstructured.Unstructured, c Version) (bool, error) {
	p := Path{"status", "ready"}
	if c == V1Beta2 {
		p = Path{"status", "initialization", "dataSecretCreated"}
	}
	v, _, err := boolField(obj, p)
	return v, err
}

// DataSecretName returns status.dataSecretName of a BootstrapConfig; empty when not set yet.
func DataSecretName(obj *unstructured.Unstructured) (string, error) {
	v, _, err := stringField(obj, Path{"status", "dataSecretName"})
	return v, err
}
