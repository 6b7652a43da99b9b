package template

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
)

// ClusterClassFile returns the name of the file that defines a ClusterClass in a provider repository.
func ClusterClassFile(name string) string { return "clusterclass-" + name + ".yaml" }

// ClusterTemplateFile returns the name of the cluster template of a flavor ("" is the default template).
func ClusterTemplateFile(flavor string) string {
	if flavor == "" {
		return "cluster-template.yaml"
	}
	return "cluster-template-" + flavor + ".yaml"
}

// ClusterClasses returns the ClusterClasses that the Clusters among objs use (spec.topology.class, or
// spec.topology.classRef.name in v1beta2), in order of appearance and without duplicates. A class's
// namespace is spec.topology.classNamespace (classRef.namespace), else the Cluster's, else defaultNamespace.
func ClusterClasses(objs []unstructured.Unstructured, defaultNamespace string) []types.NamespacedName {
	var out []types.NamespacedName
	seen := map[types.NamespacedName]bool{}
	for i := range objs {
		o := &objs[i]
		if o.GetKind() != "Cluster" || o.GroupVersionKind().Group != clusterv1.GroupVersion.Group {
			continue
		}
		name, _, _ := unstructured.NestedString(o.Object, "spec", "topology", "class")
		namespace, _, _ := unstructured.NestedString(o.Object, "spec", "topology", "classNamespace")
		if name == "" {
			name, _, _ = unstructured.NestedString(o.Object, "spec", "topology", "classRef", "name")
			namespace, _, _ = unstructured.NestedString(o.Object, "spec", "topology", "classRef", "namespace")
		}
		if name == "" {
			continue
		}
		if namespace == "" {
			namespace = o.GetNamespace()
		}
		if namespace == "" {
			namespace = defaultNamespace
		}
		key := types.NamespacedName{Namespace: namespace, Name: name}
		if !seen[key] {
			seen[key] = true
			out = append(out, key)
		}
	}
	return out
}
