package e2e

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/portforward"
	"k8s.io/client-go/transport/spdy"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
	infrav1 "github.com/capstan-dev/capstan/api/infrastructure/local/v1alpha1"
	"github.com/capstan-dev/capstan/internal/binaries"
	"github.com/capstan-dev/capstan/internal/clustersecret"
	"github.com/capstan-dev/capstan/internal/conditions"
	"github.com/capstan-dev/capstan/internal/kubeconfig"
	"github.com/capstan-dev/capstan/internal/pki"
	"github.com/capstan-dev/capstan/internal/test/cabpk"
	"github.com/capstan-dev/capstan/internal/test/procs"
	"github.com/capstan-dev/capstan/internal/test/stack"
	"github.com/capstan-dev/capstan/internal/test/workload"
)

// createCertificateSecrets creates a cluster's certificate Secrets as Cluster API's kubeadm providers do:
// `<cluster>-ca`, `-etcd`, `-proxy` (a CA each, tls.crt and tls.key) and `-sa` (the service account key:
// the public key under tls.crt, the RSA private key under tls.key), type cluster.x-k8s.io/secret,
// labelled with the cluster name. It returns the etcd CA.
func createCertificateSecrets(t *testing.T, ns, clusterName string) *pki.KeyPair {
	t.Helper()
	ctx := context.Background()
	secret := func(purpose string, crt, key []byte) {
		s := &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: clusterName + "-" + purpose, Labels: map[string]string{clusterv1.ClusterNameLabel: clusterName}},
			Type:       clustersecret.Type,
			Data:       map[string][]byte{corev1.TLSCertKey: crt, corev1.TLSPrivateKeyKey: key},
		}
		if err := env.Client.Create(ctx, s); err != nil {
			t.Fatal(err)
		}
	}
	var etcdCA *pki.KeyPair
	for purpose, cn := range map[string]string{"ca": "kubernetes", "etcd": "etcd-ca", "proxy": "front-proxy-ca"} {
		ca, err := pki.NewCAFrom(pki.CertConfig{CommonName: cn})
		if err != nil {
			t.Fatal(err)
		}
		secret(purpose, ca.CertPEM(), ca.KeyPEM())
		if purpose == "etcd" {
			etcdCA = ca
		}
	}
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	pub, err := pki.EncodePublicKey(key.Public())
	if err != nil {
		t.Fatal(err)
	}
	secret("sa", pub, pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(key)}))
	return etcdCA
}

// admissionConfiguration enforces the baseline Pod Security standard everywhere but in kube-system.
const admissionConfiguration = `apiVersion: apiserver.config.k8s.io/v1
kind: AdmissionConfiguration
plugins:
- name: PodSecurity
  configuration:
    apiVersion: pod-security.admission.config.k8s.io/v1
    kind: PodSecurityConfiguration
    defaults:
      enforce: baseline
      enforce-version: latest
    exemptions:
      namespaces: [kube-system]
`

// portForward forwards a local port to a port of a Pod through the workload API server, as `kubectl
// port-forward` does; it stops when the test ends.
func portForward(t *testing.T, g Gomega, cfg *rest.Config, namespace, pod string, port int) int {
	t.Helper()
	transport, upgrader, err := spdy.RoundTripperFor(cfg)
	g.Expect(err).NotTo(HaveOccurred())
	u, err := url.Parse(cfg.Host + "/api/v1/namespaces/" + namespace + "/pods/" + pod + "/portforward")
	g.Expect(err).NotTo(HaveOccurred())
	dialer := spdy.NewDialer(upgrader, &http.Client{Transport: transport}, http.MethodPost, u)
	stop, ready := make(chan struct{}), make(chan struct{})
	fw, err := portforward.NewOnAddresses(dialer, []string{"127.0.0.1"}, []string{"0:" + strconv.Itoa(port)}, stop, ready, io.Discard, io.Discard)
	g.Expect(err).NotTo(HaveOccurred())
	errs := make(chan error, 1)
	go func() { errs <- fw.ForwardPorts() }()
	t.Cleanup(func() { close(stop) })
	select {
	case <-ready:
	case err := <-errs:
		t.Fatalf("port-forward to %s/%s:%d: %v", namespace, pod, port, err)
	case <-time.After(30 * time.Second):
		t.Fatalf("port-forward to %s/%s:%d is not ready", namespace, pod, port)
	}
	ports, err := fw.GetPorts()
	g.Expect(err).NotTo(HaveOccurred())
	return int(ports[0].Local)
}

