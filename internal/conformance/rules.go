package conformance

import (
	"fmt"
	"slices"
)

// The names of the rules the kit checks, as in the rule tables and headings of the specification.
const (
	RuleScope                          = "All resources: scope"
	RuleTypeMeta                       = "All resources: TypeMeta and ObjectMeta field"
	RuleAPIGroup                       = "All resources: API group"
	RuleVersion                        = "All resources: version"
	RuleInfraClusterDefinition         = "InfraCluster, InfraClusterList resource definition"
	RuleControlPlaneEndpoint           = "InfraCluster: control plane endpoint"
	RuleFailureDomains                 = "InfraCluster: failure domains"
	RuleInfraClusterInitialization     = "InfraCluster: initialization completed"
	RuleInfraClusterConditions         = "InfraCluster: conditions"
	RuleInfraClusterTerminalFailures   = "InfraCluster: terminal failures"
	RuleInfraClusterTemplateDefinition = "InfraClusterTemplate, InfraClusterTemplateList resource definition"
	RuleExternallyManaged              = "Externally managed infrastructure"
	RuleMultiTenancy                   = "Multi tenancy"
	RuleInfraClusterPausing            = "InfraCluster: pausing"
	RuleInfraClusterOwner              = "InfraCluster reconciliation: Cluster owner"
	RuleInfraClusterFinalizer          = "InfraCluster reconciliation: finalizer"
	RuleInfraClusterDeletion           = "InfraCluster reconciliation: deletion"
	RuleRBAC                           = "RBAC: provider controller"
	RuleInfraMachineDefinition         = "InfraMachine, InfraMachineList resource definition"
	RuleProviderID                     = "InfraMachine: provider ID"
	RuleInfraMachineInitialization     = "InfraMachine: initialization completed"
	RuleAddresses                      = "InfraMachine: addresses"
	RuleMachineFailureDomain           = "InfraMachine: failure domain"
	RuleInfraMachineConditions         = "InfraMachine: conditions"
	RuleInfraMachineTerminalFailures   = "InfraMachine: terminal failures"
	RuleInfraMachineTemplateDefinition = "InfraMachineTemplate, InfraMachineTemplateList resource definition"
	RuleInfraMachinePausing            = "InfraMachine: pausing"
	RuleInfraMachineOwner              = "InfraMachine reconciliation: Machine owner"
	RuleInfraMachineDeletion           = "InfraMachine reconciliation: deletion"
	RuleProviderName                   = "Clusterctl support: provider name"
	RuleRepository                     = "Clusterctl support: provider repository"
	RuleMetadata                       = "Clusterctl support: metadata YAML"
	RuleComponentsNaming               = "Clusterctl support: components YAML naming"
	RuleOneNamespace                   = "Clusterctl support: components YAML has exactly one Namespace"
	RuleTargetNamespace                = "Clusterctl support: components YAML target namespace"
	RuleController                     = "Clusterctl support: components YAML controller"
	RuleComponentsVariables            = "Clusterctl support: components YAML variables"
	RuleComponentsLabels               = "Clusterctl support: components YAML labels"
	RuleComponentsCRDs                 = "Clusterctl support: components YAML CRDs"
	RuleTemplateNaming                 = "Clusterctl support: workload cluster templates naming"
	RuleTemplateNamespace              = "Clusterctl support: workload cluster templates target namespace"
	RuleTemplateVariables              = "Clusterctl support: workload cluster templates variables"
	RuleClusterClassNaming             = "Clusterctl support: ClusterClass definitions naming"
	RuleClusterClassNamespace          = "Clusterctl support: ClusterClass definitions target namespace"
	RuleClusterClassVariables          = "Clusterctl support: ClusterClass definitions variables"
	RuleOwnerReferences                = "Clusterctl support: OwnerReferences chain"
	RuleMove                           = "Clusterctl support: move"
	RuleMoveStatus                     = "Clusterctl support: move: status is never restored"
	RuleImages                         = "Clusterctl support: components YAML images"
	RuleImageOverrides                 = "Clusterctl support: image overrides"
	RuleClusterClassSharedObjects      = "Clusterctl support: ClusterClass definitions share no object"
	RuleCoreRBAC                       = "RBAC: Cluster API controllers"
	RuleTemplateMetadata               = "Templates: spec.template.metadata"
	RuleReadyDeletion                  = "Conditions: Ready reflects deletion"
)

