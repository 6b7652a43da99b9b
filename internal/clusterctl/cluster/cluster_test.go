package cluster

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	clusterctlv1 "github.com/capstan-dev/capstan/api/clusterctl/v1alpha3"
)

const kubeconfig = `apiVersion: v1
kind: Config
clusters:
- name: c
  cluster: {server: "https://127.0.0.1:1"}
users:
- name: u
  user: {token: t}
contexts:
- name: with-namespace
  context: {cluster: c, user: u, namespace: team-a}
- name: without-namespace
  context: {cluster: c, user: u}
current-context: with-namespace
`

func TestCurrentNamespace(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "kubeconfig")
	if err := os.WriteFile(path, []byte(kubeconfig), 0o600); err != nil {
		t.Fatal(err)
	}
	// No default kubeconfig: tests must not depend on the machine's.
	t.Setenv("KUBECONFIG", "")
	t.Setenv("HOME", dir)

	tests := []struct {
		name    string
		k       Kubeconfig
		want    string
		wantErr string
	}{
		{name: "the current context's namespace", k: Kubeconfig{Path: path}, want: "team-a"},
		{name: "a context without namespace", k: Kubeconfig{Path: path, Context: "without-namespace"}, want: "default"},
		{name: "no kubeconfig at all", k: Kubeconfig{}, want: "default"},
		{name: "a kubeconfig that does not exist", k: Kubeconfig{Path: filepath.Join(dir, "nope")}, wantErr: "nope"},
		{name: "a context that does not exist", k: Kubeconfig{Path: path, Context: "nope"}, wantErr: "context was not found for specified context: nope"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			got, err := New(tt.k).CurrentNamespace()
			if tt.wantErr != "" {
				g.Expect(err).To(MatchError(ContainSubstring(tt.wantErr)))
				return
			}
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(got).To(Equal(tt.want))
		})
	}
}

func TestNoKubeconfig(t *testing.T) {
	g := NewWithT(t)
	t.Setenv("KUBECONFIG", "")
	t.Setenv("HOME", t.TempDir())
	err := New(Kubeconfig{}).CheckAvailable(context.Background())
	g.Expect(err).To(MatchError("no kubeconfig found: set --kubeconfig or KUBECONFIG"))
}

func TestReads(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	scheme := runtime.NewScheme()
	g.Expect(corev1.AddToScheme(scheme)).To(Succeed())
	g.Expect(clusterctlv1.AddToScheme(scheme)).To(Succeed())
	fc := fake.NewClientBuilder().WithScheme(scheme).WithObjects(
		&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "templates"}, Data: map[string]string{"template": "kind: Cluster"}},
		&clusterctlv1.Provider{ObjectMeta: metav1.ObjectMeta{Namespace: "capd-system", Name: "infrastructure-docker"}, ProviderName: "docker", Type: "InfrastructureProvider", Version: "v1.10.0"},
	).Build()
	c := NewFromClient(fc, Kubeconfig{})

	g.Expect(c.CheckAvailable(ctx)).To(Succeed())
	cm, err := c.ConfigMap(ctx, "ns", "templates")
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(cm.Data).To(HaveKeyWithValue("template", "kind: Cluster"))
	_, err = c.ConfigMap(ctx, "ns", "missing")
	g.Expect(err).To(MatchError(ContainSubstring("ConfigMap ns/missing not found in the management cluster")))

	providers, err := c.InstalledProviders(ctx)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(providers).To(HaveLen(1))
	g.Expect(providers[0].Version).To(Equal("v1.10.0"))

	obj := &unstructured.Unstructured{}
	obj.SetGroupVersionKind(schema.GroupVersionKind{Version: "v1", Kind: "ConfigMap"})
	obj.SetNamespace("ns")
	obj.SetName("templates")
	exists, err := c.Exists(ctx, obj)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(exists).To(BeTrue())
	obj.SetName("other")
	exists, err = c.Exists(ctx, obj)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(exists).To(BeFalse())

	class := &unstructured.Unstructured{}
	class.SetGroupVersionKind(schema.GroupVersionKind{Group: "cluster.x-k8s.io", Version: "v1beta1", Kind: "ClusterClass"})
	class.SetNamespace("ns")
	class.SetName("quick-start")
	exists, err = c.Exists(ctx, class)
	g.Expect(err).NotTo(HaveOccurred(), "a kind the cluster does not serve does not exist")
	g.Expect(exists).To(BeFalse())
}
