package conformance

import (
	"testing"

	. "github.com/onsi/gomega"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/capstan-dev/capstan/config/crd"
)

// TestInfraMachinePoolRules checks the pool rules against the local provider's LocalMachinePool CRDs, and
// against copies broken as a provider could break them.
func TestInfraMachinePoolRules(t *testing.T) {
	gv := schema.GroupVersion{Group: "infrastructure.cluster.x-k8s.io", Version: "v1alpha1"}
	pool := func(crds []*apiextensionsv1.CustomResourceDefinition) *apiextensionsv1.CustomResourceDefinition {
		for _, c := range crds {
			if c.Spec.Names.Kind == "LocalMachinePool" {
				return c
			}
		}
		t.Fatal("no LocalMachinePool CRD")
		return nil
	}
	tests := []struct {
		name    string
		change  func(p *Provider)
		rule    func(*input) verdict
		want    outcome
		message string
	}{
		{name: "definition", rule: checkInfraMachinePoolDefinition, want: met, message: "CRD localmachinepools.infrastructure.cluster.x-k8s.io defines LocalMachinePool"},
		{name: "fields", rule: checkInfraMachinePoolFields, want: met, message: "LocalMachinePool keeps .spec.providerIDList, .status.replicas and .status.ready"},
		{name: "template", rule: checkInfraMachinePoolTemplateDefinition, want: met},
		{name: "no pool kind", change: func(p *Provider) { p.InfraMachinePool = schema.GroupVersionKind{} },
			rule: checkInfraMachinePoolFields, want: unchecked, message: "MachinePools are optional"},
		{name: "providerIDList pruned", change: func(p *Provider) {
			delete(pool(p.CRDs).Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["spec"].Properties, "providerIDList")
		}, rule: checkInfraMachinePoolFields, want: broken,
			message: "the schema prunes .spec.providerIDList: the MachinePool cannot find the pool's Nodes"},
		{name: "replicas as a string", change: func(p *Provider) {
			pool(p.CRDs).Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["status"].Properties["replicas"] = apiextensionsv1.JSONSchemaProps{Type: "string"}
		}, rule: checkInfraMachinePoolFields, want: broken, message: ".status.replicas is declared as string, want integer"},
		{name: "no template", change: func(p *Provider) {
			var kept []*apiextensionsv1.CustomResourceDefinition
			for _, c := range p.CRDs {
				if c.Spec.Names.Kind != "LocalMachinePoolTemplate" {
					kept = append(kept, c)
				}
			}
			p.CRDs = kept
		}, rule: checkInfraMachinePoolTemplateDefinition, want: unmet, message: "ClusterClasses cannot give MachinePools of the provider"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			crds, err := crd.Local()
			g.Expect(err).NotTo(HaveOccurred())
			p := Provider{Name: "local", CRDs: crds, InfraCluster: gv.WithKind("LocalCluster"), InfraMachine: gv.WithKind("LocalMachine"),
				InfraMachinePool: gv.WithKind("LocalMachinePool")}
			if tt.change != nil {
				tt.change(&p)
			}
			in := newInput(p)
			in.runSkipped = "Not checked: no API server"
			v := tt.rule(in)
			g.Expect(v.outcome).To(Equal(tt.want), v.message)
			g.Expect(v.message).To(ContainSubstring(tt.message))
		})
	}
}
