package clustersecret

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"testing"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
	"github.com/capstan-dev/capstan/internal/pki"
)

// A cluster Secret is shaped as Cluster API's: `<cluster>-<purpose>`, type cluster.x-k8s.io/secret, the
// cluster-name label, tls.crt and tls.key, and the owner given.
func TestNewCertificate(t *testing.T) {
	g := NewWithT(t)
	owner := &metav1.OwnerReference{APIVersion: "infrastructure.cluster.x-k8s.io/v1alpha1", Kind: "LocalCluster", Name: "demo", UID: "u"}
	s := NewCertificate(client.ObjectKey{Namespace: "ns", Name: "demo"}, EtcdCA, []byte("cert"), []byte("key"), owner)
	g.Expect(s.Namespace).To(Equal("ns"))
	g.Expect(s.Name).To(Equal("demo-etcd"))
	g.Expect(s.Type).To(Equal(corev1.SecretType("cluster.x-k8s.io/secret")))
	g.Expect(s.Labels).To(Equal(map[string]string{clusterv1.ClusterNameLabel: "demo"}))
	g.Expect(s.Data).To(Equal(map[string][]byte{"tls.crt": []byte("cert"), "tls.key": []byte("key")}))
	g.Expect(s.OwnerReferences).To(Equal([]metav1.OwnerReference{*owner}))
	g.Expect(Name("demo", Kubeconfig)).To(Equal("demo-kubeconfig"))
}

// Two writers that each generate a missing Secret end up with the first one's.
func TestCreateUsesTheirs(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	scheme := runtime.NewScheme()
	g.Expect(clientgoscheme.AddToScheme(scheme)).To(Succeed())
	c := fake.NewClientBuilder().WithScheme(scheme).Build()
	cluster := client.ObjectKey{Namespace: "ns", Name: "demo"}

	got, created, err := Create(ctx, c, c, NewCertificate(cluster, ClusterCA, []byte("first"), []byte("k1"), nil))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(created).To(BeTrue())
	g.Expect(got.Data[CertKey]).To(Equal([]byte("first")))

	got, created, err = Create(ctx, c, c, NewCertificate(cluster, ClusterCA, []byte("second"), []byte("k2"), nil))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(created).To(BeFalse())
	g.Expect(got.Data[CertKey]).To(Equal([]byte("first")))
}

// A service account key is written as upstream's <cluster>-sa Secret holds it (public key in tls.crt, an
// RSA private key as PKCS#1 in tls.key) and reads back as the same key.
func TestEncodeServiceAccountKey(t *testing.T) {
	g := NewWithT(t)
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	g.Expect(err).NotTo(HaveOccurred())
	pub, priv, err := EncodeServiceAccountKey(key)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(string(pub)).To(HavePrefix("-----BEGIN PUBLIC KEY-----"))
	g.Expect(string(priv)).To(HavePrefix("-----BEGIN RSA PRIVATE KEY-----"))
	back, err := pki.ParseKey(priv)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(key.Equal(back)).To(BeTrue())
}
