package embedded

import (
	"fmt"
	"os"

	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// writeKubeconfig writes a kubeconfig for user (a key pair in the PKI directory) to path, with the
// certificates embedded so the file can be copied elsewhere.
func (s State) writeKubeconfig(path, contextName, user string, apiServerPort int) error {
	ca, err := os.ReadFile(s.certFile(caName))
	if err != nil {
		return err
	}
	cert, err := os.ReadFile(s.certFile(user))
	if err != nil {
		return err
	}
	key, err := os.ReadFile(s.keyFile(user))
	if err != nil {
		return err
	}
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters[contextName] = &clientcmdapi.Cluster{
		Server:                   fmt.Sprintf("https://127.0.0.1:%d", apiServerPort),
		CertificateAuthorityData: ca,
	}
	cfg.AuthInfos[contextName] = &clientcmdapi.AuthInfo{ClientCertificateData: cert, ClientKeyData: key}
	cfg.Contexts[contextName] = &clientcmdapi.Context{Cluster: contextName, AuthInfo: contextName}
	cfg.CurrentContext = contextName
	data, err := clientcmd.Write(*cfg)
	if err != nil {
		return err
	}
	return os.WriteFile(path, data, 0o600)
}
