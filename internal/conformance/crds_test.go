package conformance

import (
	"testing"

	. "github.com/onsi/gomega"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/utils/ptr"
)

func TestField(t *testing.T) {
	s := &apiextensionsv1.JSONSchemaProps{Type: "object", Properties: map[string]apiextensionsv1.JSONSchemaProps{
		"spec": {Type: "object", XPreserveUnknownFields: ptr.To(true)},
		"status": {Type: "object", Properties: map[string]apiextensionsv1.JSONSchemaProps{
			"ready": {Type: "string"},
			"failureDomains": {Type: "object", AdditionalProperties: &apiextensionsv1.JSONSchemaPropsOrBool{
				Schema: &apiextensionsv1.JSONSchemaProps{Type: "object", Properties: map[string]apiextensionsv1.JSONSchemaProps{"controlPlane": {Type: "boolean"}}},
			}},
		}},
	}}
	tests := []struct {
		path     []string
		kept     bool
		declared string // the declared type, "" when not declared
		problem  string // fieldProblem for a boolean
	}{
		{path: []string{"spec", "anything", "deep"}, kept: true},
		{path: []string{"status", "ready"}, kept: true, declared: "string", problem: ".status.ready is declared as string, want boolean"},
		{path: []string{"status", "initialization", "provisioned"}, problem: "the schema prunes .status.initialization.provisioned"},
		{path: []string{"status", "failureDomains", "a", "controlPlane"}, kept: true, declared: "boolean"},
	}
	for _, tt := range tests {
		g := NewWithT(t)
		kept, declared := field(s, tt.path...)
		g.Expect(kept).To(Equal(tt.kept), "%v", tt.path)
		if tt.declared == "" {
			g.Expect(declared).To(BeNil(), "%v", tt.path)
		} else {
			g.Expect(declared.Type).To(Equal(tt.declared), "%v", tt.path)
		}
		g.Expect(fieldProblem(s, "boolean", tt.path...)).To(Equal(tt.problem), "%v", tt.path)
	}
}

func TestCRDRules(t *testing.T) {
	tests := []struct {
		name    string
		change  func(in *input)
		rule    func(*input) verdict
		want    outcome
		message string
	}{
		{
			name:   "no kind metadata in the schema",
			change: func(in *input) { delete(in.p.CRDs[0].Spec.Versions[0].Schema.OpenAPIV3Schema.Properties, "kind") },
			rule:   checkTypeMeta, want: broken,
			message: "fixtureclusters.infrastructure.cluster.x-k8s.io v1beta1 has no kind field of type string",
		},
		{
			name: "status.ready pruned",
			change: func(in *input) {
				delete(in.p.CRDs[0].Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["status"].Properties, "ready")
			},
			rule: checkInfraClusterInitialization, want: broken,
			message: "the schema prunes .status.ready: the provider cannot report that the InfraCluster is provisioned",
		},
		{
			name: "endpoint port declared as a string",
			change: func(in *input) {
				spec := in.p.CRDs[0].Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["spec"]
				ep := spec.Properties["controlPlaneEndpoint"]
				ep.Properties["port"] = apiextensionsv1.JSONSchemaProps{Type: "string"}
			},
			rule: checkControlPlaneEndpoint, want: broken, message: ".spec.controlPlaneEndpoint.port is declared as string, want integer",
		},
		{
			name: "template without spec.template.spec",
			change: func(in *input) {
				props := in.p.CRDs[1].Spec.Versions[0].Schema.OpenAPIV3Schema.Properties
				props["spec"] = apiextensionsv1.JSONSchemaProps{Type: "object"}
			},
			rule: checkInfraClusterTemplateDefinition, want: broken,
			message: "version v1beta1 of fixtureclustertemplates.infrastructure.cluster.x-k8s.io has no spec.template.spec",
		},
		{
			name:   "template list kind",
			change: func(in *input) { in.p.CRDs[3].Spec.Names.ListKind = "FixtureMachineTemplates" },
			rule:   checkInfraMachineTemplateDefinition, want: broken,
			message: `the list kind of FixtureMachineTemplate is "FixtureMachineTemplates", want FixtureMachineTemplateList`,
		},
		{
			name:   "no InfraMachine template",
			change: func(in *input) { in.p.CRDs = in.p.CRDs[:3] },
			rule:   checkInfraMachineTemplateDefinition, want: unmet,
			message: "MachineDeployments and MachineSets cannot create Machines of the provider",
		},
		{
			name:   "version the kit uses not served",
			change: func(in *input) { in.p.InfraCluster.Version = "v1alpha1" },
			rule:   checkInfraClusterDefinition, want: broken, message: "does not serve version v1alpha1",
		},
		{
			name: "failure domains declared as a list under the v1beta1 contract",
			change: func(in *input) {
				in.p.CRDs[0].Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["status"].Properties["failureDomains"] = apiextensionsv1.JSONSchemaProps{Type: "array"}
			},
			rule: checkFailureDomains, want: broken, message: ".status.failureDomains is declared as array, want object (contract v1beta1)",
		},
		{
			name: "terminal failures not declared",
			change: func(in *input) {
				delete(in.p.CRDs[0].Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["status"].Properties, "failureReason")
			},
			rule: checkInfraClusterTerminalFailures, want: unmet, message: "does not declare status.failureReason",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			p, err := fixtureProvider(fixtureBehaviour{})
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(p.CRDs[1].Spec.Names.Kind).To(Equal("FixtureClusterTemplate"))
			in := newInput(p)
			tt.change(in)
			in = newInput(in.p)
			in.runSkipped = "Not checked: no API server"
			v := tt.rule(in)
			g.Expect(v.outcome).To(Equal(tt.want), v.message)
			g.Expect(v.message).To(ContainSubstring(tt.message))
		})
	}
}
