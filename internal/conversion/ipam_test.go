package conversion_test

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"
	crconversion "sigs.k8s.io/controller-runtime/pkg/webhook/conversion"

	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
	ipamv1alpha1 "github.com/capstan-dev/capstan/api/ipam/v1alpha1"
	ipamv1 "github.com/capstan-dev/capstan/api/ipam/v1beta1"
	"github.com/capstan-dev/capstan/internal/conversion"
	"github.com/capstan-dev/capstan/internal/test/conversiontest"
)

func ipamScheme(t *testing.T) *runtime.Scheme {
	t.Helper()
	scheme := runtime.NewScheme()
	add := runtime.NewSchemeBuilder(ipamv1.AddToScheme, ipamv1alpha1.AddToScheme)
	if err := add.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	return scheme
}

func ipamConverter(t *testing.T, scheme *runtime.Scheme, kind string) crconversion.Converter {
	t.Helper()
	registry, err := conversion.IPAM().Registry(scheme)
	if err != nil {
		t.Fatal(err)
	}
	c, ok := registry.GetConverter(schema.GroupKind{Group: ipamv1.GroupVersion.Group, Kind: kind})
	if !ok {
		t.Fatalf("no converter for %s", kind)
	}
	return c
}

func TestIPAMRoundTrips(t *testing.T) {
	scheme := ipamScheme(t)
	t.Run("IPAddress", conversiontest.RoundTrip{Scheme: scheme, Converter: ipamConverter(t, scheme, "IPAddress"),
		Hub: &ipamv1.IPAddress{}, Spoke: &ipamv1alpha1.IPAddress{}}.Run)
	t.Run("IPAddressClaim", conversiontest.RoundTrip{Scheme: scheme, Converter: ipamConverter(t, scheme, "IPAddressClaim"),
		Hub: &ipamv1.IPAddressClaim{}, Spoke: &ipamv1alpha1.IPAddressClaim{}}.Run)
}

// convert converts src to a new object of dst's type, as the webhook does.
func convert(t *testing.T, scheme *runtime.Scheme, src runtime.Object, dst runtime.Object) {
	t.Helper()
	for _, o := range []runtime.Object{src, dst} {
		gvks, _, err := scheme.ObjectKinds(o)
		if err != nil {
			t.Fatal(err)
		}
		o.GetObjectKind().SetGroupVersionKind(gvks[0])
	}
	if err := ipamConverter(t, scheme, "IPAddressClaim").ConvertObject(t.Context(), src, dst); err != nil {
		t.Fatal(err)
	}
}

// A v1alpha1 IPAM provider names the claim's Cluster with the cluster-name label; v1beta1 has
// spec.clusterName. Reading a v1beta1 claim in v1alpha1 and writing it back keeps clusterName, the v1beta2
// conditions, and the claim's own labels as they were.
func TestIPAddressClaimClusterName(t *testing.T) {
	scheme := ipamScheme(t)
	pool := corev1.TypedLocalObjectReference{APIGroup: ptr.To("ipam.example.com"), Kind: "Pool", Name: "p"}
	conditions := []metav1.Condition{{Type: "Ready", Status: metav1.ConditionTrue, Reason: "Allocated", LastTransitionTime: metav1.Unix(1700000000, 0)}}

	t.Run("a label the conversion added goes away on the way back", func(t *testing.T) {
		hub := &ipamv1.IPAddressClaim{
			ObjectMeta: metav1.ObjectMeta{Name: "c", Namespace: "ns", Labels: map[string]string{"team": "a"}},
			Spec:       ipamv1.IPAddressClaimSpec{ClusterName: "prod", PoolRef: pool},
			Status:     ipamv1.IPAddressClaimStatus{V1Beta2: &ipamv1.IPAddressClaimV1Beta2Status{Conditions: conditions}},
		}
		spoke := &ipamv1alpha1.IPAddressClaim{}
		convert(t, scheme, hub.DeepCopy(), spoke)
		if got := spoke.Labels[clusterv1.ClusterNameLabel]; got != "prod" {
			t.Errorf("v1alpha1 cluster-name label = %q, want prod", got)
		}
		if _, ok := spoke.Annotations[conversion.DataAnnotation]; !ok {
			t.Errorf("v1alpha1 has no %s annotation: %v", conversion.DataAnnotation, spoke.Annotations)
		}
		back := &ipamv1.IPAddressClaim{}
		convert(t, scheme, spoke, back)
		if back.Spec.ClusterName != "prod" || back.Labels[clusterv1.ClusterNameLabel] != "" || back.Labels["team"] != "a" {
			t.Errorf("back in v1beta1: clusterName %q, labels %v; want prod and the team label alone", back.Spec.ClusterName, back.Labels)
		}
		if len(back.Annotations) != 0 {
			t.Errorf("back in v1beta1 the conversion's annotations are left: %v", back.Annotations)
		}
		if back.Status.V1Beta2 == nil || !equality.Semantic.DeepEqual(back.Status.V1Beta2.Conditions, conditions) {
			t.Errorf("back in v1beta1 the v1beta2 conditions are %+v, want %+v", back.Status.V1Beta2, conditions)
		}
	})

	t.Run("a label the claim had stays", func(t *testing.T) {
		hub := &ipamv1.IPAddressClaim{
			ObjectMeta: metav1.ObjectMeta{Name: "c", Namespace: "ns", Labels: map[string]string{clusterv1.ClusterNameLabel: "prod"}},
			Spec:       ipamv1.IPAddressClaimSpec{ClusterName: "prod", PoolRef: pool},
		}
		spoke := &ipamv1alpha1.IPAddressClaim{}
		convert(t, scheme, hub.DeepCopy(), spoke)
		back := &ipamv1.IPAddressClaim{}
		convert(t, scheme, spoke, back)
		if back.Labels[clusterv1.ClusterNameLabel] != "prod" || back.Spec.ClusterName != "prod" {
			t.Errorf("back in v1beta1: clusterName %q, labels %v; want both prod", back.Spec.ClusterName, back.Labels)
		}
	})

	t.Run("a v1alpha1 claim's label becomes clusterName", func(t *testing.T) {
		spoke := &ipamv1alpha1.IPAddressClaim{
			ObjectMeta: metav1.ObjectMeta{Name: "c", Namespace: "ns", Labels: map[string]string{clusterv1.ClusterNameLabel: "dev"}},
			Spec:       ipamv1alpha1.IPAddressClaimSpec{PoolRef: pool},
		}
		hub := &ipamv1.IPAddressClaim{}
		convert(t, scheme, spoke, hub)
		if hub.Spec.ClusterName != "dev" || hub.Labels[clusterv1.ClusterNameLabel] != "dev" {
			t.Errorf("v1beta1: clusterName %q, labels %v; want dev and the label kept", hub.Spec.ClusterName, hub.Labels)
		}
	})
}
