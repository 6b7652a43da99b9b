package memory

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
)

// resource is one resource of the API the memory backend serves.
type resource struct {
	gvr        schema.GroupVersionResource
	kind       string
	namespaced bool
	// status says the resource has a status subresource: updates of the main resource keep the status.
	status bool
}

var allVerbs = []string{"create", "delete", "get", "list", "patch", "update", "watch"}

// resources is what a workload cluster of the memory backend serves: what Cluster API's core, the kubeadm
// bootstrap and control plane providers, MachineHealthChecks and `kubectl get nodes` use.
var resources = []resource{
	{gvr: schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}, kind: "Namespace", status: true},
	{gvr: schema.GroupVersionResource{Version: "v1", Resource: "nodes"}, kind: "Node", status: true},
	{gvr: schema.GroupVersionResource{Version: "v1", Resource: "pods"}, kind: "Pod", namespaced: true, status: true},
	{gvr: schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}, kind: "ConfigMap", namespaced: true},
	{gvr: schema.GroupVersionResource{Version: "v1", Resource: "secrets"}, kind: "Secret", namespaced: true},
	{gvr: schema.GroupVersionResource{Version: "v1", Resource: "serviceaccounts"}, kind: "ServiceAccount", namespaced: true},
	{gvr: schema.GroupVersionResource{Version: "v1", Resource: "services"}, kind: "Service", namespaced: true, status: true},
	{gvr: schema.GroupVersionResource{Version: "v1", Resource: "events"}, kind: "Event", namespaced: true},
	{gvr: schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}, kind: "Deployment", namespaced: true, status: true},
	{gvr: schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "daemonsets"}, kind: "DaemonSet", namespaced: true, status: true},
	{gvr: schema.GroupVersionResource{Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "roles"}, kind: "Role", namespaced: true},
	{gvr: schema.GroupVersionResource{Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "rolebindings"}, kind: "RoleBinding", namespaced: true},
	{gvr: schema.GroupVersionResource{Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "clusterroles"}, kind: "ClusterRole"},
	{gvr: schema.GroupVersionResource{Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "clusterrolebindings"}, kind: "ClusterRoleBinding"},
	{gvr: schema.GroupVersionResource{Group: "coordination.k8s.io", Version: "v1", Resource: "leases"}, kind: "Lease", namespaced: true},
}

// Well-known group resources.
var (
	nodesResource      = schema.GroupResource{Resource: "nodes"}
	podsResource       = schema.GroupResource{Resource: "pods"}
	configMapsResource = schema.GroupResource{Resource: "configmaps"}
	namespacesResource = schema.GroupResource{Resource: "namespaces"}
)

func lookupResource(group, version, name string) (resource, bool) {
	for _, r := range resources {
		if r.gvr.Group == group && r.gvr.Version == version && r.gvr.Resource == name {
			return r, true
		}
	}
	return resource{}, false
}

func hasStatusSubresource(gr schema.GroupResource) bool {
	for _, r := range resources {
		if r.gvr.GroupResource() == gr {
			return r.status
		}
	}
	return false
}

// prototype returns an empty typed object of the resource, the schema of strategic merge patches.
func (r resource) prototype() (runtime.Object, error) {
	return clientgoscheme.Scheme.New(r.gvr.GroupVersion().WithKind(r.kind))
}

// apiResources returns the discovery document of a group version.
func apiResources(gv schema.GroupVersion) *metav1.APIResourceList {
	out := &metav1.APIResourceList{TypeMeta: metav1.TypeMeta{Kind: "APIResourceList", APIVersion: "v1"}, GroupVersion: gv.String()}
	for _, r := range resources {
		if r.gvr.GroupVersion() != gv {
			continue
		}
		out.APIResources = append(out.APIResources, metav1.APIResource{
			Name: r.gvr.Resource, SingularName: "", Namespaced: r.namespaced, Kind: r.kind, Verbs: allVerbs,
		})
		if r.status {
			out.APIResources = append(out.APIResources, metav1.APIResource{
				Name: r.gvr.Resource + "/status", Namespaced: r.namespaced, Kind: r.kind, Verbs: []string{"get", "patch", "update"},
			})
		}
		if r.gvr.Resource == "pods" {
			out.APIResources = append(out.APIResources,
				metav1.APIResource{Name: "pods/portforward", Namespaced: true, Kind: "PodPortForwardOptions", Verbs: []string{"create", "get"}},
				metav1.APIResource{Name: "pods/eviction", Namespaced: true, Group: "policy", Version: "v1", Kind: "Eviction", Verbs: []string{"create"}})
		}
	}
	return out
}

// apiGroups returns the discovery document of the named groups.
func apiGroups() *metav1.APIGroupList {
	out := &metav1.APIGroupList{TypeMeta: metav1.TypeMeta{Kind: "APIGroupList", APIVersion: "v1"}}
	seen := map[string]bool{}
	for _, r := range resources {
		if r.gvr.Group == "" || seen[r.gvr.Group] {
			continue
		}
		seen[r.gvr.Group] = true
		gv := metav1.GroupVersionForDiscovery{GroupVersion: r.gvr.GroupVersion().String(), Version: r.gvr.Version}
		out.Groups = append(out.Groups, metav1.APIGroup{Name: r.gvr.Group, Versions: []metav1.GroupVersionForDiscovery{gv}, PreferredVersion: gv})
	}
	return out
}
