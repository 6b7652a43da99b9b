package controllermanager

import (
	"os"
	"path/filepath"
	"testing"

	. "github.com/onsi/gomega"
	"github.com/spf13/pflag"
)

func TestSharedFlags(t *testing.T) {
	g := NewWithT(t)
	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	g.Expect(os.WriteFile(kubeconfig, []byte(`apiVersion: v1
kind: Config
clusters: [{name: mgmt, cluster: {server: "https://127.0.0.1:6443"}}]
users: [{name: admin, user: {token: secret}}]
contexts: [{name: mgmt, context: {cluster: mgmt, user: admin}}]
current-context: mgmt
`), 0o600)).To(Succeed())

	o := DefaultOptions("test-manager")
	fs := pflag.NewFlagSet("test", pflag.ContinueOnError)
	o.AddFlags(fs)
	g.Expect(fs.Parse([]string{"--kubeconfig", kubeconfig, "-v", "2", "--zap-log-level", "debug", "--feature-gates", "A=true"})).To(Succeed())
	g.Expect(o.Verbosity).To(Equal(2))
	g.Expect(o.Zap.Level).NotTo(BeNil(), "the zap flags are registered")
	g.Expect(o.FeatureGates).To(HaveKeyWithValue("A", true))

	cfg, err := o.RESTConfig()
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(cfg.Host).To(Equal("https://127.0.0.1:6443"))
	g.Expect(cfg.BearerToken).To(Equal("secret"))
}
