package rollout

import (
	"testing"

	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/sets"
)

func TestOwnedKeys(t *testing.T) {
	g := NewWithT(t)
	obj := &metav1.ObjectMeta{ManagedFields: []metav1.ManagedFieldsEntry{
		{Manager: "capi-machineset", Operation: metav1.ManagedFieldsOperationUpdate,
			FieldsV1: metav1.NewFieldsV1(`{"f:metadata":{"f:labels":{".":{},"f:a":{},"f:b":{}},"f:annotations":{"f:n":{}}}}`)},
		{Manager: "kubectl", Operation: metav1.ManagedFieldsOperationUpdate,
			FieldsV1: metav1.NewFieldsV1(`{"f:metadata":{"f:labels":{"f:user":{}}}}`)},
		{Manager: "capi-machineset", Operation: metav1.ManagedFieldsOperationUpdate, Subresource: "status",
			FieldsV1: metav1.NewFieldsV1(`{"f:metadata":{"f:labels":{"f:status-only":{}}}}`)},
	}}
	g.Expect(sets.List(OwnedKeys(obj, "capi-machineset", "f:labels"))).To(Equal([]string{"a", "b"}))
	g.Expect(sets.List(OwnedKeys(obj, "capi-machineset", "f:annotations"))).To(Equal([]string{"n"}))
}

// TestSyncMetadata: the template's keys are set, the keys the controller set and no longer wants go, a
// user's keys stay; an empty result of an empty input is that input (nothing to write).
func TestSyncMetadata(t *testing.T) {
	g := NewWithT(t)
	current := map[string]string{"a": "1", "gone": "x", "user": "u"}
	g.Expect(SyncMetadata(current, map[string]string{"a": "2", "new": "n"}, sets.New("a", "gone"))).
		To(Equal(map[string]string{"a": "2", "new": "n", "user": "u"}))
	g.Expect(current).To(HaveKeyWithValue("gone", "x"), "current is not changed")
	g.Expect(SyncMetadata(map[string]string{"gone": "x"}, nil, sets.New("gone"))).To(BeNil())
	g.Expect(SyncMetadata(nil, nil, sets.New("gone"))).To(BeNil())
	g.Expect(SyncMetadata(map[string]string{}, nil, nil)).To(Equal(map[string]string{}))
	g.Expect(SyncMetadata(nil, map[string]string{"a": "1"}, nil)).To(Equal(map[string]string{"a": "1"}))
}
