package v1beta2

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta2"
)

// ExtensionConfigSpec is the desired state of an ExtensionConfig.
type ExtensionConfigSpec struct {
	// clientConfig says how to reach the Extension server.
	// +required
	ClientConfig ClientConfig `json:"clientConfig,omitempty,omitzero"`

	// namespaceSelector limits the hook calls to the objects of the namespaces it selects; every namespace
	// when unset.
	// +optional
	NamespaceSelector *metav1.LabelSelector `json:"namespaceSelector,omitempty"`

	// settings are key-value pairs sent with every call to the Extension's handlers; a ClusterClass can
	// override them.
	// +optional
	Settings map[string]string `json:"settings,omitempty"`
}

// ClientConfig says how the core reaches an Extension server: a URL, or a Service of the management
// cluster, and the CA that signs the server's certificate.
// +kubebuilder:validation:MinProperties=1
// +kubebuilder:validation:XValidation:rule="has(self.url) != has(self.service)",message="exactly one of url or service must be set: use service for an Extension server that runs in the management cluster, url otherwise"
// +kubebuilder:validation:XValidation:rule="!has(self.url) || (isURL(self.url) && url(self.url).getScheme() == 'https')",message="url must be an https:// URL"
type ClientConfig struct {
	// url of the Extension server, https://host[:port][/path], outside the management cluster (use service
	// for a server inside it); the path, if any, prefixes each hook's path. No user information, query or
	// fragment. Exactly one of url and service.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=512
	URL string `json:"url,omitempty"`

	// service names the management cluster's Service in front of the Extension server. Exactly one of url
	// and service.
	// +optional
	Service ServiceReference `json:"service,omitempty,omitzero"`

	// caBundle is the PEM-encoded CA bundle that verifies the Extension server's certificate.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=51200
	CABundle []byte `json:"caBundle,omitempty"`
}

// ServiceReference names the Service in front of an Extension server.
type ServiceReference struct {
	// namespace of the Service.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	Namespace string `json:"namespace,omitempty"`

	// name of the Service.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	Name string `json:"name,omitempty"`

	// path prefixes each hook's path.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=512
	Path string `json:"path,omitempty"`

	// port of the Service; 443 when unset.
	// +optional
	Port *int32 `json:"port,omitempty"`
}

// ExtensionConfigStatus is the observed state of an ExtensionConfig.
// +kubebuilder:validation:MinProperties=1
type ExtensionConfigStatus struct {
	// conditions of the ExtensionConfig: Discovered, Paused.
	// +optional
	// +listType=map
	// +listMapKey=type
	// +kubebuilder:validation:MaxItems=32
	Conditions []metav1.Condition `json:"conditions,omitempty"`

	// handlers are the handlers the Extension server listed in its last discovery response.
	// +optional
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MaxItems=512
	Handlers []ExtensionHandler `json:"handlers,omitempty"`

	// deprecated groups the status fields that go away with v1beta1.
	// +optional
	Deprecated *ExtensionConfigDeprecatedStatus `json:"deprecated,omitempty"`
}

// ExtensionConfigDeprecatedStatus groups the status fields that go away with v1beta1.
type ExtensionConfigDeprecatedStatus struct {
	// v1beta1 holds the status fields of v1beta1.
	// +optional
	V1Beta1 *ExtensionConfigV1Beta1DeprecatedStatus `json:"v1beta1,omitempty"`
}

// ExtensionConfigV1Beta1DeprecatedStatus is the status of v1beta1 that v1beta2 does not have.
type ExtensionConfigV1Beta1DeprecatedStatus struct {
	// conditions are the v1beta1 conditions.
	// +optional
	Conditions clusterv1.Conditions `json:"conditions,omitempty"`
}

// ExtensionHandler is one handler an Extension server said it serves in its discovery response.
type ExtensionHandler struct {
	// name of the handler, unique among the server's handlers.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=512
	Name string `json:"name,omitempty"`

	// requestHook is the hook, and the version of its API, the handler serves.
	// +required
	RequestHook GroupVersionHook `json:"requestHook,omitempty,omitzero"`

	// timeoutSeconds bounds each call to the handler; 10 when unset.
	// +optional
	// +kubebuilder:validation:Minimum=1
	TimeoutSeconds int32 `json:"timeoutSeconds,omitempty"`

	// failurePolicy says whether a failed call fails the operation (Fail, the default) or is ignored.
	// +optional
	FailurePolicy FailurePolicy `json:"failurePolicy,omitempty"`
}

// GroupVersionHook names a hook and the version of its API.
type GroupVersionHook struct {
	// apiVersion is the group and version of the hook's API.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=512
	APIVersion string `json:"apiVersion,omitempty"`

	// hook is the name of the hook.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=256
	Hook string `json:"hook,omitempty"`
}

// FailurePolicy says what a failed call to an ExtensionHandler means.
// +kubebuilder:validation:Enum=Ignore;Fail
type FailurePolicy string

// The failure policies.
const (
	FailurePolicyIgnore FailurePolicy = "Ignore"
	FailurePolicyFail   FailurePolicy = "Fail"
)

// +kubebuilder:object:root=true
// +kubebuilder:resource:path=extensionconfigs,shortName=ext,scope=Cluster,categories=cluster-api
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="Paused",type="string",JSONPath=`.status.conditions[?(@.type=="Paused")].status`,description="Reconciliation paused",priority=10
// +kubebuilder:printcolumn:name="Discovered",type="string",JSONPath=`.status.conditions[?(@.type=="Discovered")].status`,description="ExtensionConfig discovered"
// +kubebuilder:printcolumn:name="Age",type="date",JSONPath=".metadata.creationTimestamp",description="Time duration since creation of ExtensionConfig"

// ExtensionConfig registers a Runtime Extension server with the core controllers, which discover its
// handlers and call them at the hooks they serve.
type ExtensionConfig struct {
	metav1.TypeMeta `json:",inline"`
	// metadata of the ExtensionConfig.
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec is the desired state of the ExtensionConfig.
	// +required
	Spec ExtensionConfigSpec `json:"spec,omitempty,omitzero"`

	// status is the observed state of the ExtensionConfig.
	// +optional
	Status ExtensionConfigStatus `json:"status,omitempty,omitzero"`
}

// +kubebuilder:object:root=true

// ExtensionConfigList is a list of ExtensionConfigs.
type ExtensionConfigList struct {
	metav1.TypeMeta `json:",inline"`
	// +optional
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []ExtensionConfig `json:"items"`
}
