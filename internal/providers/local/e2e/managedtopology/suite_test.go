package managedtopology

import (
	"os"
	"testing"

	"k8s.io/apimachinery/pkg/runtime"

	infrav1 "github.com/capstan-dev/capstan/api/infrastructure/local/v1alpha1"
	"github.com/capstan-dev/capstan/internal/test/envtest"
)

var env *envtest.Environment

func TestMain(m *testing.M) {
	envtest.SetupLogging()
	// The API server calls the core's webhooks through the EndpointSlices of their Service, as the
	// embedded management cluster's does.
	os.Exit(envtest.Run(m, envtest.Options{PodNetwork: true, SchemeBuilders: []func(*runtime.Scheme) error{infrav1.AddToScheme}},
		func(e *envtest.Environment) { env = e }))
}
