package manifest

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// clusterScopedKinds are the cluster-scoped kinds clusterctl knows without asking an API server.
var clusterScopedKinds = map[string]bool{
	"APIService":                       true,
	"CertificateSigningRequest":        true,
	"ClusterIssuer":                    true,
	"ClusterRole":                      true,
	"ClusterRoleBinding":               true,
	"ClusterTrustBundle":               true,
	"CSIDriver":                        true,
	"CSINode":                          true,
	"CustomResourceDefinition":         true,
	"FlowSchema":                       true,
	"IngressClass":                     true,
	"MutatingAdmissionPolicy":          true,
	"MutatingAdmissionPolicyBinding":   true,
	"MutatingWebhookConfiguration":     true,
	"Namespace":                        true,
	"Node":                             true,
	"PersistentVolume":                 true,
	"PodSecurityPolicy":                true,
	"PriorityClass":                    true,
	"PriorityLevelConfiguration":       true,
	"RuntimeClass":                     true,
	"StorageClass":                     true,
	"ValidatingAdmissionPolicy":        true,
	"ValidatingAdmissionPolicyBinding": true,
	"ValidatingWebhookConfiguration":   true,
	"VolumeAttachment":                 true,
}

// Scope tells cluster-scoped objects from namespaced ones: the well-known cluster-scoped kinds, plus the
// kinds of the cluster-scoped CustomResourceDefinitions found in the same manifest.
type Scope struct {
	crdKinds map[schema.GroupKind]bool
}

// NewScope returns the Scope of objs.
func NewScope(objs []unstructured.Unstructured) Scope {
	s := Scope{crdKinds: map[schema.GroupKind]bool{}}
	for i := range objs {
		o := &objs[i]
		if o.GetKind() != "CustomResourceDefinition" {
			continue
		}
		scope, _, _ := unstructured.NestedString(o.Object, "spec", "scope")
		group, _, _ := unstructured.NestedString(o.Object, "spec", "group")
		kind, _, _ := unstructured.NestedString(o.Object, "spec", "names", "kind")
		if scope == "Cluster" && kind != "" {
			s.crdKinds[schema.GroupKind{Group: group, Kind: kind}] = true
		}
	}
	return s
}

// IsClusterScoped reports whether obj has no namespace.
func (s Scope) IsClusterScoped(obj *unstructured.Unstructured) bool {
	if clusterScopedKinds[obj.GetKind()] {
		return true
	}
	return s.crdKinds[obj.GroupVersionKind().GroupKind()]
}
