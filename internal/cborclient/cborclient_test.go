package cborclient_test

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"strings"
	"testing"

	. "github.com/onsi/gomega"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/capstan-dev/capstan/config/crd"
	"github.com/capstan-dev/capstan/internal/test/apicount"
	"github.com/capstan-dev/capstan/internal/test/envtest"
)

var cborServer, jsonServer *envtest.Environment

// TestMain starts two API servers: one with CBORServingAndStorage, as the embedded management cluster's,
// and one without it, as Kubernetes 1.37's default.
func TestMain(m *testing.M) {
	os.Exit(envtest.RunAll(m, []envtest.Options{{}, {WithoutCBOR: true}}, func(_ context.Context, envs []*envtest.Environment) error {
		cborServer, jsonServer = envs[0], envs[1]
		return nil
	}))
}

// client is a dynamic client of env whose responses are counted by media type; acceptJSONOnly makes it ask
// for JSON alone, as a client without CBOR does.
func dynamicClient(t *testing.T, env *envtest.Environment, acceptJSONOnly bool) (*dynamic.DynamicClient, *apicount.Counter) {
	t.Helper()
	counter := apicount.New()
	cfg := rest.CopyConfig(env.Config)
	cfg.Wrap(counter.Wrap)
	if acceptJSONOnly {
		cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper {
			return roundTripper(func(req *http.Request) (*http.Response, error) {
				req = req.Clone(req.Context())
				req.Header.Set("Accept", "application/json")
				return rt.RoundTrip(req)
			})
		})
	}
	c, err := dynamic.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return c, counter
}

type roundTripper func(*http.Request) (*http.Response, error)

func (f roundTripper) RoundTrip(req *http.Request) (*http.Response, error) { return f(req) }

