// Package v1alpha2 holds the operator.cluster.x-k8s.io/v1alpha2 API of the declarative provider operator
// (`capstan operator`): CoreProvider, BootstrapProvider, ControlPlaneProvider, InfrastructureProvider,
// AddonProvider, IPAMProvider and RuntimeExtensionProvider. Each kind is one Cluster API provider, named
// by the object's name (for example an InfrastructureProvider "aws"), installed, configured, upgraded,
// paused and removed by the operator. The group, version, kinds and fields are upstream Cluster API
// Operator's, so existing YAML works unchanged; capstan adds the proposal's spec.paused.
//
// +kubebuilder:object:generate=true
// +groupName=operator.cluster.x-k8s.io
package v1alpha2
