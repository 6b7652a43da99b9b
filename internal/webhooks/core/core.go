package core

import (
	"context"
	"fmt"
	"slices"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
	"github.com/capstan-dev/capstan/internal/clustersecret"
	"github.com/capstan-dev/capstan/internal/conversion"
	"github.com/capstan-dev/capstan/internal/feature"
	"github.com/capstan-dev/capstan/internal/webhooks"
)

// Options are what the core's webhooks need besides a client.
type Options struct {
	// FeatureGates are the manager's --feature-gates; the defaults when nil.
	FeatureGates *feature.Gates
	// Workload reads a workload cluster, for the Nodes of a Cluster's MachinePools when its version
	// changes (see KubeconfigWorkload); nil judges MachinePools by their version alone.
	Workload func(ctx context.Context, cluster client.ObjectKey) (client.Reader, error)
}

// Webhooks returns the core manager's webhooks; c reads the ClusterClasses, Clusters and the objects of
// their topologies that the topology checks look at (nil for rendering manifests). Their manifests are
// config/core/webhooks.yaml, written by `make generate`.
func Webhooks(c client.Reader, opts ...Options) webhooks.Set {
	var o Options
	if len(opts) > 0 {
		o = opts[0]
	}
	cluster := Cluster{Client: c, FeatureGates: o.FeatureGates, Workload: o.Workload}
	return webhooks.Set{
		Prefix:   "capi",
		Selector: map[string]string{"control-plane": "controller-manager"},
		Hooks: []webhooks.Hook{
			webhooks.Validating(&clusterv1.MachineDeployment{}, fieldValidator[*clusterv1.MachineDeployment]{"MachineDeployment", validateMachineDeployment}),
			webhooks.Validating(&clusterv1.MachineSet{}, fieldValidator[*clusterv1.MachineSet]{"MachineSet", validateMachineSet}),
			webhooks.Validating(&clusterv1.MachineHealthCheck{}, fieldValidator[*clusterv1.MachineHealthCheck]{"MachineHealthCheck", validateMachineHealthCheck}),
			webhooks.Mutating(&clusterv1.Cluster{}, cluster),
			webhooks.Validating(&clusterv1.Cluster{}, cluster),
			webhooks.Validating(&clusterv1.ClusterClass{}, ClusterClass{Client: c, FeatureGates: o.FeatureGates}).
				On(admissionregistrationv1.Create, admissionregistrationv1.Update, admissionregistrationv1.Delete),
		},
		Conversions: slices.Concat(conversion.Core(conversion.ContractAPIVersions(c)), conversion.Addons(), conversion.IPAMV1beta2(), conversion.Runtime()),
	}
}

// KubeconfigWorkload returns a Workload that reads a workload cluster with the kubeconfig of its
// <cluster>-kubeconfig Secret (read with r), without a cache: admission reads it only when the version
// of a Cluster with MachinePools changes.
func KubeconfigWorkload(r client.Reader) func(ctx context.Context, cluster client.ObjectKey) (client.Reader, error) {
	return func(ctx context.Context, cluster client.ObjectKey) (client.Reader, error) {
		secret := &corev1.Secret{}
		if err := r.Get(ctx, client.ObjectKey{Namespace: cluster.Namespace, Name: clustersecret.Name(cluster.Name, clustersecret.Kubeconfig)}, secret); err != nil {
			return nil, fmt.Errorf("reading the kubeconfig of Cluster %s: %w", cluster.Name, err)
		}
		cfg, err := clientcmd.RESTConfigFromKubeConfig(secret.Data["value"])
		if err != nil {
			return nil, fmt.Errorf("reading the kubeconfig of Cluster %s: %w", cluster.Name, err)
		}
		return client.New(cfg, client.Options{})
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
