package conformance

import (
	"fmt"
	"strings"
)

// The rules of the InfraMachinePool contract: optional, since a provider need not support MachinePools,
// and checked only when Provider.InfraMachinePool names the provider's kind.
const (
	RuleInfraMachinePoolDefinition         = "InfraMachinePool, InfraMachinePoolList resource definition"
	RuleInfraMachinePoolFields             = "InfraMachinePool: provider ID list, replicas and initialization"
	RuleInfraMachinePoolTemplateDefinition = "InfraMachinePoolTemplate, InfraMachinePoolTemplateList resource definition"

	// sourceInfraMachinePool is where the rules come from: the fields Cluster API's MachinePool controller
	// reads.
	sourceInfraMachinePool = "InfraMachinePool contract (Cluster API book)"
)

// poolRules are the InfraMachinePool rules of the catalog.
var poolRules = []Rule{
	{Name: RuleInfraMachinePoolDefinition, Source: sourceInfraMachinePool, check: checkInfraMachinePoolDefinition,
		Checks: "When the provider has an InfraMachinePool kind (Provider.InfraMachinePool): its CRD exists, is named CalculateCRDName, its list kind is <Kind>List and it serves the version the kit uses"},
	{Name: RuleInfraMachinePoolFields, Source: sourceInfraMachinePool, check: checkInfraMachinePoolFields,
		Checks: "The InfraMachinePool's schema keeps spec.providerIDList (a list of strings, which the MachinePool copies and matches to Nodes), status.replicas (an integer) and status.ready (v1beta2: status.initialization.provisioned)"},
	{Name: RuleInfraMachinePoolTemplateDefinition, Source: sourceInfraMachinePool, check: checkInfraMachinePoolTemplateDefinition,
		Checks: "The <Kind>Template CRD of the InfraMachinePool exists (ClusterClasses' machinePools clone it), is named CalculateCRDName, its list kind is <Kind>TemplateList and its schema has spec.template.spec"},
}

func noPool(in *input) (verdict, bool) {
	if in.p.InfraMachinePool.Kind == "" {
		return skip("Not checked: the provider has no InfraMachinePool kind (Provider.InfraMachinePool); MachinePools are optional"), true
	}
	return verdict{}, false
}

func checkInfraMachinePoolDefinition(in *input) verdict {
	if v, none := noPool(in); none {
		return v
	}
	return checkDefinition(in, in.p.InfraMachinePool, "InfraMachinePool")
}

func checkInfraMachinePoolFields(in *input) verdict {
	if v, none := noPool(in); none {
		return v
	}
	gk := in.p.InfraMachinePool.GroupKind()
	c, s := in.contractOf(gk)
	if s == nil {
		return missing("None of the provider's CRDs defines %s", gk)
	}
	var problems []string
	if p := fieldProblem(s, "array", "spec", "providerIDList"); p != "" {
		problems = append(problems, p+": the MachinePool cannot find the pool's Nodes")
	} else if _, list := field(s, "spec", "providerIDList"); list != nil && list.Items != nil && list.Items.Schema != nil &&
		list.Items.Schema.Type != "" && list.Items.Schema.Type != "string" {
		problems = append(problems, fmt.Sprintf(".spec.providerIDList holds %ss, want strings", list.Items.Schema.Type))
	}
	if p := fieldProblem(s, "integer", "status", "replicas"); p != "" {
		problems = append(problems, p+": the MachinePool cannot report how many instances run")
	}
	if p := fieldProblem(s, "boolean", readyPath(c)...); p != "" {
		problems = append(problems, p+": the provider cannot report that the pool is provisioned")
	}
	if len(problems) > 0 {
		return fail("%s", strings.Join(problems, "; "))
	}
	return pass("%s keeps .spec.providerIDList, .status.replicas and .%s", gk.Kind, strings.Join(readyPath(c), "."))
}

func checkInfraMachinePoolTemplateDefinition(in *input) verdict {
	if v, none := noPool(in); none {
		return v
	}
	return checkTemplateDefinition(in, in.p.InfraMachinePool.GroupKind(), "ClusterClasses cannot give MachinePools of the provider")
}
