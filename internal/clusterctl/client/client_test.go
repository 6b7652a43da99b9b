package client

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	clusterctlv1 "github.com/capstan-dev/capstan/api/clusterctl/v1alpha3"
	"github.com/capstan-dev/capstan/internal/clusterctl/config"
	"github.com/capstan-dev/capstan/internal/clusterctl/repository"
	"github.com/capstan-dev/capstan/internal/clusterctl/repository/repositorytest"
)

const meta = "apiVersion: clusterctl.cluster.x-k8s.io/v1alpha3\nkind: Metadata\nreleaseSeries:\n- {major: 1, minor: 0, contract: v1beta1}\n"

const clusterTemplate = `apiVersion: cluster.x-k8s.io/v1beta1
kind: Cluster
metadata:
  name: ${CLUSTER_NAME}
  namespace: ${NAMESPACE}
spec:
  topology:
    class: quick-start
    version: ${KUBERNETES_VERSION}
    controlPlane: {replicas: ${CONTROL_PLANE_MACHINE_COUNT}}
    workers: {machineDeployments: [{class: default-worker, name: md-0, replicas: ${WORKER_MACHINE_COUNT}}]}
`

const clusterClass = `apiVersion: cluster.x-k8s.io/v1beta1
kind: ClusterClass
metadata: {name: quick-start}
---
apiVersion: infrastructure.cluster.x-k8s.io/v1beta1
kind: FooClusterTemplate
metadata: {name: quick-start-cluster}
`

const componentsYAML = `apiVersion: v1
kind: Namespace
metadata: {name: foo-system}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: manager, namespace: foo-system}
spec:
  template:
    spec:
      containers:
      - {name: manager, image: "registry.example.com/${IMAGE_NAME:=foo}:v1.0.0"}
`

// fakeCluster is a management cluster in memory.
type fakeCluster struct {
	namespace  string
	available  error
	configMaps map[string]*corev1.ConfigMap
	providers  []clusterctlv1.Provider
	objects    map[string]bool // "Kind namespace/name"
}

func (f *fakeCluster) CurrentNamespace() (string, error)    { return f.namespace, nil }
func (f *fakeCluster) CheckAvailable(context.Context) error { return f.available }
func (f *fakeCluster) InstalledProviders(context.Context) ([]clusterctlv1.Provider, error) {
	return f.providers, nil
}

func (f *fakeCluster) ConfigMap(_ context.Context, namespace, name string) (*corev1.ConfigMap, error) {
	cm, ok := f.configMaps[namespace+"/"+name]
	if !ok {
		return nil, errors.New("ConfigMap not found")
	}
	return cm, nil
}

func (f *fakeCluster) Exists(_ context.Context, obj *unstructured.Unstructured) (bool, error) {
	return f.objects[obj.GetKind()+" "+obj.GetNamespace()+"/"+obj.GetName()], nil
}

