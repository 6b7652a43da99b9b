package envtest

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"sigs.k8s.io/controller-runtime/pkg/client"
	crenvtest "sigs.k8s.io/controller-runtime/pkg/envtest"

	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
)

// Kubeconfig renders the Environment's rest.Config as a kubeconfig, for example to make an Environment
// the workload cluster of a Cluster.
func (e *Environment) Kubeconfig() ([]byte, error) {
	return Kubeconfig(e.Config, "envtest")
}

// KubeconfigFile writes the Environment's kubeconfig (context "envtest", with namespace as its default
// namespace when not empty) to a file in a temporary directory of the test, and returns its path: what a
// command under test gets as --kubeconfig or $KUBECONFIG.
func (e *Environment) KubeconfigFile(t testing.TB, namespace string) string {
	t.Helper()
	data, err := e.Kubeconfig()
	if err != nil {
		t.Fatal(err)
	}
	kc, err := clientcmd.Load(data)
	if err != nil {
		t.Fatal(err)
	}
	kc.Contexts["envtest"].Namespace = namespace
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := clientcmd.WriteToFile(*kc, path); err != nil {
		t.Fatal(err)
	}
	return path
}

// Kubeconfig renders a rest.Config (server, CA, client certificate or token) as a kubeconfig whose cluster,
// user and context are named name.
func Kubeconfig(cfg *rest.Config, name string) ([]byte, error) {
	kc := clientcmdapi.NewConfig()
	kc.Clusters[name] = &clientcmdapi.Cluster{
		Server:                   cfg.Host,
		CertificateAuthorityData: cfg.CAData,
		CertificateAuthority:     cfg.CAFile,
		InsecureSkipTLSVerify:    cfg.Insecure,
	}
	kc.AuthInfos[name] = &clientcmdapi.AuthInfo{
		ClientCertificateData: cfg.CertData,
		ClientCertificate:     cfg.CertFile,
		ClientKeyData:         cfg.KeyData,
		ClientKey:             cfg.KeyFile,
		Token:                 cfg.BearerToken,
		Username:              cfg.Username,
		Password:              cfg.Password,
	}
	kc.Contexts[name] = &clientcmdapi.Context{Cluster: name, AuthInfo: name}
	kc.CurrentContext = name
	data, err := clientcmd.Write(*kc)
	if err != nil {
		return nil, fmt.Errorf("writing kubeconfig: %w", err)
	}
	return data, nil
}

// KubeconfigSecret returns the `<cluster>-kubeconfig` Secret of a Cluster holding kubeconfig, as Cluster API
// writes it: type cluster.x-k8s.io/secret, key `value`, labelled with the cluster name.
func KubeconfigSecret(namespace, clusterName string, kubeconfig []byte) *corev1.Secret {
	return &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: namespace,
			Name:      clusterName + "-kubeconfig",
			Labels:    map[string]string{clusterv1.ClusterNameLabel: clusterName},
		},
		Type: clusterv1.ClusterSecretType,
		Data: map[string][]byte{"value": kubeconfig},
	}
}

// WriteKubeconfigSecret creates, or updates, the `<cluster>-kubeconfig` Secret of a Cluster with c so that
// it points at workload.
func WriteKubeconfigSecret(ctx context.Context, c client.Client, namespace, clusterName string, workload *rest.Config) error {
	kubeconfig, err := Kubeconfig(workload, clusterName)
	if err != nil {
		return err
	}
	return WriteKubeconfigSecretData(ctx, c, namespace, clusterName, kubeconfig)
}

// WriteKubeconfigSecretData creates, or updates, the `<cluster>-kubeconfig` Secret of a Cluster with c to hold
// kubeconfig.
func WriteKubeconfigSecretData(ctx context.Context, c client.Client, namespace, clusterName string, kubeconfig []byte) error {
	secret := KubeconfigSecret(namespace, clusterName, kubeconfig)
	err := c.Create(ctx, secret)
	if apierrors.IsAlreadyExists(err) {
		existing := &corev1.Secret{}
		if err := c.Get(ctx, client.ObjectKeyFromObject(secret), existing); err != nil {
			return fmt.Errorf("getting Secret %s: %w", client.ObjectKeyFromObject(secret), err)
		}
		existing.Data = secret.Data
		err = c.Update(ctx, existing)
	}
	if err != nil {
		return fmt.Errorf("writing Secret %s: %w", client.ObjectKeyFromObject(secret), err)
	}
	return nil
}

// AddUser returns a rest.Config that reaches the API server as user name in groups, with a client
// certificate of its own: clients of different users get different TLS configurations, hence
// client-go transports and connections of their own, as clients of different clusters do.
func (e *Environment) AddUser(name string, groups ...string) (*rest.Config, error) {
	user, err := e.env.ControlPlane.AddUser(crenvtest.User{Name: name, Groups: groups}, rest.CopyConfig(e.Config))
	if err != nil {
		return nil, fmt.Errorf("adding user %s: %w", name, err)
	}
	return user.Config(), nil
}
