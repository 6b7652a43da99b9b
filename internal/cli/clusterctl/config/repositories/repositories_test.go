package repositories_test

import (
	"os"
	"path/filepath"
	"testing"

	. "github.com/onsi/gomega"

	"github.com/capstan-dev/capstan/internal/cli/clusterctl/clusterctltest"
	"github.com/capstan-dev/capstan/internal/test/golden"
)

// config adds a provider, overrides a built-in one, and points one at GitLab, as the book's examples do.
const config = `providers:
  - name: "my-infra-provider"
    url: "${HOME}/.cluster-api/overrides/infrastructure-docker/latest/infrastructure-components.yaml"
    type: "InfrastructureProvider"
  - name: "cluster-api"
    url: "https://gitlab.example.com/api/v4/projects/external-packages%2Fcluster-api/packages/generic/cluster-api/v1.2.3/core-components.yaml"
    type: "CoreProvider"
  - name: "aws"
    url: "https://github.com/myorg/cluster-api-provider-aws/releases/v2.8.0/infrastructure-components.yaml"
    type: "InfrastructureProvider"
`

func TestConfigRepositories(t *testing.T) {
	home := "/home/user"
	path := filepath.Join(t.TempDir(), "clusterctl.yaml")
	if err := os.WriteFile(path, []byte(config), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name   string
		args   []string
		golden string
	}{
		{name: "built-in providers, text", args: []string{"config", "repositories"}, golden: "builtin.golden.txt"},
		{name: "built-in providers, yaml", args: []string{"config", "repositories", "-o", "yaml"}, golden: "builtin.golden.yaml"},
		{name: "with the config file, text", args: []string{"--config", path, "config", "repositories", "--output", "text"}, golden: "custom.golden.txt"},
		{name: "with the config file, yaml", args: []string{"--config", path, "config", "repositories", "-o", "yaml"}, golden: "custom.golden.yaml"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			res := clusterctltest.Run(t, tt.args, clusterctltest.Options{Env: map[string]string{"HOME": home}})
			g.Expect(res.Stderr).To(BeEmpty())
			g.Expect(res.Code).To(Equal(0))
			golden.Assert(t, tt.golden, []byte(res.Stdout))
		})
	}
}

func TestBadInput(t *testing.T) {
	g := NewWithT(t)
	res := clusterctltest.Run(t, []string{"config", "repositories", "-o", "json"}, clusterctltest.Options{})
	g.Expect(res.Code).To(Equal(1))
	g.Expect(res.Stderr).To(Equal("Error: invalid output format \"json\": use text or yaml\n"))

	path := filepath.Join(t.TempDir(), "clusterctl.yaml")
	g.Expect(os.WriteFile(path, []byte("providers:\n- {name: My_Provider, url: /x, type: InfrastructureProvider}\n"), 0o600)).To(Succeed())
	res = clusterctltest.Run(t, []string{"--config", path, "config", "repositories"}, clusterctltest.Options{})
	g.Expect(res.Code).To(Equal(1))
	g.Expect(res.Stderr).To(HavePrefix("Error: invalid clusterctl config file " + path + `: providers[0]: invalid provider name "My_Provider": a lowercase RFC 1123 label`))

	res = clusterctltest.Run(t, []string{"--config", "/nonexistent/clusterctl.yaml", "config", "repositories"}, clusterctltest.Options{})
	g.Expect(res.Code).To(Equal(1))
	g.Expect(res.Stderr).To(Equal("Error: clusterctl config file /nonexistent/clusterctl.yaml does not exist: check the --config flag\n"))
}