// The specifications the rules come from.
const (
	sourceInfraCluster = "infracluster-contract.md"
	sourceSpec         = "cluster-infrastructure-provider-spec.md"
	sourceClusterctl   = "clusterctl-provider-contract.md"
	// The InfraMachine contract is not among the seeds; its rules mirror the InfraCluster ones and the
	// fields Cluster API's Machine controller reads (upstream Cluster API book, InfraMachine contract).
	sourceInfraMachine = "InfraMachine contract (Cluster API book)"
)

// Rule describes a rule the kit checks.
type Rule struct {
	// Name is the rule's name in the specification.
	Name string
	// Source is the specification and section the rule comes from.
	Source string
	// Mandatory says whether the specification makes the rule mandatory; an optional rule that is not
	// followed is a warning, unless the provider claims it in Provider.Implements.
	Mandatory bool
	// Checks says what the kit checks.
	Checks string
	// Behavioural says whether checking the rule needs the provider running against an API server.
	Behavioural bool

	check func(*input) verdict
}

// Rules returns every rule the kit checks, in the order of a Report.
func Rules() []Rule {
	out := make([]Rule, len(catalog))
	copy(out, catalog)
	return out
}

// catalog is the rule table: name, source, whether it is mandatory, what is checked, and the check; the
// InfraMachinePool rules follow the InfraMachine ones.
var catalog = func() []Rule {
	i := slices.IndexFunc(baseCatalog, func(r Rule) bool { return r.Name == RuleInfraMachineDeletion })
	return slices.Concat(baseCatalog[:i+1], poolRules, baseCatalog[i+1:])
}()

