package cluster

import (
	"context"
	"testing"

	. "github.com/onsi/gomega"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
)

func TestCertManager(t *testing.T) {
	g := NewWithT(t)
	c := newClient(t)

	state, err := c.CertManager(t.Context())
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(state).To(Equal(CertManagerState{}))

	crd := parse(t, `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: certificates.cert-manager.io}
spec:
  group: cert-manager.io
  scope: Namespaced
  names: {kind: Certificate, listKind: CertificateList, plural: certificates, singular: certificate}
  versions:
  - {name: v1, served: true, storage: true, schema: {openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}}}
`)
	g.Expect(c.Apply(t.Context(), crd)).To(Succeed())
	t.Cleanup(func() {
		gone := &apiextensionsv1.CustomResourceDefinition{}
		gone.Name = crd[0].GetName()
		_ = env.Client.Delete(context.Background(), gone)
	})
	state, err = c.CertManager(t.Context())
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(state).To(Equal(CertManagerState{Installed: true}), "installed by someone else")

	crd[0].SetLabels(map[string]string{"clusterctl.cluster.x-k8s.io/core": "cert-manager"})
	crd[0].SetAnnotations(map[string]string{"cert-manager.clusterctl.cluster.x-k8s.io/version": "v1.21.1"})
	g.Expect(c.Apply(t.Context(), crd)).To(Succeed())
	state, err = c.CertManager(t.Context())
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(state).To(Equal(CertManagerState{Installed: true, ByClusterctl: true, Version: "v1.21.1"}))

	missing, err := c.MissingObjects(t.Context(), append(crd, parse(t, "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: nope, namespace: default}\n")...))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(missing).To(HaveLen(1))
	g.Expect(missing[0].GetName()).To(Equal("nope"))
}
