package cluster_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	clusterctlv1 "github.com/capstan-dev/capstan/api/clusterctl/v1alpha3"
	"github.com/capstan-dev/capstan/internal/cli/clusterctl/clusterctltest"
	"github.com/capstan-dev/capstan/internal/clusterctl/repository/repositorytest"
	"github.com/capstan-dev/capstan/internal/test/golden"
)

// The command of the issue: the upstream v1.10 CAPD development template and metadata in a local
// repository as infrastructure-docker/v1.10.10.
var demo = []string{"generate", "cluster", "demo", "--infrastructure", "docker", "--kubernetes-version", "v1.31.0",
	"--control-plane-machine-count", "3", "--worker-machine-count", "2"}

func withConfig(t *testing.T, args ...string) []string {
	return append([]string{"--config", clusterctltest.ConfigPath(t)}, args...)
}

// TestFixtures checks that the test repository holds the upstream fixtures unchanged.
func TestFixtures(t *testing.T) {
	compat := filepath.Join("..", "..", "..", "..", "test", "compat", "testdata", "upstream-v1.10")
	for repoFile, fixture := range map[string]string{
		"infrastructure-docker/v1.10.10/metadata.yaml":                     "metadata.yaml",
		"infrastructure-docker/v1.10.10/cluster-template.yaml":             "templates/cluster-template-development.yaml",
		"infrastructure-docker/v1.10.10/cluster-template-development.yaml": "templates/cluster-template-development.yaml",
		"infrastructure-docker/v1.10.10/clusterclass-quick-start.yaml":     "templates/clusterclass-quick-start.yaml",
	} {
		want, err := os.ReadFile(filepath.Join(compat, fixture))
		if err != nil {
			t.Fatal(err)
		}
		if got := clusterctltest.ReadRepositoryFile(t, repoFile); string(got) != string(want) {
			t.Errorf("testdata/repository/%s differs from the fixture %s: copy it again", repoFile, fixture)
		}
	}
}

func TestGenerateCluster(t *testing.T) {
	tests := []struct {
		name   string
		args   []string
		opts   clusterctltest.Options
		golden string
	}{
		{name: "every object with every variable substituted", args: withConfig(t, demo...), golden: "demo.golden.yaml"},
		{name: "the development flavor", args: withConfig(t, append(demo, "--flavor", "development")...), golden: "demo.golden.yaml"},
		{name: "the variables of the template", args: withConfig(t, append(demo, "--list-variables")...), golden: "demo-variables.golden.txt"},
		{
			name:   "the variables of the template, without flags",
			args:   withConfig(t, "generate", "cluster", "demo", "-i", "docker", "-n", "team-a", "--list-variables"),
			opts:   clusterctltest.Options{Env: map[string]string{"WORKER_MACHINE_COUNT": "7"}},
			golden: "demo-variables-defaults.golden.txt",
		},
		{
			name:   "a target namespace and values from the environment",
			args:   withConfig(t, "generate", "cluster", "demo", "-i", "docker:v1.10.10", "-n", "team-a"),
			opts:   clusterctltest.Options{Env: map[string]string{"KUBERNETES_VERSION": "v1.30.2", "POD_CIDR": `["10.1.0.0/16"]`, "CONTROL_PLANE_MACHINE_COUNT": "5"}},
			golden: "demo-team-a.golden.yaml",
		},
		{
			name:   "a template from standard input",
			args:   withConfig(t, "generate", "cluster", "demo", "--from", "-", "--kubernetes-version", "v1.31.0"),
			opts:   clusterctltest.Options{Stdin: string(clusterctltest.ReadRepositoryFile(t, "infrastructure-docker/v1.10.10/cluster-template.yaml"))},
			golden: "demo-stdin.golden.yaml",
		},
		{
			name:   "a template from a file",
			args:   withConfig(t, "generate", "cluster", "demo", "--from", filepath.Join(clusterctltest.RepositoryPath(t), "infrastructure-docker/v1.10.10/cluster-template.yaml"), "--kubernetes-version", "v1.31.0"),
			golden: "demo-stdin.golden.yaml",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			res := clusterctltest.Run(t, tt.args, tt.opts)
			g.Expect(res.Stderr).To(BeEmpty())
			g.Expect(res.Code).To(Equal(0))
			golden.Assert(t, tt.golden, []byte(res.Stdout))
		})
	}
}