func writeFiles(t *testing.T, root string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		p := filepath.Join(root, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
}

// newClient returns a client over a local repository with an infrastructure provider "foo" (v1.0.0 and
// v1.1.0) plus the core, kubeadm and cert-manager repositories.
func newClient(t *testing.T, cluster ManagementCluster, env map[string]string, extraConfig string) *Client {
	t.Helper()
	root := t.TempDir()
	files := map[string]string{
		"infrastructure-foo/v1.0.0/metadata.yaml":                  meta,
		"infrastructure-foo/v1.0.0/infrastructure-components.yaml": componentsYAML,
		"infrastructure-foo/v1.0.0/cluster-template.yaml":          clusterTemplate,
		"infrastructure-foo/v1.0.0/clusterclass-quick-start.yaml":  clusterClass,
		"infrastructure-foo/v1.1.0/metadata.yaml":                  meta + "- {major: 1, minor: 1, contract: v1beta1}\n",
		"infrastructure-foo/v1.1.0/infrastructure-components.yaml": componentsYAML,
		"infrastructure-foo/v1.1.0/cluster-template.yaml":          clusterTemplate,
		"infrastructure-foo/v1.1.0/clusterclass-quick-start.yaml":  clusterClass,
		"infrastructure-bar/v2.0.0/metadata.yaml":                  meta + "- {major: 2, minor: 0, contract: v1beta1}\n",
		"infrastructure-bar/v2.0.0/infrastructure-components.yaml": strings.ReplaceAll(componentsYAML, "foo", "bar") + "---\napiVersion: cert-manager.io/v1\nkind: Issuer\nmetadata: {name: selfsigned, namespace: bar-system}\n",
		"cert-manager/v1.21.1/cert-manager.yaml":                   strings.ReplaceAll(strings.ReplaceAll(componentsYAML, "foo-system", "cert-manager"), "${IMAGE_NAME:=foo}", "cert-manager"),
	}
	for _, p := range []string{"cluster-api/v1.0.0/core-components.yaml", "bootstrap-kubeadm/v1.0.0/bootstrap-components.yaml", "control-plane-kubeadm/v1.0.0/control-plane-components.yaml"} {
		label := strings.Split(p, "/")[0]
		files[p] = strings.ReplaceAll(strings.ReplaceAll(componentsYAML, "foo-system", label+"-system"), "${IMAGE_NAME:=foo}", label)
		files[label+"/v1.0.0/metadata.yaml"] = meta
	}
	writeFiles(t, root, files)
	cfgYAML := `providers:
- {name: foo, type: InfrastructureProvider, url: "${CLUSTERCTL_REPOSITORY_PATH}/infrastructure-foo/latest/infrastructure-components.yaml"}
- {name: bar, type: InfrastructureProvider, url: "${CLUSTERCTL_REPOSITORY_PATH}/infrastructure-bar/latest/infrastructure-components.yaml"}
- {name: cluster-api, type: CoreProvider, url: "${CLUSTERCTL_REPOSITORY_PATH}/cluster-api/latest/core-components.yaml"}
- {name: kubeadm, type: BootstrapProvider, url: "${CLUSTERCTL_REPOSITORY_PATH}/bootstrap-kubeadm/latest/bootstrap-components.yaml"}
- {name: kubeadm, type: ControlPlaneProvider, url: "${CLUSTERCTL_REPOSITORY_PATH}/control-plane-kubeadm/latest/control-plane-components.yaml"}
` + extraConfig
	if !strings.Contains(extraConfig, "cert-manager:") {
		cfgYAML += "cert-manager:\n  url: ${CLUSTERCTL_REPOSITORY_PATH}/cert-manager/latest/cert-manager.yaml\n"
	}
	vars := map[string]string{"HOME": t.TempDir(), "CLUSTERCTL_REPOSITORY_PATH": root}
	for k, v := range env {
		vars[k] = v
	}
	cfg, err := config.New([]byte(cfgYAML), func(k string) (string, bool) { v, ok := vars[k]; return v, ok })
	if err != nil {
		t.Fatal(err)
	}
	srv := repositorytest.NewServer(t)
	repos := repository.NewFactory(cfg, repository.WithHTTPClient(srv.Client()),
		repository.WithRetry(repository.Retry{Interval: time.Millisecond, Timeout: 10 * time.Millisecond}))
	c := New(Options{Config: cfg, Repositories: repos, Cluster: cluster, Stdin: strings.NewReader("kind: FromStdin\nname: ${CLUSTER_NAME}\n")})
	return c
}

func kinds(objs []unstructured.Unstructured) []string {
	var out []string
	for _, o := range objs {
		out = append(out, o.GetKind()+" "+o.GetNamespace()+"/"+o.GetName())
	}
	return out
}

func int64p(i int64) *int64 { return &i }

func TestClusterTemplate(t *testing.T) {
	ctx := context.Background()
	base := ClusterTemplateOptions{ClusterName: "demo", KubernetesVersion: "v1.31.0"}
	tests := []struct {
		name      string
		cluster   *fakeCluster
		env       map[string]string
		opts      func(o *ClusterTemplateOptions)
		wantKinds []string
		wantYAML  []string
		wantErr   string
	}{
		{
			name:      "offline: latest version, default namespace, ClusterClass added in front",
			opts:      func(o *ClusterTemplateOptions) { o.InfrastructureProvider = "foo" },
			wantKinds: []string{"ClusterClass default/quick-start", "FooClusterTemplate default/quick-start-cluster", "Cluster default/demo"},
			wantYAML:  []string{"replicas: 1", "replicas: 0", "version: v1.31.0"},
		},
		{
			name:      "counts from the environment",
			env:       map[string]string{"CONTROL_PLANE_MACHINE_COUNT": "3", "WORKER_MACHINE_COUNT": "5"},
			opts:      func(o *ClusterTemplateOptions) { o.InfrastructureProvider = "foo" },
			wantKinds: []string{"ClusterClass default/quick-start", "FooClusterTemplate default/quick-start-cluster", "Cluster default/demo"},
			wantYAML:  []string{"replicas: 3", "replicas: 5"},
		},
		{
			name: "flags win over the environment",
			env:  map[string]string{"CONTROL_PLANE_MACHINE_COUNT": "3", "KUBERNETES_VERSION": "v1.0.0"},
			opts: func(o *ClusterTemplateOptions) {
				o.InfrastructureProvider = "foo"
				o.ControlPlaneMachineCount = int64p(5)
			},
			wantYAML: []string{"replicas: 5", "version: v1.31.0"},
		},
		{
			name:    "an invalid count in the environment",
			env:     map[string]string{"WORKER_MACHINE_COUNT": "many"},
			opts:    func(o *ClusterTemplateOptions) { o.InfrastructureProvider = "foo" },
			wantErr: `invalid value "many" for WORKER_MACHINE_COUNT: use a whole number`,
		},
		{
			name: "at least one control plane machine",
			opts: func(o *ClusterTemplateOptions) {
				o.InfrastructureProvider = "foo"
				o.ControlPlaneMachineCount = int64p(0)
			},
			wantErr: "invalid CONTROL_PLANE_MACHINE_COUNT 0: use a number greater than or equal to 1",
		},
		{
			name:    "an invalid Kubernetes version",
			opts:    func(o *ClusterTemplateOptions) { o.InfrastructureProvider = "foo"; o.KubernetesVersion = "1.31" },
			wantErr: `invalid Kubernetes version: "1.31" is not a semantic version`,
		},
		{
			name:      "the management cluster: its namespace, its provider, its version, its ClusterClass",
			cluster:   &fakeCluster{namespace: "team-a", providers: []clusterctlv1.Provider{{ProviderName: "foo", Type: "InfrastructureProvider", Version: "v1.0.0"}}, objects: map[string]bool{"ClusterClass team-a/quick-start": true}},
			opts:      func(*ClusterTemplateOptions) {},
			wantKinds: []string{"Cluster team-a/demo"},
		},
		{
			name:      "a ClusterClass missing from the management cluster is added",
			cluster:   &fakeCluster{namespace: "team-a", providers: []clusterctlv1.Provider{{ProviderName: "foo", Type: "InfrastructureProvider", Version: "v1.0.0"}}},
			opts:      func(o *ClusterTemplateOptions) { o.TargetNamespace = "team-b" },
			wantKinds: []string{"ClusterClass team-b/quick-start", "FooClusterTemplate team-b/quick-start-cluster", "Cluster team-b/demo"},
		},
		{
			name:    "a ClusterClass whose objects are in the management cluster already",
			cluster: &fakeCluster{namespace: "ns", objects: map[string]bool{"FooClusterTemplate ns/quick-start-cluster": true}},
			opts:    func(o *ClusterTemplateOptions) { o.InfrastructureProvider = "foo" },
			wantErr: `FooClusterTemplate ns/quick-start-cluster of ClusterClass "quick-start" already exists in the management cluster`,
		},
		{
			name:    "more than one infrastructure provider installed",
			cluster: &fakeCluster{namespace: "ns", providers: []clusterctlv1.Provider{{ProviderName: "foo", Type: "InfrastructureProvider"}, {ProviderName: "bar", Type: "InfrastructureProvider"}}},
			opts:    func(*ClusterTemplateOptions) {},
			wantErr: "more than one infrastructure provider is installed in the management cluster (bar, foo): choose one with --infrastructure",
		},
		{
			name:    "no management cluster and no provider",
			opts:    func(*ClusterTemplateOptions) {},
			wantErr: "no infrastructure provider given: specify one with --infrastructure",
		},
		{
			name:    "two sources",
			opts:    func(o *ClusterTemplateOptions) { o.InfrastructureProvider = "foo"; o.URL = "-" },
			wantErr: "use only one template source: --infrastructure/--flavor, --from or --from-config-map",
		},
		{
			name:      "from stdin",
			opts:      func(o *ClusterTemplateOptions) { o.URL = "-"; o.TargetNamespace = "ns" },
			wantKinds: []string{"FromStdin ns/"},
		},
		{
			name:    "from a file that does not exist",
			opts:    func(o *ClusterTemplateOptions) { o.URL = "/does/not/exist.yaml" },
			wantErr: "template file /does/not/exist.yaml does not exist",
		},
		{
			name: "from a ConfigMap",
			cluster: &fakeCluster{namespace: "ns", configMaps: map[string]*corev1.ConfigMap{
				"ns/templates": {Data: map[string]string{"template": "kind: FromConfigMap\n", "other": "kind: Other\n"}},
			}},
			opts:      func(o *ClusterTemplateOptions) { o.ConfigMap = &ConfigMapSource{Name: "templates"} },
			wantKinds: []string{"FromConfigMap ns/"},
		},
		{
			name: "from a ConfigMap key",
			cluster: &fakeCluster{namespace: "ns", configMaps: map[string]*corev1.ConfigMap{
				"other/templates": {Data: map[string]string{"template": "kind: FromConfigMap\n", "other": "kind: Other\n"}},
			}},
			opts: func(o *ClusterTemplateOptions) {
				o.ConfigMap = &ConfigMapSource{Name: "templates", Namespace: "other", Key: "other"}
			},
			wantKinds: []string{"Other ns/"},
		},
		{
			name: "a ConfigMap without the key",
			cluster: &fakeCluster{namespace: "ns", configMaps: map[string]*corev1.ConfigMap{
				"ns/templates": {Data: map[string]string{"a": "", "b": ""}},
			}},
			opts:    func(o *ClusterTemplateOptions) { o.ConfigMap = &ConfigMapSource{Name: "templates"} },
			wantErr: `ConfigMap ns/templates has no key "template" (keys: a, b): choose one with --from-config-map-key`,
		},
		{
			name:    "a ConfigMap without a management cluster",
			opts:    func(o *ClusterTemplateOptions) { o.ConfigMap = &ConfigMapSource{Name: "templates"} },
			wantErr: "--from-config-map reads a ConfigMap of the management cluster, and there is none",
		},
		{
			name:    "a release without cluster templates",
			opts:    func(o *ClusterTemplateOptions) { o.InfrastructureProvider = "bar:v2.0.0" },
			wantErr: "infrastructure-bar v2.0.0 has no default cluster template (cluster-template.yaml), nor any other cluster template: use --from to give a template",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			var mc ManagementCluster
			if tt.cluster != nil {
				mc = tt.cluster
			}
			c := newClient(t, mc, tt.env, "")
			o := base
			tt.opts(&o)
			tmpl, err := c.ClusterTemplate(ctx, o)
			if tt.wantErr != "" {
				g.Expect(err).To(MatchError(ContainSubstring(tt.wantErr)))
				return
			}
			g.Expect(err).NotTo(HaveOccurred())
			if tt.wantKinds != nil {
				g.Expect(kinds(tmpl.Objects())).To(Equal(tt.wantKinds))
			}
			out, err := tmpl.YAML()
			g.Expect(err).NotTo(HaveOccurred())
			for _, s := range tt.wantYAML {
				g.Expect(string(out)).To(ContainSubstring(s))
			}
		})
	}
}

