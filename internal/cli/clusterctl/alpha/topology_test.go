package alpha

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	. "github.com/onsi/gomega"

	"github.com/capstan-dev/capstan/internal/cli/iostreams"
)

func TestTopologyPlanOfTheBookExample(t *testing.T) {
	g := NewWithT(t)
	out := &bytes.Buffer{}
	dir := t.TempDir()
	cmd := newTopologyCommand(iostreams.Streams{In: &bytes.Buffer{}, Out: out, ErrOut: &bytes.Buffer{}}, nil)
	cmd.SetArgs([]string{"plan", "-f", "testdata/topology-plan.yaml", "-o", dir})
	g.Expect(cmd.Execute()).To(Succeed())
	text := out.String()
	g.Expect(text).To(ContainSubstring(`Changes for Cluster "default/my-docker-cluster"`))
	for _, kind := range []string{"DockerCluster", "KubeadmControlPlane", "DockerMachineTemplate", "KubeadmConfigTemplate", "MachineDeployment"} {
		g.Expect(text).To(MatchRegexp(`default\s+`+kind+`\s+my-docker-cluster-\S+\s+created`), kind)
	}
	g.Expect(text).To(ContainSubstring("MachineDeployment(s) md-0 are created once the control plane is initialized"))

	files, err := filepath.Glob(filepath.Join(dir, "created", "KubeadmControlPlane_default_my-docker-cluster-*.yaml"))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(files).To(HaveLen(1))
	data, err := os.ReadFile(files[0])
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(string(data)).To(ContainSubstring("imageRepository: my.custom.registry"), "the patch is applied")
	g.Expect(string(data)).To(ContainSubstring("version: v1.22.4"))
}

func TestTopologyPlanErrors(t *testing.T) {
	tests := []struct {
		name    string
		args    []string
		wantErr string
	}{
		{"unknown Cluster", []string{"plan", "-f", "testdata/topology-plan.yaml", "-c", "nope"}, `the input has no Cluster "nope" with spec.topology`},
		{"missing file", []string{"plan", "-f", "testdata/nope.yaml"}, "reading testdata/nope.yaml"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			cmd := newTopologyCommand(iostreams.Streams{In: &bytes.Buffer{}, Out: &bytes.Buffer{}, ErrOut: &bytes.Buffer{}}, nil)
			cmd.SetArgs(tt.args)
			cmd.SilenceUsage, cmd.SilenceErrors = true, true
			g.Expect(cmd.Execute()).To(MatchError(ContainSubstring(tt.wantErr)))
		})
	}
}
