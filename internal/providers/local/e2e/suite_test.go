package e2e

import (
	"context"
	"os"
	"testing"

	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
	infrav1 "github.com/capstan-dev/capstan/api/infrastructure/local/v1alpha1"
	"github.com/capstan-dev/capstan/internal/test/envtest"
	"github.com/capstan-dev/capstan/internal/test/workload"
)

var env *envtest.Environment

func TestMain(m *testing.M) {
	os.Exit(envtest.Run(m, envtest.Options{SchemeBuilders: []func(*runtime.Scheme) error{infrav1.AddToScheme}}, func(e *envtest.Environment) { env = e }))
}

// workloadClient returns a client of a workload cluster from its `<cluster>-kubeconfig` Secret (written by
// the core), or, when kubeconfigSecret is false, built from its `<cluster>-ca` Secret the same way.
func workloadClient(g Gomega, ns, clusterName string, kubeconfigSecret bool, endpoint clusterv1.APIEndpoint) kubernetes.Interface {
	var cfg *rest.Config
	var err error
	if kubeconfigSecret {
		cfg, err = workload.FromKubeconfigSecret(context.Background(), env.Client, ns, clusterName)
	} else {
		cfg, err = workload.FromCA(context.Background(), env.Client, ns, clusterName, endpoint)
	}
	g.Expect(err).NotTo(HaveOccurred())
	return kubernetes.NewForConfigOrDie(cfg)
}
