package conversion_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/apitesting/fuzzer"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	runtimeserializer "k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/randfill"

	clusterv1beta1 "github.com/capstan-dev/capstan/api/core/v1beta1"
	ipamv1alpha1 "github.com/capstan-dev/capstan/api/ipam/v1alpha1"
	ipamv1beta1 "github.com/capstan-dev/capstan/api/ipam/v1beta1"
	ipamv1beta2 "github.com/capstan-dev/capstan/api/ipam/v1beta2"
	"github.com/capstan-dev/capstan/internal/conversion"
	"github.com/capstan-dev/capstan/internal/test/conversiontest"
)

func ipamV1beta2Scheme(t *testing.T) *runtime.Scheme {
	t.Helper()
	return newScheme(t, ipamv1alpha1.AddToScheme, ipamv1beta1.AddToScheme, ipamv1beta2.AddToScheme)
}

func TestIPAMV1beta2RoundTrips(t *testing.T) {
	scheme := ipamV1beta2Scheme(t)
	ipAddress := converterOf(t, conversion.IPAMV1beta2(), scheme, ipamv1beta2.GroupVersion.WithKind("IPAddress").GroupKind())
	funcs := []fuzzer.FuzzerFuncs{ipamFuzzerFuncs}
	ipAddressClaim := converterOf(t, conversion.IPAMV1beta2(), scheme, ipamv1beta2.GroupVersion.WithKind("IPAddressClaim").GroupKind())
	t.Run("IPAddress v1alpha1", conversiontest.RoundTrip{Scheme: scheme, Converter: ipAddress,
		Hub: &ipamv1beta2.IPAddress{}, Spoke: &ipamv1alpha1.IPAddress{}, Funcs: funcs}.Run)
	t.Run("IPAddress v1beta1", conversiontest.RoundTrip{Scheme: scheme, Converter: ipAddress,
		Hub: &ipamv1beta2.IPAddress{}, Spoke: &ipamv1beta1.IPAddress{}, Funcs: funcs}.Run)
	t.Run("IPAddressClaim v1alpha1", conversiontest.RoundTrip{Scheme: scheme, Converter: ipAddressClaim,
		Hub: &ipamv1beta2.IPAddressClaim{}, Spoke: &ipamv1alpha1.IPAddressClaim{}, Funcs: funcs}.Run)
	t.Run("IPAddressClaim v1beta1", conversiontest.RoundTrip{Scheme: scheme, Converter: ipAddressClaim,
		Hub: &ipamv1beta2.IPAddressClaim{}, Spoke: &ipamv1beta1.IPAddressClaim{}, Funcs: funcs}.Run)
}

// ipamFuzzerFuncs fill, as a stored object holds them, the fields whose random values no object of the
// version can have.
func ipamFuzzerFuncs(_ runtimeserializer.CodecFactory) []any {
	return []any{
		// v1alpha1 and v1beta1 require the pool reference's apiGroup (a CEL rule), even empty.
		func(in *corev1.TypedLocalObjectReference, c randfill.Continue) {
			c.FillNoCustom(in)
			if in.APIGroup == nil {
				in.APIGroup = ptr.To("")
			}
		},
		// The prefix is 0-128 in every version's schema (v1alpha1 and v1beta1: an int, v1beta2: an *int32,
		// which it requires).
		func(in *ipamv1alpha1.IPAddressSpec, c randfill.Continue) {
			c.FillNoCustom(in)
			in.Prefix = c.Intn(129)
		},
		func(in *ipamv1beta1.IPAddressSpec, c randfill.Continue) {
			c.FillNoCustom(in)
			in.Prefix = c.Intn(129)
		},
		func(in *ipamv1beta2.IPAddressSpec, c randfill.Continue) {
			c.FillNoCustom(in)
			in.Prefix = ptr.To(int32(c.Intn(129)))
		},
		// An empty status.v1beta2 (v1beta1) or status.deprecated (v1beta2) holds no condition: it is unset
		// in the other version.
		func(in *ipamv1beta1.IPAddressClaimStatus, c randfill.Continue) {
			c.FillNoCustom(in)
			if in.V1Beta2 != nil && in.V1Beta2.Conditions == nil {
				in.V1Beta2 = nil
			}
		},
		func(in *ipamv1beta2.IPAddressClaimStatus, c randfill.Continue) {
			c.FillNoCustom(in)
			if in.Deprecated != nil && (in.Deprecated.V1Beta1 == nil || in.Deprecated.V1Beta1.Conditions == nil) {
				in.Deprecated = nil
			}
		},
	}
}

