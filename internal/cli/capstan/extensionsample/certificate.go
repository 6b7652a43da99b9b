package extensionsample

import (
	"crypto/x509"
	"errors"
	"fmt"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	"github.com/capstan-dev/capstan/internal/cli/iostreams"
	"github.com/capstan-dev/capstan/internal/pki"
)

// newCertificateCommand returns `capstan extension-sample certificate`, which prints a Secret with a new
// CA and a serving certificate for an Extension's Service, for clusters without cert-manager.
func newCertificateCommand(streams iostreams.Streams) *cobra.Command {
	var namespace, service, secret string
	cmd := &cobra.Command{
		Use:   "certificate",
		Short: "Print a kubernetes.io/tls Secret (ca.crt, tls.crt, tls.key) for an Extension's Service",
		Long: "Print a Secret of type kubernetes.io/tls holding a new CA (ca.crt) and a serving certificate signed by it " +
			"(tls.crt, tls.key) valid for <service>.<namespace>.svc, for an Extension to mount and for an ExtensionConfig's " +
			"runtime.cluster.x-k8s.io/inject-ca-from-secret annotation to name. Apply it with kubectl apply -f -.",
		Args: cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			if namespace == "" || service == "" {
				return errors.New("--namespace and --service are required: the certificate is for <service>.<namespace>.svc")
			}
			if secret == "" {
				secret = service + "-cert"
			}
			s, err := certificateSecret(namespace, service, secret)
			if err != nil {
				return err
			}
			data, err := yaml.Marshal(s)
			if err != nil {
				return err
			}
			_, err = streams.Out.Write(data)
			return err
		},
	}
	fs := cmd.Flags()
	fs.StringVar(&namespace, "namespace", "", "Namespace of the Extension's Service and of the Secret.")
	fs.StringVar(&service, "service", "", "Name of the Extension's Service.")
	fs.StringVar(&secret, "secret", "", "Name of the Secret; <service>-cert when empty.")
	return cmd
}

func certificateSecret(namespace, service, name string) (*corev1.Secret, error) {
	ca, err := pki.NewCA(service + "-ca")
	if err != nil {
		return nil, err
	}
	host := service + "." + namespace + ".svc"
	serving, err := ca.Sign(pki.CertConfig{CommonName: host, DNSNames: []string{host, host + ".cluster.local"},
		Usages: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}})
	if err != nil {
		return nil, fmt.Errorf("signing the serving certificate: %w", err)
	}
	key, err := pki.EncodeKey(serving.Key)
	if err != nil {
		return nil, err
	}
	return &corev1.Secret{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Secret"},
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name},
		Type:       corev1.SecretTypeTLS,
		Data:       map[string][]byte{"ca.crt": ca.CertPEM(), corev1.TLSCertKey: serving.CertPEM(), corev1.TLSPrivateKeyKey: key},
	}, nil
}
