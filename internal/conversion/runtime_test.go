package conversion_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/apitesting/fuzzer"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	runtimeserializer "k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/randfill"

	clusterv1beta1 "github.com/capstan-dev/capstan/api/core/v1beta1"
	runtimev1alpha1 "github.com/capstan-dev/capstan/api/runtime/v1alpha1"
	runtimev1beta2 "github.com/capstan-dev/capstan/api/runtime/v1beta2"
	"github.com/capstan-dev/capstan/internal/conversion"
	"github.com/capstan-dev/capstan/internal/test/conversiontest"
)

func TestRuntimeRoundTrips(t *testing.T) {
	scheme := newScheme(t, runtimev1alpha1.AddToScheme, runtimev1beta2.AddToScheme)
	t.Run("ExtensionConfig", conversiontest.RoundTrip{Scheme: scheme,
		Converter: converterOf(t, conversion.Runtime(), scheme, runtimev1beta2.GroupVersion.WithKind("ExtensionConfig").GroupKind()),
		Hub:       &runtimev1beta2.ExtensionConfig{}, Spoke: &runtimev1alpha1.ExtensionConfig{}, Funcs: []fuzzer.FuzzerFuncs{runtimeFuzzerFuncs}}.Run)
}

// runtimeFuzzerFuncs fill, as a stored object holds them, the fields whose random values no object of the
// version can have.
func runtimeFuzzerFuncs(_ runtimeserializer.CodecFactory) []any {
	return []any{
		// An empty status.v1beta2 (v1alpha1) or status.deprecated (v1beta2) holds no condition: it is unset
		// in the other version.
		func(in *runtimev1alpha1.ExtensionConfigStatus, c randfill.Continue) {
			c.FillNoCustom(in)
			if in.V1Beta2 != nil && in.V1Beta2.Conditions == nil {
				in.V1Beta2 = nil
			}
		},
		func(in *runtimev1beta2.ExtensionConfigStatus, c randfill.Continue) {
			c.FillNoCustom(in)
			if in.Deprecated != nil && (in.Deprecated.V1Beta1 == nil || in.Deprecated.V1Beta1.Conditions == nil) {
				in.Deprecated = nil
			}
		},
		// The v1alpha1 schema requires a non-empty url and a service with a name (minLength 1), and a
		// non-empty path.
		func(in *runtimev1alpha1.ClientConfig, c randfill.Continue) {
			c.FillNoCustom(in)
			if in.URL != nil && *in.URL == "" {
				in.URL = nil
			}
			if in.Service != nil && in.Service.Name == "" {
				in.Service.Name = "extension"
			}
			if in.Service != nil && in.Service.Path != nil && *in.Service.Path == "" {
				in.Service.Path = nil
			}
		},
		// failurePolicy is Ignore or Fail when set (an enum). (timeoutSeconds is left alone: a random 0,
		// which reads back unset, practically never comes; TestExtensionConfigConversion has that case.)
		func(in *runtimev1alpha1.ExtensionHandler, c randfill.Continue) {
			c.FillNoCustom(in)
			if in.FailurePolicy != nil && *in.FailurePolicy == "" {
				in.FailurePolicy = nil
			}
		},
	}
}

