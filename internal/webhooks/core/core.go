package core

import (
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
	"github.com/capstan-dev/capstan/internal/webhooks"
)

// Webhooks returns the core manager's webhooks; c reads the ClusterClasses and Clusters that the topology
// checks look at (nil for rendering manifests). Their manifests are config/core/webhooks.yaml, written by
// `make generate`.
func Webhooks(c client.Reader) webhooks.Set {
	return webhooks.Set{
		Prefix:   "capi",
		Selector: map[string]string{"control-plane": "controller-manager"},
		Hooks: []webhooks.Hook{
			webhooks.Validating(&clusterv1.MachineDeployment{}, MachineDeployment{}),
			webhooks.Validating(&clusterv1.MachineSet{}, MachineSet{}),
			webhooks.Validating(&clusterv1.MachineHealthCheck{}, MachineHealthCheck{}),
			webhooks.Validating(&clusterv1.Cluster{}, Cluster{Client: c}),
			webhooks.Validating(&clusterv1.ClusterClass{}, ClusterClass{Client: c}).
				On(admissionregistrationv1.Create, admissionregistrationv1.Update, admissionregistrationv1.Delete),
		},
	}
}

// Namespace is the namespace of the core provider's manifests (clusterctl moves them to --target-namespace).
const Namespace = "capi-system"

// ManifestsFile is where Manifests are kept, from the repository root.
const ManifestsFile = "config/core/webhooks.yaml"

// Manifests renders the webhook Service and configurations of the core manager (ManifestsFile).
func Manifests() ([]byte, error) {
	scheme := runtime.NewScheme()
	if err := clusterv1.AddToScheme(scheme); err != nil {
		return nil, err
	}
	return Webhooks(nil).ManifestsYAML(scheme, Namespace)
}