// etcdClient is a client of an etcd member at 127.0.0.1:port with a client certificate of the etcd CA.
func etcdClient(g Gomega, etcdCA *pki.KeyPair, port int) *clientv3.Client {
	kp, err := etcdCA.Sign(pki.CertConfig{CommonName: "test-etcd-client", Usages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}})
	g.Expect(err).NotTo(HaveOccurred())
	pool := x509.NewCertPool()
	pool.AddCert(etcdCA.Cert)
	cli, err := clientv3.New(clientv3.Config{
		Endpoints:   []string{"https://127.0.0.1:" + strconv.Itoa(port)},
		DialTimeout: 5 * time.Second, Logger: zap.NewNop(),
		TLS: &tls.Config{MinVersion: tls.VersionTLS12, RootCAs: pool,
			Certificates: []tls.Certificate{{Certificate: [][]byte{kp.Cert.Raw}, PrivateKey: kp.Key}}},
	})
	g.Expect(err).NotTo(HaveOccurred())
	return cli
}

// serverVersion returns the gitVersion an API server reached at cfg reports.
func serverVersion(g Gomega, cfg *rest.Config) string {
	v, err := kubernetes.NewForConfigOrDie(cfg).Discovery().ServerVersion()
	g.Expect(err).NotTo(HaveOccurred())
	return v.GitVersion
}

// rss returns the resident memory, in bytes, of the processes named program below dir.
func rss(program, dir string) int64 {
	var total int64
	for _, pid := range procs.Find(program, dir) {
		data, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "status"))
		if err != nil {
			continue
		}
		for _, line := range strings.Split(string(data), "\n") {
			if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
				kb, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
				total += kb * 1024
			}
		}
	}
	return total
}