var baseCatalog = []Rule{
	{Name: RuleScope, Source: sourceInfraCluster, Mandatory: true, check: checkScope,
		Checks: "The CRDs of the InfraCluster, InfraMachine and their templates are namespace-scoped"},
	{Name: RuleTypeMeta, Source: sourceInfraCluster, Mandatory: true, check: checkTypeMeta,
		Checks: "Every served version's schema has apiVersion and kind (strings) and metadata (object)"},
	{Name: RuleAPIGroup, Source: sourceInfraCluster + ", " + sourceSpec + " (RBAC)", Mandatory: true, check: checkAPIGroup,
		Checks: "The kinds are in infrastructure.cluster.x-k8s.io, or the components grant Cluster API's controllers full access to them with a ClusterRole labelled cluster.x-k8s.io/aggregate-to-manager: \"true\""},
	{Name: RuleVersion, Source: sourceInfraCluster, Mandatory: true, check: checkVersion,
		Checks: "The CRDs carry the contract label cluster.x-k8s.io/v1beta1 (or v1beta2) and every version it lists is served by the CRD"},
	{Name: RuleInfraClusterDefinition, Source: sourceInfraCluster + ", " + sourceSpec, Mandatory: true, check: checkInfraClusterDefinition,
		Checks: "The InfraCluster CRD exists, is named CalculateCRDName(group, kind), its list kind is <Kind>List and it serves the version the kit uses"},
	{Name: RuleControlPlaneEndpoint, Source: sourceInfraCluster, check: checkControlPlaneEndpoint, Behavioural: true,
		Checks: "spec.controlPlaneEndpoint, when declared, is {host: string, port: integer}; once provisioned the InfraCluster has a host and a port (or the endpoint is provided by other means)"},
	{Name: RuleFailureDomains, Source: sourceInfraCluster, check: checkFailureDomains, Behavioural: true,
		Checks: "status.failureDomains, when reported, has the contract's shape (v1beta1: a map of {controlPlane, attributes}; v1beta2: a list with names)"},
	{Name: RuleInfraClusterInitialization, Source: sourceInfraCluster, Mandatory: true, check: checkInfraClusterInitialization, Behavioural: true,
		Checks: "The schema keeps status.ready (v1beta2: status.initialization.provisioned) and the provider sets it to true"},
	{Name: RuleInfraClusterConditions, Source: sourceInfraCluster, check: checkInfraClusterConditions, Behavioural: true,
		Checks: "Conditions, when reported, are Cluster API conditions (type, status True/False/Unknown, lastTransitionTime, known severities), with a Ready condition"},
	{Name: RuleInfraClusterTerminalFailures, Source: sourceInfraCluster, check: checkInfraClusterTerminalFailures, Behavioural: true,
		Checks: "status.failureReason and status.failureMessage are declared as strings and stay unset while nothing is wrong"},
	{Name: RuleInfraClusterTemplateDefinition, Source: sourceInfraCluster + ", " + sourceSpec, check: checkInfraClusterTemplateDefinition,
		Checks: "The <Kind>Template CRD exists (mandatory for ClusterClass), is named CalculateCRDName, its list kind is <Kind>TemplateList and its schema has spec.template.spec"},
	{Name: RuleExternallyManaged, Source: sourceInfraCluster, check: checkExternallyManaged, Behavioural: true,
		Checks: "An InfraCluster with cluster.x-k8s.io/managed-by as a label (as the contract text names it) and one with it as an annotation (what Cluster API's ResourceIsNotExternallyManaged predicate reads) are left alone: not changed at all while the provider provisions others"},
	{Name: RuleMultiTenancy, Source: sourceInfraCluster + ", " + sourceClusterctl + " (Components YAML: Controllers & Watching namespace)", check: checkMultiTenancy, Behavioural: true,
		Checks: "Started by Provider.StartScoped as with --namespace=<ns> and --watch-filter=<value>, the provider provisions an InfraCluster of <ns> labelled cluster.x-k8s.io/watch-filter=<value> and leaves alone (not changed at all) an unlabelled one of <ns> and a labelled one of another namespace"},
	{Name: RuleInfraClusterPausing, Source: sourceInfraCluster + ", " + sourceClusterctl + " (Move)", check: checkInfraClusterPausing, Behavioural: true,
		Checks: "An InfraCluster of a paused Cluster, or with the cluster.x-k8s.io/paused annotation, is not reconciled (only conditions may change) and is reconciled once unpaused; deletion waits while paused; a Paused condition, when reported, follows. Ignoring pause fails: clusterctl move relies on it"},
	{Name: RuleInfraClusterOwner, Source: sourceSpec + " (Behavior: Normal resource)", Mandatory: true, check: checkInfraClusterOwner, Behavioural: true,
		Checks: "An InfraCluster without a Cluster owner reference is not reconciled (no finalizer, not provisioned, spec unchanged)"},
	{Name: RuleInfraClusterFinalizer, Source: sourceSpec + " (Behavior: Normal resource)", check: checkInfraClusterFinalizer, Behavioural: true,
		Checks: "The provider adds a finalizer of its own to the InfraCluster"},
	{Name: RuleInfraClusterDeletion, Source: sourceSpec + " (Behavior: Deleted resource)", Mandatory: true, check: checkInfraClusterDeletion, Behavioural: true,
		Checks: "A deleted InfraCluster goes away: the provider removes its finalizer"},
	{Name: RuleRBAC, Source: sourceSpec + " (RBAC: Provider controller)", Mandatory: true, check: checkRBAC,
		Checks: "The components bind the controller's ServiceAccount to rules granting get, list, watch, update and patch on the InfraCluster and InfraMachine resources, update/patch on their status, and get, list, watch on Clusters"},
	{Name: RuleCoreRBAC, Source: sourceSpec + " (RBAC: Cluster API controllers)", Mandatory: true, check: checkCoreRBAC,
		Checks: "The core's real ClusterRole (capi-aggregated-manager-role of config/core, with its own rules and the ClusterRoles it aggregates, the components' included) grants create, delete, get, list, patch, update and watch on the InfraCluster, InfraMachine, InfraMachinePool and their templates"},
	{Name: RuleTemplateMetadata, Source: sourceInfraCluster + " (InfraClusterTemplate resource definition), " + sourceInfraMachine, check: checkTemplateMetadata, Behavioural: true,
		Checks: "The template CRDs keep spec.template.metadata.labels and .annotations; an InfraMachineTemplate created with them keeps them, and the InfraMachine cloned from it as the core does keeps them once the provider provisioned it"},
	{Name: RuleReadyDeletion, Source: sourceInfraCluster + " (InfraCluster: conditions), " + sourceInfraMachine, check: checkReadyDeletion, Behavioural: true,
		Checks: "Once the provider has run the deletion of an InfraCluster and an InfraMachine (the kit holds them with a finalizer of its own), their Ready conditions are False with a deleting reason; Ready True fails"},
	{Name: RuleInfraMachineDefinition, Source: sourceInfraMachine, Mandatory: true, check: checkInfraMachineDefinition,
		Checks: "The InfraMachine CRD exists, is named CalculateCRDName, its list kind is <Kind>List and it serves the version the kit uses"},
	{Name: RuleProviderID, Source: sourceInfraMachine, Mandatory: true, check: checkProviderID, Behavioural: true,
		Checks: "A provisioned InfraMachine has spec.providerID"},
	{Name: RuleInfraMachineInitialization, Source: sourceInfraMachine, Mandatory: true, check: checkInfraMachineInitialization, Behavioural: true,
		Checks: "The schema keeps status.ready (v1beta2: status.initialization.provisioned) and the provider sets it to true"},
	{Name: RuleAddresses, Source: sourceInfraMachine, check: checkAddresses, Behavioural: true,
		Checks: "status.addresses, when reported, is a list of {type: Hostname|ExternalIP|InternalIP|ExternalDNS|InternalDNS, address}"},
	{Name: RuleMachineFailureDomain, Source: sourceInfraMachine, check: checkMachineFailureDomain, Behavioural: true,
		Checks: "The failure domain an InfraMachine reports is one of the InfraCluster's"},
	{Name: RuleInfraMachineConditions, Source: sourceInfraMachine, check: checkInfraMachineConditions, Behavioural: true,
		Checks: "As for the InfraCluster: Cluster API conditions with a Ready condition"},
	{Name: RuleInfraMachineTerminalFailures, Source: sourceInfraMachine, check: checkInfraMachineTerminalFailures, Behavioural: true,
		Checks: "As for the InfraCluster: failureReason/failureMessage declared as strings and unset while nothing is wrong"},
	{Name: RuleInfraMachineTemplateDefinition, Source: sourceInfraMachine, Mandatory: true, check: checkInfraMachineTemplateDefinition,
		Checks: "The <Kind>Template CRD exists (MachineDeployments and MachineSets clone it), is named CalculateCRDName, its list kind is <Kind>TemplateList and its schema has spec.template.spec"},
	{Name: RuleInfraMachinePausing, Source: sourceInfraMachine + ", " + sourceClusterctl + " (Move)", check: checkInfraMachinePausing, Behavioural: true,
		Checks: "Deleting an InfraMachine of a paused Cluster waits until the Cluster is unpaused; a Paused condition, when reported, is True while paused"},
	{Name: RuleInfraMachineOwner, Source: sourceInfraMachine, Mandatory: true, check: checkInfraMachineOwner, Behavioural: true,
		Checks: "An InfraMachine without a Machine owner reference is not reconciled"},
	{Name: RuleInfraMachineDeletion, Source: sourceInfraMachine, Mandatory: true, check: checkInfraMachineDeletion, Behavioural: true,
		Checks: "A deleted InfraMachine goes away: the provider removes its finalizer"},
	{Name: RuleProviderName, Source: sourceClusterctl + " (Adding a provider to clusterctl)", Mandatory: true, check: checkProviderName,
		Checks: "The name is lower case alphanumerics and '-', starts and ends with an alphanumeric, at most 63 characters"},
	{Name: RuleRepository, Source: sourceClusterctl + " (Creating a local provider repository)", Mandatory: true, check: checkRepository,
		Checks: "The repository has an infrastructure-<name> folder whose sub-folders are semantic versions, each with metadata.yaml and a components YAML"},
	{Name: RuleMetadata, Source: sourceClusterctl + " (Metadata YAML)", Mandatory: true, check: checkMetadata,
		Checks: "metadata.yaml decodes strictly as clusterctl.cluster.x-k8s.io/v1alpha3 Metadata, lists the release series of the version with a contract capstan supports and that the CRDs declare, without duplicates"},
	{Name: RuleComponentsNaming, Source: sourceClusterctl + " (Components YAML: Naming conventions)", check: checkComponentsNaming,
		Checks: "The components file is named infrastructure-components.yaml"},
	{Name: RuleOneNamespace, Source: sourceClusterctl + " (Components YAML: Target namespace)", check: checkOneNamespace,
		Checks: "The components YAML has exactly one Namespace (none: a warning, clusterctl then needs --target-namespace; more: clusterctl refuses it)"},
	{Name: RuleTargetNamespace, Source: sourceClusterctl + " (Components YAML: Target namespace)", Mandatory: true, check: checkTargetNamespace,
		Checks: "Every namespaced object of the components is in the target namespace"},
	{Name: RuleController, Source: sourceClusterctl + " (Components YAML: Controllers & Watching namespace)", Mandatory: true, check: checkController,
		Checks: "The components deploy the controller with a Deployment whose container is named manager"},
	{Name: RuleImages, Source: sourceClusterctl + " (Components YAML: Controllers & Watching namespace)", check: checkImages,
		Checks: "Every container of the Deployments has an image with a canonical name: a registry host, a path and name, and a tag (not latest) or a digest"},
	{Name: RuleImageOverrides, Source: sourceClusterctl + " (Components YAML: Controllers & Watching namespace; clusterctl configuration: image overrides)", Mandatory: true, check: checkImageOverrides,
		Checks: "capstan's clusterctl init code, given the override images: {infrastructure-<name>: {repository, tag}}, installs the components with the manager container of every Deployment running the overridden image"},
	{Name: RuleComponentsVariables, Source: sourceClusterctl + " (Components YAML: Variables)", Mandatory: true, check: checkComponentsVariables,
		Checks: "Every ${...} parses with clusterctl's variable syntax (drone/envsubst) and names a valid variable"},
	{Name: RuleComponentsLabels, Source: sourceClusterctl + " (Components YAML: Labels)", check: checkComponentsLabels,
		Checks: "Every object carries cluster.x-k8s.io/provider: infrastructure-<name>"},
	{Name: RuleComponentsCRDs, Source: sourceClusterctl + " (Components YAML)", Mandatory: true, check: checkComponentsCRDs,
		Checks: "The components hold exactly the provider's CRDs, with the same group, kind, scope, versions and contract labels"},
	{Name: RuleTemplateNaming, Source: sourceClusterctl + " (Workload cluster templates: Naming conventions)", check: checkTemplateNaming,
		Checks: "The repository has cluster templates, and every file holding a Cluster is named cluster-template.yaml or cluster-template-<flavor>.yaml"},
	{Name: RuleTemplateNamespace, Source: sourceClusterctl + " (Workload cluster templates: Target namespace)", Mandatory: true, check: checkTemplateNamespace,
		Checks: "No template creates a Namespace, and all the objects of a template are in one namespace (${NAMESPACE})"},
	{Name: RuleTemplateVariables, Source: sourceClusterctl + " (Workload cluster templates: Variables)", check: checkTemplateVariables,
		Checks: "The templates' variables parse, the templates decode to objects once substituted, and they use the common variable ${CLUSTER_NAME} for the Cluster's name"},
	{Name: RuleClusterClassNaming, Source: sourceClusterctl + " (ClusterClass definitions: Naming conventions)", check: checkClusterClassNaming,
		Checks: "Every file holding a ClusterClass is named clusterclass-<name>.yaml after the ClusterClass it holds"},
	{Name: RuleClusterClassNamespace, Source: sourceClusterctl + " (ClusterClass definitions: Target namespace)", check: checkClusterClassNamespace,
		Checks: "No object of a ClusterClass definition, nor any reference in it, specifies a namespace"},
	{Name: RuleClusterClassSharedObjects, Source: sourceClusterctl + " (ClusterClass definitions: Target namespace)", check: checkClusterClassSharedObjects,
		Checks: "No object is defined by two ClusterClass definitions (a warning when identical; a failure when they differ, since installing one changes the other)"},
	{Name: RuleClusterClassVariables, Source: sourceClusterctl + " (ClusterClass definitions: Variables)", check: checkClusterClassVariables,
		Checks: "ClusterClass definitions use no ${...} variables"},
	{Name: RuleOwnerReferences, Source: sourceClusterctl + " (OwnerReferences chain)", Mandatory: true, check: checkOwnerReferences, Behavioural: true,
		Checks: "Every object the provider created in the namespace links to a Cluster through owner references"},
	{Name: RuleMove, Source: sourceClusterctl + " (Move)", Mandatory: true, check: checkMove, Behavioural: true,
		Checks: "Every object the provider created that clusterctl move discovers (its CRDs' kinds, Secrets, ConfigMaps) is moved: linked to a Cluster or labelled clusterctl.cluster.x-k8s.io/move or move-hierarchy (on it or its CRD)"},
	{Name: RuleMoveStatus, Source: sourceClusterctl + " (Move: Status subresource is never restored)", Mandatory: true, check: checkMoveStatus, Behavioural: true,
		Checks: "The provisioned InfraCluster and InfraMachine, their status removed while their Cluster is paused (as they arrive after clusterctl move), are provisioned again once it is unpaused"},
}