// What a user of v1beta2 sees of claims written in v1beta1 and v1alpha1, and the way back.
func TestIPAMV1beta2Conversion(t *testing.T) {
	scheme := ipamV1beta2Scheme(t)
	c := converterOf(t, conversion.IPAMV1beta2(), scheme, ipamv1beta2.GroupVersion.WithKind("IPAddressClaim").GroupKind())
	pool := corev1.TypedLocalObjectReference{APIGroup: ptr.To("ipam.example.com"), Kind: "Pool", Name: "p"}
	hubPool := ipamv1beta2.IPPoolReference{APIGroup: "ipam.example.com", Kind: "Pool", Name: "p"}
	ready := metav1.Condition{Type: "Ready", Status: metav1.ConditionTrue, Reason: "Allocated", LastTransitionTime: metav1.Unix(1700000000, 0)}
	legacy := clusterv1beta1.Condition{Type: "Ready", Status: corev1.ConditionTrue, LastTransitionTime: metav1.Unix(1700000000, 0)}

	t.Run("a v1beta1 claim's v1beta2 conditions are its conditions", func(t *testing.T) {
		g := NewWithT(t)
		spoke := &ipamv1beta1.IPAddressClaim{
			ObjectMeta: metav1.ObjectMeta{Name: "c", Namespace: "ns"},
			Spec:       ipamv1beta1.IPAddressClaimSpec{ClusterName: "prod", PoolRef: pool},
			Status: ipamv1beta1.IPAddressClaimStatus{AddressRef: corev1.LocalObjectReference{Name: "c"}, Conditions: clusterv1beta1.Conditions{legacy},
				V1Beta2: &ipamv1beta1.IPAddressClaimV1Beta2Status{Conditions: []metav1.Condition{ready}}},
		}
		hub := &ipamv1beta2.IPAddressClaim{}
		convertWith(t, scheme, c, spoke, hub)
		g.Expect(hub.Spec).To(Equal(ipamv1beta2.IPAddressClaimSpec{ClusterName: "prod", PoolRef: hubPool}))
		g.Expect(hub.Status.AddressRef.Name).To(Equal("c"))
		g.Expect(hub.Status.Conditions).To(Equal([]metav1.Condition{ready}))
		g.Expect(hub.Status.Deprecated.V1Beta1.Conditions).To(HaveLen(1))
		back := &ipamv1beta1.IPAddressClaim{}
		convertWith(t, scheme, c, hub, back)
		g.Expect(cmp.Diff(spoke, back)).To(BeEmpty())
		g.Expect(back.Annotations).NotTo(HaveKey(conversion.DataAnnotation), "v1beta1 has every v1beta2 field")
	})

	t.Run("a v1alpha1 claim's cluster-name label is its clusterName", func(t *testing.T) {
		g := NewWithT(t)
		spoke := &ipamv1alpha1.IPAddressClaim{
			ObjectMeta: metav1.ObjectMeta{Name: "c", Namespace: "ns", Labels: map[string]string{clusterv1beta1.ClusterNameLabel: "dev"}},
			Spec:       ipamv1alpha1.IPAddressClaimSpec{PoolRef: pool},
			Status:     ipamv1alpha1.IPAddressClaimStatus{Conditions: clusterv1beta1.Conditions{legacy}},
		}
		hub := &ipamv1beta2.IPAddressClaim{}
		convertWith(t, scheme, c, spoke, hub)
		g.Expect(hub.Spec).To(Equal(ipamv1beta2.IPAddressClaimSpec{ClusterName: "dev", PoolRef: hubPool}))
		g.Expect(hub.Labels).To(HaveKeyWithValue(clusterv1beta1.ClusterNameLabel, "dev"))
		g.Expect(hub.Status.Conditions).To(BeEmpty())
		g.Expect(hub.Status.Deprecated.V1Beta1.Conditions).To(HaveLen(1))
	})

	t.Run("a v1beta2 claim read and written back in v1alpha1 keeps clusterName and its conditions", func(t *testing.T) {
		g := NewWithT(t)
		hub := &ipamv1beta2.IPAddressClaim{
			ObjectMeta: metav1.ObjectMeta{Name: "c", Namespace: "ns", Labels: map[string]string{"team": "a"}},
			Spec:       ipamv1beta2.IPAddressClaimSpec{ClusterName: "prod", PoolRef: hubPool},
			Status:     ipamv1beta2.IPAddressClaimStatus{Conditions: []metav1.Condition{ready}},
		}
		spoke := &ipamv1alpha1.IPAddressClaim{}
		convertWith(t, scheme, c, hub, spoke)
		g.Expect(spoke.Labels).To(Equal(map[string]string{"team": "a", clusterv1beta1.ClusterNameLabel: "prod"}))
		g.Expect(spoke.Spec.PoolRef).To(Equal(pool))
		back := &ipamv1beta2.IPAddressClaim{}
		convertWith(t, scheme, c, spoke, back)
		g.Expect(back.Labels).To(Equal(map[string]string{"team": "a"}), "the label the conversion added goes away")
		g.Expect(back.Annotations).To(BeEmpty())
		g.Expect(back.Spec).To(Equal(hub.Spec))
		g.Expect(back.Status.Conditions).To(Equal([]metav1.Condition{ready}))
	})

	t.Run("a v1beta1 claim read and written back in v1alpha1 loses nothing", func(t *testing.T) {
		g := NewWithT(t)
		spoke := &ipamv1beta1.IPAddressClaim{
			ObjectMeta: metav1.ObjectMeta{Name: "c", Namespace: "ns"},
			Spec:       ipamv1beta1.IPAddressClaimSpec{ClusterName: "prod", PoolRef: pool},
			Status: ipamv1beta1.IPAddressClaimStatus{Conditions: clusterv1beta1.Conditions{legacy},
				V1Beta2: &ipamv1beta1.IPAddressClaimV1Beta2Status{Conditions: []metav1.Condition{ready}}},
		}
		// The API server converts between two spokes through the hub.
		alpha := &ipamv1alpha1.IPAddressClaim{}
		convertWith(t, scheme, c, spoke, alpha)
		g.Expect(alpha.Labels).To(HaveKeyWithValue(clusterv1beta1.ClusterNameLabel, "prod"))
		g.Expect(alpha.Status.Conditions).To(HaveLen(1))
		back := &ipamv1beta1.IPAddressClaim{}
		convertWith(t, scheme, c, alpha, back)
		g.Expect(cmp.Diff(spoke, back)).To(BeEmpty())
	})

	t.Run("an IPAddress's prefix", func(t *testing.T) {
		g := NewWithT(t)
		c := converterOf(t, conversion.IPAMV1beta2(), scheme, ipamv1beta2.GroupVersion.WithKind("IPAddress").GroupKind())
		spoke := &ipamv1alpha1.IPAddress{
			ObjectMeta: metav1.ObjectMeta{Name: "a", Namespace: "ns"},
			Spec: ipamv1alpha1.IPAddressSpec{ClaimRef: corev1.LocalObjectReference{Name: "c"}, PoolRef: pool,
				Address: "10.0.0.5", Prefix: 24, Gateway: "10.0.0.1"},
		}
		hub := &ipamv1beta2.IPAddress{}
		convertWith(t, scheme, c, spoke, hub)
		g.Expect(hub.Spec).To(Equal(ipamv1beta2.IPAddressSpec{ClaimRef: ipamv1beta2.IPAddressClaimReference{Name: "c"}, PoolRef: hubPool,
			Address: "10.0.0.5", Prefix: ptr.To[int32](24), Gateway: "10.0.0.1"}))
	})
}
