package cluster

import (
	"encoding/base64"
	"testing"

	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/capstan-dev/capstan/internal/pki"
)

const componentsYAML = `apiVersion: apps/v1
kind: Deployment
metadata: {name: manager, namespace: %[1]s, labels: {cluster.x-k8s.io/provider: %[2]s}}
spec:
  replicas: 2
  selector: {matchLabels: {app: manager}}
  template:
    metadata: {labels: {app: manager}}
    spec:
      containers: [{name: manager, image: "example.com/manager:v1"}]
---
apiVersion: v1
kind: ConfigMap
metadata: {name: settings, namespace: %[1]s, labels: {cluster.x-k8s.io/provider: %[2]s}}
data: {a: b}
---
apiVersion: v1
kind: Namespace
metadata: {name: %[1]s, labels: {cluster.x-k8s.io/provider: %[2]s}}
---
%[3]s---
apiVersion: %[4]s/v1
kind: Widget
metadata: {name: default, namespace: %[1]s, labels: {cluster.x-k8s.io/provider: %[2]s}}
spec: {size: 1}
`

func TestApply(t *testing.T) {
	g := NewWithT(t)
	c := newClient(t)
	group := uniqueGroup()
	ns := "apply-" + group[:7]
	objs := parse(t, componentsYAML, ns, "infrastructure-widget", crdYAML(group, "infrastructure-widget", [3]any{"v1", true, true}), group)

	// Namespaces, CRDs and custom resources in any order in the input: Apply orders them.
	g.Expect(c.Apply(t.Context(), objs)).To(Succeed())
	widget := &unstructured.Unstructured{}
	widget.SetAPIVersion(group + "/v1")
	widget.SetKind("Widget")
	g.Expect(env.Client.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: "default"}, widget)).To(Succeed())
	d := &appsv1.Deployment{}
	g.Expect(env.Client.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: "manager"}, d)).To(Succeed())
	cm := &corev1.ConfigMap{}
	g.Expect(env.Client.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: "settings"}, cm)).To(Succeed())

	// Applying again changes nothing: no object is written.
	g.Expect(c.Apply(t.Context(), objs)).To(Succeed())
	again := &appsv1.Deployment{}
	g.Expect(env.Client.Get(t.Context(), client.ObjectKeyFromObject(d), again)).To(Succeed())
	g.Expect(again.ResourceVersion).To(Equal(d.ResourceVersion))

	// Fields changed by someone else are taken back; changed components are applied.
	again.Spec.Replicas = ptr(int32(5))
	g.Expect(env.Client.Update(t.Context(), again)).To(Succeed())
	changed := parse(t, componentsYAML, ns, "infrastructure-widget", crdYAML(group, "infrastructure-widget", [3]any{"v1", true, true}), group)
	changed[1].Object["data"] = map[string]any{"a": "c"}
	g.Expect(c.Apply(t.Context(), changed)).To(Succeed())
	g.Expect(env.Client.Get(t.Context(), client.ObjectKeyFromObject(d), again)).To(Succeed())
	g.Expect(*again.Spec.Replicas).To(Equal(int32(2)))
	g.Expect(env.Client.Get(t.Context(), client.ObjectKeyFromObject(cm), cm)).To(Succeed())
	g.Expect(cm.Data).To(Equal(map[string]string{"a": "c"}))
}

func TestApplyOrder(t *testing.T) {
	objs := parse(t, `apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingWebhookConfiguration
metadata: {name: w}
---
apiVersion: cert-manager.io/v1
kind: Issuer
metadata: {name: i}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: d}
---
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: c}
---
apiVersion: v1
kind: Namespace
metadata: {name: n}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: r}
`)
	want := map[string]int{"w": rankWebhook, "i": rankCustom, "d": rankBuiltin, "c": rankCRD, "n": rankNamespace, "r": rankBuiltin}
	for i := range objs {
		if got := applyRank(&objs[i]); got != want[objs[i].GetName()] {
			t.Errorf("applyRank(%s) = %d, want %d", objs[i].GetKind(), got, want[objs[i].GetName()])
		}
	}
}

func ptr[T any](v T) *T { return &v }

// TestApplyReplacesCRDs checks that a CRD another tool created is replaced, so that a new release can
// drop a version that tool's fields still hold, and that cert-manager's CA bundle survives.
func TestApplyReplacesCRDs(t *testing.T) {
	g := NewWithT(t)
	c := newClient(t)
	group := uniqueGroup()
	ca, err := pki.NewCA("test")
	g.Expect(err).NotTo(HaveOccurred())
	created := parse(t, "%s", crdYAML(group, "infrastructure-x", [3]any{"v1alpha1", true, false}, [3]any{"v1alpha2", true, true}))[0]
	g.Expect(unstructured.SetNestedMap(created.Object, map[string]any{
		"strategy": "Webhook",
		"webhook": map[string]any{
			"conversionReviewVersions": []any{"v1"},
			"clientConfig":             map[string]any{"caBundle": base64.StdEncoding.EncodeToString(ca.CertPEM()), "service": map[string]any{"name": "webhook", "namespace": "x-system", "path": "/convert"}},
		},
	}, "spec", "conversion")).To(Succeed())
	g.Expect(env.Client.Create(t.Context(), &created)).To(Succeed())

	next := parse(t, "%s", crdYAML(group, "infrastructure-x", [3]any{"v1alpha2", true, true}))
	g.Expect(unstructured.SetNestedMap(next[0].Object, map[string]any{
		"strategy": "Webhook",
		"webhook": map[string]any{
			"conversionReviewVersions": []any{"v1"},
			"clientConfig":             map[string]any{"service": map[string]any{"name": "webhook", "namespace": "x-system", "path": "/convert"}},
		},
	}, "spec", "conversion")).To(Succeed())
	g.Expect(c.Apply(t.Context(), next)).To(Succeed())

	got := &apiextensionsv1.CustomResourceDefinition{}
	g.Expect(env.Client.Get(t.Context(), client.ObjectKey{Name: "widgets." + group}, got)).To(Succeed())
	g.Expect(got.Spec.Versions).To(HaveLen(1))
	g.Expect(got.Spec.Versions[0].Name).To(Equal("v1alpha2"))
	g.Expect(got.Spec.Conversion.Webhook.ClientConfig.CABundle).To(Equal(ca.CertPEM()))
}