func TestListVariablesListsTheTemplatesVariables(t *testing.T) {
	g := NewWithT(t)
	res := clusterctltest.Run(t, withConfig(t, "generate", "yaml", "--list-variables", "--from",
		filepath.Join(clusterctltest.RepositoryPath(t), "infrastructure-docker/v1.10.10/cluster-template.yaml")), clusterctltest.Options{})
	g.Expect(res.Code).To(Equal(0))
	want := "Variables:\n"
	for _, v := range []string{"CLUSTER_NAME", "CONTROL_PLANE_MACHINE_COUNT", "KUBERNETES_VERSION", "NAMESPACE", "POD_CIDR",
		"POD_SECURITY_STANDARD_ENABLED", "SERVICE_CIDR", "SERVICE_DOMAIN", "WORKER_MACHINE_COUNT"} {
		want += "  - " + v + "\n"
	}
	g.Expect(res.Stdout).To(Equal(want))

	res = clusterctltest.Run(t, withConfig(t, append(demo, "--list-variables")...), clusterctltest.Options{})
	var listed []string
	for _, line := range strings.Split(res.Stdout, "\n") {
		if name, ok := strings.CutPrefix(strings.TrimSpace(line), "- "); ok {
			listed = append(listed, strings.Fields(name)[0])
		}
	}
	g.Expect(want).To(Equal("Variables:\n  - " + strings.Join(listed, "\n  - ") + "\n"))
}

func TestWriteTo(t *testing.T) {
	g := NewWithT(t)
	out := filepath.Join(t.TempDir(), "demo.yaml")
	res := clusterctltest.Run(t, withConfig(t, append(demo, "--write-to", out)...), clusterctltest.Options{})
	g.Expect(res.Code).To(Equal(0))
	g.Expect(res.Stdout).To(BeEmpty())
	data, err := os.ReadFile(out)
	g.Expect(err).NotTo(HaveOccurred())
	want, err := os.ReadFile("testdata/demo.golden.yaml")
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(string(data)).To(Equal(string(want)))
}