// TestHighlyAvailableControlPlane is issue 12's check of real highly-available local control planes: a
// cluster of three control plane LocalMachines, with the certificate Secrets and the bootstrap data the
// kubeadm providers write (kubeadm init for the first, kubeadm join --control-plane for the others, the
// second at Kubernetes v1.36). Through the LocalCluster's endpoint the API answers; through a
// port-forward to etcd-<node>:2379 the etcd member list shows three started members; `kubectl logs` of
// etcd-<node> shows etcd's log; each API server reports its Machine's version; the admission
// configuration of the ClusterConfiguration (Pod Security baseline, from a file of the bootstrap data)
// refuses a privileged Pod. Then one control plane machine is removed as the kubeadm control plane
// provider does (its etcd member first, through the etcd API, then the Machine) and the API still
// answers through the endpoint.
func TestHighlyAvailableControlPlane(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := env.NewNamespace(t)
	v136, err := binaries.Find("kube-apiserver-v1.36", "")
	if err != nil {
		t.Fatalf("%v (run make tools)", err)
	}
	t.Logf("kube-apiserver v1.36: %s", v136)
	b := stack.ForTest(t, env.Config, stack.Options{Local: true, WithoutCore: true}).Backend

	etcdCA := createCertificateSecrets(t, ns, "ha")
	cluster := createLocalCluster(t, ns, "ha")
	lc := &infrav1.LocalCluster{}
	g.Eventually(func(g Gomega) {
		g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "ha"}, lc)).To(Succeed())
		g.Expect(lc.Status.Ready).To(BeTrue())
	}, time.Minute, 200*time.Millisecond).Should(Succeed())
	endpoint := lc.Spec.ControlPlaneEndpoint
	setInfrastructureReady(g, cluster, endpoint)

	apiServer := `  extraArgs:
  - name: admission-control-config-file
    value: /etc/kubernetes/admission.yaml
  extraVolumes:
  - hostPath: /etc/kubernetes/admission.yaml
    mountPath: /etc/kubernetes/admission.yaml
    name: admission
    pathType: File
    readOnly: true
`
	files := []cabpk.File{{Path: "/etc/kubernetes/admission.yaml", Content: admissionConfiguration, Permissions: "0600"}}
	versions := map[string]string{"cp-0": "v1.37.1", "cp-1": "v1.36.3", "cp-2": "v1.37.1"}
	var machines []*infrav1.LocalMachine
	for _, name := range []string{"cp-0", "cp-1", "cp-2"} {
		data := cabpk.Data{Files: files, Kubeadm: cabpk.JoinConfiguration(endpoint.String(), name, true, "")}
		if name == "cp-0" {
			data = cabpk.Data{Init: true, Files: files, Kubeadm: cabpk.InitConfiguration("ha", versions[name], apiServer, "", name)}
		}
		machines = append(machines, createMachine(t, cluster, name, versions[name], true, cabpk.CloudConfig(data)))
	}

	start := time.Now()
	for _, lm := range machines {
		g.Eventually(func(g Gomega) {
			g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(lm), lm)).To(Succeed())
			g.Expect(lm.Status.Ready).To(BeTrue(), "%s: %v", lm.Name, lm.Status.Conditions)
			g.Expect(conditions.IsTrue(lm, infrav1.ControlPlaneRunningCondition)).To(BeTrue())
			g.Expect(conditions.IsTrue(lm, infrav1.KubernetesVersionAvailableCondition)).To(BeTrue(), "%s: %v", lm.Name, lm.Status.Conditions)
		}, 4*time.Minute, time.Second).Should(Succeed())
	}
	t.Logf("3 control plane machines ready after %s", time.Since(start))

	t.Log("the API answers through the endpoint")
	cfg, err := workload.FromCA(ctx, env.Client, ns, "ha", endpoint)
	g.Expect(err).NotTo(HaveOccurred())
	wc := kubernetes.NewForConfigOrDie(cfg)
	g.Eventually(func(g Gomega) {
		nodes, err := wc.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(nodes.Items).To(HaveLen(3))
	}, time.Minute, time.Second).Should(Succeed())

	dir := b.ClusterDir(types.NamespacedName{Namespace: ns, Name: "ha"})
	memory := rss("etcd", dir) + rss("kube-apiserver", dir) + rss("kube-apiserver-v1.36", dir)
	t.Logf("memory of the 3 control plane machines (etcd and kube-apiserver RSS): %d MiB", memory>>20)

	t.Log("port-forward to etcd-cp-0:2379: the member list has 3 started members")
	etcdPort := portForward(t, g, cfg, "kube-system", "etcd-cp-0", 2379)
	cli := etcdClient(g, etcdCA, etcdPort)
	defer func() { _ = cli.Close() }()
	var cp2 uint64
	g.Eventually(func(g Gomega) {
		mctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		defer cancel()
		members, err := cli.MemberList(mctx)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(members.Members).To(HaveLen(3))
		names := []string{}
		for _, m := range members.Members {
			g.Expect(m.ClientURLs).NotTo(BeEmpty(), "member %s is started", m.Name)
			names = append(names, m.Name)
			if m.Name == "cp-2" {
				cp2 = m.ID
			}
		}
		g.Expect(names).To(ConsistOf("cp-0", "cp-1", "cp-2"))
	}, time.Minute, time.Second).Should(Succeed())

	t.Log("etcd answers only clients with a certificate of its CA (mTLS on loopback)")
	etcdGet := func(certs []tls.Certificate) error {
		pool := x509.NewCertPool()
		pool.AddCert(etcdCA.Cert)
		hc := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{
			TLSClientConfig: &tls.Config{MinVersion: tls.VersionTLS12, RootCAs: pool, Certificates: certs}}}
		resp, err := hc.Get("https://127.0.0.1:" + strconv.Itoa(etcdPort) + "/version")
		if err != nil {
			return err
		}
		defer func() { _ = resp.Body.Close() }()
		_, err = io.ReadAll(resp.Body)
		return err
	}
	clientKP, err := etcdCA.Sign(pki.CertConfig{CommonName: "test-etcd-client", Usages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}})
	g.Expect(err).NotTo(HaveOccurred())
	g.Eventually(func() error {
		return etcdGet([]tls.Certificate{{Certificate: [][]byte{clientKP.Cert.Raw}, PrivateKey: clientKP.Key}})
	}, 30*time.Second, time.Second).Should(Succeed(), "a client certificate of the etcd CA is accepted")
	g.Expect(etcdGet(nil)).NotTo(Succeed(), "TLS without a client certificate is refused")

	t.Log("kubectl -n kube-system logs etcd-cp-0 returns etcd's log")
	kubectl, err := binaries.Find("kubectl", "")
	g.Expect(err).NotTo(HaveOccurred())
	kubeconfigFile := filepath.Join(t.TempDir(), "kubeconfig")
	secretCA := &corev1.Secret{}
	g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "ha-ca"}, secretCA)).To(Succeed())
	ca, err := kubeconfig.CAFromSecret(secretCA)
	g.Expect(err).NotTo(HaveOccurred())
	kc, err := kubeconfig.Generate("ha", kubeconfig.Server(endpoint), ca, time.Now())
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(os.WriteFile(kubeconfigFile, kc, 0o600)).To(Succeed())
	out, err := exec.Command(kubectl, "--kubeconfig", kubeconfigFile, "-n", "kube-system", "logs", "etcd-cp-0").CombinedOutput()
	g.Expect(err).NotTo(HaveOccurred(), string(out))
	g.Expect(string(out)).To(ContainSubstring(`"msg":"serving client traffic securely"`))
	out, err = exec.Command(kubectl, "--kubeconfig", kubeconfigFile, "-n", "kube-system", "logs", "kube-apiserver-cp-1", "--tail=5").CombinedOutput()
	g.Expect(err).NotTo(HaveOccurred(), string(out))
	g.Expect(strings.Count(strings.TrimSpace(string(out)), "\n")).To(BeNumerically("<=", 4), "--tail=5")

	t.Log("each API server reports its Machine's version")
	for name, version := range versions {
		port := portForward(t, g, cfg, "kube-system", "kube-apiserver-"+name, 6443)
		direct := rest.CopyConfig(cfg)
		direct.Host = "https://127.0.0.1:" + strconv.Itoa(port)
		g.Expect(serverVersion(g, direct)).To(Equal(version), name)
	}

	t.Log("the admission configuration written through files refuses a privileged Pod")
	privileged := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "privileged"},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "busybox",
			SecurityContext: &corev1.SecurityContext{Privileged: ptr.To(true)}}}},
	}
	_, err = wc.CoreV1().Pods("default").Create(ctx, privileged, metav1.CreateOptions{})
	g.Expect(apierrors.IsForbidden(err)).To(BeTrue(), "got %v", err)
	g.Expect(err.Error()).To(ContainSubstring(`violates PodSecurity "baseline:latest"`))

	t.Log("removing cp-2 as a control plane provider does: its etcd member first, then the Machine")
	// etcd refuses a removal while the member it asks has not been connected to every peer for 5 s (its
	// health interval), which a loaded machine's peer connections may not have been: the control plane
	// provider tries again on its next reconcile, and so does the test, for these refusals only.
	// A removal whose answer was lost (the call's deadline) may have been made: "member not found" on a
	// later attempt is its success.
	attempts := 0
	g.Eventually(func() error {
		attempts++
		mctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		_, err := cli.MemberRemove(mctx, cp2)
		switch {
		case err == nil, attempts > 1 && errors.Is(err, rpctypes.ErrMemberNotFound):
			return nil
		case errors.Is(err, rpctypes.ErrUnhealthy), errors.Is(err, rpctypes.ErrMemberNotEnoughStarted), errors.Is(err, context.DeadlineExceeded):
			return err
		default:
			return StopTrying("removing the etcd member of cp-2").Wrap(err)
		}
	}, 30*time.Second, time.Second).Should(Succeed())
	g.Expect(env.Client.Delete(ctx, machines[2])).To(Succeed())
	g.Eventually(func() bool {
		return apierrors.IsNotFound(env.Client.Get(ctx, client.ObjectKeyFromObject(machines[2]), &infrav1.LocalMachine{}))
	}, time.Minute, 200*time.Millisecond).Should(BeTrue())
	g.Expect(env.Client.Delete(ctx, &clusterv1.Machine{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "cp-2"}})).To(Succeed())
	g.Expect(filepath.Join(dir, "machines", "cp-2")).NotTo(BeADirectory())
	for i := range 10 {
		_, err := wc.CoreV1().Namespaces().Get(ctx, "kube-system", metav1.GetOptions{})
		g.Expect(err).NotTo(HaveOccurred(), "request %d through the endpoint", i)
	}
	_, err = wc.CoreV1().Nodes().Get(ctx, "cp-2", metav1.GetOptions{})
	g.Expect(apierrors.IsNotFound(err)).To(BeTrue())
	// The first port-forward's stream may have been carried by cp-2's API server, which is gone now: a user
	// reconnects through the endpoint, as the control plane provider does on each reconcile.
	after := etcdClient(g, etcdCA, portForward(t, g, cfg, "kube-system", "etcd-cp-0", 2379))
	defer func() { _ = after.Close() }()
	g.Eventually(func(g Gomega) {
		mctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		defer cancel()
		members, err := after.MemberList(mctx)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(members.Members).To(HaveLen(2))
	}, 30*time.Second, time.Second).Should(Succeed())
}
