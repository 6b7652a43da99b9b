package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
)

// ExtensionConfigSpec is the desired state of an ExtensionConfig.
type ExtensionConfigSpec struct {
	// clientConfig defines how to communicate with the Extension server.
	// +required
	ClientConfig ClientConfig `json:"clientConfig"`

	// namespaceSelector decides whether to call the hook for an object based
	// on whether the namespace for that object matches the selector.
	// Defaults to the empty LabelSelector, which matches all objects.
	// +optional
	NamespaceSelector *metav1.LabelSelector `json:"namespaceSelector,omitempty"`

	// settings defines key value pairs to be passed to all calls
	// to all supported RuntimeExtensions.
	// Note: Settings can be overridden on the ClusterClass.
	// +optional
	Settings map[string]string `json:"settings,omitempty"`
}

// ClientConfig says how the core reaches an Extension server: a URL, or a Service of the management
// cluster, and the CA that signs the server's certificate.
//
// +kubebuilder:validation:XValidation:rule="has(self.url) != has(self.service)",message="exactly one of url or service must be set: use service for an Extension server that runs in the management cluster, url otherwise"
// +kubebuilder:validation:XValidation:rule="!has(self.url) || (isURL(self.url) && url(self.url).getScheme() == 'https')",message="url must be an https:// URL"
type ClientConfig struct {
	// url gives the location of the Extension server, in standard URL form
	// (`scheme://host:port/path`).
	// Note: Exactly one of `url` or `service` must be specified.
	//
	// The scheme must be "https".
	//
	// The `host` should not refer to a service running in the cluster; use
	// the `service` field instead.
	//
	// A path is optional, and if present may be any string permissible in
	// a URL. If a path is set it will be used as prefix to the hook-specific path.
	//
	// Attempting to use a user or basic auth e.g. "user:password@" is not
	// allowed. Fragments ("#...") and query parameters ("?...") are not
	// allowed either.
	//
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=512
	URL *string `json:"url,omitempty"`

	// service is a reference to the Kubernetes service for the Extension server.
	// Note: Exactly one of `url` or `service` must be specified.
	//
	// If the Extension server is running within a cluster, then you should use `service`.
	//
	// +optional
	Service *ServiceReference `json:"service,omitempty"`

	// caBundle is a PEM encoded CA bundle which will be used to validate the Extension server's server certificate.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=51200
	CABundle []byte `json:"caBundle,omitempty"`
}

// ServiceReference names the Service in front of an Extension server.
type ServiceReference struct {
	// namespace is the namespace of the service.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	Namespace string `json:"namespace"`

	// name is the name of the service.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	Name string `json:"name"`

	// path is an optional URL path and if present may be any string permissible in
	// a URL. If a path is set it will be used as prefix to the hook-specific path.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=512
	Path *string `json:"path,omitempty"`

	// port is the port on the service that's hosting the Extension server.
	// Defaults to 443.
	// Port should be a valid port number (1-65535, inclusive).
	// +optional
	Port *int32 `json:"port,omitempty"`
}

// ExtensionConfigStatus is the observed state of an ExtensionConfig.
type ExtensionConfigStatus struct {
	// handlers defines the current ExtensionHandlers supported by an Extension.
	// +optional
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MaxItems=512
	Handlers []ExtensionHandler `json:"handlers,omitempty"`

	// conditions define the current service state of the ExtensionConfig.
	// +optional
	Conditions clusterv1.Conditions `json:"conditions,omitempty"`

	// v1beta2 groups all the fields that will be added or modified in ExtensionConfig's status with the V1Beta2 version.
	// +optional
	V1Beta2 *ExtensionConfigV1Beta2Status `json:"v1beta2,omitempty"`
}

