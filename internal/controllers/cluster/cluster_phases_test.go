package cluster

import (
	"context"
	"crypto/x509"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
	"github.com/capstan-dev/capstan/internal/contract"
	"github.com/capstan-dev/capstan/internal/kubeconfig"
	"github.com/capstan-dev/capstan/internal/test/builder"
)

// provisionedCluster creates a Cluster without control plane object whose InfraCluster is provisioned
// with an endpoint, and waits until it is Provisioned.
func provisionedCluster(t *testing.T, ns, name, host string) *clusterv1.Cluster {
	t.Helper()
	infra := infraWithEndpoint(builder.V1Beta1, ns, name+"-infra", host, 6443)
	create(t, infra)
	setStatus(t, infra, map[string]any{"ready": true})
	cluster := builder.Cluster(ns, name, infra, nil)
	create(t, cluster)
	NewWithT(t).Eventually(func(g Gomega) {
		g.Expect(getCluster(g, cluster).Status.Phase).To(Equal(string(clusterv1.ClusterPhaseProvisioned)))
	}).WithTimeout(timeout).WithPolling(interval).Should(Succeed())
	return getCluster(NewWithT(t), cluster)
}

// verifyKubeconfig checks that data is a kubeconfig for server whose client certificate is an admin's
// signed by the CA of caSecret.
func verifyKubeconfig(g Gomega, data []byte, caSecret *corev1.Secret, server string) {
	cfg, err := clientcmd.Load(data)
	g.Expect(err).NotTo(HaveOccurred())
	current := cfg.Contexts[cfg.CurrentContext]
	g.Expect(current).NotTo(BeNil())
	g.Expect(cfg.Clusters[current.Cluster].Server).To(Equal(server))
	cert, err := kubeconfig.ClientCertificate(data)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(cert.Subject.CommonName).To(Equal("kubernetes-admin"))
	g.Expect(cert.Subject.Organization).To(ConsistOf("system:masters"))
	roots := x509.NewCertPool()
	g.Expect(roots.AppendCertsFromPEM(caSecret.Data[corev1.TLSCertKey])).To(BeTrue())
	_, err = cert.Verify(x509.VerifyOptions{Roots: roots, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}})
	g.Expect(err).NotTo(HaveOccurred(), "the client certificate verifies against the cluster's CA")
}

func TestKubeconfig(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := env.NewNamespace(t)
	cluster := provisionedCluster(t, ns, "c1", "10.0.1.1")
	key := client.ObjectKey{Namespace: ns, Name: "c1-kubeconfig"}

	// No kubeconfig without the CA.
	g.Expect(env.Client.Get(ctx, key, &corev1.Secret{})).To(MatchError(ContainSubstring("not found")))

	caSecret, err := kubeconfig.CreateCASecret(ctx, env.Client, client.ObjectKeyFromObject(cluster), nil)
	g.Expect(err).NotTo(HaveOccurred())

	secret := &corev1.Secret{}
	g.Eventually(func(g Gomega) {
		g.Expect(env.Client.Get(ctx, key, secret)).To(Succeed())
	}).WithTimeout(timeout).WithPolling(interval).Should(Succeed())
	g.Expect(secret.Type).To(Equal(corev1.SecretType("cluster.x-k8s.io/secret")))
	g.Expect(secret.Labels).To(HaveKeyWithValue(clusterv1.ClusterNameLabel, "c1"))
	g.Expect(metav1.IsControlledBy(secret, cluster)).To(BeTrue())
	verifyKubeconfig(g, secret.Data["value"], caSecret, "https://10.0.1.1:6443")

	// Deleted, it comes back.
	g.Expect(env.Client.Delete(ctx, secret)).To(Succeed())
	g.Eventually(func(g Gomega) {
		recreated := &corev1.Secret{}
		g.Expect(env.Client.Get(ctx, key, recreated)).To(Succeed())
		g.Expect(recreated.UID).NotTo(Equal(secret.UID))
		verifyKubeconfig(g, recreated.Data["value"], caSecret, "https://10.0.1.1:6443")
	}).WithTimeout(timeout).WithPolling(interval).Should(Succeed())

	// Signed by another CA (the CA was replaced), it is regenerated.
	otherCert, otherKey, err := kubeconfig.NewCA("other", time.Now())
	g.Expect(err).NotTo(HaveOccurred())
	other, err := kubeconfig.ParseCA(otherCert, otherKey)
	g.Expect(err).NotTo(HaveOccurred())
	stale, err := kubeconfig.Generate("c1", "https://10.0.1.1:6443", other, time.Now())
	g.Expect(err).NotTo(HaveOccurred())
	update(t, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: key.Name}}, func(s *corev1.Secret) { s.Data["value"] = stale })
	g.Eventually(func(g Gomega) {
		rotated := &corev1.Secret{}
		g.Expect(env.Client.Get(ctx, key, rotated)).To(Succeed())
		verifyKubeconfig(g, rotated.Data["value"], caSecret, "https://10.0.1.1:6443")
	}).WithTimeout(timeout).WithPolling(interval).Should(Succeed())
}

