package initialize_test

import (
	"testing"

	. "github.com/onsi/gomega"

	"github.com/capstan-dev/capstan/internal/cli/clusterctl/clusterctltest"
	"github.com/capstan-dev/capstan/internal/test/golden"
)

func TestListImages(t *testing.T) {
	config := clusterctltest.ConfigPath(t)
	tests := []struct {
		name   string
		args   []string
		golden string
	}{
		{name: "defaults and an infrastructure provider", args: []string{"--config", config, "init", "list-images", "--infrastructure", "docker"}, golden: "docker.golden.txt"},
		{name: "explicit versions", args: []string{"--config", config, "init", "list-images", "-i", "docker:v1.10.10", "--core", "cluster-api:v1.10.10", "-b", "kubeadm:v1.10.10", "-c", "kubeadm:v1.10.10"}, golden: "docker.golden.txt"},
		{name: "opting out of the defaults", args: []string{"--config", config, "init", "list-images", "-i", "docker", "--core", "-", "-b", "-", "-c", "-"}, golden: "docker-only.golden.txt"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			res := clusterctltest.Run(t, tt.args, clusterctltest.Options{})
			g.Expect(res.Stderr).To(BeEmpty())
			g.Expect(res.Code).To(Equal(0))
			golden.Assert(t, tt.golden, []byte(res.Stdout))
		})
	}
}

func TestInitNeedsAManagementCluster(t *testing.T) {
	g := NewWithT(t)
	res := clusterctltest.Run(t, []string{"init", "-i", "docker"}, clusterctltest.Options{})
	g.Expect(res.Code).To(Equal(1))
	g.Expect(res.Stderr).To(Equal("Error: no management cluster: give its kubeconfig with --kubeconfig or KUBECONFIG\n"))
}
