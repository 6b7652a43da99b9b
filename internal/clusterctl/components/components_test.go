package components

import (
	"os"
	"testing"

	. "github.com/onsi/gomega"

	clusterctlv1 "github.com/capstan-dev/capstan/api/clusterctl/v1alpha3"
	"github.com/capstan-dev/capstan/internal/clusterctl/config"
	"github.com/capstan-dev/capstan/internal/test/golden"
)

var docker = config.Provider{Name: "docker", Type: clusterctlv1.InfrastructureProviderType,
	URL: "https://github.com/kubernetes-sigs/cluster-api/releases/latest/infrastructure-components-development.yaml"}

func vars(m map[string]string) func(string) (string, bool) {
	return func(k string) (string, bool) {
		v, ok := m[k]
		return v, ok
	}
}

func capd(t *testing.T) []byte {
	t.Helper()
	data, err := os.ReadFile("testdata/capd-components.yaml")
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func TestGolden(t *testing.T) {
	images, err := config.New([]byte("images:\n  infrastructure-docker:\n    repository: mirror.example.com/capd\n"), nil)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name   string
		golden string
		in     Input
	}{
		{
			name:   "the components' own namespace",
			golden: "capd-default.golden.yaml",
			in:     Input{Variables: vars(map[string]string{"CLUSTER_TOPOLOGY": "true"})},
		},
		{
			name:   "a target namespace and image overrides",
			golden: "capd-in-foo.golden.yaml",
			in:     Input{Variables: vars(nil), TargetNamespace: "foo", Images: images.ImageOverrides()},
		},
		{
			name:   "raw",
			golden: "capd-raw.golden.yaml",
			in:     Input{SkipVariables: true},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			tt.in.Provider, tt.in.Version, tt.in.Raw = docker, "v1.10.10", capd(t)
			c, err := New(tt.in)
			g.Expect(err).NotTo(HaveOccurred())
			out, err := c.YAML()
			g.Expect(err).NotTo(HaveOccurred())
			golden.Assert(t, tt.golden, append(out, '\n'))
		})
	}
}

func TestComponents(t *testing.T) {
	g := NewWithT(t)
	c, err := New(Input{Provider: docker, Version: "v1.10.10", Raw: capd(t), Variables: vars(nil), TargetNamespace: "foo"})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(c.TargetNamespace()).To(Equal("foo"))
	g.Expect(c.Variables()).To(Equal([]string{"CAPD_DIAGNOSTICS_ADDRESS", "CAPD_INSECURE_DIAGNOSTICS", "CLUSTER_TOPOLOGY", "EXP_MACHINE_POOL"}))
	g.Expect(c.Images()).To(Equal([]string{"gcr.io/k8s-staging-cluster-api/capd-manager:v1.10.10"}))
	for _, o := range c.Objects() {
		g.Expect(o.GetLabels()).To(HaveKeyWithValue("clusterctl.cluster.x-k8s.io", ""), o.GetName())
		g.Expect(o.GetLabels()).To(HaveKeyWithValue("cluster.x-k8s.io/provider", "infrastructure-docker"), o.GetName())
		switch o.GetKind() {
		case "Namespace", "CustomResourceDefinition", "ClusterRole", "ClusterRoleBinding", "ValidatingWebhookConfiguration":
			g.Expect(o.GetNamespace()).To(BeEmpty(), o.GetName())
		default:
			g.Expect(o.GetNamespace()).To(Equal("foo"), o.GetName())
		}
	}

	inv := c.InventoryObject()
	g.Expect(inv.Namespace).To(Equal("foo"))
	g.Expect(inv.Name).To(Equal("infrastructure-docker"))
	g.Expect(inv.ProviderName).To(Equal("docker"))
	g.Expect(inv.Type).To(Equal("InfrastructureProvider"))
	g.Expect(inv.Version).To(Equal("v1.10.10"))
	g.Expect(inv.APIVersion).To(Equal("clusterctl.cluster.x-k8s.io/v1alpha3"))
	g.Expect(inv.Kind).To(Equal("Provider"))
	g.Expect(inv.Labels).To(Equal(map[string]string{
		"clusterctl.cluster.x-k8s.io":      "",
		"clusterctl.cluster.x-k8s.io/core": "inventory",
		"cluster.x-k8s.io/provider":        "infrastructure-docker",
	}))
}

