package embedded

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net/http"
	"os"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

func TestClusterKeepsObjectsAcrossRestartsAndRunsControllers(t *testing.T) {
	if testing.Short() {
		t.Skip("starts etcd, kube-apiserver and kube-controller-manager")
	}
	g := NewWithT(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	state := State{Dir: t.TempDir()}

	c, err := Start(ctx, "test", state, StartOptions{EtcdUnsafeNoFsync: true, ReadyTimeout: 30 * time.Second})
	g.Expect(err).NotTo(HaveOccurred())
	cfg, err := c.RESTConfig()
	g.Expect(err).NotTo(HaveOccurred())
	cs := kubernetes.NewForConfigOrDie(cfg)
	checkEtcdRefusesClientsWithoutCertificate(t, state, c.Ports.EtcdClient)

	ns, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "kept"}}, metav1.CreateOptions{})
	g.Expect(err).NotTo(HaveOccurred())

	// Garbage collection: a ConfigMap owned by another is deleted with its owner.
	owner, err := cs.CoreV1().ConfigMaps("kept").Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "owner"}}, metav1.CreateOptions{})
	g.Expect(err).NotTo(HaveOccurred())
	_, err = cs.CoreV1().ConfigMaps("kept").Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "owned",
		OwnerReferences: []metav1.OwnerReference{{APIVersion: "v1", Kind: "ConfigMap", Name: "owner", UID: owner.UID}}}}, metav1.CreateOptions{})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(cs.CoreV1().ConfigMaps("kept").Delete(ctx, "owner", metav1.DeleteOptions{})).To(Succeed())
	g.Eventually(func() bool {
		_, err := cs.CoreV1().ConfigMaps("kept").Get(ctx, "owned", metav1.GetOptions{})
		return apierrors.IsNotFound(err)
	}, 60*time.Second, 250*time.Millisecond).Should(BeTrue(), "the garbage collector deletes owned objects")

	// RBAC aggregation: rules of labelled ClusterRoles are aggregated.
	_, err = cs.RbacV1().ClusterRoles().Create(ctx, &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "aggregated"},
		AggregationRule: &rbacv1.AggregationRule{ClusterRoleSelectors: []metav1.LabelSelector{{MatchLabels: map[string]string{"agg": "yes"}}}}}, metav1.CreateOptions{})
	g.Expect(err).NotTo(HaveOccurred())
	_, err = cs.RbacV1().ClusterRoles().Create(ctx, &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "part", Labels: map[string]string{"agg": "yes"}},
		Rules: []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"pods"}, Verbs: []string{"get"}}}}, metav1.CreateOptions{})
	g.Expect(err).NotTo(HaveOccurred())
	g.Eventually(func() int {
		r, err := cs.RbacV1().ClusterRoles().Get(ctx, "aggregated", metav1.GetOptions{})
		if err != nil {
			return 0
		}
		return len(r.Rules)
	}, 60*time.Second, 250*time.Millisecond).Should(Equal(1))

	port := c.Ports.APIServer
	c.Stop()

	c, err = Start(ctx, "test", state, StartOptions{EtcdUnsafeNoFsync: true})
	g.Expect(err).NotTo(HaveOccurred())
	defer c.Stop()
	g.Expect(c.Ports.APIServer).To(Equal(port), "the API server keeps its port, so kubeconfigs stay valid")
	cfg, err = c.RESTConfig()
	g.Expect(err).NotTo(HaveOccurred())
	cs = kubernetes.NewForConfigOrDie(cfg)
	got, err := cs.CoreV1().Namespaces().Get(ctx, "kept", metav1.GetOptions{})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(got.UID).To(Equal(ns.UID))
}

// checkEtcdRefusesClientsWithoutCertificate: etcd answers only clients with a certificate of its CA (the
// API server's), neither plain HTTP nor TLS clients without one, so other local users cannot read Secrets.
func checkEtcdRefusesClientsWithoutCertificate(t *testing.T, state State, port int) {
	t.Helper()
	g := NewWithT(t)
	etcdURL := fmt.Sprintf("127.0.0.1:%d", port)
	caPEM, err := os.ReadFile(state.certFile(etcdCAName))
	g.Expect(err).NotTo(HaveOccurred())
	roots := x509.NewCertPool()
	g.Expect(roots.AppendCertsFromPEM(caPEM)).To(BeTrue())
	get := func(scheme string, certs []tls.Certificate) error {
		hc := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{
			TLSClientConfig: &tls.Config{RootCAs: roots, Certificates: certs, MinVersion: tls.VersionTLS12},
		}}
		resp, err := hc.Get(scheme + "://" + etcdURL + "/health")
		if err != nil {
			return err
		}
		defer func() { _ = resp.Body.Close() }()
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("status %s", resp.Status)
		}
		return nil
	}
	g.Expect(get("http", nil)).NotTo(Succeed(), "plain HTTP is refused")
	g.Expect(get("https", nil)).NotTo(Succeed(), "TLS without a client certificate is refused")
	cert, err := tls.LoadX509KeyPair(state.certFile(apiServerEtcdName), state.keyFile(apiServerEtcdName))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(get("https", []tls.Certificate{cert})).To(Succeed(), "the API server's client certificate is accepted")
}
