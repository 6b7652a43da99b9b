package contract

import (
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// ProviderIDList returns spec.providerIDList of an InfraMachinePool: the provider IDs of its instances,
// which match the spec.providerID of their Nodes. found is false when the field is not set.
func ProviderIDList(obj *unstructured.Unstructured) (ids []string, found bool, err error) {
	ids, found, err = unstructured.NestedStringSlice(obj.Object, "spec", "providerIDList")
	if err != nil {
		return nil, false, fmt.Errorf("reading .spec.providerIDList of %s %s: %w", obj.GetKind(), obj.GetName(), err)
	}
	return ids, found, nil
}

// PoolReplicas returns status.replicas of an InfraMachinePool: how many instances it runs. found is false
// when the field is not set.
func PoolReplicas(obj *unstructured.Unstructured) (replicas int32, found bool, err error) {
	v, found, err := int64Field(obj, Path{"status", "replicas"})
	return int32(v), found, err
}

// InfrastructureMachineKind returns status.infrastructureMachineKind of an InfraMachinePool: the kind of the
// InfraMachines it creates for its instances (labelled cluster.x-k8s.io/pool-name), for which the core
// creates MachinePool Machines. Empty when the provider creates none.
func InfrastructureMachineKind(obj *unstructured.Unstructured) (string, error) {
	v, _, err := stringField(obj, Path{"status", "infrastructureMachineKind"})
	return v, err
}
