package extensionsample

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"testing"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"

	runtimev1 "github.com/capstan-dev/capstan/api/runtime/v1alpha1"
	"github.com/capstan-dev/capstan/internal/cli/iostreams"
	runtimeclient "github.com/capstan-dev/capstan/internal/runtime/client"
	"github.com/capstan-dev/capstan/internal/runtime/registry"
	"github.com/capstan-dev/capstan/pkg/extension"
	"github.com/capstan-dev/capstan/pkg/extension/sample"
)

// The Secret `capstan extension-sample certificate` prints serves the sample behind its Service name, and
// its ca.crt is the CA an ExtensionConfig needs: discovery through the Service name succeeds.
func TestCertificateServesTheSampleBehindItsService(t *testing.T) {
	g := NewWithT(t)
	var out bytes.Buffer
	cmd := NewCommand(iostreams.Streams{Out: &out, ErrOut: &out})
	cmd.SetArgs([]string{"certificate", "--namespace", "ext-system", "--service", "extension-sample"})
	g.Expect(cmd.Execute()).To(Succeed())
	secret := &corev1.Secret{}
	g.Expect(yaml.UnmarshalStrict(out.Bytes(), secret)).To(Succeed())
	g.Expect(secret.Name).To(Equal("extension-sample-cert"))
	g.Expect(secret.Namespace).To(Equal("ext-system"))
	g.Expect(secret.Type).To(Equal(corev1.SecretTypeTLS))

	dir := t.TempDir()
	for _, k := range []string{"tls.crt", "tls.key"} {
		g.Expect(os.WriteFile(filepath.Join(dir, k), secret.Data[k], 0o600)).To(Succeed())
	}
	srv := extension.NewServer(extension.Options{CertDir: dir})
	g.Expect(sample.Register(srv)).To(Succeed())
	l, err := net.Listen("tcp", "127.0.0.1:0")
	g.Expect(err).NotTo(HaveOccurred())
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx, l) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("sample server: %v", err)
		}
	})

	// The Service name resolves to the server, as cluster DNS (or the embedded cluster's routing) does.
	dial := func(ctx context.Context, network, _ string) (net.Conn, error) {
		return (&net.Dialer{}).DialContext(ctx, network, l.Addr().String())
	}
	c := &runtimeclient.Client{Registry: registry.New(), Dial: dial}
	handlers, err := c.Discover(ctx, &runtimev1.ExtensionConfig{ObjectMeta: metav1.ObjectMeta{Name: "sample"},
		Spec: runtimev1.ExtensionConfigSpec{ClientConfig: runtimev1.ClientConfig{
			Service:  &runtimev1.ServiceReference{Namespace: "ext-system", Name: "extension-sample", Port: ptr.To[int32](443)},
			CABundle: secret.Data["ca.crt"],
		}}})
	g.Expect(err).NotTo(HaveOccurred())
	var names []string
	for _, h := range handlers {
		names = append(names, fmt.Sprintf("%s:%s", h.Name, h.RequestHook.Hook))
	}
	g.Expect(names).To(ConsistOf(
		"before-cluster-create.sample:BeforeClusterCreate", "before-cluster-upgrade.sample:BeforeClusterUpgrade",
		"before-control-plane-upgrade.sample:BeforeControlPlaneUpgrade", "before-workers-upgrade.sample:BeforeWorkersUpgrade",
		"after-workers-upgrade.sample:AfterWorkersUpgrade", "generate-upgrade-plan.sample:GenerateUpgradePlan",
		"before-cluster-delete.sample:BeforeClusterDelete", "after-control-plane-initialized.sample:AfterControlPlaneInitialized",
		"generate-patches.sample:GeneratePatches", "discover-variables.sample:DiscoverVariables"))
}

func TestCertificateNeedsNamespaceAndService(t *testing.T) {
	g := NewWithT(t)
	var out bytes.Buffer
	cmd := NewCommand(iostreams.Streams{Out: &out, ErrOut: &out})
	cmd.SetArgs([]string{"certificate", "--service", "x"})
	cmd.SilenceUsage, cmd.SilenceErrors = true, true
	g.Expect(cmd.Execute()).To(MatchError(ContainSubstring("--namespace and --service are required")))
}
