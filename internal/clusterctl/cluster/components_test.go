package cluster

import (
	"testing"

	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

func TestDeleteComponents(t *testing.T) {
	tests := []struct {
		name             string
		opts             DeleteComponentsOptions
		wantCRD          bool
		wantNamespaceSet bool
	}{
		{name: "keeps the CRDs and the namespace", opts: DeleteComponentsOptions{Wait: true}, wantCRD: true},
		{name: "with the CRDs", opts: DeleteComponentsOptions{IncludeCRDs: true}},
		{name: "with the namespace", opts: DeleteComponentsOptions{IncludeNamespace: true}, wantCRD: true, wantNamespaceSet: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			c := newClient(t)
			group := uniqueGroup()
			ns := "delete-" + group[:7]
			label := "infrastructure-" + group[:7]
			objs := parse(t, componentsYAML, ns, label, crdYAML(group, label, [3]any{"v1", true, true}), group)
			g.Expect(c.Apply(t.Context(), objs)).To(Succeed())
			// A user's object of the provider's kind, and one of another provider.
			user := parse(t, "apiVersion: %s/v1\nkind: Widget\nmetadata: {name: mine, namespace: %s}\n", group, ns)
			g.Expect(env.CreateServed(t.Context(), &user[0])).To(Succeed())
			other := &corev1.ConfigMap{}
			other.Namespace, other.Name, other.Labels = ns, "other", map[string]string{"cluster.x-k8s.io/provider": "other"}
			g.Expect(env.Client.Create(t.Context(), other)).To(Succeed())

			components, err := c.ComponentObjects(t.Context(), label, ns)
			g.Expect(err).NotTo(HaveOccurred())
			// The Deployment, the ConfigMap, the Namespace and the CRD; not the labelled Widget, an object of
			// a provider's kind (it goes with its CRD, as upstream clusterctl has it).
			g.Expect(kinds(components)).To(ConsistOf("Deployment", "ConfigMap", "Namespace", "CustomResourceDefinition"))

			g.Expect(c.DeleteComponents(t.Context(), label, ns, tt.opts)).To(Succeed())

			g.Expect(apierrors.IsNotFound(env.Client.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: "manager"}, &appsv1.Deployment{}))).To(BeTrue())
			g.Expect(env.Client.Get(t.Context(), client.ObjectKeyFromObject(other), other)).To(Succeed(), "another provider's object stays")
			crd := &apiextensionsv1.CustomResourceDefinition{}
			err = env.Client.Get(t.Context(), client.ObjectKey{Name: "widgets." + group}, crd)
			if tt.wantCRD {
				g.Expect(err).NotTo(HaveOccurred())
				g.Expect(crd.DeletionTimestamp).To(BeNil())
				g.Expect(env.Client.Get(t.Context(), client.ObjectKeyFromObject(&user[0]), &unstructured.Unstructured{Object: map[string]any{"apiVersion": group + "/v1", "kind": "Widget"}})).To(Succeed(), "the user's object stays")
			} else {
				g.Expect(apierrors.IsNotFound(err) || crd.DeletionTimestamp != nil).To(BeTrue())
			}
			namespace := &corev1.Namespace{}
			g.Expect(env.Client.Get(t.Context(), client.ObjectKey{Name: ns}, namespace)).To(Succeed())
			g.Expect(namespace.DeletionTimestamp != nil).To(Equal(tt.wantNamespaceSet))
		})
	}
}

