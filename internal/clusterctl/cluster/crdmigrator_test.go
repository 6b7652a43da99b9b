package cluster

import (
	"testing"

	. "github.com/onsi/gomega"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

func TestStorageMigration(t *testing.T) {
	g := NewWithT(t)
	c := newClient(t)
	ns := env.NewNamespace(t)
	group := uniqueGroup()
	label := "infrastructure-" + group[:7]
	crdName := "widgets." + group
	storedVersions := func() []string {
		crd := &apiextensionsv1.CustomResourceDefinition{}
		g.Expect(env.Client.Get(t.Context(), client.ObjectKey{Name: crdName}, crd)).To(Succeed())
		return crd.Status.StoredVersions
	}
	resourceVersions := func() map[string]string {
		list := &unstructured.UnstructuredList{}
		list.SetAPIVersion(group + "/v1alpha1")
		list.SetKind("WidgetList")
		g.Expect(env.Client.List(t.Context(), list, client.InNamespace(ns))).To(Succeed())
		out := map[string]string{}
		for _, item := range list.Items {
			out[item.GetName()] = item.GetResourceVersion()
		}
		return out
	}

	v1 := parse(t, "%s", crdYAML(group, label, [3]any{"v1alpha1", true, true}))
	g.Expect(c.Apply(t.Context(), v1)).To(Succeed())
	for _, name := range []string{"a", "b", "c"} {
		w := parse(t, "apiVersion: %s/v1alpha1\nkind: Widget\nmetadata: {name: %s, namespace: %s}\nspec: {size: 1}\n", group, name, ns)
		g.Expect(env.CreateServed(t.Context(), &w[0])).To(Succeed())
	}
	before := resourceVersions()

	// v2 adds v1alpha2 as the storage version: the objects are written again, storedVersions shrinks.
	v2 := parse(t, "%s", crdYAML(group, label, [3]any{"v1alpha1", true, false}, [3]any{"v1alpha2", true, true}))
	g.Expect(c.CheckCRDUpgrades(t.Context(), label, v2)).To(Succeed())
	g.Expect(c.MigrateBeforeApply(t.Context(), v2)).To(Succeed())
	g.Expect(c.Apply(t.Context(), v2)).To(Succeed())
	g.Expect(storedVersions()).To(ConsistOf("v1alpha1", "v1alpha2"))
	// While objects may be stored as v1alpha1 and v1alpha2, a release of another implementation (capstan
	// adopt) must serve both.
	g.Expect(c.CheckCRDStoredVersions(t.Context(), label, v2)).To(Succeed())
	notServed := parse(t, "%s", crdYAML(group, label, [3]any{"v1alpha1", false, false}, [3]any{"v1alpha2", true, true}))
	g.Expect(c.CheckCRDStoredVersions(t.Context(), label, notServed)).To(MatchError(
		"objects of CRD " + crdName + " may be stored as v1alpha1, which the new release of " + label + " does not serve: migrate them to a version it serves (v1alpha2) with the installed release first"))
	g.Expect(c.MigrateAfterApply(t.Context(), v2)).To(Succeed())
	g.Expect(storedVersions()).To(Equal([]string{"v1alpha2"}))
	after := resourceVersions()
	g.Expect(after).To(HaveLen(3))
	for name, rv := range after {
		g.Expect(rv).NotTo(Equal(before[name]), "%s is written again", name)
	}

	// v3 drops v1alpha1: accepted, as nothing is stored in it any more.
	v3 := parse(t, "%s", crdYAML(group, label, [3]any{"v1alpha2", true, true}))
	g.Expect(c.CheckCRDUpgrades(t.Context(), label, v3)).To(Succeed())
	g.Expect(c.MigrateBeforeApply(t.Context(), v3)).To(Succeed())
	g.Expect(c.Apply(t.Context(), v3)).To(Succeed())

	// A CRD without the version objects are stored in cannot take over.
	v4 := parse(t, "%s", crdYAML(group, label, [3]any{"v1beta1", true, true}))
	g.Expect(c.CheckCRDUpgrades(t.Context(), label, v4)).To(MatchError(ContainSubstring("does not have the version v1alpha2 its objects are stored in")))
}

func TestMigrateBeforeApply(t *testing.T) {
	g := NewWithT(t)
	c := newClient(t)
	ns := env.NewNamespace(t)
	group := uniqueGroup()
	label := "infrastructure-" + group[:7]

	g.Expect(c.Apply(t.Context(), parse(t, "%s", crdYAML(group, label, [3]any{"v1alpha1", true, true})))).To(Succeed())
	w := parse(t, "apiVersion: %s/v1alpha1\nkind: Widget\nmetadata: {name: a, namespace: %s}\n", group, ns)
	g.Expect(env.CreateServed(t.Context(), &w[0])).To(Succeed())
	// A release that changed the storage version without migrating: storedVersions keeps both.
	g.Expect(c.Apply(t.Context(), parse(t, "%s", crdYAML(group, label, [3]any{"v1alpha1", true, false}, [3]any{"v1alpha2", true, true})))).To(Succeed())

	dropping := parse(t, "%s", crdYAML(group, label, [3]any{"v1alpha2", true, true}))
	g.Expect(c.Apply(t.Context(), dropping)).To(MatchError(ContainSubstring("storedVersions")), "the API server refuses to drop a stored version")
	g.Expect(c.MigrateBeforeApply(t.Context(), dropping)).To(Succeed())
	g.Expect(c.Apply(t.Context(), dropping)).To(Succeed())
	got := &unstructured.Unstructured{}
	got.SetAPIVersion(group + "/v1alpha2")
	got.SetKind("Widget")
	g.Expect(env.Client.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: "a"}, got)).To(Succeed())
}
