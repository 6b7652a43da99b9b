package mutation

import (
	"context"
	"encoding/json"
	"testing"

	. "github.com/onsi/gomega"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"

	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
	hooksv1 "github.com/capstan-dev/capstan/api/runtime/hooks/v1alpha1"
	"github.com/capstan-dev/capstan/internal/runtime/runtimetest"
	"github.com/capstan-dev/capstan/internal/runtime/runtimetest/clienttest"
	"github.com/capstan-dev/capstan/internal/topology"
	"github.com/capstan-dev/capstan/pkg/extension"
	"github.com/capstan-dev/capstan/pkg/extension/sample"
)

func TestGeneratePatchesSendsTemplatesVariablesAndSettings(t *testing.T) {
	g := NewWithT(t)
	ext := runtimetest.Start(t)
	var got *hooksv1.GeneratePatchesRequest
	g.Expect(extension.AddHandler(ext.Server, extension.Handler[*hooksv1.GeneratePatchesRequest, *hooksv1.GeneratePatchesResponse]{
		Hook: hooksv1.GeneratePatches, Name: "gen",
		Func: func(ctx context.Context, req *hooksv1.GeneratePatchesRequest, resp *hooksv1.GeneratePatchesResponse) {
			got = req
			sample.GeneratePatches(ctx, req, resp)
		},
	})).To(Succeed())
	p := &Patcher{Runtime: clienttest.New(t, "ext", ext)}

	kcpt := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "controlplane.cluster.x-k8s.io/v1beta1", "kind": "KubeadmControlPlaneTemplate",
		"spec": map[string]any{"template": map[string]any{"spec": map[string]any{"kubeadmConfigSpec": map[string]any{}}}},
	}}
	req := &topology.ExternalPatchRequest{
		Cluster: &clusterv1.Cluster{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "c"}},
		Patch: clusterv1.ClusterClassPatch{Name: "p", External: &clusterv1.ExternalPatchDefinition{
			GenerateExtension: ptr.To("gen.ext"), Settings: map[string]string{"color": "blue"},
		}},
		Variables: map[string]apiextensionsv1.JSON{sample.BannerVariable: {Raw: []byte(`"hi"`)}, "a": {Raw: []byte(`1`)}},
		Items: []topology.PatchItem{{
			UID: "0", Object: kcpt,
			HolderReference: topology.HolderReference{APIVersion: "cluster.x-k8s.io/v1beta1", Kind: "Cluster", Namespace: "ns", Name: "c", FieldPath: "spec.controlPlaneRef"},
			Variables:       map[string]apiextensionsv1.JSON{"builtin": {Raw: []byte(`{"cluster":{"name":"c"}}`)}},
		}},
	}
	patches, err := p.GeneratePatches(context.Background(), req)
	g.Expect(err).NotTo(HaveOccurred())

	// What the extension received: upstream's request, variables sorted by name.
	g.Expect(got.Settings).To(Equal(map[string]string{"color": "blue"}))
	g.Expect(got.Variables).To(HaveLen(2))
	g.Expect(got.Variables[0].Name).To(Equal("a"))
	g.Expect(got.Items).To(HaveLen(1))
	g.Expect(string(got.Items[0].UID)).To(Equal("0"))
	g.Expect(got.Items[0].HolderReference.FieldPath).To(Equal("spec.controlPlaneRef"))
	g.Expect(got.Items[0].Variables).To(ConsistOf(HaveField("Name", "builtin")))
	obj := map[string]any{}
	g.Expect(json.Unmarshal(got.Items[0].Object.Raw, &obj)).To(Succeed())
	g.Expect(obj["apiVersion"]).To(Equal("controlplane.cluster.x-k8s.io/v1beta1"))

	// What it answered.
	g.Expect(patches).To(HaveLen(1))
	g.Expect(patches[0].UID).To(Equal("0"))
	g.Expect(patches[0].PatchType).To(Equal(topology.JSONPatchType))
	g.Expect(string(patches[0].Patch)).To(ContainSubstring(`"echo hi"`))
}

