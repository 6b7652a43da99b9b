package provider_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	. "github.com/onsi/gomega"

	"github.com/capstan-dev/capstan/internal/cli/clusterctl/clusterctltest"
	"github.com/capstan-dev/capstan/internal/test/golden"
)

func withConfig(t *testing.T, args ...string) []string {
	return append([]string{"--config", clusterctltest.ConfigPath(t), "generate", "provider"}, args...)
}

func TestGenerateProvider(t *testing.T) {
	tests := []struct {
		name   string
		args   []string
		env    map[string]string
		golden string
	}{
		{name: "components as init installs them", args: []string{"--infrastructure", "docker"}, env: map[string]string{"CLUSTER_TOPOLOGY": "true"}, golden: "docker.golden.yaml"},
		{name: "a version and a target namespace", args: []string{"-i", "docker:v1.10.10", "-n", "capd-test"}, golden: "docker-capd-test.golden.yaml"},
		{name: "raw", args: []string{"-i", "docker", "--raw"}, golden: "docker-raw.golden.yaml"},
		{name: "describe", args: []string{"-i", "docker", "--describe"}, golden: "docker-describe.golden.txt"},
		{name: "the core provider", args: []string{"--core", "cluster-api"}, golden: "core.golden.yaml"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			res := clusterctltest.Run(t, withConfig(t, tt.args...), clusterctltest.Options{Env: tt.env})
			g.Expect(res.Stderr).To(BeEmpty())
			g.Expect(res.Code).To(Equal(0))
			// The describe output shows the repository path, which depends on the checkout.
			out := strings.ReplaceAll(res.Stdout, clusterctltest.RepositoryPath(t), "${CLUSTERCTL_REPOSITORY_PATH}")
			golden.Assert(t, tt.golden, []byte(out))
		})
	}
}

func TestWriteTo(t *testing.T) {
	g := NewWithT(t)
	out := filepath.Join(t.TempDir(), "docker.yaml")
	res := clusterctltest.Run(t, withConfig(t, "-i", "docker", "--write-to", out), clusterctltest.Options{Env: map[string]string{"CLUSTER_TOPOLOGY": "true"}})
	g.Expect(res.Code).To(Equal(0))
	g.Expect(res.Stdout).To(BeEmpty())
	got, err := os.ReadFile(out)
	g.Expect(err).NotTo(HaveOccurred())
	want, err := os.ReadFile("testdata/docker.golden.yaml")
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(string(got)).To(Equal(string(want)))
}

func TestBadInput(t *testing.T) {
	components := string(clusterctltest.ReadRepositoryFile(t, "infrastructure-docker/v1.10.10/infrastructure-components-development.yaml"))
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
			name:    "two Namespaces in the components",
			args:    []string{"-i", "docker"},
			env:     broken(map[string]string{"infrastructure-docker/v1.10.10/infrastructure-components-development.yaml": components + "---\napiVersion: v1\nkind: Namespace\nmetadata:\n  name: capd-extra\n"}),
			wantErr: "infrastructure-components-development.yaml of infrastructure-docker v1.10.10: invalid components YAML: it has 2 Namespace objects (capd-system, capd-extra); a provider's components must have no more than one",
		},
		{
			name:    "no Namespace in the components",
			args:    []string{"-i", "docker"},
			env:     broken(map[string]string{"infrastructure-docker/v1.10.10/infrastructure-components-development.yaml": strings.SplitN(components, "---\n", 2)[1]}),
			wantErr: "the components YAML has no Namespace object, so the target namespace can't be defaulted: specify a target namespace (--target-namespace)",
		},
		{
			name:    "missing variables",
			args:    []string{"-i", "docker"},
			env:     broken(map[string]string{"infrastructure-docker/v1.10.10/infrastructure-components-development.yaml": components + "---\napiVersion: v1\nkind: Secret\nmetadata:\n  name: creds\nstringData:\n  token: ${DOCKER_TOKEN}\n  user: ${DOCKER_USER}\n"}),
			wantErr: "value for variables [DOCKER_TOKEN, DOCKER_USER] is not set",
		},
		{
			name:    "a release without a release series for its version",
			args:    []string{"-i", "docker:v1.10.10"},
			env:     broken(map[string]string{"infrastructure-docker/v1.10.10/metadata.yaml": "apiVersion: clusterctl.cluster.x-k8s.io/v1alpha3\nkind: Metadata\nreleaseSeries:\n- {major: 1, minor: 9, contract: v1beta1}\n"}),
			wantErr: "the metadata.yaml of infrastructure-docker v1.10.10 has no release series for v1.10",
		},
		{
			name:    "latest: a metadata.yaml that was not updated for the latest release",
			args:    []string{"-i", "docker"},
			env:     broken(map[string]string{"infrastructure-docker/v1.10.10/metadata.yaml": "apiVersion: clusterctl.cluster.x-k8s.io/v1alpha3\nkind: Metadata\nreleaseSeries:\n- {major: 1, minor: 9, contract: v1beta1}\n"}),
			wantErr: "the metadata.yaml of infrastructure-docker v1.10.10 maps the contract v1beta1 to the v1.9 series, but there is no v1.9 release in ",
		},
		{name: "no provider", args: nil, wantErr: "name the provider to generate with one of --core, --bootstrap, --control-plane, --infrastructure, --ipam, --runtime-extension, --addon"},
		{name: "two providers", args: []string{"-i", "docker", "-b", "kubeadm"}, wantErr: "generate provider generates one provider at a time, but --bootstrap and --infrastructure were given"},
		{name: "unknown provider", args: []string{"-b", "docker"}, wantErr: `unknown BootstrapProvider "docker"`},
		{name: "a version not in the repository", args: []string{"-i", "docker:v2.0.0"}, wantErr: "version v2.0.0 of infrastructure-docker not found"},
		{name: "describe and raw", args: []string{"-i", "docker", "--raw", "--describe"}, wantErr: "if any flags in the group [describe raw] are set none of the others can be"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			out := filepath.Join(t.TempDir(), "out.yaml")
			res := clusterctltest.Run(t, withConfig(t, append(tt.args, "--write-to", out)...), clusterctltest.Options{Env: tt.env})
			g.Expect(res.Code).To(Equal(1))
			g.Expect(res.Stdout).To(BeEmpty())
			g.Expect(strings.Count(res.Stderr, "\n")).To(Equal(1), "one line: %q", res.Stderr)
			g.Expect(res.Stderr).To(ContainSubstring(tt.wantErr))
			_, err := os.Stat(out)
			g.Expect(errors.Is(err, os.ErrNotExist)).To(BeTrue(), "nothing is written to --write-to")
		})
	}
}
