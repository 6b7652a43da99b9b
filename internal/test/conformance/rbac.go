package conformance

import (
	"fmt"
	"slices"
	"strings"

	rbacv1 "k8s.io/api/rbac/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
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
	}
	if len(problems) > 0 {
		return fail("%s", strings.Join(problems, "; "))
	}
	return pass("The controller's ServiceAccount may read and write the provider's InfraCluster and InfraMachine resources and their status")
}
