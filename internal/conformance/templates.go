package conformance

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
)

// The template metadata rule: a template's spec.template.metadata reaches the objects Cluster API's core
// creates from it (MachineSets clone InfraMachineTemplates, the topology controller clones every template).

// The label and annotation the kit puts in the spec.template.metadata of the InfraMachineTemplate it
// creates the scenario's InfraMachine from.
const (
	templateLabel      = "conformance.cluster.x-k8s.io/template-label"
	templateAnnotation = "conformance.cluster.x-k8s.io/template-annotation"
	templateValue      = "from-template"
)

// templateFacts is what the kit saw of the InfraMachineTemplate it created the InfraMachine from.
type templateFacts struct {
	// notCreated says why the kit did not create the template (no template CRD, creation refused).
	notCreated string
	// readBack is the template as the API server returned it.
	readBack *unstructured.Unstructured
}

// templateMetadataPaths are the fields of spec.template.metadata Cluster API copies.
var templateMetadataPaths = [][]string{
	{"spec", "template", "metadata", "labels"},
	{"spec", "template", "metadata", "annotations"},
}

func checkTemplateMetadata(in *input) verdict {
	var static, checked []string
	for _, gvk := range []schema.GroupVersionKind{in.p.InfraCluster, in.p.InfraMachine, in.p.InfraMachinePool} {
		if gvk.Kind == "" {
			continue
		}
		crd, ok := in.crds[schema.GroupKind{Group: gvk.Group, Kind: gvk.Kind + clusterv1.TemplateSuffix}]
		if !ok {
			continue // the template definition rules report it
		}
		checked = append(checked, crd.Spec.Names.Kind)
		for _, v := range crd.Spec.Versions {
			if !v.Served || v.Schema == nil {
				continue
			}
			for _, p := range templateMetadataPaths {
				if problem := fieldProblem(v.Schema.OpenAPIV3Schema, "object", p...); problem != "" {
					static = append(static, fmt.Sprintf("%s %s: %s", crd.Spec.Names.Kind, v.Name, problem))
				}
			}
		}
	}
	if len(checked) == 0 {
		return skip("Not checked: the provider defines no template of its kinds")
	}
	return withStatic(static, func() verdict {
		if v, ok := in.noMachine(); ok {
			return v
		}
		if in.run == nil || in.run.template == nil {
			return in.notReached("creating the InfraMachine from an InfraMachineTemplate")
		}
		t := in.run.template
		if t.notCreated != "" {
			return skip("The schemas of %s keep spec.template.metadata; not checked on the API server: %s", strings.Join(checked, ", "), t.notCreated)
		}
		if lost := missingMetadata(t.readBack, []string{"spec", "template", "metadata"}); len(lost) > 0 {
			return fail("The API server dropped the spec.template.metadata of the InfraMachineTemplate: %s", strings.Join(lost, ", "))
		}
		obj, v, ok := in.provisionedMachine()
		if !ok {
			return v
		}
		if lost := missingMetadata(obj, []string{"metadata"}); len(lost) > 0 {
			return fail("The InfraMachine created from an InfraMachineTemplate lost the template's metadata once the provider provisioned it: %s", strings.Join(lost, ", "))
		}
		return pass("The schemas of %s keep spec.template.metadata, and the InfraMachine created from a template kept its labels and annotations once provisioned",
			strings.Join(checked, ", "))
	})
}

// missingMetadata returns the kit's template label and annotation that the metadata at path lacks.
func missingMetadata(obj *unstructured.Unstructured, path []string) []string {
	if obj == nil {
		return []string{"the object is gone"}
	}
	var out []string
	for _, kv := range [][2]string{{"labels", templateLabel}, {"annotations", templateAnnotation}} {
		values, _, _ := unstructured.NestedStringMap(obj.Object, append(append([]string{}, path...), kv[0])...)
		if values[kv[1]] != templateValue {
			out = append(out, fmt.Sprintf("%s %s=%s", strings.TrimSuffix(kv[0], "s"), kv[1], templateValue))
		}
	}
	return out
}
