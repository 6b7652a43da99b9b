package kubeadmcontrolplane_test

import (
	"bytes"
	"errors"
	"io"
	"testing"

	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"

	clusterctlv1 "github.com/capstan-dev/capstan/api/clusterctl/v1alpha3"
	"github.com/capstan-dev/capstan/internal/release"
)

func decode(t *testing.T, data []byte) []*unstructured.Unstructured {
	t.Helper()
	var out []*unstructured.Unstructured
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
	for {
		u := &unstructured.Unstructured{}
		if err := dec.Decode(&u.Object); err != nil {
			if errors.Is(err, io.EOF) {
				return out
			}
			t.Fatal(err)
		}
		if len(u.Object) > 0 {
			out = append(out, u)
		}
	}
}

// The release artifacts follow the clusterctl provider contract, with upstream's names:
// control-plane-components.yaml with the two CRDs labelled with the contract, the
// capi-kubeadm-control-plane-system Namespace, the Deployment running `capstan controlplane-kubeadm`, the
// ClusterRole aggregated into the core's; metadata.yaml.
func TestReleaseArtifacts(t *testing.T) {
	g := NewWithT(t)
	p, err := release.KubeadmControlPlane()
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(p.Label()).To(Equal("control-plane-kubeadm"))
	files, err := p.Files("v0.1.0")
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(files).To(HaveKey("control-plane-components.yaml"))
	meta := &clusterctlv1.Metadata{}
	g.Expect(yaml.UnmarshalStrict(files["metadata.yaml"], meta)).To(Succeed())
	g.Expect(meta.ReleaseSeries).NotTo(BeEmpty())

	kinds := map[string]int{}
	aggregated := false
	for _, o := range decode(t, files["control-plane-components.yaml"]) {
		kinds[o.GetKind()]++
		g.Expect(o.GetLabels()).To(HaveKeyWithValue("cluster.x-k8s.io/provider", "control-plane-kubeadm"), "%s %s", o.GetKind(), o.GetName())
		switch o.GetKind() {
		case "CustomResourceDefinition":
			g.Expect(o.GetLabels()).To(HaveKeyWithValue("cluster.x-k8s.io/v1beta1", "v1beta1"))
		case "Deployment":
			g.Expect(o.GetName()).To(Equal("capi-kubeadm-control-plane-controller-manager"))
			containers, _, _ := unstructured.NestedSlice(o.Object, "spec", "template", "spec", "containers")
			g.Expect(containers).To(HaveLen(1))
			c := containers[0].(map[string]any)
			g.Expect(c["name"]).To(Equal("manager"))
			g.Expect(c["image"]).To(Equal("ghcr.io/capstan-dev/capstan:v0.1.0"))
			g.Expect(c["args"]).To(ContainElements("controlplane-kubeadm", "--leader-elect"))
		case "ClusterRole":
			if o.GetLabels()["cluster.x-k8s.io/aggregate-to-manager"] == "true" {
				aggregated = true
			}
		}
		if o.GetKind() != "CustomResourceDefinition" && o.GetKind() != "ClusterRole" && o.GetKind() != "ClusterRoleBinding" && o.GetKind() != "Namespace" {
			g.Expect(o.GetNamespace()).To(Equal("capi-kubeadm-control-plane-system"), "%s %s", o.GetKind(), o.GetName())
		}
	}
	g.Expect(kinds).To(HaveKeyWithValue("Namespace", 1))
	g.Expect(kinds).To(HaveKeyWithValue("Deployment", 1))
	g.Expect(kinds).To(HaveKeyWithValue("CustomResourceDefinition", 2))
	g.Expect(aggregated).To(BeTrue())
}
