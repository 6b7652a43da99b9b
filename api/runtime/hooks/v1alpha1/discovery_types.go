package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// DefaultHandlersTimeoutSeconds is the timeout of a handler that does not give one in discovery.
const DefaultHandlersTimeoutSeconds = 10

// MaxHandlersTimeoutSeconds is the longest timeout a handler may ask for.
const MaxHandlersTimeoutSeconds = 30

// DiscoveryRequest is the request of the Discovery hook.
// +kubebuilder:object:root=true
type DiscoveryRequest struct {
	metav1.TypeMeta `json:",inline"`
}

var _ ResponseObject = &DiscoveryResponse{}

// DiscoveryResponse is the response of the Discovery hook: the handlers the Extension server serves.
// +kubebuilder:object:root=true
type DiscoveryResponse struct {
	metav1.TypeMeta `json:",inline"`

	// CommonResponse contains Status and Message fields common to all response types.
	CommonResponse `json:",inline"`

	// handlers defines the current ExtensionHandlers supported by an Extension.
	// +listType=map
	// +listMapKey=name
	// +optional
	Handlers []ExtensionHandler `json:"handlers,omitempty"`
}

// ExtensionHandler is a handler an Extension server serves.
type ExtensionHandler struct {
	// name is the name of the ExtensionHandler.
	// +required
	Name string `json:"name"`

	// requestHook defines the versioned runtime hook which this ExtensionHandler serves.
	// +required
	RequestHook GroupVersionHook `json:"requestHook"`

	// timeoutSeconds defines the timeout duration for client calls to the ExtensionHandler.
	// This is defaulted to 10 if left undefined.
	// +optional
	TimeoutSeconds *int32 `json:"timeoutSeconds,omitempty"`

	// failurePolicy defines how failures in calls to the ExtensionHandler should be handled by a client.
	// This is defaulted to FailurePolicyFail if not defined.
	// +optional
	FailurePolicy *FailurePolicy `json:"failurePolicy,omitempty"`
}

// GroupVersionHook names a hook and the version of its API.
type GroupVersionHook struct {
	// apiVersion is the group and version of the Hook
	// +required
	APIVersion string `json:"apiVersion"`

	// hook is the name of the hook
	// +required
	Hook string `json:"hook"`
}

// FailurePolicy says what a failed call to a handler means.
type FailurePolicy string

const (
	// FailurePolicyIgnore means an error calling the handler is logged and the call counts as a success.
	FailurePolicyIgnore FailurePolicy = "Ignore"

	// FailurePolicyFail means an error calling the handler fails the operation, which is retried.
	FailurePolicyFail FailurePolicy = "Fail"
)