// TestEveryKindReadsTheSameInCBORAndJSON creates an object of every capstan kind on both API servers with
// the process's clients (which accept CBOR, see Enable), and reads each back: from the server that offers
// CBOR the clients get CBOR, from the other JSON, and the objects read are the same either way, down to
// the types of their values (no integer read back as a float, no empty value as null), and decode into the
// same typed object.
func TestEveryKindReadsTheSameInCBORAndJSON(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	crds, err := crd.All()
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(len(crds)).To(BeNumerically(">", 20))
	nsCBOR, nsJSON := cborServer.NewNamespace(t), jsonServer.NewNamespace(t)
	viaCBOR, cborCounts := dynamicClient(t, cborServer, false)
	plainOnCBOR, plainCounts := dynamicClient(t, cborServer, true)
	viaJSON, jsonCounts := dynamicClient(t, jsonServer, false)

	kinds := 0
	for _, c := range crds {
		version := storageVersion(c)
		gvr := schema.GroupVersionResource{Group: c.Spec.Group, Version: version.Name, Resource: c.Spec.Names.Plural}
		obj := exampleOf(c, version)
		if c.Spec.Names.Kind == "Cluster" {
			// A Cluster of a class, whose variable's value is free-form.
			g.Expect(unstructured.SetNestedField(obj.Object, map[string]any{
				"class": "example", "version": "v1.37.1",
				"variables": []any{map[string]any{"name": "free", "value": freeValues()}},
			}, "spec", "topology")).To(Succeed())
		}
		t.Run(c.Spec.Names.Kind, func(t *testing.T) {
			g := NewWithT(t)
			read := func(dc *dynamic.DynamicClient, ns string) *unstructured.Unstructured {
				res := dc.Resource(gvr)
				var ri dynamic.ResourceInterface = res
				o := obj.DeepCopy()
				if c.Spec.Scope == apiextensionsv1.NamespaceScoped {
					o.SetNamespace(ns)
					ri = res.Namespace(ns)
				} else {
					o.SetName(o.GetName() + "-" + ns)
				}
				created, err := ri.Create(ctx, o, metav1.CreateOptions{})
				g.Expect(err).NotTo(HaveOccurred(), "creating %s", c.Spec.Names.Kind)
				if c.Spec.Scope != apiextensionsv1.NamespaceScoped {
					t.Cleanup(func() { _ = ri.Delete(context.Background(), created.GetName(), metav1.DeleteOptions{}) })
				}
				got, err := ri.Get(ctx, created.GetName(), metav1.GetOptions{})
				g.Expect(err).NotTo(HaveOccurred())
				return got
			}
			fromCBOR, fromJSON := read(viaCBOR, nsCBOR), read(viaJSON, nsJSON)
			// The same object of the CBOR server, read in JSON.
			ri := plainOnCBOR.Resource(gvr)
			var plain *unstructured.Unstructured
			if c.Spec.Scope == apiextensionsv1.NamespaceScoped {
				plain, err = ri.Namespace(nsCBOR).Get(ctx, fromCBOR.GetName(), metav1.GetOptions{})
			} else {
				plain, err = ri.Get(ctx, fromCBOR.GetName(), metav1.GetOptions{})
			}
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(fromCBOR.Object).To(Equal(plain.Object), "the same object read in CBOR and in JSON")
			if c.Spec.Names.Kind == "Cluster" {
				// Every free value as it was sent, with JSON's types: the client sent its request in JSON,
				// where 2.0 is the integer 2.
				want := freeValues()
				want["integralFloat"] = int64(2)
				vars, _, _ := unstructured.NestedSlice(fromCBOR.Object, "spec", "topology", "variables")
				g.Expect(vars).To(HaveLen(1))
				g.Expect(vars[0].(map[string]any)["value"]).To(Equal(want))
			}
			g.Expect(withoutServerFields(fromCBOR)).To(Equal(withoutServerFields(fromJSON)), "the object of the CBOR server and of the JSON server")

			// Typed, as the controllers read them.
			if typed, err := cborServer.Scheme.New(fromCBOR.GroupVersionKind()); err == nil {
				fromTypedCBOR, fromTypedJSON := typed.DeepCopyObject(), typed.DeepCopyObject()
				g.Expect(runtime.DefaultUnstructuredConverter.FromUnstructured(fromCBOR.Object, fromTypedCBOR)).To(Succeed())
				g.Expect(runtime.DefaultUnstructuredConverter.FromUnstructured(plain.Object, fromTypedJSON)).To(Succeed())
				g.Expect(fromTypedCBOR).To(Equal(fromTypedJSON))
				// And with the controller-runtime client (typed objects are read in JSON, see Enable).
				viaClient := typed.DeepCopyObject().(client.Object)
				g.Expect(cborServer.Client.Get(ctx, client.ObjectKeyFromObject(fromCBOR), viaClient)).To(Succeed())
				viaClient.GetObjectKind().SetGroupVersionKind(fromCBOR.GroupVersionKind())
				g.Expect(viaClient).To(Equal(fromTypedCBOR))
			}
		})
		kinds++
	}
	t.Logf("%d kinds read back", kinds)
	g.Expect(cborCounts.MediaTypes()).To(HaveKey("application/cbor"))
	g.Expect(cborCounts.MediaTypes()).NotTo(HaveKey("application/json"), "every answer of the CBOR server in CBOR")
	g.Expect(plainCounts.MediaTypes()).To(HaveKey("application/json"))
	g.Expect(plainCounts.MediaTypes()).NotTo(HaveKey("application/cbor"))
	g.Expect(jsonCounts.MediaTypes()).To(HaveKey("application/json"))
	g.Expect(jsonCounts.MediaTypes()).NotTo(HaveKey("application/cbor"), "the server without CBOR answers JSON")
}

// withoutServerFields is the object without what each API server sets its own way: identity, versions, times.
func withoutServerFields(u *unstructured.Unstructured) map[string]any {
	c := u.DeepCopy()
	for _, f := range []string{"uid", "resourceVersion", "creationTimestamp", "managedFields", "namespace", "name"} {
		unstructured.RemoveNestedField(c.Object, "metadata", f)
	}
	return c.Object
}

