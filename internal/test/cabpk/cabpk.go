// Package cabpk makes bootstrap data in the cloud-config format of Cluster API's kubeadm bootstrap provider
// (CABPK) for tests of what consumes it (the local provider), without running the bootstrap provider:
// kubeadm configurations written as YAML by hand, rendered by the bootstrap provider's own renderer
// (package userdata), in the data Secret CABPK writes.
package cabpk

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	bootstrapv1 "github.com/capstan-dev/capstan/api/bootstrap/kubeadm/v1beta1"
	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
	"github.com/capstan-dev/capstan/internal/providers/kubeadm/bootstrap/userdata"
)

// File is a file of the bootstrap data (KubeadmConfig spec.files).
type File struct {
	Path, Content, Permissions string
}

// Data is what to render.
type Data struct {
	// Init renders `kubeadm init` with Kubeadm at /run/kubeadm/kubeadm.yaml; otherwise `kubeadm join`
	// with Kubeadm at /run/kubeadm/kubeadm-join-config.yaml.
	Init bool
	// Kubeadm is the kubeadm configuration: for init the ClusterConfiguration and InitConfiguration
	// documents, for join the JoinConfiguration.
	Kubeadm string
	Files   []File
}

// CloudConfig renders the data as CABPK's cloud-config, with the kubeadm bootstrap provider's own renderer
// (internal/providers/kubeadm/bootstrap/userdata). Kubeadm's documents are written as given: for init,
// the ClusterConfiguration then the InitConfiguration, separated by "---" (as InitConfiguration returns
// them).
func CloudConfig(d Data) []byte {
	in := &userdata.Input{Step: userdata.JoinWorker, JoinConfiguration: d.Kubeadm}
	if d.Init {
		cluster, initDoc, _ := strings.Cut(d.Kubeadm, "\n---\n")
		in = &userdata.Input{Step: userdata.Init, ClusterConfiguration: cluster, InitConfiguration: initDoc}
	}
	for _, f := range d.Files {
		in.Files = append(in.Files, bootstrapv1.File{Path: f.Path, Owner: "root:root", Permissions: f.Permissions, Content: f.Content})
	}
	data, err := userdata.CloudConfig(in)
	if err != nil {
		// Only a file or command the encoder cannot write fails: a defect of the calling test.
		panic(fmt.Sprintf("rendering bootstrap data: %v", err))
	}
	return data
}

// Secret is a bootstrap data Secret as CABPK writes it: type cluster.x-k8s.io/secret, keys value and
// format, the cluster-name label.
func Secret(namespace, name, clusterName string, value []byte) *corev1.Secret {
	return &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name, Labels: map[string]string{clusterv1.ClusterNameLabel: clusterName}},
		Type:       "cluster.x-k8s.io/secret",
		Data:       map[string][]byte{"value": value, "format": []byte("cloud-config")},
	}
}

// InitConfiguration is a kubeadm v1beta4 ClusterConfiguration (with the given apiServer and etcd
// sections, already indented by two spaces, which may be empty) and InitConfiguration naming the node.
func InitConfiguration(clusterName, version, apiServer, etcd, nodeName string) string {
	if apiServer == "" {
		apiServer = "  {}\n"
	}
	if etcd == "" {
		etcd = "  local: {}\n"
	}
	return fmt.Sprintf(`apiServer:
%sapiVersion: kubeadm.k8s.io/v1beta4
clusterName: %s
controllerManager: {}
dns: {}
etcd:
%skind: ClusterConfiguration
kubernetesVersion: %s
networking:
  dnsDomain: cluster.local
  serviceSubnet: 10.96.0.0/12
scheduler: {}

---
apiVersion: kubeadm.k8s.io/v1beta4
kind: InitConfiguration
localAPIEndpoint: {}
nodeRegistration:
  imagePullPolicy: IfNotPresent
  name: %s
`, apiServer, clusterName, etcd, version, nodeName)
}

// JoinConfiguration is a kubeadm v1beta4 JoinConfiguration naming the node, joining the control plane
// when controlPlane is set; nodeRegistration holds extra lines of nodeRegistration (indented by two
// spaces), which may be empty.
func JoinConfiguration(endpoint, nodeName string, controlPlane bool, nodeRegistration string) string {
	cp := ""
	if controlPlane {
		cp = "controlPlane:\n  localAPIEndpoint: {}\n"
	}
	return fmt.Sprintf(`apiVersion: kubeadm.k8s.io/v1beta4
%sdiscovery:
  bootstrapToken:
    apiServerEndpoint: %s
    token: abcdef.0123456789abcdef
    unsafeSkipCAVerification: true
kind: JoinConfiguration
nodeRegistration:
  imagePullPolicy: IfNotPresent
  name: %s
%s`, cp, endpoint, nodeName, nodeRegistration)
}
