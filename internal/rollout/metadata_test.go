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
