package core

import (
	"crypto/tls"
	"fmt"
	"io"
	"testing"

	. "github.com/onsi/gomega"
	"github.com/spf13/pflag"

	"github.com/capstan-dev/capstan/internal/controllermanager"
	"github.com/capstan-dev/capstan/internal/webhooks"
)

// TestWebhookServerTakesTheManagersTLSFlags: --tls-min-version and --tls-cipher-suites, which configure the
// diagnostics endpoint, configure the webhook server too, as upstream's.
func TestWebhookServerTakesTheManagersTLSFlags(t *testing.T) {
	g := NewWithT(t)
	ns := env.NewNamespace(t)
	install(t, ns)

	flags := controllermanager.DefaultOptions("test-webhook-tls")
	fs := pflag.NewFlagSet("test", pflag.ContinueOnError)
	fs.SetOutput(io.Discard)
	flags.AddFlags(fs)
	g.Expect(fs.Parse([]string{"--tls-min-version=VersionTLS13"})).To(Succeed())
	tlsOpts, err := flags.TLSOptions()
	g.Expect(err).NotTo(HaveOccurred())

	m := startManager(t, ns, func(o *webhooks.Options) { o.TLSOpts = tlsOpts })
	expectRefused(g, ns) // the API server (TLS 1.3) still calls the webhooks

	addr := fmt.Sprintf("127.0.0.1:%d", m.webhookPort)
	dial := func(maxVersion uint16) error {
		conn, err := tls.Dial("tcp", addr, &tls.Config{InsecureSkipVerify: true, MaxVersion: maxVersion}) //nolint:gosec // Only the version matters here.
		if err != nil {
			return err
		}
		return conn.Close()
	}
	g.Expect(dial(tls.VersionTLS12)).To(MatchError(ContainSubstring("protocol version")), "TLS 1.2 is refused")
	g.Expect(dial(tls.VersionTLS13)).To(Succeed())
}
