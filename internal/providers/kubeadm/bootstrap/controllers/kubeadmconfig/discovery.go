package kubeadmconfig

import (
	"fmt"

	clientcmdv1 "k8s.io/client-go/tools/clientcmd/api/v1"
	"sigs.k8s.io/yaml"

	bootstrapv1 "github.com/capstan-dev/capstan/api/bootstrap/kubeadm/v1beta1"
	"github.com/capstan-dev/capstan/internal/providers/kubeadm/bootstrap/userdata"
)

// joinStep is the join the owner does: as a control plane Machine or as a worker.
func joinStep(s *scope) userdata.Step {
	if s.owner.isControlPlane() {
		return userdata.JoinControlPlane
	}
	return userdata.JoinWorker
}

// discoveryKubeconfig returns the kubeconfig file of a file discovery with spec.joinConfiguration.discovery
// .file.kubeConfig, written at kubeConfigPath (root:root, 0640).
func discoveryKubeconfig(f *bootstrapv1.FileDiscovery) (*bootstrapv1.File, error) {
	kc := f.KubeConfig
	cluster := clientcmdv1.Cluster{}
	if kc.Cluster != nil {
		cluster = clientcmdv1.Cluster{
			Server: kc.Cluster.Server, TLSServerName: kc.Cluster.TLSServerName, InsecureSkipTLSVerify: kc.Cluster.InsecureSkipTLSVerify,
			CertificateAuthorityData: kc.Cluster.CertificateAuthorityData, ProxyURL: kc.Cluster.ProxyURL,
		}
	}
	user := clientcmdv1.AuthInfo{}
	if p := kc.User.AuthProvider; p != nil {
		user.AuthProvider = &clientcmdv1.AuthProviderConfig{Name: p.Name, Config: p.Config}
	}
	if e := kc.User.Exec; e != nil {
		apiVersion := e.APIVersion
		if apiVersion == "" {
			apiVersion = "client.authentication.k8s.io/v1" // upstream's webhook default
		}
		user.Exec = &clientcmdv1.ExecConfig{
			Command: e.Command, Args: e.Args, APIVersion: apiVersion, ProvideClusterInfo: e.ProvideClusterInfo, InteractiveMode: clientcmdv1.NeverExecInteractiveMode,
		}
		for _, env := range e.Env {
			user.Exec.Env = append(user.Exec.Env, clientcmdv1.ExecEnvVar{Name: env.Name, Value: env.Value})
		}
	}
	config := clientcmdv1.Config{
		CurrentContext: "default",
		Contexts:       []clientcmdv1.NamedContext{{Name: "default", Context: clientcmdv1.Context{Cluster: "default", AuthInfo: "default"}}},
		Clusters:       []clientcmdv1.NamedCluster{{Name: "default", Cluster: cluster}},
		AuthInfos:      []clientcmdv1.NamedAuthInfo{{Name: "default", AuthInfo: user}},
	}
	data, err := yaml.Marshal(config)
	if err != nil {
		return nil, fmt.Errorf("encoding the discovery kubeconfig: %w", err)
	}
	return &bootstrapv1.File{Path: f.KubeConfigPath, Owner: "root:root", Permissions: "0640", Content: string(data)}, nil
}