func TestValidateTopologyFailureIsAnError(t *testing.T) {
	g := NewWithT(t)
	ext := runtimetest.Start(t)
	g.Expect(extension.AddHandler(ext.Server, extension.Handler[*hooksv1.ValidateTopologyRequest, *hooksv1.ValidateTopologyResponse]{
		Hook: hooksv1.ValidateTopology, Name: "validate",
		Func: func(_ context.Context, req *hooksv1.ValidateTopologyRequest, resp *hooksv1.ValidateTopologyResponse) {
			if len(req.Items) != 1 {
				resp.Status, resp.Message = hooksv1.ResponseStatusFailure, "expected one item"
				return
			}
			resp.Status, resp.Message = hooksv1.ResponseStatusFailure, "replicas must be odd"
		},
	})).To(Succeed())
	p := &Patcher{Runtime: clienttest.New(t, "ext", ext)}
	err := p.ValidateTopology(context.Background(), &topology.ExternalPatchRequest{
		Cluster: &clusterv1.Cluster{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "c"}},
		Patch:   clusterv1.ClusterClassPatch{Name: "p", External: &clusterv1.ExternalPatchDefinition{ValidateExtension: ptr.To("validate.ext")}},
		Items:   []topology.PatchItem{{UID: "0", Object: &unstructured.Unstructured{Object: map[string]any{"kind": "X"}}}},
	})
	g.Expect(err).To(MatchError(ContainSubstring(`ValidateTopology handler "validate.ext" of ExtensionConfig ext failed: the handler answered with a failure: replicas must be odd`)))
}

func TestDiscoverVariables(t *testing.T) {
	g := NewWithT(t)
	ext := runtimetest.Start(t)
	g.Expect(sample.Register(ext.Server)).To(Succeed())
	rc := clienttest.New(t, "sample", ext)
	class := &clusterv1.ClusterClass{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "class"},
		Spec: clusterv1.ClusterClassSpec{
			Variables: []clusterv1.ClusterClassVariable{
				{Name: "zone", Schema: clusterv1.VariableSchema{OpenAPIV3Schema: clusterv1.JSONSchemaProps{Type: "string"}}},
				{Name: sample.BannerVariable, Schema: clusterv1.VariableSchema{OpenAPIV3Schema: clusterv1.JSONSchemaProps{Type: "integer"}}},
			},
			Patches: []clusterv1.ClusterClassPatch{{Name: "sample-patch", External: &clusterv1.ExternalPatchDefinition{DiscoverVariablesExtension: ptr.To("discover-variables.sample")}}},
		},
	}
	vars, err := DiscoverVariables(context.Background(), rc, class)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(vars).To(HaveLen(2))
	// Sorted by name; the banner is defined inline and by the patch, differently: a conflict.
	g.Expect(vars[0].Name).To(Equal(sample.BannerVariable))
	g.Expect(vars[0].DefinitionsConflict).To(BeTrue())
	g.Expect(vars[0].Definitions).To(HaveLen(2))
	g.Expect(vars[0].Definitions[0].From).To(Equal(clusterv1.VariableDefinitionFromInline))
	g.Expect(vars[0].Definitions[1].From).To(Equal("sample-patch"))
	g.Expect(vars[0].Definitions[1].Schema.OpenAPIV3Schema.Type).To(Equal("string"))
	g.Expect(vars[1].Name).To(Equal("zone"))
	g.Expect(vars[1].DefinitionsConflict).To(BeFalse())

	// An extension that is not registered: the error names the patch; without a Runtime SDK, says so.
	class.Spec.Patches[0].External.DiscoverVariablesExtension = ptr.To("discover-variables.missing")
	_, err = DiscoverVariables(context.Background(), rc, class)
	g.Expect(err).To(MatchError(ContainSubstring("VariableDiscovery failed: failed to call DiscoverVariables for patch sample-patch")))
	_, err = DiscoverVariables(context.Background(), nil, class)
	g.Expect(err).To(MatchError(ContainSubstring("the Runtime SDK is disabled")))
}
