// Package conversiontest checks that a conversion between two versions of a kind loses nothing, with
// randomly filled objects, as upstream's FuzzTestFunc: spoke → hub → spoke and hub → spoke → hub give back
// the object they started from.
package conversiontest

import (
	"math/rand"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/api/apitesting/fuzzer"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metafuzzer "k8s.io/apimachinery/pkg/apis/meta/fuzzer"
	"k8s.io/apimachinery/pkg/runtime"
	runtimeserializer "k8s.io/apimachinery/pkg/runtime/serializer"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
	crconversion "sigs.k8s.io/controller-runtime/pkg/webhook/conversion"
	"sigs.k8s.io/randfill"

	"github.com/capstan-dev/capstan/internal/conversion"
)

// Rounds is how many random objects each direction converts, as upstream's.
const Rounds = 10000

// RoundTrip is the conversion of one kind between its hub (storage) version and another version.
type RoundTrip struct {
	// Scheme has both versions.
	Scheme *runtime.Scheme
	// Converter converts the kind (conversion.Kind.Converter's result, as the webhook uses it).
	Converter crconversion.Converter
	// Hub and Spoke are empty objects of the two versions.
	Hub, Spoke client.Object
	// Funcs fill fields that random values would make invalid in a way the API server refuses.
	Funcs []fuzzer.FuzzerFuncs
}

// Run runs both round trips Rounds times.
func (r RoundTrip) Run(t *testing.T) {
	t.Helper()
	fill := fuzzer.FuzzerFor(fuzzer.MergeFuzzerFuncs(append([]fuzzer.FuzzerFuncs{metafuzzer.Funcs}, r.Funcs...)...),
		rand.NewSource(rand.Int63()), runtimeserializer.NewCodecFactory(r.Scheme)) //nolint:gosec // test data
	t.Run("spoke-hub-spoke", func(t *testing.T) {
		for range Rounds {
			before := r.filled(t, fill, r.Spoke)
			hub := r.convert(t, before, r.Hub)
			after := r.convert(t, hub, r.Spoke)
			// What the spoke cannot express travels in the annotation, which the spoke did not have.
			annotations := after.GetAnnotations()
			delete(annotations, conversion.DataAnnotation)
			after.SetAnnotations(annotations)
			expectEqual(t, before, after)
		}
	})
	t.Run("hub-spoke-hub", func(t *testing.T) {
		for range Rounds {
			before := r.filled(t, fill, r.Hub)
			spoke := r.convert(t, before, r.Spoke)
			// The API server may send an object with its metadata alone (managed fields): it converts too.
			bare := r.typed(t, r.Spoke)
			bare.SetLabels(spoke.GetLabels())
			bare.SetAnnotations(spoke.GetAnnotations())
			r.convert(t, bare, r.Hub)
			expectEqual(t, before, r.convert(t, spoke, r.Hub))
		}
	})
}

// typed returns a new empty object like proto, with its apiVersion and kind.
func (r RoundTrip) typed(t *testing.T, proto client.Object) client.Object {
	t.Helper()
	obj := proto.DeepCopyObject().(client.Object)
	gvk, err := apiutil.GVKForObject(obj, r.Scheme)
	if err != nil {
		t.Fatal(err)
	}
	obj.GetObjectKind().SetGroupVersionKind(gvk)
	return obj
}

// filled returns a randomly filled object like proto, with its apiVersion and kind.
func (r RoundTrip) filled(t *testing.T, fill *randfill.Filler, proto client.Object) client.Object {
	t.Helper()
	obj := r.typed(t, proto)
	gvk := obj.GetObjectKind().GroupVersionKind()
	fill.Fill(obj)
	obj.GetObjectKind().SetGroupVersionKind(gvk)
	return obj
}

// convert converts a copy of src to a new object like proto.
func (r RoundTrip) convert(t *testing.T, src, proto client.Object) client.Object {
	t.Helper()
	dst := r.typed(t, proto)
	if err := r.Converter.ConvertObject(t.Context(), src.DeepCopyObject(), dst); err != nil {
		t.Fatalf("converting %s to %s: %v", src.GetObjectKind().GroupVersionKind(), dst.GetObjectKind().GroupVersionKind(), err)
	}
	return dst
}

func expectEqual(t *testing.T, before, after client.Object) {
	t.Helper()
	if !apiequality.Semantic.DeepEqual(before, after) {
		t.Fatalf("the round trip changed the %s (-before +after):\n%s", before.GetObjectKind().GroupVersionKind(), cmp.Diff(before, after))
	}
}
