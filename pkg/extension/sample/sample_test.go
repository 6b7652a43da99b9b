package sample

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	jsonpatch "github.com/evanphx/json-patch/v5"
	"github.com/google/go-cmp/cmp"
	. "github.com/onsi/gomega"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
	hooksv1 "github.com/capstan-dev/capstan/api/runtime/hooks/v1alpha1"
	"github.com/capstan-dev/capstan/pkg/extension"
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

func TestGenerateUpgradePlan(t *testing.T) {
	tests := []struct {
		name             string
		from, to         string
		wantControlPlane []string
		wantFailure      string
	}{
		{name: "a patch", from: "v1.31.4", to: "v1.31.5", wantControlPlane: []string{"v1.31.5"}},
		{name: "one minor", from: "v1.31.4", to: "v1.32.2", wantControlPlane: []string{"v1.32.2"}},
		{name: "three minors", from: "v1.30.5", to: "v1.33.2", wantControlPlane: []string{"v1.31.0", "v1.32.0", "v1.33.2"}},
		{name: "without the v", from: "1.30.5", to: "1.32.1", wantControlPlane: []string{"v1.31.0", "1.32.1"}},
		{name: "another build", from: "v1.31.0+a", to: "v1.31.0+b", wantControlPlane: []string{"v1.31.0+b"}},
		{name: "the control plane is there, the workers are not", from: "v1.32.2", to: "v1.32.2"},
		{name: "a downgrade", from: "v1.32.2", to: "v1.31.4", wantFailure: "the target version v1.31.4 is lower than the control plane's, v1.32.2"},
		{name: "another major", from: "v1.32.2", to: "v2.0.0", wantFailure: "cannot upgrade from v1.32.2 to another major version, v2.0.0"},
		{name: "not a version", from: "latest", to: "v1.32.2", wantFailure: `the control plane's version "latest" is not a semantic version`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			resp := &hooksv1.GenerateUpgradePlanResponse{}
			GenerateUpgradePlan(context.Background(), &hooksv1.GenerateUpgradePlanRequest{
				FromControlPlaneKubernetesVersion: tt.from, FromWorkersKubernetesVersion: "v1.30.5", ToKubernetesVersion: tt.to,
			}, resp)
			if tt.wantFailure != "" {
				g.Expect(resp.Status).To(Equal(hooksv1.ResponseStatusFailure))
				g.Expect(resp.Message).To(Equal(tt.wantFailure))
				return
			}
			g.Expect(resp.Status).NotTo(Equal(hooksv1.ResponseStatusFailure), resp.Message)
			var got []string
			for _, s := range resp.ControlPlaneUpgrades {
				got = append(got, s.Version)
			}
			g.Expect(got).To(Equal(tt.wantControlPlane), cmp.Diff(tt.wantControlPlane, got))
			g.Expect(resp.WorkersUpgrades).To(BeEmpty(), "capstan picks the workers' steps")
		})
	}
}

// The handlers of the upgrade hooks hold while the Cluster has their annotation, and only theirs.
func TestUpgradeHooksHoldOnTheirAnnotation(t *testing.T) {
	g := NewWithT(t)
	srv := extension.NewServer(extension.Options{})
	g.Expect(Register(srv)).To(Succeed())
	call := func(hook hooksv1.Hook, handler string, annotations map[string]string) *hooksv1.CommonRetryResponse {
		t.Helper()
		cluster := clusterv1.Cluster{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "c", Annotations: annotations}}
		req, _, err := hook.New()
		g.Expect(err).NotTo(HaveOccurred())
		switch r := req.(type) {
		case *hooksv1.BeforeControlPlaneUpgradeRequest:
			r.Cluster, r.FromKubernetesVersion, r.ToKubernetesVersion = cluster, "v1.31.4", "v1.32.2"
		case *hooksv1.BeforeWorkersUpgradeRequest:
			r.Cluster, r.FromKubernetesVersion, r.ToKubernetesVersion = cluster, "v1.31.4", "v1.32.2"
		case *hooksv1.AfterWorkersUpgradeRequest:
			r.Cluster, r.KubernetesVersion = cluster, "v1.32.2"
		}
		body, err := json.Marshal(req)
		g.Expect(err).NotTo(HaveOccurred())
		rec := httptest.NewRecorder()
		srv.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/hooks.runtime.cluster.x-k8s.io/v1alpha1/"+strings.ToLower(string(hook))+"/"+handler, bytes.NewReader(body)))
		g.Expect(rec.Code).To(Equal(http.StatusOK))
		resp := &hooksv1.CommonRetryResponse{}
		g.Expect(json.Unmarshal(rec.Body.Bytes(), resp)).To(Succeed())
		return resp
	}
	tests := []struct {
		hook       hooksv1.Hook
		handler    string
		annotation string
	}{
		{hooksv1.BeforeControlPlaneUpgrade, "before-control-plane-upgrade", HoldControlPlaneUpgradeAnnotation},
		{hooksv1.BeforeWorkersUpgrade, "before-workers-upgrade", HoldWorkersUpgradeAnnotation},
		{hooksv1.AfterWorkersUpgrade, "after-workers-upgrade", HoldAfterWorkersUpgradeAnnotation},
	}
	for _, tt := range tests {
		resp := call(tt.hook, tt.handler, map[string]string{tt.annotation: "9"})
		g.Expect(resp.Status).To(Equal(hooksv1.ResponseStatusSuccess), tt.hook)
		g.Expect(resp.RetryAfterSeconds).To(BeEquivalentTo(9), tt.hook)
		g.Expect(resp.Message).To(Equal("Cluster has the "+tt.annotation+" annotation"), tt.hook)

		resp = call(tt.hook, tt.handler, map[string]string{HoldUpgradeAnnotation: "9"})
		g.Expect(resp.Status).To(Equal(hooksv1.ResponseStatusSuccess), tt.hook)
		g.Expect(resp.RetryAfterSeconds).To(BeZero(), "%s does not hold on another hook's annotation", tt.hook)
	}
}
