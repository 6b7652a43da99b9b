package v1alpha1

import (
	"k8s.io/apimachinery/pkg/runtime"
)

// RequestObject is a hook request: every request but Discovery's carries settings.
// +kubebuilder:object:generate=false
type RequestObject interface {
	runtime.Object
	GetSettings() map[string]string
	SetSettings(settings map[string]string)
}

// CommonRequest holds the fields of every request.
type CommonRequest struct {
	// settings defines key value pairs to be passed to the call.
	// +optional
	Settings map[string]string `json:"settings,omitempty"`
}

// GetSettings returns the settings of the request.
func (r *CommonRequest) GetSettings() map[string]string { return r.Settings }

// SetSettings sets the settings of the request.
func (r *CommonRequest) SetSettings(settings map[string]string) { r.Settings = settings }

// ResponseObject is a hook response: a status and a message.
// +kubebuilder:object:generate=false
type ResponseObject interface {
	runtime.Object
	GetMessage() string
	GetStatus() ResponseStatus
	SetMessage(message string)
	SetStatus(status ResponseStatus)
}

// RetryResponseObject is the response of a blocking hook, which may ask to be called again later.
// +kubebuilder:object:generate=false
type RetryResponseObject interface {
	ResponseObject
	GetRetryAfterSeconds() int32
	SetRetryAfterSeconds(retryAfterSeconds int32)
}

// CommonResponse holds the fields of every response.
type CommonResponse struct {
	// status of the call. One of "Success" or "Failure".
	// +required
	Status ResponseStatus `json:"status"`

	// message is a human-readable description of the status of the call.
	// +optional
	Message string `json:"message,omitempty"`
}

// SetMessage sets the message.
func (r *CommonResponse) SetMessage(message string) { r.Message = message }

// SetStatus sets the status.
func (r *CommonResponse) SetStatus(status ResponseStatus) { r.Status = status }

// GetMessage returns the message.
func (r *CommonResponse) GetMessage() string { return r.Message }

// GetStatus returns the status.
func (r *CommonResponse) GetStatus() ResponseStatus { return r.Status }

// ResponseStatus is the status of a hook response.
type ResponseStatus string

const (
	// ResponseStatusSuccess means the handler did what the hook asks (a blocking hook may still ask to be
	// called again with retryAfterSeconds).
	ResponseStatusSuccess ResponseStatus = "Success"

	// ResponseStatusFailure means the handler failed; the message says why. A failure is never ignored,
	// whatever the handler's failurePolicy.
	ResponseStatusFailure ResponseStatus = "Failure"
)

// CommonRetryResponse holds the fields of the response of a blocking hook.
type CommonRetryResponse struct {
	// CommonResponse contains Status and Message fields common to all response types.
	CommonResponse `json:",inline"`

	// retryAfterSeconds when set to a non-zero value signifies that the hook
	// will be called again at a future time.
	// +required
	RetryAfterSeconds int32 `json:"retryAfterSeconds"`
}

// GetRetryAfterSeconds returns retryAfterSeconds.
func (r *CommonRetryResponse) GetRetryAfterSeconds() int32 { return r.RetryAfterSeconds }

// SetRetryAfterSeconds sets retryAfterSeconds.
func (r *CommonRetryResponse) SetRetryAfterSeconds(retryAfterSeconds int32) {
	r.RetryAfterSeconds = retryAfterSeconds
}