func TestBadInput(t *testing.T) {
	broken := func(changes map[string]string) map[string]string {
		return map[string]string{"CLUSTERCTL_REPOSITORY_PATH": clusterctltest.CopyRepository(t, changes)}
	}
	tests := []struct {
		name    string
		args    []string
		env     map[string]string
		wantErr string
	}{
		{
			name:    "missing variables",
			args:    []string{"generate", "cluster", "demo", "-i", "docker"},
			wantErr: "cluster-template.yaml of infrastructure-docker v1.10.10: value for variables [KUBERNETES_VERSION] is not set. Please set the value using os environment variables or the clusterctl config file",
		},
		{
			name:    "every missing variable at once",
			args:    []string{"generate", "cluster", "demo", "-i", "docker"},
			env:     broken(map[string]string{"infrastructure-docker/v1.10.10/cluster-template.yaml": "name: ${B_VAR}\nother: ${A_VAR}\nversion: ${KUBERNETES_VERSION}\n"}),
			wantErr: "value for variables [A_VAR, B_VAR, KUBERNETES_VERSION] is not set",
		},
		{
			name:    "malformed metadata.yaml",
			args:    demo,
			env:     broken(map[string]string{"infrastructure-docker/v1.10.10/metadata.yaml": "apiVersion: clusterctl.cluster.x-k8s.io/v1alpha3\nkind: Metadata\nreleaseSeries:\n- major: 1\n  minor: 10\n  contrct: v1beta1\n"}),
			wantErr: `invalid metadata.yaml of infrastructure-docker v1.10.10 (`,
		},
		{
			name:    "metadata.yaml that is not YAML",
			args:    append(demo[:4:4], "docker:v1.10.10"),
			env:     broken(map[string]string{"infrastructure-docker/v1.10.10/metadata.yaml": "releaseSeries: [\n"}),
			wantErr: "invalid metadata.yaml of infrastructure-docker v1.10.10",
		},
		{
			name:    "unknown provider",
			args:    []string{"generate", "cluster", "demo", "-i", "dockr", "--kubernetes-version", "v1.31.0"},
			wantErr: `unknown InfrastructureProvider "dockr": run "clusterctl config repositories" to list the available providers, or add it to the providers of the clusterctl config file`,
		},
		{
			name:    "unknown flavor",
			args:    append(demo, "--flavor", "nope"),
			wantErr: `infrastructure-docker v1.10.10 has no flavor "nope" (cluster-template-nope.yaml): use one of its flavors with --flavor: (default, no --flavor), development`,
		},
		{
			name:    "a version not in the repository",
			args:    []string{"generate", "cluster", "demo", "-i", "docker:v1.9.0", "--kubernetes-version", "v1.31.0"},
			wantErr: "version v1.9.0 of infrastructure-docker not found in ",
		},
		{
			name:    "an unreachable repository",
			args:    demo,
			env:     map[string]string{"CLUSTERCTL_REPOSITORY_PATH": "/nonexistent/repository"},
			wantErr: "cannot read local repository /nonexistent/repository/infrastructure-docker/latest/infrastructure-components-development.yaml: the folder /nonexistent/repository/infrastructure-docker does not exist: check the provider url",
		},
		{
			name:    "a malformed template",
			args:    demo,
			env:     broken(map[string]string{"infrastructure-docker/v1.10.10/cluster-template.yaml": "kind: Cluster\nmetadata:\n  name: ${CLUSTER_NAME\n"}),
			wantErr: `invalid variable syntax at line 3`,
		},
		{
			name:    "an invalid cluster name",
			args:    []string{"generate", "cluster", "Demo", "-i", "docker", "--kubernetes-version", "v1.31.0"},
			wantErr: `invalid cluster name "Demo"`,
		},
		{
			name:    "no cluster name",
			args:    []string{"generate", "cluster", "-i", "docker"},
			wantErr: "generate cluster takes exactly one argument, the name of the cluster (got 0)",
		},
		{
			name:    "a config map namespace without a config map",
			args:    append(demo, "--from-config-map-namespace", "ns"),
			wantErr: "--from-config-map-namespace and --from-config-map-key need --from-config-map",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			out := filepath.Join(t.TempDir(), "out.yaml")
			res := clusterctltest.Run(t, withConfig(t, append(tt.args, "--write-to", out)...), clusterctltest.Options{Env: tt.env})
			g.Expect(res.Code).To(Equal(1))
			g.Expect(res.Stdout).To(BeEmpty())
			g.Expect(strings.Count(res.Stderr, "\n")).To(Equal(1), "one line: %q", res.Stderr)
			g.Expect(res.Stderr).To(HavePrefix("Error: "))
			g.Expect(res.Stderr).To(ContainSubstring(tt.wantErr))
			_, err := os.Stat(out)
			g.Expect(errors.Is(err, os.ErrNotExist)).To(BeTrue(), "nothing is written to --write-to")
		})
	}
}

// gitHubDocker publishes the test repository's docker release on the stand-in GitHub, where the built-in
// docker provider (kubernetes-sigs/cluster-api) finds it, behind a newer v2.0.0 release that follows
// another contract.
func gitHubDocker(t *testing.T) *repositorytest.Server {
	srv := repositorytest.NewServer(t)
	assets := map[string][]byte{}
	for _, f := range []string{"metadata.yaml", "cluster-template.yaml", "cluster-template-development.yaml", "clusterclass-quick-start.yaml", "infrastructure-components-development.yaml"} {
		assets[f] = clusterctltest.ReadRepositoryFile(t, "infrastructure-docker/v1.10.10/"+f)
	}
	srv.AddRelease("kubernetes-sigs", "cluster-api", "v1.10.10", assets)
	srv.AddRelease("kubernetes-sigs", "cluster-api", "v2.0.0", map[string][]byte{"metadata.yaml": []byte(
		"apiVersion: clusterctl.cluster.x-k8s.io/v1alpha3\nkind: Metadata\nreleaseSeries:\n- {major: 2, minor: 0, contract: v1beta2}\n- {major: 1, minor: 10, contract: v1beta1}\n")})
	srv.SetModuleVersions("github.com/kubernetes-sigs/cluster-api", "v1.10.9", "v1.10.10", "v1.11.0-rc.0")
	srv.SetModuleVersions("github.com/kubernetes-sigs/cluster-api/v2", "v2.0.0")
	return srv
}