func TestMissingClusterClass(t *testing.T) {
	g := NewWithT(t)
	c := newClient(t, nil, nil, "")
	root, _ := c.cfg.Get("CLUSTERCTL_REPOSITORY_PATH")
	g.Expect(os.Remove(filepath.Join(root, "infrastructure-foo/v1.1.0/clusterclass-quick-start.yaml"))).To(Succeed())
	_, err := c.ClusterTemplate(context.Background(), ClusterTemplateOptions{ClusterName: "demo", KubernetesVersion: "v1.31.0", InfrastructureProvider: "foo"})
	g.Expect(err).To(MatchError(`the template uses ClusterClass "quick-start", which infrastructure-foo v1.1.0 has no definition of (clusterclass-quick-start.yaml): create the ClusterClass in the management cluster first, or use another flavor`))
}

func TestProviderComponents(t *testing.T) {
	ctx := context.Background()
	g := NewWithT(t)
	c := newClient(t, nil, nil, "")

	comps, err := c.ProviderComponents(ctx, ComponentsOptions{Type: clusterctlv1.InfrastructureProviderType, Provider: "foo"})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(comps.Version()).To(Equal("v1.1.0"))
	g.Expect(comps.Images()).To(Equal([]string{"registry.example.com/foo:v1.0.0"}))

	comps, err = c.ProviderComponents(ctx, ComponentsOptions{Type: clusterctlv1.InfrastructureProviderType, Provider: "foo:v1.0.0", TargetNamespace: "bar"})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(comps.TargetNamespace()).To(Equal("bar"))

	_, err = c.ProviderComponents(ctx, ComponentsOptions{Type: clusterctlv1.InfrastructureProviderType, Provider: "foo:v1"})
	g.Expect(err).To(MatchError(`invalid provider "foo:v1": use name[:version] with a semantic version, for example aws:v2.8.0`))

	root, _ := c.cfg.Get("CLUSTERCTL_REPOSITORY_PATH")
	writeFiles(t, root, map[string]string{"infrastructure-foo/v1.2.0/metadata.yaml": meta})
	_, err = c.ProviderComponents(ctx, ComponentsOptions{Type: clusterctlv1.InfrastructureProviderType, Provider: "foo:v1.2.0"})
	g.Expect(err).To(MatchError(ContainSubstring("the metadata.yaml of infrastructure-foo v1.2.0 has no release series for v1.2")))
}

