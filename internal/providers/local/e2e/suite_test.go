package e2e

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/drone/envsubst"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "github.com/capstan-dev/capstan/api/infrastructure/local/v1alpha1"
	configlocal "github.com/capstan-dev/capstan/config/local"
	"github.com/capstan-dev/capstan/internal/kubeconfig"
	"github.com/capstan-dev/capstan/internal/test/envtest"
)

var env *envtest.Environment

func TestMain(m *testing.M) {
	os.Exit(envtest.Run(m, envtest.Options{SchemeBuilders: []func(*runtime.Scheme) error{infrav1.AddToScheme}}, func(e *envtest.Environment) { env = e }))
}

// renderTemplate renders a cluster template of the provider by substituting the variables, as
// `clusterctl generate cluster` does, and decodes its objects.
func renderTemplate(t *testing.T, name string, vars map[string]string) []*unstructured.Unstructured {
	t.Helper()
	data, err := configlocal.Files.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	var missing []string
	text, err := envsubst.Eval(string(data), func(v string) string {
		value, ok := vars[v]
		if !ok {
			missing = append(missing, v)
		}
		return value
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range missing {
		// Variables with defaults (${VAR:=default}) are asked for too; only those without one must be set.
		if !strings.Contains(string(data), "${"+v+":=") {
			t.Fatalf("template %s needs variable %s", name, v)
		}
	}
	var objs []*unstructured.Unstructured
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader([]byte(text)), 4096)
	for {
		u := &unstructured.Unstructured{}
		if err := dec.Decode(&u.Object); err != nil {
			if errors.Is(err, io.EOF) {
				return objs
			}
			t.Fatal(err)
		}
		if len(u.Object) > 0 {
			objs = append(objs, u)
		}
	}
}

// workloadClient returns a client of a workload cluster from its `<cluster>-kubeconfig` Secret (written by
// the core), or, when kubeconfigSecret is false, built from its `<cluster>-ca` Secret the same way.
func workloadClient(g Gomega, ns, clusterName string, kubeconfigSecret bool, endpoint string) kubernetes.Interface {
	secret := &corev1.Secret{}
	var data []byte
	if kubeconfigSecret {
		g.Expect(env.Client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: kubeconfig.SecretName(clusterName)}, secret)).To(Succeed())
		data = secret.Data[kubeconfig.ValueKey]
	} else {
		g.Expect(env.Client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: kubeconfig.CASecretName(clusterName)}, secret)).To(Succeed())
		ca, err := kubeconfig.CAFromSecret(secret)
		g.Expect(err).NotTo(HaveOccurred())
		data, err = kubeconfig.Generate(clusterName, "https://"+endpoint, ca, time.Now())
		g.Expect(err).NotTo(HaveOccurred())
	}
	cfg, err := clientcmd.RESTConfigFromKubeConfig(data)
	g.Expect(err).NotTo(HaveOccurred())
	cfg.Timeout = 5 * time.Second
	return kubernetes.NewForConfigOrDie(cfg)
}

func endpointOf(lc *infrav1.LocalCluster) string {
	return fmt.Sprintf("%s:%d", lc.Spec.ControlPlaneEndpoint.Host, lc.Spec.ControlPlaneEndpoint.Port)
}
