package deployments

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	admissionv1 "k8s.io/api/admission/v1"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/capstan-dev/capstan/internal/pki"
)

// tokenUser returns who a token file authenticates as, with a TokenReview by the process's own
// kubeconfig.
func tokenUser(path string) string {
	token, err := os.ReadFile(path)
	if err != nil {
		return "error: " + err.Error()
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", os.Getenv("KUBECONFIG"))
	if err != nil {
		return "error: " + err.Error()
	}
	cfg = rest.AnonymousClientConfig(cfg)
	cfg.BearerToken = string(token)
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return "error: " + err.Error()
	}
	r, err := cs.AuthenticationV1().SelfSubjectReviews().Create(context.Background(), &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
	if err != nil {
		return "error: " + err.Error()
	}
	return r.Status.UserInfo.Username
}

// serveWebhook serves a validating webhook that refuses everything with the mottos read from its files at
// each request, on the certificate of certDir (read at each handshake).
func serveWebhook(port, certDir, mottoFile, secretMottoFile string) {
	mux := http.NewServeMux()
	mux.HandleFunc("/deny", func(w http.ResponseWriter, r *http.Request) {
		review := &admissionv1.AdmissionReview{}
		if err := json.NewDecoder(r.Body).Decode(review); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		motto, _ := os.ReadFile(mottoFile)
		secretMotto, _ := os.ReadFile(secretMottoFile)
		review.Response = &admissionv1.AdmissionResponse{UID: review.Request.UID, Allowed: false,
			Result: &metav1.Status{Message: "denied by the local process: motto=" + string(motto) + " secret=" + string(secretMotto)}}
		review.Request = nil
		_ = json.NewEncoder(w).Encode(review)
	})
	server := &http.Server{Addr: net.JoinHostPort("127.0.0.1", port), Handler: mux, ReadHeaderTimeout: 10 * time.Second,
		TLSConfig: &tls.Config{MinVersion: tls.VersionTLS12, GetCertificate: func(*tls.ClientHelloInfo) (*tls.Certificate, error) {
			c, err := tls.LoadX509KeyPair(filepath.Join(certDir, "tls.crt"), filepath.Join(certDir, "tls.key"))
			return &c, err
		}}}
	_ = server.ListenAndServeTLS("", "")
}

func TestServicesAndVolumesOfLocalProcesses(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	reports, _ := startRuntime(t)
	ns := env.NewNamespace(t)
	g.Expect(env.Client.Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "capi-manager"}})).To(Succeed())

	// The webhook's certificate, for the Service's name, and the mottos it answers with.
	ca, err := pki.NewCA("test-webhook-ca")
	g.Expect(err).NotTo(HaveOccurred())
	serving, err := ca.Sign(pki.CertConfig{CommonName: "webhook", DNSNames: []string{"webhook." + ns + ".svc"}, Usages: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}})
	g.Expect(err).NotTo(HaveOccurred())
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "webhook-cert"},
		Data: map[string][]byte{"tls.crt": serving.CertPEM(), "tls.key": serving.KeyPEM(), "motto": []byte("first")}}
	g.Expect(env.Client.Create(ctx, secret)).To(Succeed())
	g.Expect(env.Client.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "mottos"},
		Data: map[string]string{"motto": "carpe diem"}})).To(Succeed())

	d := deployment(ns, "ghcr.io/capstan-dev/capstan:v0.1.0", 2)
	d.Spec.Template.Spec.Volumes = []corev1.Volume{
		{Name: "cert", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: "webhook-cert"}}},
		{Name: "mottos", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: "mottos"}}}},
		{Name: "scratch", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}},
		{Name: "token", VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{Sources: []corev1.VolumeProjection{
			{ServiceAccountToken: &corev1.ServiceAccountTokenProjection{Path: "token", ExpirationSeconds: ptr.To[int64](3600)}}}}}},
	}
	c := &d.Spec.Template.Spec.Containers[0]
	c.Args = []string{"manager", "--health-addr=:9440", "--webhook-port=9443", "--cert-dir=/tmp/k8s-webhook-server/serving-certs",
		"--motto-file=/etc/mottos/motto", "--secret-motto-file=/tmp/k8s-webhook-server/serving-certs/motto",
		"--scratch-dir=/scratch", "--token-file=/var/run/secrets/tokens/token"}
	c.Ports = []corev1.ContainerPort{{Name: "webhook-server", ContainerPort: 9443}, {Name: "healthz", ContainerPort: 9440}}
	c.VolumeMounts = []corev1.VolumeMount{
		{Name: "cert", MountPath: "/tmp/k8s-webhook-server/serving-certs", ReadOnly: true},
		{Name: "mottos", MountPath: "/etc/mottos"},
		{Name: "scratch", MountPath: "/scratch"},
		{Name: "token", MountPath: "/var/run/secrets/tokens"},
	}
	g.Expect(env.Client.Create(ctx, d)).To(Succeed())
	svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "webhook"}, Spec: corev1.ServiceSpec{
		Selector: map[string]string{"app": "manager"},
		Ports:    []corev1.ServicePort{{Port: 443, TargetPort: intstr.FromString("webhook-server")}},
	}}
	g.Expect(env.Client.Create(ctx, svc)).To(Succeed())

	// One EndpointSlice per replica, with an address of the pod network, at the loopback port that
	// replaced the container's 9443.
	g.Eventually(func(g Gomega) {
		slices := &discoveryv1.EndpointSliceList{}
		g.Expect(env.Client.List(ctx, slices, client.InNamespace(ns), client.MatchingLabels{discoveryv1.LabelServiceName: "webhook"})).To(Succeed())
		g.Expect(slices.Items).To(HaveLen(2))
		for _, s := range slices.Items {
			g.Expect(s.Labels).To(HaveKeyWithValue(discoveryv1.LabelManagedBy, ManagedBy))
			g.Expect(s.Endpoints).To(HaveLen(1))
			g.Expect(s.Endpoints[0].Addresses).To(HaveLen(1))
			g.Expect(s.Endpoints[0].Addresses[0]).To(HavePrefix("10.244."))
			g.Expect(ptr.Deref(s.Endpoints[0].Conditions.Ready, false)).To(BeTrue())
			g.Expect(s.Ports).To(HaveLen(1))
			g.Expect(*s.Ports[0].Port).NotTo(BeEquivalentTo(9443), "the replicas listen on ports of their own")
			conn, err := net.DialTimeout("tcp", net.JoinHostPort("127.0.0.1", itoa(*s.Ports[0].Port)), time.Second)
			g.Expect(err).NotTo(HaveOccurred(), "a replica listens on the slice's port")
			_ = conn.Close()
		}
	}, 60*time.Second, 250*time.Millisecond).Should(Succeed())

	g.Eventually(func(g Gomega) {
		got := reportsIn(reports)
		g.Expect(got).To(HaveLen(2))
		for _, r := range got {
			g.Expect(r.ScratchWritable).To(BeTrue(), "the emptyDir volume is a writable directory")
			g.Expect(r.TokenUser).To(Equal("system:serviceaccount:"+ns+":capi-manager"), "the projected token is the ServiceAccount's")
		}
	}, 30*time.Second, 250*time.Millisecond).Should(Succeed())

	// The API server reaches the processes through the Service.
	vwc := &admissionregistrationv1.ValidatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: "local-runtime-" + ns},
		Webhooks: []admissionregistrationv1.ValidatingWebhook{{
			Name:                    "deny.local-runtime.capstan.dev",
			ClientConfig:            admissionregistrationv1.WebhookClientConfig{Service: &admissionregistrationv1.ServiceReference{Namespace: ns, Name: "webhook", Path: ptr.To("/deny")}, CABundle: ca.CertPEM()},
			Rules:                   []admissionregistrationv1.RuleWithOperations{{Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create}, Rule: admissionregistrationv1.Rule{APIGroups: []string{""}, APIVersions: []string{"v1"}, Resources: []string{"configmaps"}}}},
			NamespaceSelector:       &metav1.LabelSelector{MatchLabels: map[string]string{corev1.LabelMetadataName: ns}},
			ObjectSelector:          &metav1.LabelSelector{MatchLabels: map[string]string{"test": "webhook"}},
			SideEffects:             ptr.To(admissionregistrationv1.SideEffectClassNone),
			AdmissionReviewVersions: []string{"v1"},
			FailurePolicy:           ptr.To(admissionregistrationv1.Fail),
		}},
	}
	g.Expect(env.Client.Create(ctx, vwc)).To(Succeed())
	t.Cleanup(func() { _ = env.Client.Delete(context.Background(), vwc) })
	probe := func() error {
		return env.Client.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, GenerateName: "probe-", Labels: map[string]string{"test": "webhook"}}})
	}
	g.Eventually(probe, 30*time.Second, 250*time.Millisecond).Should(MatchError(ContainSubstring("denied by the local process: motto=carpe diem secret=first")))

	// The files follow the Secret.
	secret.Data["motto"] = []byte("second")
	g.Expect(env.Client.Update(ctx, secret)).To(Succeed())
	g.Eventually(probe, 30*time.Second, 250*time.Millisecond).Should(MatchError(ContainSubstring("secret=second")))

	// Scaling down removes the EndpointSlice of the stopped replica.
	g.Expect(env.Client.Patch(ctx, d, client.RawPatch("application/merge-patch+json", []byte(`{"spec":{"replicas":1}}`)))).To(Succeed())
	g.Eventually(func(g Gomega) {
		slices := &discoveryv1.EndpointSliceList{}
		g.Expect(env.Client.List(ctx, slices, client.InNamespace(ns), client.MatchingLabels{discoveryv1.LabelServiceName: "webhook"})).To(Succeed())
		g.Expect(slices.Items).To(HaveLen(1))
	}, 30*time.Second, 250*time.Millisecond).Should(Succeed())
	g.Expect(probe()).To(MatchError(ContainSubstring("secret=second")))
}