func TestGitHubProvider(t *testing.T) {
	t.Run("the built-in docker provider, versions from the Go module proxy", func(t *testing.T) {
		g := NewWithT(t)
		srv := gitHubDocker(t)
		res := clusterctltest.Run(t, demo, clusterctltest.Options{Server: srv})
		g.Expect(res.Stderr).To(BeEmpty())
		g.Expect(res.Code).To(Equal(0))
		golden.Assert(t, "demo.golden.yaml", []byte(res.Stdout))
		g.Expect(srv.Count("api.github.com/")).To(Equal(0), "the Go module proxy and plain downloads need no API call")
		for _, r := range srv.Requests() {
			g.Expect(strings.Count(strings.Join(srv.Requests(), "\n"), r)).To(Equal(1), "%s fetched more than once", r)
		}
	})

	t.Run("GOPROXY=off lists the releases with the GitHub API", func(t *testing.T) {
		g := NewWithT(t)
		srv := gitHubDocker(t)
		res := clusterctltest.Run(t, demo, clusterctltest.Options{Server: srv, Env: map[string]string{"GOPROXY": "off"}})
		g.Expect(res.Stderr).To(BeEmpty())
		golden.Assert(t, "demo.golden.yaml", []byte(res.Stdout))
		g.Expect(srv.Count("api.github.com/repos/kubernetes-sigs/cluster-api/releases")).To(Equal(1))
	})

	t.Run("rate limited", func(t *testing.T) {
		g := NewWithT(t)
		srv := gitHubDocker(t)
		srv.SetRateLimited(true)
		res := clusterctltest.Run(t, demo, clusterctltest.Options{Server: srv, Env: map[string]string{"GOPROXY": "off"}})
		g.Expect(res.Code).To(Equal(1))
		g.Expect(res.Stderr).To(HavePrefix("Error: finding the latest version of infrastructure-docker: GitHub API rate limit reached: set the GITHUB_TOKEN environment variable"))
	})

	t.Run("an unknown flavor: the release's flavors, listed with the GitHub API", func(t *testing.T) {
		g := NewWithT(t)
		res := clusterctltest.Run(t, append(demo, "--flavor", "nope"), clusterctltest.Options{Server: gitHubDocker(t)})
		g.Expect(res.Code).To(Equal(1))
		g.Expect(res.Stderr).To(Equal(`Error: infrastructure-docker v1.10.10 has no flavor "nope" (cluster-template-nope.yaml): use one of its flavors with --flavor: (default, no --flavor), development` + "\n"))
	})

	t.Run("a version that is not released", func(t *testing.T) {
		g := NewWithT(t)
		res := clusterctltest.Run(t, append(demo[:4:4], "docker:v1.9.0"), clusterctltest.Options{Server: gitHubDocker(t)})
		g.Expect(res.Code).To(Equal(1))
		g.Expect(res.Stderr).To(Equal("Error: version v1.9.0 of infrastructure-docker not found in https://github.com/kubernetes-sigs/cluster-api/releases/latest/infrastructure-components-development.yaml: use one of v2.0.0, v1.10.10, v1.10.9, v1.11.0-rc.0\n"))
	})

	t.Run("GitHub answers errors for longer than the retries last", func(t *testing.T) {
		g := NewWithT(t)
		srv := gitHubDocker(t)
		srv.FailNext("github.com/", 1000)
		res := clusterctltest.Run(t, append(demo[:4:4], "docker:v1.10.10"), clusterctltest.Options{Server: srv})
		g.Expect(res.Code).To(Equal(1))
		g.Expect(res.Stderr).To(ContainSubstring("503 Service Unavailable"))
	})
}

