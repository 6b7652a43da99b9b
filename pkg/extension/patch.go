package extension

import (
	"encoding/json"
	"errors"
	"fmt"

	jsonpatch "github.com/evanphx/json-patch/v5"
	"k8s.io/apimachinery/pkg/runtime"

	hooksv1 "github.com/capstan-dev/capstan/api/runtime/hooks/v1alpha1"
)

// MergePatch returns a patch of a CanUpdateMachine or CanUpdateMachineSet response: the JSON merge patch
// (RFC 7386) that turns current into modified, modified being current with the changes the extension
// can make in place taken from desired. current and modified are objects that encode to JSON, or JSON
// already ([]byte, or a runtime.RawExtension such as the provider's objects of a request). When they do
// not differ the patch is empty: it is not IsDefined and the response leaves it out.
//
//	m := req.Current.Machine.DeepCopy()
//	m.Spec.Version = req.Desired.Machine.Spec.Version // this extension upgrades Kubernetes in place
//	resp.MachinePatch, err = extension.MergePatch(req.Current.Machine, m)
//
// A merge patch replaces a list whole and cannot set a field to null; an extension that needs either
// answers a JSONPatch of its own.
func MergePatch(current, modified any) (hooksv1.Patch, error) {
	from, err := jsonOf(current)
	if err != nil {
		return hooksv1.Patch{}, fmt.Errorf("encoding the current object: %w", err)
	}
	to, err := jsonOf(modified)
	if err != nil {
		return hooksv1.Patch{}, fmt.Errorf("encoding the modified object: %w", err)
	}
	patch, err := jsonpatch.CreateMergePatch(from, to)
	if err != nil {
		return hooksv1.Patch{}, fmt.Errorf("computing the merge patch: %w", err)
	}
	if string(patch) == "{}" {
		return hooksv1.Patch{}, nil
	}
	return hooksv1.Patch{PatchType: hooksv1.JSONMergePatchType, Patch: patch}, nil
}

// jsonOf returns the JSON of v: v itself when it is JSON already.
func jsonOf(v any) ([]byte, error) {
	if r, ok := v.(*runtime.RawExtension); ok && r != nil {
		v = *r
	}
	var data []byte
	switch v := v.(type) {
	case []byte:
		data = v
	case runtime.RawExtension:
		if v.Raw == nil && v.Object != nil {
			return json.Marshal(v.Object)
		}
		data = v.Raw
	default:
		return json.Marshal(v)
	}
	if len(data) == 0 {
		return nil, errors.New("no object")
	}
	// The merge patch library panics on some invalid documents.
	if !json.Valid(data) {
		return nil, fmt.Errorf("not valid JSON: %q", excerpt(data))
	}
	return data, nil
}

func excerpt(data []byte) string {
	const most = 64
	if len(data) > most {
		return string(data[:most]) + "..."
	}
	return string(data)
}
