package release

import (
	clusterctlv1 "github.com/capstan-dev/capstan/api/clusterctl/v1alpha3"
	"github.com/capstan-dev/capstan/config/core"
	"github.com/capstan-dev/capstan/config/crd"
	kubeadmbootstrap "github.com/capstan-dev/capstan/config/kubeadm-bootstrap"
	kubeadmcontrolplane "github.com/capstan-dev/capstan/config/kubeadm-control-plane"
	"github.com/capstan-dev/capstan/config/local"
	"github.com/capstan-dev/capstan/config/operator"
	"github.com/capstan-dev/capstan/internal/version"
	kubeadmwebhooks "github.com/capstan-dev/capstan/internal/webhooks/kubeadm"
)

// DefaultVersion is the release version of development builds, whose own version is not a release.
const DefaultVersion = "v0.1.0"

// Version returns the release version of this build's providers: the build's version when it is a
// release (set with -ldflags), DefaultVersion otherwise.
func Version() string {
	v := version.Get().GitVersion
	if len(v) > 1 && v[0] == 'v' && v[1] >= '0' && v[1] <= '9' {
		return v
	}
	return DefaultVersion
}

// The namespace of the core provider's manifests and its webhook Service (internal/webhooks/core.Namespace
// and the Service of core.Webhooks, which a test of that package checks).
const (
	coreNamespace      = "capi-system"
	coreWebhookService = "capi-webhook-service"
)

// Core returns capstan's core provider, "cluster-api".
func Core() (Provider, error) {
	crds, err := crd.Core()
	if err != nil {
		return Provider{}, err
	}
	runtimeCRDs, err := crd.Runtime()
	if err != nil {
		return Provider{}, err
	}
	crds = append(crds, runtimeCRDs...)
	// The core manager converts the kinds served in several versions (v1beta1 and v1beta2; IPAM's
	// v1alpha1, runtime's v1alpha1): its webhook Service (internal/webhooks/core), in the namespace of its
	// manifests.
	crd.WithConversionWebhook(crds, coreNamespace, coreWebhookService)
	return Provider{Name: "cluster-api", Type: clusterctlv1.CoreProviderType, CRDs: crds, Manifests: core.Files}, nil
}

// Local returns capstan's local infrastructure provider, "local" (label infrastructure-local).
func Local() (Provider, error) {
	crds, err := crd.Local()
	if err != nil {
		return Provider{}, err
	}
	return Provider{Name: "local", Type: clusterctlv1.InfrastructureProviderType, CRDs: crds, Manifests: local.Files}, nil
}

// KubeadmBootstrap returns capstan's kubeadm bootstrap provider, "kubeadm" (label bootstrap-kubeadm).
func KubeadmBootstrap() (Provider, error) {
	crds, err := crd.Bootstrap()
	if err != nil {
		return Provider{}, err
	}
	// The bootstrap manager converts its kinds (v1beta1 and v1beta2): its webhook Service
	// (internal/webhooks/kubeadm), in the namespace of its manifests.
	crd.WithConversionWebhook(crds, kubeadmwebhooks.BootstrapNamespace, kubeadmwebhooks.Bootstrap().ServiceName())
	return Provider{Name: "kubeadm", Type: clusterctlv1.BootstrapProviderType, CRDs: crds, Manifests: kubeadmbootstrap.Files}, nil
}

// KubeadmControlPlane returns capstan's kubeadm control plane provider, "kubeadm" (label
// control-plane-kubeadm).
func KubeadmControlPlane() (Provider, error) {
	crds, err := crd.ControlPlane()
	if err != nil {
		return Provider{}, err
	}
	// The control plane manager converts its kinds, as the bootstrap manager does.
	crd.WithConversionWebhook(crds, kubeadmwebhooks.ControlPlaneNamespace, kubeadmwebhooks.ControlPlane(nil).ServiceName())
	return Provider{Name: "kubeadm", Type: clusterctlv1.ControlPlaneProviderType, CRDs: crds, Manifests: kubeadmcontrolplane.Files}, nil
}

// all lists capstan's providers, the core first. Adding a provider to every release — the GitHub
// release directory of `make release`, the local repository of `capstan up`, the tests' repositories —
// is one entry here (a function like Core that returns its Provider).
var all = []func() (Provider, error){
	Core,
	KubeadmBootstrap,
	KubeadmControlPlane,
	Local,
}

// Providers returns every provider of capstan.
func Providers() ([]Provider, error) {
	out := make([]Provider, 0, len(all))
	for _, get := range all {
		p, err := get()
		if err != nil {
			return nil, err
		}
		out = append(out, p)
	}
	return out, nil
}

// OperatorComponentsFile is the release file holding the provider operator's manifests.
const OperatorComponentsFile = "operator-components.yaml"

// OperatorComponents renders the provider operator's manifests for `kubectl apply`: its CRDs (the
// operator.cluster.x-k8s.io kinds), Namespace, RBAC and Deployment, image tag set to version. It is not a
// clusterctl provider: its objects are labelled cluster.x-k8s.io/provider=capi-operator only to tell them
// apart.
func OperatorComponents(version string) ([]byte, error) {
	return operatorComponents(Options{Version: version})
}

// operatorComponents renders OperatorComponentsFile with the image of o.
func operatorComponents(o Options) ([]byte, error) {
	crds, err := crd.Operator()
	if err != nil {
		return nil, err
	}
	p := Provider{Name: "capi-operator", Type: clusterctlv1.CoreProviderType, CRDs: crds, Manifests: operator.Files}
	return p.render(o)
}
