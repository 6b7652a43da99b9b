package conformance

import (
	"fmt"
	"io/fs"
	"slices"
	"strings"

	rbacv1 "k8s.io/api/rbac/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
	configcore "github.com/capstan-dev/capstan/config/core"
)

// rules returns the rules of a ClusterRole or Role object.
func rules(o *unstructured.Unstructured) []rbacv1.PolicyRule {
	role := &rbacv1.ClusterRole{}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(o.Object, role); err != nil {
		return nil
	}
	return role.Rules
}

// aggregatedRules returns the rules of the ClusterRoles that aggregate to Cluster API's core controllers.
func (c *components) aggregatedRules() []rbacv1.PolicyRule {
	var out []rbacv1.PolicyRule
	for _, o := range c.ofKind(rbacv1.GroupName, "ClusterRole") {
		if o.GetLabels()[aggregateToManagerLabel] == "true" {
			out = append(out, rules(o)...)
		}
	}
	return out
}

// lackingVerbs returns the verbs the rules do not grant on a resource of a group.
func lackingVerbs(rs []rbacv1.PolicyRule, group, resource string, verbs []string) []string {
	var out []string
	for _, verb := range verbs {
		if !slices.ContainsFunc(rs, func(r rbacv1.PolicyRule) bool {
			return matches(r.APIGroups, group) && matches(r.Resources, resource) && matches(r.Verbs, verb)
		}) {
			out = append(out, verb)
		}
	}
	return out
}

func matches(values []string, want string) bool {
	return slices.Contains(values, want) || slices.Contains(values, rbacv1.ResourceAll)
}

// serviceAccountRules returns the rules bound, by the components' ClusterRoleBindings and RoleBindings, to
// a ServiceAccount.
func (c *components) serviceAccountRules(namespace, name string) []rbacv1.PolicyRule {
	roles := map[string][]rbacv1.PolicyRule{}
	for _, kind := range []string{"ClusterRole", "Role"} {
		for _, o := range c.ofKind(rbacv1.GroupName, kind) {
			roles[kind+"/"+o.GetNamespace()+"/"+o.GetName()] = rules(o)
		}
	}
	var out []rbacv1.PolicyRule
	for _, kind := range []string{"ClusterRoleBinding", "RoleBinding"} {
		for _, o := range c.ofKind(rbacv1.GroupName, kind) {
			b := &rbacv1.RoleBinding{}
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(o.Object, b); err != nil {
				continue
			}
			if !slices.ContainsFunc(b.Subjects, func(s rbacv1.Subject) bool {
				return s.Kind == rbacv1.ServiceAccountKind && s.Name == name && (s.Namespace == namespace || s.Namespace == "")
			}) {
				continue
			}
			roleNamespace := ""
			if b.RoleRef.Kind == "Role" {
				roleNamespace = o.GetNamespace()
			}
			out = append(out, roles[b.RoleRef.Kind+"/"+roleNamespace+"/"+b.RoleRef.Name]...)
		}
	}
	return out
}

func checkRBAC(in *input) verdict {
	c, v, ok := in.componentObjects()
	if !ok {
		return v
	}
	target := ""
	if ns := c.namespaces(); len(ns) == 1 {
		target = ns[0].GetName()
	}
	var problems []string
	deployments := c.ofKind("apps", "Deployment")
	if len(deployments) == 0 {
		return fail("%s has no Deployment, so no controller to grant permissions to", c.file)
	}
	for _, d := range deployments {
		sa, _, _ := unstructured.NestedString(d.Object, "spec", "template", "spec", "serviceAccountName")
		if sa == "" {
			sa = "default"
		}
		namespace := d.GetNamespace()
		if namespace == "" {
			namespace = target
		}
		granted := c.serviceAccountRules(namespace, sa)
		for _, gvk := range []schema.GroupVersionKind{in.p.InfraCluster, in.p.InfraMachine} {
			crd, ok := in.crds[gvk.GroupKind()]
			if gvk.Kind == "" || !ok {
				continue
			}
			plural := crd.Spec.Names.Plural
			if lacking := lackingVerbs(granted, crd.Spec.Group, plural, []string{"get", "list", "watch", "update", "patch"}); len(lacking) > 0 {
				problems = append(problems, fmt.Sprintf("ServiceAccount %s of Deployment %s may not %s %s.%s", sa, d.GetName(), strings.Join(lacking, ", "), plural, crd.Spec.Group))
			}
			if slices.ContainsFunc(crd.Spec.Versions, func(v apiextensionsv1.CustomResourceDefinitionVersion) bool {
				return v.Subresources != nil && v.Subresources.Status != nil
			}) {
				if lacking := lackingVerbs(granted, crd.Spec.Group, plural+"/status", []string{"update", "patch"}); len(lacking) > 0 {
					problems = append(problems, fmt.Sprintf("ServiceAccount %s of Deployment %s may not %s %s/status.%s", sa, d.GetName(), strings.Join(lacking, ", "), plural, crd.Spec.Group))
				}
			}
		}
		// The provider reads the Cluster owning its objects (pause, readiness, endpoint).
		if lacking := lackingVerbs(granted, clusterv1.GroupVersion.Group, "clusters", []string{"get", "list", "watch"}); len(lacking) > 0 {
			problems = append(problems, fmt.Sprintf("ServiceAccount %s of Deployment %s may not %s clusters.%s: it cannot read the Cluster owning its objects",
				sa, d.GetName(), strings.Join(lacking, ", "), clusterv1.GroupVersion.Group))
		}
	}
	if len(problems) > 0 {
		return fail("%s", strings.Join(problems, "; "))
	}
	return pass("The controller's ServiceAccount may read and write the provider's InfraCluster and InfraMachine resources and their status, and read Clusters")
}

