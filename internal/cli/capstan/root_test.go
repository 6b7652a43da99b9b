package capstan

import (
	"bytes"
	"testing"

	. "github.com/onsi/gomega"

	"github.com/capstan-dev/capstan/internal/cli/iostreams"
)

// TestEveryManagerServesDiagnostics: every controller manager command (the commands with --leader-elect)
// has the diagnostics flags with upstream's defaults, so a manager added later cannot miss them.
func TestEveryManagerServesDiagnostics(t *testing.T) {
	g := NewWithT(t)
	var out bytes.Buffer
	root := NewCommand(iostreams.Streams{Out: &out, ErrOut: &out})
	var managers []string
	for _, cmd := range root.Commands() {
		if cmd.Flags().Lookup("leader-elect") == nil {
			continue
		}
		managers = append(managers, cmd.Name())
		for flag, def := range map[string]string{
			"diagnostics-address": ":8443", "insecure-diagnostics": "false", "metrics-bind-addr": "",
			"tls-min-version": "VersionTLS12", "profiler-address": "",
		} {
			f := cmd.Flags().Lookup(flag)
			g.Expect(f).NotTo(BeNil(), "capstan %s --%s", cmd.Name(), flag)
			g.Expect(f.DefValue).To(Equal(def), "capstan %s --%s", cmd.Name(), flag)
		}
		g.Expect(cmd.Flags().Lookup("metrics-bind-addr").Deprecated).NotTo(BeEmpty())
	}
	g.Expect(managers).To(ContainElements("manager", "infra-local", "bootstrap-kubeadm", "controlplane-kubeadm", "operator"))
}
