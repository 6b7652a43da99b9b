package contract

import (
	"fmt"

	"github.com/blang/semver/v4"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
	"github.com/capstan-dev/capstan/internal/kubeversion"
)

// ControlPlaneInitialized reports whether a ControlPlane says its API server accepts requests:
// status.initialization.controlPlaneInitialized under the v1beta2 contract, status.initialized under v1beta1.
func ControlPlaneInitialized(obj *unstructured.Unstructured, c Version) (bool, error) {
	p := Path{"status", "initialized"}
	if c == V1Beta2 {
		p = Path{"status", "initialization", "controlPlaneInitialized"}
	}
	v, _, err := boolField(obj, p)
	return v, err
}

// ControlPlaneReady returns status.ready of a v1beta1 ControlPlane. Under the v1beta2 contract there is no
// such field and the control plane counts as ready once it is initialized.
func ControlPlaneReady(obj *unstructured.Unstructured, c Version) (bool, error) {
	if c == V1Beta2 {
		return ControlPlaneInitialized(obj, c)
	}
	v, _, err := boolField(obj, Path{"status", "ready"})
	return v, err
}

// ControlPlaneReplicas holds the replica counters a ControlPlane reports; nil means not reported.
type ControlPlaneReplicas struct {
	Desired, Replicas, Ready, Updated, UpToDate, Available, Unavailable *int32
}

// Replicas returns spec.replicas and the status counters of a ControlPlane. The v1beta2 contract reports
// availableReplicas and upToDateReplicas at the top of status; v1beta1 providers report updatedReplicas and
// unavailableReplicas, and may report the v1beta2 counters under status.v1beta2.
func Replicas(obj *unstructured.Unstructured, c Version) (ControlPlaneReplicas, error) {
	var r ControlPlaneReplicas
	var err error
	read := func(dst **int32, paths ...Path) {
		for _, p := range paths {
			if err != nil || *dst != nil {
				return
			}
			*dst, err = int32Ptr(obj, p)
		}
	}
	read(&r.Desired, Path{"spec", "replicas"})
	read(&r.Replicas, Path{"status", "replicas"})
	read(&r.Ready, Path{"status", "readyReplicas"})
	read(&r.Updated, Path{"status", "updatedReplicas"})
	read(&r.Unavailable, Path{"status", "unavailableReplicas"})
	if c == V1Beta2 {
		read(&r.Available, Path{"status", "availableReplicas"})
		read(&r.UpToDate, Path{"status", "upToDateReplicas"})
	} else {
		read(&r.Available, Path{"status", "v1beta2", "availableReplicas"})
		read(&r.UpToDate, Path{"status", "v1beta2", "upToDateReplicas"})
	}
	return r, err
}

// ControlPlaneVersion returns spec.version of a ControlPlane; empty when not set.
func ControlPlaneVersion(obj *unstructured.Unstructured) (string, error) {
	v, _, err := stringField(obj, Path{"spec", "version"})
	return v, err
}

// StatusVersion returns status.version of a ControlPlane: the lowest version of its machines.
func StatusVersion(obj *unstructured.Unstructured) (string, error) {
	v, _, err := stringField(obj, Path{"status", "version"})
	return v, err
}

// ControlPlaneVersions returns status.versions of a ControlPlane: the Kubernetes versions of its Machines
// with how many run each, from the oldest to the newest (both contracts; upstream v1.14 added it); found is
// false when the field is absent. As upstream, a list with a version that does not parse, versions out of
// order or a negative count is an error.
func ControlPlaneVersions(obj *unstructured.Unstructured) (versions []clusterv1.StatusVersion, found bool, err error) {
	p := Path{"status", "versions"}
	raw, found, err := unstructured.NestedFieldNoCopy(obj.Object, p...)
	if err != nil || !found || raw == nil {
		return nil, false, err
	}
	items, ok := raw.([]any)
	if !ok {
		return nil, false, fmt.Errorf("reading %s of %s %s: %v is a %T, not a list", p, obj.GetKind(), obj.GetName(), raw, raw)
	}
	var previous *semver.Version
	for i, item := range items {
		entry, ok := item.(map[string]any)
		if !ok {
			return nil, false, fmt.Errorf("reading %s[%d] of %s %s: %v is a %T, not an object", p, i, obj.GetKind(), obj.GetName(), item, item)
		}
		v := &unstructured.Unstructured{Object: entry}
		version, _, err := stringField(v, Path{"version"})
		if err != nil {
			return nil, false, fmt.Errorf("reading %s[%d] of %s %s: %w", p, i, obj.GetKind(), obj.GetName(), err)
		}
		replicas, _, err := int64Field(v, Path{"replicas"})
		if err != nil {
			return nil, false, fmt.Errorf("reading %s[%d] of %s %s: %w", p, i, obj.GetKind(), obj.GetName(), err)
		}
		parsed, err := semver.ParseTolerant(version)
		if err != nil {
			return nil, false, fmt.Errorf("reading %s[%d].version of %s %s: %w", p, i, obj.GetKind(), obj.GetName(), err)
		}
		if previous != nil && kubeversion.Compare(parsed, *previous) < 0 {
			return nil, false, fmt.Errorf("reading %s of %s %s: version %q and %q are in the wrong order", p, obj.GetKind(), obj.GetName(),
				versions[i-1].Version, version)
		}
		if replicas < 0 {
			return nil, false, fmt.Errorf("reading %s[%d].replicas of %s %s: %d is negative", p, i, obj.GetKind(), obj.GetName(), replicas)
		}
		previous = &parsed
		versions = append(versions, clusterv1.StatusVersion{Version: version, Replicas: int32(replicas)}) //nolint:gosec // A count of Machines.
	}
	return versions, true, nil
}

// Selector returns status.selector of a ControlPlane, the label selector of its Machines as a string.
func Selector(obj *unstructured.Unstructured) (string, error) {
	v, _, err := stringField(obj, Path{"status", "selector"})
	return v, err
}

// MachineTemplateInfrastructureRef returns the infrastructure template reference of a ControlPlane that
// creates Machines: spec.machineTemplate.spec.infrastructureRef (v1beta2) or
// spec.machineTemplate.infrastructureRef (v1beta1). nil when the control plane has none.
func MachineTemplateInfrastructureRef(obj *unstructured.Unstructured, c Version) (*corev1.ObjectReference, error) {
	p := Path{"spec", "machineTemplate", "infrastructureRef"}
	if c == V1Beta2 {
		p = Path{"spec", "machineTemplate", "spec", "infrastructureRef"}
	}
	raw, found, err := unstructured.NestedMap(obj.Object, p...)
	if err != nil || !found {
		return nil, err
	}
	ref := &corev1.ObjectReference{}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(raw, ref); err != nil {
		return nil, fmt.Errorf("reading %s of %s %s: %w", p, obj.GetKind(), obj.GetName(), err)
	}
	if c == V1Beta2 && ref.APIVersion == "" {
		// v1beta2 references carry apiGroup instead of apiVersion.
		if group, ok := raw["apiGroup"].(string); ok {
			ref.APIVersion = group
		}
	}
	return ref, nil
}