func TestKubeconfigOfTheUserIsLeftAlone(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := env.NewNamespace(t)
	userSecret := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "c2-kubeconfig"},
		Data:       map[string][]byte{"value": []byte("user provided")},
	}
	create(t, userSecret)
	cluster := provisionedCluster(t, ns, "c2", "10.0.1.2")
	_, err := kubeconfig.CreateCASecret(ctx, env.Client, client.ObjectKeyFromObject(cluster), nil)
	g.Expect(err).NotTo(HaveOccurred())

	g.Consistently(func(g Gomega) {
		got := &corev1.Secret{}
		g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(userSecret), got)).To(Succeed())
		g.Expect(got.Data).To(Equal(userSecret.Data))
		g.Expect(got.OwnerReferences).To(BeEmpty())
	}).WithTimeout(2 * time.Second).WithPolling(interval).Should(Succeed())
}

func TestKubeconfigNotWrittenWithControlPlaneProvider(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := env.NewNamespace(t)
	infra := infraWithEndpoint(builder.V1Beta1, ns, "infra", "10.0.1.3", 6443)
	cp := builder.V1Beta1.ControlPlane(ns, "cp")
	create(t, infra, cp)
	setStatus(t, infra, map[string]any{"ready": true})
	cluster := builder.Cluster(ns, "c3", infra, cp)
	create(t, cluster)
	_, err := kubeconfig.CreateCASecret(ctx, env.Client, client.ObjectKeyFromObject(cluster), nil)
	g.Expect(err).NotTo(HaveOccurred())
	g.Eventually(func(g Gomega) {
		g.Expect(getCluster(g, cluster).Status.Phase).To(Equal(string(clusterv1.ClusterPhaseProvisioned)))
	}).WithTimeout(timeout).WithPolling(interval).Should(Succeed())
	g.Consistently(func(g Gomega) {
		err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "c3-kubeconfig"}, &corev1.Secret{})
		g.Expect(err).To(MatchError(ContainSubstring("not found")), "the control plane provider writes the kubeconfig")
	}).WithTimeout(time.Second).WithPolling(interval).Should(Succeed())
}

func unstructuredFrom(t *testing.T, text string) *unstructured.Unstructured {
	t.Helper()
	obj := map[string]any{}
	if err := yaml.Unmarshal([]byte(text), &obj); err != nil {
		t.Fatal(err)
	}
	u := &unstructured.Unstructured{Object: obj}
	u.SetKind("FooControlPlane")
	u.SetName("cp")
	return u
}

