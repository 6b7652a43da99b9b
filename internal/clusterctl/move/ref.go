package move

import (
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// API groups and kinds whose objects the discovery treats specially.
const (
	clusterGroup  = "cluster.x-k8s.io"
	addonsGroup   = "addons.cluster.x-k8s.io"
	clusterctlAPI = "clusterctl.cluster.x-k8s.io"

	clusterKind        = "Cluster"
	clusterClassKind   = "ClusterClass"
	machineKind        = "Machine"
	crsKind            = "ClusterResourceSet"
	crsBindingKind     = "ClusterResourceSetBinding"
	secretKind         = "Secret"
	configMapKind      = "ConfigMap"
	namespaceKind      = "Namespace"
	coreGroupVersion   = "v1"
	journalDataKey     = "journal.json"
	deleteForMoveValue = ""
)

// Ref identifies an object: its apiVersion, kind, namespace (empty for cluster-scoped objects) and name.
type Ref struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Namespace  string `json:"namespace,omitempty"`
	Name       string `json:"name"`
}

// RefOf returns the reference of an object.
func RefOf(obj *unstructured.Unstructured) Ref {
	return Ref{APIVersion: obj.GetAPIVersion(), Kind: obj.GetKind(), Namespace: obj.GetNamespace(), Name: obj.GetName()}
}

// String is "Kind namespace/name", or "Kind name" for a cluster-scoped object.
func (r Ref) String() string {
	if r.Namespace == "" {
		return fmt.Sprintf("%s %s", r.Kind, r.Name)
	}
	return fmt.Sprintf("%s %s/%s", r.Kind, r.Namespace, r.Name)
}

// GroupKind returns the group and kind of the object.
func (r Ref) GroupKind() schema.GroupKind {
	return schema.FromAPIVersionAndKind(r.APIVersion, r.Kind).GroupKind()
}

// GroupVersionKind returns the group, version and kind of the object.
func (r Ref) GroupVersionKind() schema.GroupVersionKind {
	return schema.FromAPIVersionAndKind(r.APIVersion, r.Kind)
}

// is reports whether the object is of a group and kind.
func (r Ref) is(group, kind string) bool {
	gk := r.GroupKind()
	return gk.Group == group && gk.Kind == kind
}

// key identifies the object independently of its API version.
func (r Ref) key() string {
	gk := r.GroupKind()
	return gk.Kind + "." + gk.Group + "/" + r.Namespace + "/" + r.Name
}

// unstructured returns an empty object with the reference's identity, for reads.
func (r Ref) unstructured() *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetAPIVersion(r.APIVersion)
	u.SetKind(r.Kind)
	u.SetNamespace(r.Namespace)
	u.SetName(r.Name)
	return u
}

// less orders references for stable output: by kind, namespace, name.
func (r Ref) less(o Ref) bool {
	if r.Kind != o.Kind {
		return r.Kind < o.Kind
	}
	if r.Namespace != o.Namespace {
		return r.Namespace < o.Namespace
	}
	if r.Name != o.Name {
		return r.Name < o.Name
	}
	return r.APIVersion < o.APIVersion
}
