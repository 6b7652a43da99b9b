package certs

import (
	"context"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/capstan-dev/capstan/internal/pki"
)

func TestRotatorKeepsTheSecretAndTheBundles(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	scheme := runtime.NewScheme()
	g.Expect(clientgoscheme.AddToScheme(scheme)).To(Succeed())
	g.Expect(apiextensionsv1.AddToScheme(scheme)).To(Succeed())
	ours := admissionregistrationv1.WebhookClientConfig{Service: &admissionregistrationv1.ServiceReference{Namespace: "sys", Name: "svc", Path: ptr.To("/validate")}}
	theirs := admissionregistrationv1.WebhookClientConfig{Service: &admissionregistrationv1.ServiceReference{Namespace: "other", Name: "svc"}, CABundle: []byte("theirs")}
	c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(&admissionregistrationv1.ValidatingWebhookConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: "hooks"},
		Webhooks:   []admissionregistrationv1.ValidatingWebhook{{Name: "a.x", ClientConfig: ours}, {Name: "b.x", ClientConfig: theirs}},
	}).Build()
	now := time.Now()
	p := Policy{CAValidity: 1000 * time.Hour, CARenewBefore: 100 * time.Hour, CertValidity: 100 * time.Hour, CertRenewBefore: 30 * time.Hour}
	r := &Rotator{Client: c, Namespace: "sys", SecretName: "cert", ServiceName: "svc", Policy: p, Now: func() time.Time { return now }}
	key := client.ObjectKey{Namespace: "sys", Name: "cert"}
	reconcileOnce := func() {
		t.Helper()
		_, err := r.Reconcile(ctx, reconcile.Request{NamespacedName: key})
		g.Expect(err).NotTo(HaveOccurred())
	}
	secret := func() *corev1.Secret {
		s := &corev1.Secret{}
		g.Expect(c.Get(ctx, key, s)).To(Succeed())
		return s
	}
	bundles := func() (ourBundle, theirBundle []byte) {
		vwc := &admissionregistrationv1.ValidatingWebhookConfiguration{}
		g.Expect(c.Get(ctx, client.ObjectKey{Name: "hooks"}, vwc)).To(Succeed())
		return vwc.Webhooks[0].ClientConfig.CABundle, vwc.Webhooks[1].ClientConfig.CABundle
	}

	// First pass: a Secret with a new CA; the CA bundle goes into our entry only; the certificate is served.
	reconcileOnce()
	first := secret()
	g.Expect(first.Type).To(Equal(corev1.SecretTypeTLS))
	ca := first.Data[CAKey]
	ourBundle, theirBundle := bundles()
	g.Expect(ourBundle).To(Equal(ca))
	g.Expect(theirBundle).To(Equal([]byte("theirs")), "entries of other Services are left alone")
	served, err := r.GetCertificate(nil)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(served.Certificate[0]).NotTo(BeEmpty())

	// Nothing to do: nothing changes.
	reconcileOnce()
	g.Expect(secret().ResourceVersion).To(Equal(first.ResourceVersion))

	// Deleted: recreated with the same certificates.
	g.Expect(c.Delete(ctx, first)).To(Succeed())
	reconcileOnce()
	g.Expect(secret().Data).To(Equal(first.Data))

	// Garbage: repaired with the certificates in use.
	broken := secret()
	broken.Data[CertKey] = []byte("garbage")
	g.Expect(c.Update(ctx, broken)).To(Succeed())
	reconcileOnce()
	g.Expect(secret().Data).To(Equal(first.Data))

	// Close to the serving certificate's expiry: a new one, from the same CA.
	now = now.Add(80 * time.Hour)
	reconcileOnce()
	renewed := secret()
	g.Expect(renewed.Data[CertKey]).NotTo(Equal(first.Data[CertKey]))
	g.Expect(renewed.Data[CAKey]).To(Equal(ca), "renewing the serving certificate keeps the CA")
	served, err = r.GetCertificate(nil)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(served.Leaf.NotAfter).To(BeTemporally(">", now.Add(90*time.Hour)))

	// Close to the CA's expiry: a new CA in front of the old one in the bundle, written into the entry.
	now = now.Add(850 * time.Hour)
	reconcileOnce()
	rotated := secret()
	bundle, err := pki.ParseCerts(rotated.Data[CAKey])
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(bundle).To(HaveLen(2))
	old, err := pki.ParseCerts(ca)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(bundle[1].Equal(old[0])).To(BeTrue(), "the old CA stays trusted until it expires")
	ourBundle, _ = bundles()
	g.Expect(ourBundle).To(Equal(rotated.Data[CAKey]))
}
