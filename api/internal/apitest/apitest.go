// Package apitest holds checks shared by the tests of the API packages.
package apitest

import (
	"encoding/json"
	"fmt"
	"reflect"
	"sort"

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
