package v1beta2

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta2"
	"github.com/capstan-dev/capstan/api/internal/apitest"
)

func TestUnsetFieldsAreNotSerialized(t *testing.T) {
	objects, err := apitest.ZeroObjects(AddToScheme, GroupVersion, &ExtensionConfig{})
	if err != nil {
		t.Fatal(err)
	}
	if len(objects) != 2 {
		t.Fatalf("the scheme knows %d types of this package, want the kind and its list", len(objects))
	}
	// What a user typically sets, with every optional struct unset.
	objects["ExtensionConfig with a condition, not discovered yet"] = &ExtensionConfig{Status: ExtensionConfigStatus{
		Conditions: []metav1.Condition{{Type: "Discovered", Status: metav1.ConditionFalse}},
	}}
	objects["ExtensionConfig with a Service"] = &ExtensionConfig{Spec: ExtensionConfigSpec{
		ClientConfig: ClientConfig{Service: ServiceReference{Namespace: "ns", Name: "ext"}},
	}}
	apitest.ExpectNoEmptyObjects(t, objects)
}

func TestV1Beta1ConditionsLiveUnderStatusDeprecated(t *testing.T) {
	o := &ExtensionConfig{}
	apitest.ExpectConditionAccessors(t, o, func() any { return o.Status },
		"Discovered", clusterv1.Conditions{{Type: "Discovered", Status: "True"}}, "Discovered")
}
