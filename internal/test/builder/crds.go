package builder

import (
	"strings"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/capstan-dev/capstan/internal/contract"
)

// The test provider's API groups. Kinds of the v1beta1 contract are served at version v1beta1; the same
// kinds exist in the *V2Group groups at version v1beta2, following the v1beta2 contract.
const (
	InfrastructureGroup   = "infrastructure.cluster.x-k8s.io"
	BootstrapGroup        = "bootstrap.cluster.x-k8s.io"
	ControlPlaneGroup     = "controlplane.cluster.x-k8s.io"
	InfrastructureV2Group = "infrastructure.v2.test.capstan.dev"
	BootstrapV2Group      = "bootstrap.v2.test.capstan.dev"
	ControlPlaneV2Group   = "controlplane.v2.test.capstan.dev"
)

// The test provider's kinds.
const (
	InfraClusterKind         = "GenericInfrastructureCluster"
	InfraClusterTemplateKind = "GenericInfrastructureClusterTemplate"
	InfraMachineKind         = "GenericInfrastructureMachine"
	InfraMachineTemplateKind = "GenericInfrastructureMachineTemplate"
	InfraMachinePoolKind     = "GenericInfrastructureMachinePool"
	// InfraMachinePoolTemplateKind is the template of GenericInfrastructureMachinePools, for the
	// MachinePool classes of ClusterClasses.
	InfraMachinePoolTemplateKind = "GenericInfrastructureMachinePoolTemplate"
	BootstrapConfigKind          = "GenericBootstrapConfig"
	BootstrapTemplateKind        = "GenericBootstrapConfigTemplate"
	ControlPlaneKind             = "GenericControlPlane"
	ControlPlaneTemplateKind     = "GenericControlPlaneTemplate"
)

// Provider is one contract version of the test provider: its groups and version.
type Provider struct {
	Contract                                     contract.Version
	Version                                      string
	Infrastructure, Bootstrap, ControlPlaneGroup string
}

// V1Beta1 is the test provider following the v1beta1 contract.
var V1Beta1 = Provider{Contract: contract.V1Beta1, Version: "v1beta1",
	Infrastructure: InfrastructureGroup, Bootstrap: BootstrapGroup, ControlPlaneGroup: ControlPlaneGroup}

// V1Beta2 is the test provider following the v1beta2 contract.
var V1Beta2 = Provider{Contract: contract.V1Beta2, Version: "v1beta2",
	Infrastructure: InfrastructureV2Group, Bootstrap: BootstrapV2Group, ControlPlaneGroup: ControlPlaneV2Group}

// CRDs returns the CRDs of both contract versions of the test provider.
func CRDs() []*apiextensionsv1.CustomResourceDefinition {
	var out []*apiextensionsv1.CustomResourceDefinition
	for _, p := range []Provider{V1Beta1, V1Beta2} {
		for group, kinds := range map[string][]string{
			p.Infrastructure:    {InfraClusterKind, InfraClusterTemplateKind, InfraMachineKind, InfraMachineTemplateKind, InfraMachinePoolKind, InfraMachinePoolTemplateKind},
			p.Bootstrap:         {BootstrapConfigKind, BootstrapTemplateKind},
			p.ControlPlaneGroup: {ControlPlaneKind, ControlPlaneTemplateKind},
		} {
			for _, kind := range kinds {
				out = append(out, GenericCRD(group, p.Version, kind, p.Contract))
			}
		}
	}
	return out
}

// GenericCRD returns a namespaced CRD whose spec and status accept any field, labelled as following a
// contract.
func GenericCRD(group, version, kind string, c contract.Version) *apiextensionsv1.CustomResourceDefinition {
	name := contract.CalculateCRDName(group, kind)
	plural := name[:len(name)-len(group)-1]
	free := apiextensionsv1.JSONSchemaProps{Type: "object", XPreserveUnknownFields: ptr.To(true)}
	return &apiextensionsv1.CustomResourceDefinition{
		TypeMeta: metav1.TypeMeta{APIVersion: apiextensionsv1.SchemeGroupVersion.String(), Kind: "CustomResourceDefinition"},
		ObjectMeta: metav1.ObjectMeta{
			Name:   name,
			Labels: map[string]string{c.Label(): version},
		},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: group,
			Scope: apiextensionsv1.NamespaceScoped,
			Names: apiextensionsv1.CustomResourceDefinitionNames{
				Kind: kind, ListKind: kind + "List", Plural: plural, Singular: strings.ToLower(kind),
				Categories: []string{"cluster-api"},
			},
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{
				Name: version, Served: true, Storage: true,
				Subresources: &apiextensionsv1.CustomResourceSubresources{Status: &apiextensionsv1.CustomResourceSubresourceStatus{}},
				Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{
					Type: "object",
					Properties: map[string]apiextensionsv1.JSONSchemaProps{
						"apiVersion": {Type: "string"}, "kind": {Type: "string"}, "metadata": {Type: "object"},
						"spec": free, "status": free,
					},
				}},
			}},
		},
	}
}