func TestUnsupportedVolumesAreReported(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	_, _ = startRuntime(t)
	ns := env.NewNamespace(t)
	d := deployment(ns, "ghcr.io/capstan-dev/capstan:v0.1.0", 1)
	d.Spec.Template.Spec.Volumes = []corev1.Volume{{Name: "host", VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/var/lib"}}}}
	g.Expect(env.Client.Create(ctx, d)).To(Succeed())
	g.Eventually(func(g Gomega) {
		g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(d), d)).To(Succeed())
		var available *appsv1.DeploymentCondition
		for i := range d.Status.Conditions {
			if d.Status.Conditions[i].Type == appsv1.DeploymentAvailable {
				available = &d.Status.Conditions[i]
			}
		}
		g.Expect(available).NotTo(BeNil())
		g.Expect(available.Status).To(Equal(corev1.ConditionFalse))
		g.Expect(available.Reason).To(Equal(ReasonVolumeNotSupported))
		g.Expect(available.Message).To(ContainSubstring("volume host is of a kind the local runtime of the embedded management cluster cannot provide (hostPath)"))
	}, 20*time.Second, 200*time.Millisecond).Should(Succeed())
}

func TestRewritePaths(t *testing.T) {
	g := NewWithT(t)
	mounts := map[string]string{"/etc/certs": "/state/v/cert", "/etc/certs/extra": "/state/v/extra", "/data/": "/state/v/data"}
	got := rewritePaths([]string{"--cert-dir=/etc/certs", "/etc/certs/tls.crt", "--x=/etc/certs/extra/a", "/etc/certsX", "--data=/data/f", "plain"}, mounts)
	g.Expect(got).To(Equal([]string{"--cert-dir=/state/v/cert", "/state/v/cert/tls.crt", "--x=/state/v/extra/a", "/etc/certsX", "--data=/state/v/data/f", "plain"}))
}