// outcome is what a check found, before the rule's mandatory flag and the provider's claims turn it into
// a Status.
type outcome int

const (
	// met: the rule is followed.
	met outcome = iota
	// broken: the rule is not followed in a way that fails whether the rule is mandatory or not.
	broken
	// unmet: the rule is not implemented; a failure for mandatory or claimed rules, a warning otherwise.
	unmet
	// unchecked: the rule could not be checked.
	unchecked
)

// verdict is what a check found and a message saying so.
type verdict struct {
	outcome outcome
	message string
}

func pass(format string, args ...any) verdict {
	return verdict{outcome: met, message: fmt.Sprintf(format, args...)}
}

func fail(format string, args ...any) verdict {
	return verdict{outcome: broken, message: fmt.Sprintf(format, args...)}
}

func missing(format string, args ...any) verdict {
	return verdict{outcome: unmet, message: fmt.Sprintf(format, args...)}
}

func skip(format string, args ...any) verdict {
	return verdict{outcome: unchecked, message: fmt.Sprintf(format, args...)}
}

// status turns a verdict of a rule into a Status.
func status(v verdict, mandatory, claimed bool) Status {
	switch v.outcome {
	case met:
		return Pass
	case broken:
		return Fail
	case unmet:
		if mandatory || claimed {
			return Fail
		}
		return Warn
	default:
		return Skip
	}
}

// evaluate checks every rule of the catalog.
func (in *input) evaluate() Report {
	report := make(Report, 0, len(catalog))
	for _, r := range catalog {
		v := r.check(in)
		report = append(report, Result{
			Rule:      r.Name,
			Source:    r.Source,
			Mandatory: r.Mandatory,
			Status:    status(v, r.Mandatory, slices.Contains(in.p.Implements, r.Name)),
			Message:   v.message,
		})
	}
	return report
}
