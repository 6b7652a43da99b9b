package version_test

import (
	"testing"

	. "github.com/onsi/gomega"

	"github.com/capstan-dev/capstan/internal/cli/clusterctl/clusterctltest"
	"github.com/capstan-dev/capstan/internal/test/golden"
	"github.com/capstan-dev/capstan/internal/version"
)

func TestVersion(t *testing.T) {
	release := version.Info{GitVersion: "v0.3.1", GitCommit: "0123456789abcdef", GitTreeState: "clean", BuildDate: "2026-11-01T10:00:00Z",
		GoVersion: "go1.26.8", Compiler: "gc", Platform: "linux/amd64"}
	dev := version.Info{GitVersion: "dev", GoVersion: "go1.26.8", Compiler: "gc", Platform: "darwin/arm64"}
	tests := []struct {
		name   string
		args   []string
		info   version.Info
		golden string
	}{
		{name: "default", args: []string{"version"}, info: release, golden: "default.golden.txt"},
		{name: "short", args: []string{"version", "-o", "short"}, info: release, golden: "short.golden.txt"},
		{name: "yaml", args: []string{"version", "-o", "yaml"}, info: release, golden: "yaml.golden.yaml"},
		{name: "json", args: []string{"version", "--output", "json"}, info: release, golden: "json.golden.json"},
		{name: "a development build", args: []string{"version"}, info: dev, golden: "dev.golden.txt"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			res := clusterctltest.Run(t, tt.args, clusterctltest.Options{Version: tt.info})
			g.Expect(res.Stderr).To(BeEmpty())
			g.Expect(res.Code).To(Equal(0))
			golden.Assert(t, tt.golden, []byte(res.Stdout))
		})
	}

	g := NewWithT(t)
	res := clusterctltest.Run(t, []string{"version", "-o", "xml"}, clusterctltest.Options{Version: release})
	g.Expect(res.Code).To(Equal(1))
	g.Expect(res.Stderr).To(Equal("Error: invalid output format \"xml\": use yaml, json or short\n"))
}