func TestInitImages(t *testing.T) {
	ctx := context.Background()
	certManager := []string{"registry.example.com/cert-manager:v1.0.0"}
	tests := []struct {
		name    string
		cluster *fakeCluster
		config  string
		opts    InitOptions
		want    []string
	}{
		{
			name: "first run: the core, kubeadm bootstrap and control plane and infrastructure providers, no cert-manager as none needs it",
			opts: InitOptions{Providers: Providers{InfrastructureProviders: []string{"foo"}}},
			want: []string{"registry.example.com/bootstrap-kubeadm:v1.0.0", "registry.example.com/cluster-api:v1.0.0", "registry.example.com/control-plane-kubeadm:v1.0.0", "registry.example.com/foo:v1.0.0"},
		},
		{
			name: "a provider that needs cert-manager",
			opts: InitOptions{Providers: Providers{InfrastructureProviders: []string{"bar"}}},
			want: append(certManager, "registry.example.com/bar:v1.0.0", "registry.example.com/bootstrap-kubeadm:v1.0.0", "registry.example.com/cluster-api:v1.0.0", "registry.example.com/control-plane-kubeadm:v1.0.0"),
		},
		{
			name: "opting out of the defaults",
			opts: InitOptions{Providers: Providers{CoreProvider: NoProvider, BootstrapProviders: []string{NoProvider}, ControlPlaneProviders: []string{NoProvider}, InfrastructureProviders: []string{"foo", "bar"}}},
			want: append(certManager, "registry.example.com/bar:v1.0.0", "registry.example.com/foo:v1.0.0"),
		},
		{
			name:   "externally provisioned cert-manager and image overrides",
			config: "cert-manager:\n  externallyProvisioned: true\n  url: ${CLUSTERCTL_REPOSITORY_PATH}/cert-manager/latest/cert-manager.yaml\nimages:\n  all: {repository: mirror.example.com}\n",
			opts:   InitOptions{Providers: Providers{InfrastructureProviders: []string{"bar"}}},
			want:   []string{"mirror.example.com/bar:v1.0.0", "mirror.example.com/bootstrap-kubeadm:v1.0.0", "mirror.example.com/cluster-api:v1.0.0", "mirror.example.com/control-plane-kubeadm:v1.0.0"},
		},
		{
			name:    "a management cluster with a core provider: only what is asked for and not installed",
			cluster: &fakeCluster{providers: []clusterctlv1.Provider{{ProviderName: "cluster-api", Type: "CoreProvider", Version: "v1.0.0"}, {ProviderName: "bar", Type: "InfrastructureProvider", Version: "v2.0.0"}}},
			opts:    InitOptions{Providers: Providers{InfrastructureProviders: []string{"foo", "bar"}}},
			want:    []string{"registry.example.com/foo:v1.0.0"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			var mc ManagementCluster
			if tt.cluster != nil {
				mc = tt.cluster
			}
			c := newClient(t, mc, nil, tt.config)
			got, err := c.InitImages(ctx, tt.opts)
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(got).To(Equal(tt.want))
		})
	}
}

func TestParseProviderName(t *testing.T) {
	tests := []struct {
		in, name, version, err string
	}{
		{in: "aws", name: "aws"},
		{in: "AWS:v2.8.0", name: "aws", version: "v2.8.0"},
		{in: "aws:2.8.0", name: "aws", version: "2.8.0"},
		{in: "aws:latest", err: "use name[:version] with a semantic version"},
		{in: ":v1.0.0", err: "use name[:version]"},
	}
	for _, tt := range tests {
		name, version, err := ParseProviderName(tt.in)
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("ParseProviderName(%q) error = %v, want %q", tt.in, err, tt.err)
			}
			continue
		}
		if err != nil || name != tt.name || version != tt.version {
			t.Errorf("ParseProviderName(%q) = %q, %q, %v; want %q, %q", tt.in, name, version, err, tt.name, tt.version)
		}
	}
}
