package conversion_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/apitesting/fuzzer"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	runtimeserializer "k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/utils/ptr"
	crconversion "sigs.k8s.io/controller-runtime/pkg/webhook/conversion"
	"sigs.k8s.io/randfill"

	addonsv1beta1 "github.com/capstan-dev/capstan/api/addons/v1beta1"
	addonsv1beta2 "github.com/capstan-dev/capstan/api/addons/v1beta2"
	clusterv1beta1 "github.com/capstan-dev/capstan/api/core/v1beta1"
	clusterv1beta2 "github.com/capstan-dev/capstan/api/core/v1beta2"
	"github.com/capstan-dev/capstan/internal/conversion"
	"github.com/capstan-dev/capstan/internal/test/conversiontest"
)

// The helpers of the conversion tests with hub v1beta2 (addons, IPAM, runtime).

// newScheme returns a scheme with the API packages added by add.
func newScheme(t *testing.T, add ...func(*runtime.Scheme) error) *runtime.Scheme {
	t.Helper()
	scheme := runtime.NewScheme()
	builder := runtime.NewSchemeBuilder(add...)
	if err := builder.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	return scheme
}

// converterOf returns the converter kinds registers for gk, as the webhook uses it.
func converterOf(t *testing.T, kinds conversion.Kinds, scheme *runtime.Scheme, gk schema.GroupKind) crconversion.Converter {
	t.Helper()
	registry, err := kinds.Registry(scheme)
	if err != nil {
		t.Fatal(err)
	}
	c, ok := registry.GetConverter(gk)
	if !ok {
		t.Fatalf("no converter for %s", gk)
	}
	return c
}

// convertWith converts a copy of src to dst (a new object of the other version) with c, as the webhook does.
func convertWith(t *testing.T, scheme *runtime.Scheme, c crconversion.Converter, src, dst runtime.Object) {
	t.Helper()
	for _, o := range []runtime.Object{src, dst} {
		gvks, _, err := scheme.ObjectKinds(o)
		if err != nil {
			t.Fatal(err)
		}
		o.GetObjectKind().SetGroupVersionKind(gvks[0])
	}
	if err := c.ConvertObject(t.Context(), src.DeepCopyObject(), dst); err != nil {
		t.Fatal(err)
	}
}

func TestAddonsRoundTrips(t *testing.T) {
	scheme := newScheme(t, addonsv1beta1.AddToScheme, addonsv1beta2.AddToScheme)
	funcs := []fuzzer.FuzzerFuncs{addonsFuzzerFuncs}
	t.Run("ClusterResourceSet", conversiontest.RoundTrip{Scheme: scheme,
		Converter: converterOf(t, conversion.Addons(), scheme, addonsv1beta2.GroupVersion.WithKind("ClusterResourceSet").GroupKind()),
		Hub:       &addonsv1beta2.ClusterResourceSet{}, Spoke: &addonsv1beta1.ClusterResourceSet{}, Funcs: funcs}.Run)
	t.Run("ClusterResourceSetBinding", conversiontest.RoundTrip{Scheme: scheme,
		Converter: converterOf(t, conversion.Addons(), scheme, addonsv1beta2.GroupVersion.WithKind("ClusterResourceSetBinding").GroupKind()),
		Hub:       &addonsv1beta2.ClusterResourceSetBinding{}, Spoke: &addonsv1beta1.ClusterResourceSetBinding{}, Funcs: funcs}.Run)
}

// addonsFuzzerFuncs fill, as a stored object holds them, the fields whose random values no object of the
// version can have.
func addonsFuzzerFuncs(_ runtimeserializer.CodecFactory) []any {
	return []any{
		// An empty status.v1beta2 (v1beta1) or status.deprecated (v1beta2) holds no condition: it is unset
		// in the other version.
		func(in *addonsv1beta1.ClusterResourceSetStatus, c randfill.Continue) {
			c.FillNoCustom(in)
			if in.V1Beta2 != nil && in.V1Beta2.Conditions == nil {
				in.V1Beta2 = nil
			}
		},
		func(in *addonsv1beta2.ClusterResourceSetStatus, c randfill.Continue) {
			c.FillNoCustom(in)
			if in.Deprecated != nil && (in.Deprecated.V1Beta1 == nil || in.Deprecated.V1Beta1.Conditions == nil) {
				in.Deprecated = nil
			}
		},
		// The API server refuses null as an item of spec.bindings, a list of objects.
		func(in *addonsv1beta1.ClusterResourceSetBindingSpec, c randfill.Continue) {
			c.FillNoCustom(in)
			for i, b := range in.Bindings {
				if b == nil {
					in.Bindings[i] = &addonsv1beta1.ResourceSetBinding{}
				}
			}
		},
		// v1beta2 requires applied (and v1beta1 too: a bool).
		func(in *addonsv1beta2.ResourceBinding, c randfill.Continue) {
			c.FillNoCustom(in)
			if in.Applied == nil {
				in.Applied = ptr.To(c.Bool())
			}
		},
	}
}