func TestReadConditions(t *testing.T) {
	tests := []struct {
		name             string
		object           string
		v1beta2Type      string
		wantReady        *contract.Condition
		wantV1Beta2      *contract.Condition
		wantErrSubstring string
	}{
		{
			name: "v1beta1 conditions with a v1beta2 preview",
			object: `
status:
  conditions: [{type: Ready, status: "False", severity: Warning, reason: ScalingUp, message: "Scaling up"}]
  v1beta2:
    conditions: [{type: Ready, status: "False", reason: NotReady, message: "* Machine cp-1: not ready"}, {type: Available, status: "True", reason: Available}]
`,
			v1beta2Type: "Available",
			wantReady:   &contract.Condition{Type: "Ready", Status: corev1.ConditionFalse, Severity: "Warning", Reason: "ScalingUp", Message: "Scaling up"},
			wantV1Beta2: &contract.Condition{Type: "Available", Status: corev1.ConditionTrue, Reason: "Available"},
		},
		{
			name: "the preview comes first",
			object: `
status:
  conditions: [{type: Ready, status: "True"}]
  v1beta2:
    conditions: [{type: Ready, status: "False", reason: NotReady}]
`,
			v1beta2Type: "Ready",
			wantReady:   &contract.Condition{Type: "Ready", Status: corev1.ConditionTrue},
			wantV1Beta2: &contract.Condition{Type: "Ready", Status: corev1.ConditionFalse, Reason: "NotReady"},
		},
		{
			name:        "v1beta2 conditions only",
			object:      `status: {conditions: [{type: Ready, status: "True", reason: Ready}]}`,
			v1beta2Type: "Ready",
			wantReady:   &contract.Condition{Type: "Ready", Status: corev1.ConditionTrue, Reason: "Ready"},
			wantV1Beta2: &contract.Condition{Type: "Ready", Status: corev1.ConditionTrue, Reason: "Ready"},
		},
		{
			name:        "none",
			object:      `status: {}`,
			v1beta2Type: "Available",
		},
		{
			name:             "invalid",
			object:           `status: {conditions: [{type: Ready, status: "Yes"}]}`,
			v1beta2Type:      "Ready",
			wantErrSubstring: `status "Yes" is not True, False or Unknown`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			o := externalObject{obj: unstructuredFrom(t, tt.object)}
			readConditions(&o, tt.v1beta2Type)
			if tt.wantErrSubstring != "" {
				g.Expect(o.conditionError).To(MatchError(ContainSubstring(tt.wantErrSubstring)))
				return
			}
			g.Expect(o.conditionError).NotTo(HaveOccurred())
			g.Expect(o.readyCondition).To(Equal(tt.wantReady), cmp.Diff(tt.wantReady, o.readyCondition))
			g.Expect(o.v1beta2Condition).To(Equal(tt.wantV1Beta2), cmp.Diff(tt.wantV1Beta2, o.v1beta2Condition))
		})
	}
}

func TestControlPlaneReplicas(t *testing.T) {
	tests := []struct {
		name     string
		object   string
		contract contract.Version
		want     contract.ControlPlaneReplicas
	}{
		{
			name:     "v1beta1 prefers the v1beta2 meaning of readyReplicas",
			object:   `{spec: {replicas: 3}, status: {replicas: 3, readyReplicas: 1, v1beta2: {readyReplicas: 2, availableReplicas: 2, upToDateReplicas: 3}}}`,
			contract: contract.V1Beta1,
			want: contract.ControlPlaneReplicas{Desired: ptr.To[int32](3), Replicas: ptr.To[int32](3), Ready: ptr.To[int32](2),
				Available: ptr.To[int32](2), UpToDate: ptr.To[int32](3)},
		},
		{
			name:     "v1beta1 without preview",
			object:   `{spec: {replicas: 1}, status: {replicas: 1, readyReplicas: 1}}`,
			contract: contract.V1Beta1,
			want:     contract.ControlPlaneReplicas{Desired: ptr.To[int32](1), Replicas: ptr.To[int32](1), Ready: ptr.To[int32](1)},
		},
		{
			name:     "v1beta2",
			object:   `{spec: {replicas: 3}, status: {replicas: 3, readyReplicas: 3, availableReplicas: 2, upToDateReplicas: 1}}`,
			contract: contract.V1Beta2,
			want: contract.ControlPlaneReplicas{Desired: ptr.To[int32](3), Replicas: ptr.To[int32](3), Ready: ptr.To[int32](3),
				Available: ptr.To[int32](2), UpToDate: ptr.To[int32](1)},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			got, err := controlPlaneReplicas(unstructuredFrom(t, tt.object), tt.contract)
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(got).To(Equal(tt.want), cmp.Diff(tt.want, got))
		})
	}
}
