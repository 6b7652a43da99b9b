// Package v1alpha1 holds the management.cluster.x-k8s.io/v1alpha1 API of the Cluster API provider
// operator proposal (CoreProvider, BootstrapProvider, ControlPlaneProvider, InfrastructureProvider), so that
// the proposal's examples work as written: secretName and secretNamespace, manager.metricsAddress,
// manager.syncPeriod in seconds, deployment.containers[].image as a string or by parts, args as a map of
// strings or numbers, manager.debug. The operator translates each object into the
// operator.cluster.x-k8s.io/v1alpha2 object of the same kind, name and namespace, which it owns and
// reconciles, and mirrors that object's status back. v1alpha2, upstream Cluster API Operator's API, is the
// one to prefer.
//
// +kubebuilder:object:generate=true
// +groupName=management.cluster.x-k8s.io
package v1alpha1