func TestGitHubTemplateURL(t *testing.T) {
	g := NewWithT(t)
	srv := repositorytest.NewServer(t)
	srv.AddFile("my-org", "my-repository", "main", "templates/cluster-template.yaml",
		clusterctltest.ReadRepositoryFile(t, "infrastructure-docker/v1.10.10/cluster-template.yaml"))
	res := clusterctltest.Run(t, []string{"generate", "cluster", "demo", "--kubernetes-version", "v1.31.0",
		"--from", "https://github.com/my-org/my-repository/blob/main/templates/cluster-template.yaml"}, clusterctltest.Options{Server: srv})
	g.Expect(res.Stderr).To(BeEmpty())
	golden.Assert(t, "demo-stdin.golden.yaml", []byte(res.Stdout))
}

// managementCluster is a management cluster in memory.
type managementCluster struct {
	configMaps map[string]map[string]string
	providers  []clusterctlv1.Provider
	classes    map[string]bool
}

func (m *managementCluster) CurrentNamespace() (string, error)    { return "team-a", nil }
func (m *managementCluster) CheckAvailable(context.Context) error { return nil }
func (m *managementCluster) InstalledProviders(context.Context) ([]clusterctlv1.Provider, error) {
	return m.providers, nil
}

func (m *managementCluster) ConfigMap(_ context.Context, namespace, name string) (*corev1.ConfigMap, error) {
	data, ok := m.configMaps[namespace+"/"+name]
	if !ok {
		return nil, errors.New("ConfigMap " + namespace + "/" + name + " not found in the management cluster")
	}
	return &corev1.ConfigMap{Data: data}, nil
}

func (m *managementCluster) Exists(_ context.Context, obj *unstructured.Unstructured) (bool, error) {
	return m.classes[obj.GetKind()+" "+obj.GetNamespace()+"/"+obj.GetName()], nil
}

func TestManagementCluster(t *testing.T) {
	template := string(clusterctltest.ReadRepositoryFile(t, "infrastructure-docker/v1.10.10/cluster-template.yaml"))
	mc := &managementCluster{
		configMaps: map[string]map[string]string{"team-a/templates": {"template": template}, "shared/templates": {"dev": template}},
		providers:  []clusterctlv1.Provider{{ProviderName: "docker", Type: "InfrastructureProvider", Version: "v1.10.10"}},
		classes:    map[string]bool{"ClusterClass team-a/quick-start": true},
	}
	tests := []struct {
		name    string
		args    []string
		golden  string
		wantErr string
	}{
		{name: "the installed provider; its ClusterClass is not added again", args: []string{"generate", "cluster", "demo", "--kubernetes-version", "v1.31.0"}, golden: "demo-management-cluster.golden.yaml"},
		{name: "a ConfigMap", args: []string{"generate", "cluster", "demo", "--kubernetes-version", "v1.31.0", "--from-config-map", "templates"}, golden: "demo-management-cluster.golden.yaml"},
		{name: "a ConfigMap key in another namespace", args: []string{"generate", "cluster", "demo", "--kubernetes-version", "v1.31.0", "--from-config-map", "templates", "--from-config-map-namespace", "shared", "--from-config-map-key", "dev"}, golden: "demo-management-cluster.golden.yaml"},
		{name: "a missing ConfigMap", args: []string{"generate", "cluster", "demo", "--from-config-map", "nope"}, wantErr: "Error: ConfigMap team-a/nope not found in the management cluster\n"},
		{name: "a missing key", args: []string{"generate", "cluster", "demo", "--from-config-map", "templates", "--from-config-map-key", "nope"}, wantErr: `Error: ConfigMap team-a/templates has no key "nope" (keys: template): choose one with --from-config-map-key` + "\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			res := clusterctltest.Run(t, withConfig(t, tt.args...), clusterctltest.Options{Cluster: mc})
			if tt.wantErr != "" {
				g.Expect(res.Code).To(Equal(1))
				g.Expect(res.Stderr).To(Equal(tt.wantErr))
				return
			}
			g.Expect(res.Stderr).To(BeEmpty())
			golden.Assert(t, tt.golden, []byte(res.Stdout))
		})
	}
}
