// Package cabpk renders bootstrap data in the cloud-config format of Cluster API's kubeadm bootstrap
// provider (CABPK), for tests of what consumes it: the write_files (the files, then the kubeadm
// configuration at /run/kubeadm/kubeadm.yaml for init or /run/kubeadm/kubeadm-join-config.yaml for join)
// and the runcmd running kubeadm, in the layout upstream's templates produce.
package cabpk

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
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

const placeholder = `-   path: /run/cluster-api/placeholder
    owner: root:root
    permissions: '0640'
    content: "This placeholder file is used to create the /run/cluster-api sub directory in a way that is compatible with both Linux and Windows (mkdir -p /run/cluster-api does not work with Windows)"
`

// CloudConfig renders the data as CABPK's cloud-config.
func CloudConfig(d Data) []byte {
	var b strings.Builder
	b.WriteString("## template: jinja\n#cloud-config\n\nwrite_files:")
	file := func(path, perm, content string) {
		fmt.Fprintf(&b, "\n-   path: %s\n    owner: root:root\n", path)
		if perm != "" {
			fmt.Fprintf(&b, "    permissions: '%s'\n", perm)
		}
		b.WriteString("    content: |\n")
		b.WriteString(indent(content, 6))
	}
	for _, f := range d.Files {
		file(f.Path, f.Permissions, f.Content)
	}
	config, command := "/run/kubeadm/kubeadm-join-config.yaml", "kubeadm join --config /run/kubeadm/kubeadm-join-config.yaml "
	if d.Init {
		config, command = "/run/kubeadm/kubeadm.yaml", "'kubeadm init --config /run/kubeadm/kubeadm.yaml "
	}
	file(config, "0640", "---\n"+d.Kubeadm)
	b.WriteString("\n" + placeholder + "runcmd:\n")
	if d.Init {
		fmt.Fprintf(&b, "  - %s && echo success > /run/cluster-api/bootstrap-success.complete'\n", command)
	} else {
		fmt.Fprintf(&b, "  - %s && echo success > /run/cluster-api/bootstrap-success.complete\n", command)
	}
	return []byte(b.String())
}

func indent(s string, n int) string {
	pad := strings.Repeat(" ", n)
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	for i, l := range lines {
		if l != "" {
			lines[i] = pad + l
		}
	}
	return strings.Join(lines, "\n")
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
