package get_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"strings"
	"testing"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
	clusterctlcli "github.com/capstan-dev/capstan/internal/cli/clusterctl"
	"github.com/capstan-dev/capstan/internal/cli/clusterctl/root"
	"github.com/capstan-dev/capstan/internal/cli/iostreams"
	clusterctlclient "github.com/capstan-dev/capstan/internal/clusterctl/client"
	"github.com/capstan-dev/capstan/internal/clusterctl/cluster"
	"github.com/capstan-dev/capstan/internal/test/envtest"
)

var env *envtest.Environment

func TestMain(m *testing.M) {
	os.Exit(envtest.Run(m, envtest.Options{}, func(e *envtest.Environment) { env = e }))
}

// kubeconfigFile writes a kubeconfig with two contexts: "envtest", the test API server with namespace ns,
// and "unreachable", the current one, a server that does not answer.
func kubeconfigFile(t *testing.T, ns string) string {
	t.Helper()
	path := env.KubeconfigFile(t, ns)
	kc, err := clientcmd.LoadFromFile(path)
	if err != nil {
		t.Fatal(err)
	}
	kc.Clusters["unreachable"] = &clientcmdapi.Cluster{Server: "https://127.0.0.1:1"}
	kc.Contexts["unreachable"] = &clientcmdapi.Context{Cluster: "unreachable", AuthInfo: "envtest"}
	kc.CurrentContext = "unreachable"
	if err := clientcmd.WriteToFile(*kc, path); err != nil {
		t.Fatal(err)
	}
	return path
}

// clusterctl runs clusterctl with args as the binary does, against the management cluster its
// --kubeconfig and --kubeconfig-context name.
func clusterctl(t *testing.T, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	deps := &clusterctlcli.Deps{
		LookupEnv: func(string) (string, bool) { return "", false },
		ManagementCluster: func(k cluster.Kubeconfig) clusterctlclient.ManagementCluster {
			return cluster.New(k)
		},
		Options: clusterctlcli.GlobalOptions{Verbosity: -1},
	}
	var out, errOut bytes.Buffer
	code = root.Main(context.Background(), args, iostreams.Streams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut}, deps)
	return out.String(), errOut.String(), code
}

func TestGetKubeconfig(t *testing.T) {
	ctx := context.Background()
	ns := env.NewNamespace(t)
	kubeconfig := kubeconfigFile(t, ns)
	for _, name := range []string{"demo", "pending", "broken"} {
		c := &clusterv1.Cluster{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
		if err := env.Client.Create(ctx, c); err != nil {
			t.Fatal(err)
		}
	}
	const workload = "apiVersion: v1\nkind: Config\ncurrent-context: demo\n"
	for _, s := range []*corev1.Secret{
		envtest.KubeconfigSecret(ns, "demo", []byte(workload)),
		envtest.KubeconfigSecret(ns, "no-newline", []byte("kind: Config")),
		{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "broken-kubeconfig"}, Data: map[string][]byte{"other": []byte("x")}},
	} {
		if err := env.Client.Create(ctx, s); err != nil {
			t.Fatal(err)
		}
	}

	tests := []struct {
		name    string
		args    []string
		wantOut string
		wantErr string
	}{
		{name: "the value of the kubeconfig Secret", args: []string{"demo", "-n", ns}, wantOut: workload},
		{name: "--namespace", args: []string{"demo", "--namespace", ns}, wantOut: workload},
		{name: "the namespace of the context", args: []string{"demo"}, wantOut: workload},
		{name: "a newline is added when missing", args: []string{"no-newline", "-n", ns}, wantOut: "kind: Config\n"},
		{name: "a Cluster without kubeconfig yet", args: []string{"pending", "-n", ns},
			wantErr: fmt.Sprintf("Error: no kubeconfig Secret pending-kubeconfig in namespace %s: the Cluster's control plane may not be initialized yet (see clusterctl describe cluster pending)\n", ns)},
		{name: "no such Cluster", args: []string{"nope", "-n", ns},
			wantErr: fmt.Sprintf("Error: no Cluster nope in namespace %s: check the name, or give the Cluster's namespace with --namespace\n", ns)},
		{name: "a Cluster in another namespace", args: []string{"demo", "-n", "default"},
			wantErr: "Error: no Cluster demo in namespace default: check the name, or give the Cluster's namespace with --namespace\n"},
		{name: "a Secret without value", args: []string{"broken", "-n", ns},
			wantErr: fmt.Sprintf("Error: the Secret broken-kubeconfig in namespace %s has no kubeconfig under its \"value\" key: it was not written by Cluster API\n", ns)},
		{name: "no name", args: []string{}, wantErr: "Error: please specify a workload cluster name: clusterctl get kubeconfig NAME\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			args := append([]string{"get", "kubeconfig"}, tt.args...)
			stdout, stderr, code := clusterctl(t, append(args, "--kubeconfig", kubeconfig, "--kubeconfig-context", "envtest")...)
			g.Expect(stdout).To(Equal(tt.wantOut))
			g.Expect(stderr).To(Equal(tt.wantErr))
			g.Expect(code).To(Equal(map[bool]int{true: 1, false: 0}[tt.wantErr != ""]))
		})
	}
}

func TestGetKubeconfigUnreachable(t *testing.T) {
	g := NewWithT(t)
	// The current context's server does not answer.
	_, stderr, code := clusterctl(t, "get", "kubeconfig", "demo", "--kubeconfig", kubeconfigFile(t, "default"))
	g.Expect(code).To(Equal(1))
	g.Expect(stderr).To(HavePrefix("Error: the management cluster ("))
	g.Expect(stderr).To(ContainSubstring("does not answer"))
}

func TestGetHelp(t *testing.T) {
	g := NewWithT(t)
	stdout, _, code := clusterctl(t, "get", "kubeconfig", "--help")
	g.Expect(code).To(Equal(0))
	for _, flag := range []string{"--kubeconfig string", "--kubeconfig-context string", "-n, --namespace string"} {
		g.Expect(stdout).To(ContainSubstring(flag))
	}
}
