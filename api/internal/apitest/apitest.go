// Package apitest holds checks shared by the tests of the API packages.
package apitest

import (
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"sort"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// EmptyObjects serializes obj and lists the paths of the empty JSON objects in it, but metadata's: the
// v1beta2 types mark optional structs omitzero, and many have minProperties 1, so a client that sends an
// empty one ("deletion": {}) is refused by the API server.
func EmptyObjects(obj any) ([]string, error) {
	data, err := json.Marshal(obj)
	if err != nil {
		return nil, err
	}
	var doc any
	if err := json.Unmarshal(data, &doc); err != nil {
		return nil, err
	}
	out := emptyObjects("", doc)
	sort.Strings(out)
	return out, nil
}

func emptyObjects(path string, v any) []string {
	var out []string
	switch v := v.(type) {
	case map[string]any:
		if len(v) == 0 {
			return []string{path}
		}
		for k, child := range v {
			if path == "" && k == "metadata" {
				continue
			}
			out = append(out, emptyObjects(path+"."+k, child)...)
		}
	case []any:
		for i, child := range v {
			out = append(out, emptyObjects(fmt.Sprintf("%s[%d]", path, i), child)...)
		}
	}
	return out
}

// ExpectNoEmptyObjects fails t for each object, by name, that serializes an empty object (EmptyObjects).
func ExpectNoEmptyObjects(t *testing.T, objects map[string]any) {
	t.Helper()
	for name, obj := range objects {
		empty, err := EmptyObjects(obj)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if len(empty) > 0 {
			t.Errorf("%s serializes empty objects at %v", name, empty)
		}
	}
}

// ZeroObjects returns a zero value of every type addToScheme registers for gv from the package of sample,
// by kind: the package's kinds and their lists.
func ZeroObjects(addToScheme func(*runtime.Scheme) error, gv schema.GroupVersion, sample any) (map[string]any, error) {
	scheme := runtime.NewScheme()
	if err := addToScheme(scheme); err != nil {
		return nil, err
	}
	pkg := reflect.TypeOf(sample).Elem().PkgPath()
	out := map[string]any{}
	for kind, typ := range scheme.KnownTypes(gv) {
		if typ.PkgPath() == pkg {
			out[kind] = reflect.New(typ).Interface()
		}
	}
	return out, nil
}

// ConditionTypes serializes a v1beta2 status and returns the types of its conditions (status.conditions)
// and of its v1beta1 conditions (status.deprecated.v1beta1.conditions), as a client reads them.
func ConditionTypes(status any) (conditions, v1beta1 []string, err error) {
	data, err := json.Marshal(status)
	if err != nil {
		return nil, nil, err
	}
	type condition struct {
		Type string `json:"type"`
	}
	var s struct {
		Conditions []condition `json:"conditions"`
		Deprecated struct {
			V1Beta1 struct {
				Conditions []condition `json:"conditions"`
			} `json:"v1beta1"`
		} `json:"deprecated"`
	}
	if err := json.Unmarshal(data, &s); err != nil {
		return nil, nil, err
	}
	for _, c := range s.Conditions {
		conditions = append(conditions, c.Type)
	}
	for _, c := range s.Deprecated.V1Beta1.Conditions {
		v1beta1 = append(v1beta1, c.Type)
	}
	return conditions, v1beta1, nil
}

// Conditioned is a v1beta2 object with the condition accessors; C is the v1beta1 conditions type.
type Conditioned[C any] interface {
	GetConditions() []metav1.Condition
	SetConditions([]metav1.Condition)
	GetV1Beta1Conditions() C
	SetV1Beta1Conditions(C)
}

// ExpectConditionAccessors checks the accessors of a new object: it has no v1beta1 conditions; once
// conditionType is set with SetConditions and v1beta1 (holding the one condition v1beta1Type) with
// SetV1Beta1Conditions, a client reads them in status.conditions and status.deprecated.v1beta1.conditions,
// and the getters return them.
func ExpectConditionAccessors[C any](t *testing.T, obj Conditioned[C], status func() any, conditionType string, v1beta1 C, v1beta1Type string) {
	t.Helper()
	if got := obj.GetV1Beta1Conditions(); reflect.ValueOf(got).Len() != 0 {
		t.Fatalf("a new object has v1beta1 conditions %v", got)
	}
	obj.SetV1Beta1Conditions(v1beta1)
	obj.SetConditions([]metav1.Condition{{Type: conditionType, Status: metav1.ConditionTrue}})
	conditions, v1beta1Types, err := ConditionTypes(status())
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(conditions, []string{conditionType}) || !slices.Equal(v1beta1Types, []string{v1beta1Type}) {
		t.Errorf("status.conditions has %v, status.deprecated.v1beta1.conditions %v; want [%s] and [%s]",
			conditions, v1beta1Types, conditionType, v1beta1Type)
	}
	if got := obj.GetConditions(); len(got) != 1 || got[0].Type != conditionType {
		t.Errorf("GetConditions returns %v", got)
	}
	if got := obj.GetV1Beta1Conditions(); !reflect.DeepEqual(got, v1beta1) {
		t.Errorf("GetV1Beta1Conditions returns %v, want %v", got, v1beta1)
	}
}