// What a user of either version sees of an ExtensionConfig written in the other.
func TestExtensionConfigConversion(t *testing.T) {
	scheme := newScheme(t, runtimev1alpha1.AddToScheme, runtimev1beta2.AddToScheme)
	c := converterOf(t, conversion.Runtime(), scheme, runtimev1beta2.GroupVersion.WithKind("ExtensionConfig").GroupKind())
	discovered := metav1.Condition{Type: "Discovered", Status: metav1.ConditionTrue, Reason: "Discovered", LastTransitionTime: metav1.Unix(1700000000, 0)}
	legacy := clusterv1beta1.Condition{Type: "Discovered", Status: corev1.ConditionTrue, LastTransitionTime: metav1.Unix(1700000000, 0)}

	t.Run("v1alpha1 in v1beta2", func(t *testing.T) {
		g := NewWithT(t)
		spoke := &runtimev1alpha1.ExtensionConfig{
			ObjectMeta: metav1.ObjectMeta{Name: "ext"},
			Spec: runtimev1alpha1.ExtensionConfigSpec{ClientConfig: runtimev1alpha1.ClientConfig{
				Service: &runtimev1alpha1.ServiceReference{Namespace: "ns", Name: "ext", Path: ptr.To("/hooks"), Port: ptr.To[int32](8443)}}},
			Status: runtimev1alpha1.ExtensionConfigStatus{
				Handlers: []runtimev1alpha1.ExtensionHandler{{Name: "before.ext", RequestHook: runtimev1alpha1.GroupVersionHook{APIVersion: "hooks.runtime.cluster.x-k8s.io/v1alpha1", Hook: "BeforeClusterCreate"},
					TimeoutSeconds: ptr.To[int32](10), FailurePolicy: ptr.To(runtimev1alpha1.FailurePolicyIgnore)}},
				Conditions: clusterv1beta1.Conditions{legacy},
				V1Beta2:    &runtimev1alpha1.ExtensionConfigV1Beta2Status{Conditions: []metav1.Condition{discovered}},
			},
		}
		hub := &runtimev1beta2.ExtensionConfig{}
		convertWith(t, scheme, c, spoke, hub)
		g.Expect(hub.Spec.ClientConfig).To(Equal(runtimev1beta2.ClientConfig{
			Service: runtimev1beta2.ServiceReference{Namespace: "ns", Name: "ext", Path: "/hooks", Port: ptr.To[int32](8443)}}))
		g.Expect(hub.Status.Handlers).To(Equal([]runtimev1beta2.ExtensionHandler{{Name: "before.ext",
			RequestHook:    runtimev1beta2.GroupVersionHook{APIVersion: "hooks.runtime.cluster.x-k8s.io/v1alpha1", Hook: "BeforeClusterCreate"},
			TimeoutSeconds: 10, FailurePolicy: runtimev1beta2.FailurePolicyIgnore}}))
		g.Expect(hub.Status.Conditions).To(Equal([]metav1.Condition{discovered}), "v1alpha1's status.v1beta2.conditions are v1beta2's status.conditions")
		g.Expect(hub.Status.Deprecated.V1Beta1.Conditions).To(HaveLen(1))
		g.Expect(hub.Status.Deprecated.V1Beta1.Conditions[0].Type).To(BeEquivalentTo("Discovered"))
	})

	t.Run("v1beta2 in v1alpha1", func(t *testing.T) {
		g := NewWithT(t)
		hub := &runtimev1beta2.ExtensionConfig{
			ObjectMeta: metav1.ObjectMeta{Name: "ext"},
			Spec:       runtimev1beta2.ExtensionConfigSpec{ClientConfig: runtimev1beta2.ClientConfig{URL: "https://ext.example.com"}},
			Status: runtimev1beta2.ExtensionConfigStatus{Handlers: []runtimev1beta2.ExtensionHandler{{Name: "before.ext",
				RequestHook: runtimev1beta2.GroupVersionHook{APIVersion: "hooks.runtime.cluster.x-k8s.io/v1alpha1", Hook: "BeforeClusterCreate"}}}},
		}
		spoke := &runtimev1alpha1.ExtensionConfig{}
		convertWith(t, scheme, c, hub, spoke)
		// Unset stays unset: v1alpha1 refuses an empty service, path or failurePolicy.
		g.Expect(spoke.Spec.ClientConfig).To(Equal(runtimev1alpha1.ClientConfig{URL: ptr.To("https://ext.example.com")}))
		g.Expect(spoke.Status.Handlers[0].TimeoutSeconds).To(BeNil())
		g.Expect(spoke.Status.Handlers[0].FailurePolicy).To(BeNil())
		g.Expect(spoke.Annotations).NotTo(HaveKey(conversion.DataAnnotation), "v1alpha1 has every v1beta2 field")
	})

	// The ExtensionConfig controller writes the timeout an extension asks for, 0 included; v1beta2 has no 0
	// (its minimum is 1), so a v1alpha1 0 reads back unset: the one value the conversion changes. Both mean
	// the default timeout to the runtime client.
	t.Run("a timeout of 0 reads back unset", func(t *testing.T) {
		g := NewWithT(t)
		spoke := &runtimev1alpha1.ExtensionConfig{
			ObjectMeta: metav1.ObjectMeta{Name: "ext"},
			Spec:       runtimev1alpha1.ExtensionConfigSpec{ClientConfig: runtimev1alpha1.ClientConfig{URL: ptr.To("https://ext.example.com")}},
			Status: runtimev1alpha1.ExtensionConfigStatus{Handlers: []runtimev1alpha1.ExtensionHandler{{Name: "before.ext",
				RequestHook:    runtimev1alpha1.GroupVersionHook{APIVersion: "hooks.runtime.cluster.x-k8s.io/v1alpha1", Hook: "BeforeClusterCreate"},
				TimeoutSeconds: ptr.To[int32](0), FailurePolicy: ptr.To(runtimev1alpha1.FailurePolicyFail)}}},
		}
		hub := &runtimev1beta2.ExtensionConfig{}
		convertWith(t, scheme, c, spoke, hub)
		back := &runtimev1alpha1.ExtensionConfig{}
		convertWith(t, scheme, c, hub, back)
		g.Expect(back.Status.Handlers[0].TimeoutSeconds).To(BeNil())
		back.Status.Handlers[0].TimeoutSeconds = ptr.To[int32](0)
		g.Expect(cmp.Diff(spoke, back)).To(BeEmpty(), "nothing else changes")
	})
}
