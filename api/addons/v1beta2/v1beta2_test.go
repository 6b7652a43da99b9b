package v1beta2

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta2"
	"github.com/capstan-dev/capstan/api/internal/apitest"
)

func TestUnsetFieldsAreNotSerialized(t *testing.T) {
	objects, err := apitest.ZeroObjects(AddToScheme, GroupVersion, &ClusterResourceSet{})
	if err != nil {
		t.Fatal(err)
	}
	if len(objects) != 4 {
		t.Fatalf("the scheme knows %d types of this package, want the 2 kinds and their lists", len(objects))
	}
	// What a user typically sets, with every optional struct unset.
	objects["ClusterResourceSet with its required fields"] = &ClusterResourceSet{Spec: ClusterResourceSetSpec{
		ClusterSelector: metav1.LabelSelector{MatchLabels: map[string]string{"cni": "calico"}},
		Resources:       []ResourceRef{{Name: "calico", Kind: "ConfigMap"}},
	}}
	applied := true
	objects["ClusterResourceSetBinding with a binding"] = &ClusterResourceSetBinding{Spec: ClusterResourceSetBindingSpec{
		ClusterName: "c",
		Bindings: []ResourceSetBinding{{ClusterResourceSetName: "crs", Resources: []ResourceBinding{{
			ResourceRef: ResourceRef{Name: "calico", Kind: "ConfigMap"}, Applied: &applied,
		}}}},
	}}
	apitest.ExpectNoEmptyObjects(t, objects)
}

func TestV1Beta1ConditionsLiveUnderStatusDeprecated(t *testing.T) {
	o := &ClusterResourceSet{}
	apitest.ExpectConditionAccessors(t, o, func() any { return o.Status },
		"ResourcesApplied", clusterv1.Conditions{{Type: "ResourcesApplied", Status: "True"}}, "ResourcesApplied")
}