// TestComponentsOfAProviderWhoseWebhookIsDown: a provider's components are listed while another
// provider's conversion webhook does not answer (its manager is down, or not run at all): the objects of
// providers' kinds are not components, so they are not listed in a version that needs the webhook, here
// the kind's preferred version v2 while it is stored as v1.
func TestComponentsOfAProviderWhoseWebhookIsDown(t *testing.T) {
	g := NewWithT(t)
	c := newClient(t)
	group := uniqueGroup()
	ns := "webhook-down-" + group[:7]
	label := "infrastructure-" + group[:7]
	crd := crdYAML(group, "cluster-api", [3]any{"v1", true, true}, [3]any{"v2", true, false}) + `  conversion:
    strategy: Webhook
    webhook:
      conversionReviewVersions: [v1]
      clientConfig: {service: {name: capi-webhook-service, namespace: capi-system, path: /convert}}
`
	g.Expect(c.Apply(t.Context(), parse(t, "%s", crd))).To(Succeed())
	g.Expect(c.Apply(t.Context(), parse(t, "apiVersion: v1\nkind: Namespace\nmetadata: {name: %s, labels: {cluster.x-k8s.io/provider: %s}}\n", ns, label))).To(Succeed())
	// A Widget stored as v1 in the provider's namespace, labelled as one of its components.
	widget := parse(t, "apiVersion: %s/v1\nkind: Widget\nmetadata: {name: w, namespace: %s, labels: {cluster.x-k8s.io/provider: %s}}\n", group, ns, label)
	g.Expect(env.CreateServed(t.Context(), &widget[0])).To(Succeed())

	components, err := c.ComponentObjects(t.Context(), label, ns)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(kinds(components)).To(ConsistOf("Namespace"))
	g.Expect(c.DeleteComponents(t.Context(), label, ns, DeleteComponentsOptions{IncludeNamespace: true})).To(Succeed())
}

// kinds returns the kinds of objs.
func kinds(objs []unstructured.Unstructured) []string {
	var out []string
	for _, o := range objs {
		out = append(out, o.GetKind())
	}
	return out
}

func TestCRDObjectCounts(t *testing.T) {
	g := NewWithT(t)
	c := newClient(t)
	ns := env.NewNamespace(t)
	group := uniqueGroup()
	label := "infrastructure-" + group[:7]
	g.Expect(c.Apply(t.Context(), parse(t, "%s", crdYAML(group, label, [3]any{"v1", true, true})))).To(Succeed())

	counts, err := c.CRDObjectCounts(t.Context(), label)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(counts).To(BeEmpty())

	for _, name := range []string{"a", "b", "c"} {
		w := parse(t, "apiVersion: %s/v1\nkind: Widget\nmetadata: {name: %s, namespace: %s}\n", group, name, ns)
		g.Expect(env.CreateServed(t.Context(), &w[0])).To(Succeed())
	}
	counts, err = c.CRDObjectCounts(t.Context(), label)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(counts).To(Equal([]ObjectCount{{Kind: "Widget", Count: 3}}))
}

func TestCheckCRDNames(t *testing.T) {
	tests := []struct {
		name    string
		yaml    string
		wantErr string
	}{
		{name: "plural.group", yaml: crdYAML("example.com", "x", [3]any{"v1", true, true})},
		{name: "a wrong name", yaml: "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata: {name: widget.example.com}\nspec: {group: example.com, names: {plural: widgets}}\n",
			wantErr: "the components of infrastructure-x have CRDs not named <plural>.<group>: widget.example.com (want widgets.example.com)"},
		{name: "a wrong name, annotated", yaml: "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata: {name: widget.example.com, annotations: {clusterctl.cluster.x-k8s.io/skip-crd-name-preflight-check: \"\"}}\nspec: {group: example.com, names: {plural: widgets}}\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			err := CheckCRDNames("infrastructure-x", parse(t, "%s", tt.yaml))
			if tt.wantErr == "" {
				g.Expect(err).NotTo(HaveOccurred())
				return
			}
			g.Expect(err).To(MatchError(ContainSubstring(tt.wantErr)))
		})
	}
}

func TestCheckCRDOwnership(t *testing.T) {
	g := NewWithT(t)
	c := newClient(t)
	group := uniqueGroup()
	g.Expect(c.Apply(t.Context(), parse(t, "%s", crdYAML(group, "infrastructure-one", [3]any{"v1", true, true})))).To(Succeed())
	g.Expect(c.CheckCRDOwnership(t.Context(), "infrastructure-one", parse(t, "%s", crdYAML(group, "infrastructure-one", [3]any{"v1", true, true})))).To(Succeed())
	err := c.CheckCRDOwnership(t.Context(), "infrastructure-two", parse(t, "%s", crdYAML(group, "infrastructure-two", [3]any{"v1", true, true})))
	g.Expect(err).To(MatchError(ContainSubstring("the CRD widgets." + group + " of infrastructure-two is already installed for infrastructure-one")))
}
