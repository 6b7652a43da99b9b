package topologyplan

import (
	"fmt"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/managedfields"
)

// applyOffline is what a server-side apply of desired by the topology controller (field manager
// FieldManager, forced) makes of current, computed with the API server's own field manager and a schema
// deduced from the objects (maps merge by key, lists are replaced whole, as for a CRD list without
// list-type markers). The topology owns only the fields it sets: a field another writer set stays, and a
// field the topology set before (in current's managedFields) that desired drops goes, unless another
// manager owns it too. An object without managedFields (as `kubectl get -o yaml` prints it) is taken as
// owned by another manager, as the API server takes an object that was never applied.
func applyOffline(current, desired *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	gvk := current.GroupVersionKind()
	fm, err := managedfields.NewDefaultFieldManager(managedfields.NewDeducedTypeConverter(), sameVersion{}, noDefaults{}, unstructuredCreater{},
		gvk, gvk.GroupVersion(), "", nil)
	if err != nil {
		return nil, err
	}
	out, err := fm.Apply(current.DeepCopy(), desired.DeepCopy(), FieldManager, true)
	if err != nil {
		return nil, fmt.Errorf("applying %s %s/%s over the current one: %w", desired.GetKind(), desired.GetNamespace(), desired.GetName(), err)
	}
	u, ok := out.(*unstructured.Unstructured)
	if !ok {
		return nil, fmt.Errorf("applying %s %s/%s: unexpected %T", desired.GetKind(), desired.GetNamespace(), desired.GetName(), out)
	}
	return u, nil
}

// sameObject reports whether current and applied are equal but for their managedFields.
func sameObject(current, applied *unstructured.Unstructured) bool {
	c, a := withoutManagedFields(current), withoutManagedFields(applied)
	return equality.Semantic.DeepEqual(c.Object, a.Object)
}

func withoutManagedFields(u *unstructured.Unstructured) *unstructured.Unstructured {
	c := u.DeepCopy()
	unstructured.RemoveNestedField(c.Object, "metadata", "managedFields")
	return c
}

// dropNulls removes the null values of maps, as the API server does for fields that are not nullable
// (every field of Cluster API's and its providers' CRDs): a template that renders an empty variable, as
// `imageTag: {{ .etcdImageTag }}`, gives `imageTag: null`, which is stored as no imageTag.
func dropNulls(v any) {
	switch t := v.(type) {
	case map[string]any:
		for k, e := range t {
			if e == nil {
				delete(t, k)
				continue
			}
			dropNulls(e)
		}
	case []any:
		for _, e := range t {
			dropNulls(e)
		}
	}
}

// sameVersion converts nothing: the plan applies an object at the version it is stored at.
type sameVersion struct{}

func (sameVersion) Convert(_, _, _ any) error {
	return fmt.Errorf("conversion is not supported")
}

func (sameVersion) ConvertToVersion(in runtime.Object, _ runtime.GroupVersioner) (runtime.Object, error) {
	return in, nil
}

func (sameVersion) ConvertFieldLabel(_ schema.GroupVersionKind, label, value string) (string, string, error) {
	return label, value, nil
}

type noDefaults struct{}

func (noDefaults) Default(runtime.Object) {}

type unstructuredCreater struct{}

func (unstructuredCreater) New(gvk schema.GroupVersionKind) (runtime.Object, error) {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(gvk)
	return u, nil
}
