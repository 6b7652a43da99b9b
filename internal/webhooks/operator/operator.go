// Package operator holds the admission webhooks of the provider operator (`capstan operator`): a
// validating webhook of each provider kind (CoreProvider, InfrastructureProvider, ...) that refuses specs
// breaking the rules of package internal/operator/validation on CREATE and UPDATE, and on DELETE refuses
// to delete a provider still in use, with the checks the operator's controller also makes (packages
// internal/operator/validation and internal/operator/deletion). Its manifests are config/operator/webhooks.yaml and the Helm
// chart's templates/webhooks.yaml, written by `make generate`.
package operator

import (
	"bytes"
	"strings"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	managementv1 "github.com/capstan-dev/capstan/api/management/v1alpha1"
	operatorv1 "github.com/capstan-dev/capstan/api/operator/v1alpha2"
	"github.com/capstan-dev/capstan/internal/operator/validation"
	"github.com/capstan-dev/capstan/internal/webhooks"
)

// Selector selects the operator's Pods (the labels of its Deployment's Pod template).
var Selector = map[string]string{"control-plane": "capi-operator-controller-manager"}

// Webhooks returns the operator's webhooks; c reads what tells whether a provider is in use (Clusters,
// CRDs, providers, the providers' kinds); it should be uncached (mgr.GetAPIReader()), and is nil for
// rendering manifests. o are the operator's settings the spec rules depend on.
func Webhooks(c client.Reader, o validation.Options) webhooks.Set {
	del := admissionregistrationv1.Delete
	hooks := []webhooks.Hook{
		webhooks.Validating(&operatorv1.CoreProvider{}, Provider[*operatorv1.CoreProvider]{Client: c, Options: o}).On(del),
		webhooks.Validating(&operatorv1.BootstrapProvider{}, Provider[*operatorv1.BootstrapProvider]{Client: c, Options: o}).On(del),
		webhooks.Validating(&operatorv1.ControlPlaneProvider{}, Provider[*operatorv1.ControlPlaneProvider]{Client: c, Options: o}).On(del),
		webhooks.Validating(&operatorv1.InfrastructureProvider{}, Provider[*operatorv1.InfrastructureProvider]{Client: c, Options: o}).On(del),
		webhooks.Validating(&operatorv1.AddonProvider{}, Provider[*operatorv1.AddonProvider]{Client: c, Options: o}).On(del),
		webhooks.Validating(&operatorv1.IPAMProvider{}, Provider[*operatorv1.IPAMProvider]{Client: c, Options: o}).On(del),
		webhooks.Validating(&operatorv1.RuntimeExtensionProvider{}, Provider[*operatorv1.RuntimeExtensionProvider]{Client: c, Options: o}).On(del),
		webhooks.Validating(&managementv1.CoreProvider{}, ProposalProvider[*managementv1.CoreProvider]{Client: c, Options: o}).On(del),
		webhooks.Validating(&managementv1.BootstrapProvider{}, ProposalProvider[*managementv1.BootstrapProvider]{Client: c, Options: o}).On(del),
		webhooks.Validating(&managementv1.ControlPlaneProvider{}, ProposalProvider[*managementv1.ControlPlaneProvider]{Client: c, Options: o}).On(del),
		webhooks.Validating(&managementv1.InfrastructureProvider{}, ProposalProvider[*managementv1.InfrastructureProvider]{Client: c, Options: o}).On(del),
	}
	// Specs are checked again by the controller: while the operator is not there to answer (its first
	// start, next to providers created with it), creations and updates are admitted.
	for _, h := range hooks[:len(hooks):len(hooks)] {
		hooks = append(hooks, h.On(admissionregistrationv1.Create, admissionregistrationv1.Update).FailOpen("validation-spec."))
	}
	return webhooks.Set{
		Prefix:   "capi-operator", // capi-operator-webhook-service, as upstream's operator names it
		Selector: Selector,
		Hooks:    hooks,
	}
}

// Namespace is the namespace of the operator's manifests.
const Namespace = "capi-operator-system"

// ManifestsFile is where Manifests are kept, from the repository root; they join operator-components.yaml.
const ManifestsFile = "config/operator/webhooks.yaml"

// ChartFile is where ChartManifests are kept, from the repository root.
const ChartFile = "charts/capstan-operator/templates/webhooks.yaml"

func scheme() (*runtime.Scheme, error) {
	s := runtime.NewScheme()
	if err := managementv1.AddToScheme(s); err != nil {
		return nil, err
	}
	return s, operatorv1.AddToScheme(s)
}

// Manifests renders the webhook Service and ValidatingWebhookConfiguration of the operator (ManifestsFile).
func Manifests() ([]byte, error) {
	s, err := scheme()
	if err != nil {
		return nil, err
	}
	return Webhooks(nil, validation.Options{}).ManifestsYAML(s, Namespace)
}

// chartNamespace stands for the release's namespace while rendering the chart's template.
const chartNamespace = "chart-release-namespace"

// ChartManifests renders the same objects as a template of the Helm chart (ChartFile): in the release's
// namespace, and only when the value webhooks.enabled is true.
func ChartManifests() ([]byte, error) {
	s, err := scheme()
	if err != nil {
		return nil, err
	}
	data, err := Webhooks(nil, validation.Options{}).ManifestsYAML(s, chartNamespace)
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	buf.WriteString("{{- if .Values.webhooks.enabled }}\n")
	buf.WriteString(strings.ReplaceAll(string(data), chartNamespace, "{{ .Release.Namespace }}"))
	buf.WriteString("{{- end }}\n")
	return buf.Bytes(), nil
}