// coreRoles returns the ClusterRoles of Cluster API's core as capstan installs it (config/core): the
// aggregated role its ServiceAccount is bound to, and the roles aggregated into it.
func coreRoles() ([]*unstructured.Unstructured, error) {
	data, err := fs.ReadFile(configcore.Files, "rbac.yaml")
	if err != nil {
		return nil, fmt.Errorf("reading the core's RBAC: %w", err)
	}
	objs, err := decodeDocuments(string(data))
	if err != nil {
		return nil, fmt.Errorf("decoding the core's RBAC: %w", err)
	}
	var out []*unstructured.Unstructured
	for _, o := range objs {
		if o.GetKind() == "ClusterRole" {
			out = append(out, o)
		}
	}
	return out, nil
}

// effectiveRules returns the rules of a ClusterRole once Kubernetes has aggregated into it the ClusterRoles
// (of roles) its aggregationRule selects.
func effectiveRules(role *unstructured.Unstructured, roles []*unstructured.Unstructured) ([]rbacv1.PolicyRule, error) {
	cr := &rbacv1.ClusterRole{}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(role.Object, cr); err != nil {
		return nil, err
	}
	out := slices.Clone(cr.Rules)
	if cr.AggregationRule == nil {
		return out, nil
	}
	for _, sel := range cr.AggregationRule.ClusterRoleSelectors {
		selector, err := metav1.LabelSelectorAsSelector(&sel)
		if err != nil {
			return nil, err
		}
		for _, o := range roles {
			if o != role && selector.Matches(labels.Set(o.GetLabels())) {
				out = append(out, rules(o)...)
			}
		}
	}
	return out, nil
}

// coreVerbs are what Cluster API's controllers do with the provider's kinds: create and delete them (from
// templates, topology), read them, and patch owner references, labels and annotations.
var coreVerbs = []string{"create", "delete", "get", "list", "patch", "update", "watch"}

func checkCoreRBAC(in *input) verdict {
	if v, stop := in.noKinds(); stop {
		return v
	}
	roles, err := coreRoles()
	if err != nil {
		return fail("%v", err)
	}
	var provider []*unstructured.Unstructured
	if in.repo != nil && in.repo.components != nil {
		provider = in.repo.components.ofKind(rbacv1.GroupName, "ClusterRole")
	}
	all := slices.Concat(roles, provider)
	idx := slices.IndexFunc(roles, func(o *unstructured.Unstructured) bool { return o.GetName() == coreRoleName })
	if idx < 0 {
		return fail("capstan's core has no ClusterRole %s", coreRoleName)
	}
	granted, err := effectiveRules(roles[idx], all)
	if err != nil {
		return fail("aggregating ClusterRole %s: %v", coreRoleName, err)
	}
	var bad, ok []string
	for _, crd := range in.contractCRDs() {
		plural := crd.Spec.Names.Plural + "." + crd.Spec.Group
		if lacking := lackingVerbs(granted, crd.Spec.Group, crd.Spec.Names.Plural, coreVerbs); len(lacking) > 0 {
			bad = append(bad, fmt.Sprintf("%s (%s)", plural, strings.Join(lacking, ", ")))
			continue
		}
		ok = append(ok, plural)
	}
	if len(bad) > 0 {
		how := "its own rules or a ClusterRole of the components labelled " + aggregateToManagerLabel + ": \"true\""
		if in.repo == nil {
			how += " (not checked: " + in.repoSkipped + ")"
		}
		return fail("The core's ClusterRole %s, through %s, does not grant: %s", coreRoleName, how, strings.Join(bad, "; "))
	}
	return pass("The core's ClusterRole %s (with the ClusterRoles aggregated into it) may %s %s",
		coreRoleName, strings.Join(coreVerbs, ", "), strings.Join(ok, ", "))
}

// coreRoleName is the ClusterRole capstan's core ServiceAccount is bound to (config/core/rbac.yaml), as
// upstream's.
const coreRoleName = "capi-aggregated-manager-role"
