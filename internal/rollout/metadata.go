package rollout

import (
	"encoding/json"
	"maps"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/sets"
)

// OwnedKeys returns the keys of metadata.labels (field "f:labels") or metadata.annotations
// ("f:annotations") that the field manager owns, from the object's managedFields: the MachineDeployment
// and MachineSet controllers remove, when propagating a template's metadata in place, only the keys they
// set themselves.
func OwnedKeys(obj metav1.Object, manager, field string) sets.Set[string] {
	out := sets.New[string]()
	for _, mf := range obj.GetManagedFields() {
		if mf.Manager != manager || mf.Subresource != "" || mf.FieldsV1 == nil {
			continue
		}
		var fields map[string]any
		if err := json.Unmarshal(mf.FieldsV1.GetRawBytes(), &fields); err != nil {
			continue
		}
		metadata, _ := fields["f:metadata"].(map[string]any)
		keys, _ := metadata[field].(map[string]any)
		for k := range keys {
			if name, ok := strings.CutPrefix(k, "f:"); ok {
				out.Insert(name)
			}
		}
	}
	return out
}

// SyncMetadata returns current with want applied: every key of want set to its value, and the keys the
// controller set itself (owned, from OwnedKeys) but no longer wants removed; the other keys stay. An empty
// result is current when that was empty too (nil or not: no change to write), nil otherwise.
func SyncMetadata(current, want map[string]string, owned sets.Set[string]) map[string]string {
	out := maps.Clone(current)
	if out == nil && len(want) > 0 {
		out = map[string]string{}
	}
	for k := range owned {
		if _, ok := want[k]; !ok {
			delete(out, k)
		}
	}
	maps.Copy(out, want)
	if len(out) == 0 {
		if len(current) == 0 {
			return current
		}
		return nil
	}
	return out
}