// ExtensionConfigV1Beta2Status is the part of an ExtensionConfig's status that the v1beta2 API adds.
type ExtensionConfigV1Beta2Status struct {
	// conditions represents the observations of a ExtensionConfig's current state.
	// Known condition types are Discovered, Paused.
	// +optional
	// +listType=map
	// +listMapKey=type
	// +kubebuilder:validation:MaxItems=32
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// ExtensionHandler is one handler an Extension server said it serves in its discovery response.
type ExtensionHandler struct {
	// name is the unique name of the ExtensionHandler.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=512
	Name string `json:"name"`

	// requestHook defines the versioned runtime hook which this ExtensionHandler serves.
	// +required
	RequestHook GroupVersionHook `json:"requestHook"`

	// timeoutSeconds defines the timeout duration for client calls to the ExtensionHandler.
	// Defaults to 10 is not set.
	// +optional
	TimeoutSeconds *int32 `json:"timeoutSeconds,omitempty"`

	// failurePolicy defines how failures in calls to the ExtensionHandler should be handled by a client.
	// Defaults to Fail if not set.
	// +optional
	// +kubebuilder:validation:Enum=Ignore;Fail
	FailurePolicy *FailurePolicy `json:"failurePolicy,omitempty"`
}

// GroupVersionHook names a hook and the version of its API.
type GroupVersionHook struct {
	// apiVersion is the group and version of the Hook.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=512
	APIVersion string `json:"apiVersion"`

	// hook is the name of the hook.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=256
	Hook string `json:"hook"`
}

// FailurePolicy says what a failed call to an ExtensionHandler means.
type FailurePolicy string

const (
	// FailurePolicyIgnore means an error calling the handler (it cannot be reached, times out, or answers
	// something that is not a response) is logged and the call counts as a success. A response with
	// status Failure is never ignored.
	FailurePolicyIgnore FailurePolicy = "Ignore"

	// FailurePolicyFail means an error calling the handler fails the operation, which is retried.
	FailurePolicyFail FailurePolicy = "Fail"
)

// +kubebuilder:object:root=true
// +kubebuilder:resource:path=extensionconfigs,shortName=ext,scope=Cluster,categories=cluster-api
// +kubebuilder:storageversion
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="Age",type="date",JSONPath=".metadata.creationTimestamp",description="Time duration since creation of ExtensionConfig"

// ExtensionConfig is the Schema for the ExtensionConfig API.
type ExtensionConfig struct {
	metav1.TypeMeta `json:",inline"`
	// metadata is the standard object's metadata.
	// More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec is the desired state of the ExtensionConfig.
	// +optional
	Spec ExtensionConfigSpec `json:"spec,omitempty"`

	// status is the current state of the ExtensionConfig
	// +optional
	Status ExtensionConfigStatus `json:"status,omitempty"`
}

// GetConditions returns the v1beta1 conditions.
func (e *ExtensionConfig) GetConditions() clusterv1.Conditions { return e.Status.Conditions }

// SetConditions sets the v1beta1 conditions.
func (e *ExtensionConfig) SetConditions(conditions clusterv1.Conditions) {
	e.Status.Conditions = conditions
}

// GetV1Beta2Conditions returns the v1beta2 conditions.
func (e *ExtensionConfig) GetV1Beta2Conditions() []metav1.Condition {
	if e.Status.V1Beta2 == nil {
		return nil
	}
	return e.Status.V1Beta2.Conditions
}

// SetV1Beta2Conditions sets the v1beta2 conditions.
func (e *ExtensionConfig) SetV1Beta2Conditions(conditions []metav1.Condition) {
	if e.Status.V1Beta2 == nil {
		e.Status.V1Beta2 = &ExtensionConfigV1Beta2Status{}
	}
	e.Status.V1Beta2.Conditions = conditions
}

// +kubebuilder:object:root=true

// ExtensionConfigList is a list of ExtensionConfigs.
type ExtensionConfigList struct {
	metav1.TypeMeta `json:",inline"`
	// metadata is the standard list's metadata.
	// More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#lists-and-simple-kinds
	// +optional
	metav1.ListMeta `json:"metadata,omitempty"`
	// items is the list of ExtensionConfigs.
	Items []ExtensionConfig `json:"items"`
}

// Conditions, reasons and annotations of the Runtime SDK.
const (
	// ExtensionConfigDiscoveredV1Beta2Condition is True once the Extension server answered discovery, and
	// False (with the error) when the last discovery failed.
	ExtensionConfigDiscoveredV1Beta2Condition = "Discovered"

	// ExtensionConfigDiscoveredV1Beta2Reason means the last discovery succeeded.
	ExtensionConfigDiscoveredV1Beta2Reason = "Discovered"

	// ExtensionConfigNotDiscoveredV1Beta2Reason means the last discovery failed.
	ExtensionConfigNotDiscoveredV1Beta2Reason = "NotDiscovered"

	// RuntimeExtensionDiscoveredCondition is the v1beta1 condition that mirrors Discovered.
	RuntimeExtensionDiscoveredCondition clusterv1.ConditionType = "Discovered"

	// DiscoveryFailedReason means the last discovery failed (v1beta1 condition).
	DiscoveryFailedReason = "DiscoveryFailed"

	// InjectCAFromSecretAnnotation names a Secret, as <namespace>/<name>, whose ca.crt the controller copies
	// into spec.clientConfig.caBundle.
	InjectCAFromSecretAnnotation = "runtime.cluster.x-k8s.io/inject-ca-from-secret"

	// PendingHooksAnnotation lists, on a Cluster, the hooks that must still be called once the operation
	// they follow completes (comma separated); a hook leaves the list once a call succeeded.
	PendingHooksAnnotation = "runtime.cluster.x-k8s.io/pending-hooks"

	// OkToDeleteAnnotation is set on a Cluster once the BeforeClusterDelete hook let its deletion proceed.
	OkToDeleteAnnotation = "runtime.cluster.x-k8s.io/ok-to-delete"
)
