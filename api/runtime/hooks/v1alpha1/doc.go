// Package v1alpha1 holds the hooks.runtime.cluster.x-k8s.io/v1alpha1 API: the requests and responses that
// Cluster API's core sends to and receives from Runtime Extensions — Discovery, the in-place update
// hooks, the lifecycle hooks, the topology mutation hooks and the upgrade plan hook — and the builtin
// variables of topology patches. They are JSON-compatible with upstream Cluster API's (v1.10's; the hooks
// and fields of chained upgrades and the in-place update hooks are v1.14's), so extensions written for
// upstream work with capstan and the other way round. These are not Kubernetes resources: nothing here is
// served by the API server.
//
// +kubebuilder:object:generate=true
// +kubebuilder:skip
package v1alpha1
