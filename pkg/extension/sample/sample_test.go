package sample

import (
	"context"
	"encoding/json"
	"testing"

	jsonpatch "github.com/evanphx/json-patch/v5"
	. "github.com/onsi/gomega"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
	hooksv1 "github.com/capstan-dev/capstan/api/runtime/hooks/v1alpha1"
)

func TestGeneratePatchesEchoesTheBanner(t *testing.T) {
	tests := []struct {
		name     string
		template string
		want     string
	}{
		{"a KubeadmConfigTemplate without commands",
			`{"apiVersion":"bootstrap.cluster.x-k8s.io/v1beta1","kind":"KubeadmConfigTemplate","spec":{"template":{"spec":{}}}}`,
			`{"apiVersion":"bootstrap.cluster.x-k8s.io/v1beta1","kind":"KubeadmConfigTemplate","spec":{"template":{"spec":{"preKubeadmCommands":["echo hello"]}}}}`},
		{"a KubeadmConfigTemplate with commands",
			`{"apiVersion":"bootstrap.cluster.x-k8s.io/v1beta1","kind":"KubeadmConfigTemplate","spec":{"template":{"spec":{"preKubeadmCommands":["true"]}}}}`,
			`{"apiVersion":"bootstrap.cluster.x-k8s.io/v1beta1","kind":"KubeadmConfigTemplate","spec":{"template":{"spec":{"preKubeadmCommands":["true","echo hello"]}}}}`},
		{"a KubeadmControlPlaneTemplate without kubeadmConfigSpec",
			`{"apiVersion":"controlplane.cluster.x-k8s.io/v1beta1","kind":"KubeadmControlPlaneTemplate","spec":{"template":{"spec":{}}}}`,
			`{"apiVersion":"controlplane.cluster.x-k8s.io/v1beta1","kind":"KubeadmControlPlaneTemplate","spec":{"template":{"spec":{"kubeadmConfigSpec":{"preKubeadmCommands":["echo hello"]}}}}}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			req := &hooksv1.GeneratePatchesRequest{
				Variables: []hooksv1.Variable{{Name: BannerVariable, Value: apiextensionsv1.JSON{Raw: []byte(`"hello"`)}}},
				Items:     []hooksv1.GeneratePatchesRequestItem{{UID: "u1", Object: runtime.RawExtension{Raw: []byte(tt.template)}}},
			}
			resp := &hooksv1.GeneratePatchesResponse{}
			GeneratePatches(context.Background(), req, resp)
			g.Expect(resp.Status).NotTo(Equal(hooksv1.ResponseStatusFailure), resp.Message)
			g.Expect(resp.Items).To(HaveLen(1))
			g.Expect(resp.Items[0].UID).To(BeEquivalentTo("u1"))
			patch, err := jsonpatch.DecodePatch(resp.Items[0].Patch)
			g.Expect(err).NotTo(HaveOccurred())
			got, err := patch.Apply([]byte(tt.template))
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(string(got)).To(MatchJSON(tt.want))
		})
	}

	g := NewWithT(t)
	resp := &hooksv1.GeneratePatchesResponse{}
	GeneratePatches(context.Background(), &hooksv1.GeneratePatchesRequest{Items: []hooksv1.GeneratePatchesRequestItem{{UID: "u1",
		Object: runtime.RawExtension{Raw: []byte(`{"apiVersion":"bootstrap.cluster.x-k8s.io/v1beta1","kind":"KubeadmConfigTemplate","spec":{}}`)}}}}, resp)
	g.Expect(resp.Items).To(BeEmpty(), "no patch without the variable")

	resp = &hooksv1.GeneratePatchesResponse{}
	GeneratePatches(context.Background(), &hooksv1.GeneratePatchesRequest{
		Variables: []hooksv1.Variable{{Name: BannerVariable, Value: apiextensionsv1.JSON{Raw: []byte(`42`)}}},
		Items:     []hooksv1.GeneratePatchesRequestItem{{UID: "u1", Object: runtime.RawExtension{Raw: []byte(`{}`)}}}}, resp)
	g.Expect(resp.Status).To(Equal(hooksv1.ResponseStatusFailure))
	g.Expect(resp.Message).To(ContainSubstring("variable sampleBanner must be a string"))
}

func TestHoldAnnotations(t *testing.T) {
	tests := []struct {
		annotations map[string]string
		want        int32
	}{
		{nil, 0},
		{map[string]string{HoldDeleteAnnotation: "12"}, 12},
		{map[string]string{HoldDeleteAnnotation: ""}, 5},
		{map[string]string{HoldCreateAnnotation: "3"}, 0},
	}
	for _, tt := range tests {
		g := NewWithT(t)
		resp := &hooksv1.CommonRetryResponse{}
		hold(context.Background(), &clusterv1.Cluster{ObjectMeta: metav1.ObjectMeta{Annotations: tt.annotations}}, HoldDeleteAnnotation, resp)
		g.Expect(resp.RetryAfterSeconds).To(Equal(tt.want), "%v", tt.annotations)
	}
}

func TestDiscoverVariables(t *testing.T) {
	g := NewWithT(t)
	resp := &hooksv1.DiscoverVariablesResponse{}
	DiscoverVariables(context.Background(), &hooksv1.DiscoverVariablesRequest{}, resp)
	data, err := json.Marshal(resp.Variables)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(string(data)).To(ContainSubstring(`"name":"sampleBanner"`))
}
