package v1beta2

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta2"
	"github.com/capstan-dev/capstan/api/internal/apitest"
)

func TestUnsetFieldsAreNotSerialized(t *testing.T) {
	objects, err := apitest.ZeroObjects(AddToScheme, GroupVersion, &IPAddress{})
	if err != nil {
		t.Fatal(err)
	}
	if len(objects) != 4 {
		t.Fatalf("the scheme knows %d types of this package, want the 2 kinds and their lists", len(objects))
	}
	// What a user typically sets, with every optional struct unset.
	prefix := int32(24)
	objects["IPAddress with its required fields"] = &IPAddress{Spec: IPAddressSpec{
		ClaimRef: IPAddressClaimReference{Name: "claim"},
		PoolRef:  IPPoolReference{Name: "pool", Kind: "InClusterIPPool", APIGroup: "ipam.cluster.x-k8s.io"},
		Address:  "10.0.0.1", Prefix: &prefix,
	}}
	objects["IPAddressClaim with a condition, not bound yet"] = &IPAddressClaim{Status: IPAddressClaimStatus{
		Conditions: []metav1.Condition{{Type: "Ready", Status: metav1.ConditionFalse}},
	}}
	objects["IPAddressClaim with its required fields"] = &IPAddressClaim{Spec: IPAddressClaimSpec{
		PoolRef: IPPoolReference{Name: "pool", Kind: "InClusterIPPool", APIGroup: "ipam.cluster.x-k8s.io"},
	}}
	apitest.ExpectNoEmptyObjects(t, objects)
}

func TestV1Beta1ConditionsLiveUnderStatusDeprecated(t *testing.T) {
	o := &IPAddressClaim{}
	apitest.ExpectConditionAccessors(t, o, func() any { return o.Status },
		"Ready", clusterv1.Conditions{{Type: "Ready", Status: "True"}}, "Ready")
}