func storageVersion(c *apiextensionsv1.CustomResourceDefinition) apiextensionsv1.CustomResourceDefinitionVersion {
	for _, v := range c.Spec.Versions {
		if v.Storage {
			return v
		}
	}
	return c.Spec.Versions[0]
}

// exampleOf is an object of the CRD's version with every required field set from the schema, and with
// values of each type where the schema leaves them free (see freeValues).
func exampleOf(c *apiextensionsv1.CustomResourceDefinition, v apiextensionsv1.CustomResourceDefinitionVersion) *unstructured.Unstructured {
	obj := map[string]any{}
	if v.Schema != nil && v.Schema.OpenAPIV3Schema != nil {
		if m, ok := minimal(*v.Schema.OpenAPIV3Schema, "").(map[string]any); ok {
			obj = m
		}
	}
	delete(obj, "status")
	u := &unstructured.Unstructured{Object: obj}
	u.SetAPIVersion(c.Spec.Group + "/" + v.Name)
	u.SetKind(c.Spec.Names.Kind)
	u.SetName("example-" + strings.ToLower(c.Spec.Names.Kind))
	u.SetLabels(map[string]string{"empty": "", "cluster.x-k8s.io/cluster-name": "example"})
	u.SetAnnotations(map[string]string{"number": "1.0"})
	return u
}

// minimal is a value of schema s at path with its required fields only; free-form fields
// (x-kubernetes-preserve-unknown-fields) get freeValues.
func minimal(s apiextensionsv1.JSONSchemaProps, path string) any {
	if len(s.Enum) > 0 {
		var v any
		_ = jsonUnmarshal(s.Enum[0].Raw, &v)
		return v
	}
	if s.Default != nil {
		var v any
		_ = jsonUnmarshal(s.Default.Raw, &v)
		return v
	}
	if s.XIntOrString {
		return int64(1)
	}
	switch s.Type {
	case "object":
		out := map[string]any{}
		for _, name := range s.Required {
			out[name] = minimal(s.Properties[name], path+"."+name)
		}
		if s.XPreserveUnknownFields != nil && *s.XPreserveUnknownFields && len(s.Properties) == 0 {
			return freeValues()
		}
		return out
	case "array":
		n := int64(0)
		if s.MinItems != nil {
			n = *s.MinItems
		}
		out := []any{}
		for i := int64(0); i < n; i++ {
			if s.Items != nil && s.Items.Schema != nil {
				out = append(out, minimal(*s.Items.Schema, path+"[]"))
			}
		}
		return out
	case "string":
		switch s.Format {
		case "date-time":
			return "2026-01-01T00:00:00Z"
		case "duration":
			return "1m"
		}
		if s.MinLength != nil && *s.MinLength > 1 {
			return strings.Repeat("x", int(*s.MinLength))
		}
		return "x"
	case "integer":
		if s.Minimum != nil {
			return int64(*s.Minimum)
		}
		return int64(1)
	case "number":
		return 1.5
	case "boolean":
		return false
	}
	if s.XPreserveUnknownFields != nil && *s.XPreserveUnknownFields {
		return freeValues()
	}
	return nil
}

// freeValues are values of every JSON type, where CBOR and JSON could differ: an integer, a float with and
// without a fraction, an empty string, null, empty and full lists and maps, a large integer.
func freeValues() map[string]any {
	return map[string]any{
		"int": int64(3), "float": 2.5, "integralFloat": float64(2), "empty": "", "null": nil,
		"emptyList": []any{}, "list": []any{int64(1), "a", true}, "emptyMap": map[string]any{},
		"map": map[string]any{"k": "v"}, "big": int64(1) << 53, "negative": int64(-7), "unicode": "é ✓",
	}
}

func jsonUnmarshal(data []byte, v any) error { return json.Unmarshal(data, v) }