// What a user of v1beta2 sees of objects written in v1beta1, and the way back.
func TestAddonsConversion(t *testing.T) {
	scheme := newScheme(t, addonsv1beta1.AddToScheme, addonsv1beta2.AddToScheme)
	applied := metav1.Unix(1700000000, 0)

	t.Run("ClusterResourceSet conditions", func(t *testing.T) {
		g := NewWithT(t)
		c := converterOf(t, conversion.Addons(), scheme, addonsv1beta2.GroupVersion.WithKind("ClusterResourceSet").GroupKind())
		resourcesApplied := metav1.Condition{Type: "ResourcesApplied", Status: metav1.ConditionTrue, Reason: "Applied", LastTransitionTime: applied}
		spoke := &addonsv1beta1.ClusterResourceSet{
			ObjectMeta: metav1.ObjectMeta{Name: "crs", Namespace: "ns"},
			Spec: addonsv1beta1.ClusterResourceSetSpec{ClusterSelector: metav1.LabelSelector{MatchLabels: map[string]string{"cni": "calico"}},
				Resources: []addonsv1beta1.ResourceRef{{Name: "calico", Kind: "ConfigMap"}}, Strategy: "Reconcile"},
			Status: addonsv1beta1.ClusterResourceSetStatus{ObservedGeneration: 2,
				Conditions: clusterv1beta1.Conditions{{Type: "ResourcesApplied", Status: corev1.ConditionTrue, LastTransitionTime: applied}},
				V1Beta2:    &addonsv1beta1.ClusterResourceSetV1Beta2Status{Conditions: []metav1.Condition{resourcesApplied}}},
		}
		hub := &addonsv1beta2.ClusterResourceSet{}
		convertWith(t, scheme, c, spoke, hub)
		g.Expect(hub.Spec.Resources).To(Equal([]addonsv1beta2.ResourceRef{{Name: "calico", Kind: "ConfigMap"}}))
		g.Expect(hub.Status.Conditions).To(Equal([]metav1.Condition{resourcesApplied}), "v1beta1's status.v1beta2.conditions are v1beta2's status.conditions")
		g.Expect(hub.Status.Deprecated).To(Equal(&addonsv1beta2.ClusterResourceSetDeprecatedStatus{V1Beta1: &addonsv1beta2.ClusterResourceSetV1Beta1DeprecatedStatus{
			Conditions: clusterv1beta2.Conditions{{Type: "ResourcesApplied", Status: corev1.ConditionTrue, LastTransitionTime: applied}}}}))
		back := &addonsv1beta1.ClusterResourceSet{}
		convertWith(t, scheme, c, hub, back)
		g.Expect(cmp.Diff(spoke, back)).To(BeEmpty())
	})

	t.Run("ClusterResourceSetBinding resources", func(t *testing.T) {
		g := NewWithT(t)
		c := converterOf(t, conversion.Addons(), scheme, addonsv1beta2.GroupVersion.WithKind("ClusterResourceSetBinding").GroupKind())
		spoke := &addonsv1beta1.ClusterResourceSetBinding{
			ObjectMeta: metav1.ObjectMeta{Name: "prod", Namespace: "ns"},
			Spec: addonsv1beta1.ClusterResourceSetBindingSpec{ClusterName: "prod", Bindings: []*addonsv1beta1.ResourceSetBinding{{
				ClusterResourceSetName: "crs",
				Resources: []addonsv1beta1.ResourceBinding{
					{ResourceRef: addonsv1beta1.ResourceRef{Name: "calico", Kind: "ConfigMap"}, Hash: "sha256:1", LastAppliedTime: &applied, Applied: true},
					{ResourceRef: addonsv1beta1.ResourceRef{Name: "creds", Kind: "Secret"}, Applied: false},
				},
			}}},
		}
		hub := &addonsv1beta2.ClusterResourceSetBinding{}
		convertWith(t, scheme, c, spoke, hub)
		g.Expect(hub.Spec.Bindings).To(Equal([]addonsv1beta2.ResourceSetBinding{{
			ClusterResourceSetName: "crs",
			Resources: []addonsv1beta2.ResourceBinding{
				{ResourceRef: addonsv1beta2.ResourceRef{Name: "calico", Kind: "ConfigMap"}, Hash: "sha256:1", LastAppliedTime: applied, Applied: ptr.To(true)},
				{ResourceRef: addonsv1beta2.ResourceRef{Name: "creds", Kind: "Secret"}, Applied: ptr.To(false)},
			},
		}}))
		back := &addonsv1beta1.ClusterResourceSetBinding{}
		convertWith(t, scheme, c, hub, back)
		g.Expect(cmp.Diff(spoke, back)).To(BeEmpty(), "a resource never applied has no lastAppliedTime in v1beta1 either")
	})
}