func TestWriteVolumeReplacesContentAtOnce(t *testing.T) {
	g := NewWithT(t)
	dir := filepath.Join(t.TempDir(), "vol")
	g.Expect(writeVolume(dir, map[string]file{"a": {data: []byte("1"), mode: 0o644}, "sub/b": {data: []byte("2"), mode: 0o600}})).To(Succeed())
	g.Expect(os.ReadFile(filepath.Join(dir, "a"))).To(Equal([]byte("1")))
	g.Expect(os.ReadFile(filepath.Join(dir, "sub", "b"))).To(Equal([]byte("2")))
	before, err := os.Readlink(filepath.Join(dir, dataDir))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(writeVolume(dir, map[string]file{"a": {data: []byte("1"), mode: 0o644}, "sub/b": {data: []byte("2"), mode: 0o600}})).To(Succeed())
	same, _ := os.Readlink(filepath.Join(dir, dataDir))
	g.Expect(same).To(Equal(before), "unchanged content is not rewritten")

	g.Expect(writeVolume(dir, map[string]file{"a": {data: []byte("3"), mode: 0o644}})).To(Succeed())
	g.Expect(os.ReadFile(filepath.Join(dir, "a"))).To(Equal([]byte("3")))
	_, err = os.Stat(filepath.Join(dir, "sub"))
	g.Expect(os.IsNotExist(err)).To(BeTrue(), "a key that is gone is removed")
	_, err = os.Stat(filepath.Join(dir, before))
	g.Expect(os.IsNotExist(err)).To(BeTrue(), "the old content is removed")
	g.Expect(writeVolume(dir, map[string]file{"../escape": {data: []byte("x")}})).To(MatchError(ContainSubstring("leaves the volume")))
}

func itoa(n int32) string { return strconv.Itoa(int(n)) }
