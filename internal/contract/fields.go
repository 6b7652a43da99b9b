package contract

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// Path is a field path in an object, for example {"status", "initialization", "provisioned"}.
type Path []string

func (p Path) String() string { return "." + strings.Join(p, ".") }

// ErrFieldNotFound is returned (wrapped) when a field is not set.
var ErrFieldNotFound = fmt.Errorf("field not found")

// boolField reads a bool; found is false when the field is absent.
func boolField(obj *unstructured.Unstructured, p Path) (value, found bool, err error) {
	v, found, err := unstructured.NestedBool(obj.Object, p...)
	if err != nil {
		return false, false, fmt.Errorf("reading %s of %s %s: %w", p, obj.GetKind(), obj.GetName(), err)
	}
	return v, found, nil
}

// stringField reads a string; found is false when the field is absent.
func stringField(obj *unstructured.Unstructured, p Path) (value string, found bool, err error) {
	v, found, err := unstructured.NestedString(obj.Object, p...)
	if err != nil {
		return "", false, fmt.Errorf("reading %s of %s %s: %w", p, obj.GetKind(), obj.GetName(), err)
	}
	return v, found, nil
}

// int64Field reads an integer, accepting JSON numbers decoded as int64 or float64.
func int64Field(obj *unstructured.Unstructured, p Path) (value int64, found bool, err error) {
	raw, found, err := unstructured.NestedFieldNoCopy(obj.Object, p...)
	if err != nil || !found || raw == nil {
		return 0, false, err
	}
	switch v := raw.(type) {
	case int64:
		return v, true, nil
	case int32:
		return int64(v), true, nil
	case int:
		return int64(v), true, nil
	case float64:
		return int64(v), true, nil
	default:
		return 0, false, fmt.Errorf("reading %s of %s %s: %v is a %T, not an integer", p, obj.GetKind(), obj.GetName(), raw, raw)
	}
}

// int32Ptr reads an optional int32 field.
func int32Ptr(obj *unstructured.Unstructured, p Path) (*int32, error) {
	v, found, err := int64Field(obj, p)
	if err != nil || !found {
		return nil, err
	}
	i := int32(v)
	return &i, nil
}