func TestNamespaces(t *testing.T) {
	deployment := "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: manager}\n"
	tests := []struct {
		name    string
		raw     string
		target  string
		wantNS  string
		wantErr string
	}{
		{name: "no Namespace and no target namespace", raw: deployment,
			wantErr: "the components YAML has no Namespace object, so the target namespace can't be defaulted: specify a target namespace (--target-namespace)"},
		{name: "no Namespace: the target namespace is created", raw: deployment, target: "bar", wantNS: "bar"},
		{name: "two Namespaces", raw: "apiVersion: v1\nkind: Namespace\nmetadata: {name: a}\n---\napiVersion: v1\nkind: Namespace\nmetadata: {name: b}\n",
			wantErr: "invalid components YAML: it has 2 Namespace objects (a, b); a provider's components must have no more than one"},
		{name: "invalid target namespace", raw: deployment, target: "Bar", wantErr: `invalid target namespace "Bar": a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			c, err := New(Input{Provider: docker, Version: "v1.0.0", Raw: []byte(tt.raw), Variables: vars(nil), TargetNamespace: tt.target})
			if tt.wantErr != "" {
				g.Expect(err).To(MatchError(tt.wantErr))
				return
			}
			g.Expect(err).NotTo(HaveOccurred())
			var namespaces []string
			for _, o := range c.Objects() {
				if o.GetKind() == "Namespace" {
					namespaces = append(namespaces, o.GetName())
				} else {
					g.Expect(o.GetNamespace()).To(Equal(tt.wantNS))
				}
			}
			g.Expect(namespaces).To(Equal([]string{tt.wantNS}))
		})
	}
}

func TestSubjects(t *testing.T) {
	g := NewWithT(t)
	raw := `apiVersion: v1
kind: Namespace
metadata: {name: orig}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: b}
subjects:
- {kind: ServiceAccount, name: manager, namespace: orig}
- {kind: ServiceAccount, name: other, namespace: kube-system}
- {kind: User, name: admin}
`
	c, err := New(Input{Provider: docker, Version: "v1.0.0", Raw: []byte(raw), Variables: vars(nil), TargetNamespace: "target"})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(c.Objects()[1].Object["subjects"]).To(Equal([]any{
		map[string]any{"kind": "ServiceAccount", "name": "manager", "namespace": "target"},
		map[string]any{"kind": "ServiceAccount", "name": "other", "namespace": "target"},
		map[string]any{"kind": "User", "name": "admin"},
	}))
}

func TestVariablesAndImages(t *testing.T) {
	g := NewWithT(t)
	raw := []byte("apiVersion: v1\nkind: Namespace\nmetadata: {name: ns}\n---\napiVersion: v1\nkind: Secret\nmetadata: {name: creds}\nstringData:\n  key: ${AWS_B64ENCODED_CREDENTIALS}\n  region: ${AWS_REGION}\n")
	_, err := New(Input{Provider: docker, Version: "v1.0.0", Raw: raw, Variables: vars(nil)})
	g.Expect(err).To(MatchError("value for variables [AWS_B64ENCODED_CREDENTIALS, AWS_REGION] is not set. Please set the value using os environment variables or the clusterctl config file"))

	c, err := New(Input{Provider: docker, Version: "v1.0.0", Raw: raw, SkipVariables: true})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(c.Objects()[1].Object["stringData"]).To(HaveKeyWithValue("key", "${AWS_B64ENCODED_CREDENTIALS}"))

	images, err := Images(capd(t), "infrastructure-docker", vars(nil), config.ImageOverrides{"all": {Tag: "dev"}})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(images).To(Equal([]string{"gcr.io/k8s-staging-cluster-api/capd-manager:dev"}))
}
